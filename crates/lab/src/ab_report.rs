//! `ab --junit FILE` and `ab --summary-md FILE` (issue 46): the gates of an A/B's benches as one
//! JUnit file (a suite per bench) and as Markdown appended to a step summary, rendered by
//! report::compare_doc as `irqlab compare` renders them. A --junit FILE that irqlab did not write
//! (no matching ownership record beside it, `results::owned`, the same record `irqlab compare
//! --junit` leaves) is refused before any boot, unless --force.
use report::compare_doc::junit::{self, Suite};
use report::compare_doc::CompareDoc;

use crate::ab::{AbConfig, AbError};

/// Refuse a --junit FILE that is a directory or someone else's file (exit 2, nothing booted).
pub fn check_junit(a: &AbConfig) -> Result<(), AbError> {
    let Some(p) = &a.outputs.junit else { return Ok(()) };
    match std::fs::metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(AbError::Usage(format!("--junit {}: {e}", p.display()))),
        Ok(m) if m.is_dir() => return Err(AbError::Usage(format!("--junit {}: is a directory", p.display()))),
        Ok(m) if !m.is_file() => return Ok(()),
        Ok(_) => {}
    }
    let ours = results::owned::is_ours(p).map_err(|e| AbError::Usage(format!("--junit {}: {e}", p.display())))?;
    if !a.outputs.force && !ours {
        return Err(AbError::Usage(format!(
            "--junit {}: exists, and irqlab has no record of writing this JUnit report as it is now (edited since, or not irqlab's); give another --junit, or --force to replace it",
            p.display()
        )));
    }
    Ok(())
}
/// Write the JUnit file and append the summary; `docs` are the benches that were compared, in
/// order, `all` every bench's name (a bench not among `docs` is reported as not compared).
pub fn write(a: &AbConfig, docs: &[(String, CompareDoc)], all: &[String], why: &str) -> Result<(), AbError> {
    let suites: Vec<Suite> = all
        .iter()
        .map(|name| match docs.iter().find(|(n, _)| n == name) {
            Some((_, doc)) => Suite::Gate { bench: name.clone(), doc },
            None => Suite::NotCompared { bench: name.clone(), why: why.to_string() },
        })
        .collect();
    if let Some(p) = &a.outputs.junit {
        let bytes = junit::render_suites(&suites);
        if std::fs::metadata(p).map(|m| m.is_file()).unwrap_or(true) {
            results::owned::write_record(p, bytes.as_bytes())?;
        }
        results::write_atomic(p, bytes.as_bytes())?;
    }
    if let Some(p) = &a.outputs.summary_md {
        let mut text = String::new();
        for s in &suites {
            match s {
                Suite::Gate { bench, doc } => {
                    if !bench.is_empty() {
                        text += &format!("**bench {}**\n\n", report::compare_doc::summary_md::md(bench));
                    }
                    text += &report::compare_doc::summary_md::render(doc);
                }
                Suite::NotCompared { bench, why } => {
                    text += &format!(
                        "## ⚠️ irqlab gate: no verdict for {} — {}\n\n",
                        report::compare_doc::summary_md::md(if bench.is_empty() { "the bench" } else { bench }),
                        report::compare_doc::summary_md::md(why)
                    )
                }
            }
        }
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).create(true).open(p).map_err(|e| AbError::Io { path: p.clone(), source: e })?;
        f.write_all(text.as_bytes()).map_err(|e| AbError::Io { path: p.clone(), source: e })?;
    }
    Ok(())
}

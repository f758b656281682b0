//! `ab --junit FILE` and `ab --summary-md FILE` (issue 46): the gates of an A/B's benches as one
//! JUnit file (a suite per bench) and as Markdown appended to a step summary, rendered by
//! report::compare_doc as `irqlab compare` renders them. A --junit FILE that irqlab did not write
//! (no report::compare_doc::junit::MARKER) is refused before any boot, unless --force.
use std::io::Read;

use report::compare_doc::junit::{self, Suite};
use report::compare_doc::CompareDoc;

use crate::ab::{AbArgs, AbError};

/// Refuse a --junit FILE that is a directory or someone else's file (exit 2, nothing booted).
pub fn check_junit(a: &AbArgs) -> Result<(), AbError> {
    let Some(p) = &a.outputs.junit else { return Ok(()) };
    let mut head = Vec::new();
    match std::fs::File::open(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(AbError::Usage(format!("--junit {}: {e}", p.display()))),
        Ok(f) if f.metadata().map(|m| m.is_dir()).unwrap_or(false) => return Err(AbError::Usage(format!("--junit {}: is a directory", p.display()))),
        Ok(f) => f.take(4096).read_to_end(&mut head).map_err(|e| AbError::Usage(format!("--junit {}: {e}", p.display())))?,
    };
    if !a.outputs.force && !junit::is_ours(&head) {
        return Err(AbError::Usage(format!("--junit {}: exists and is not an irqlab JUnit report; give another --junit, or --force to replace it", p.display())));
    }
    Ok(())
}

/// Write the JUnit file and append the summary; `docs` are the benches that were compared, in
/// order, `all` every bench's name (a bench not among `docs` is reported as not compared).
pub fn write(a: &AbArgs, docs: &[(String, CompareDoc)], all: &[String], why: &str) -> Result<(), AbError> {
    let suites: Vec<Suite> = all
        .iter()
        .map(|name| match docs.iter().find(|(n, _)| n == name) {
            Some((_, doc)) => Suite::Gate { bench: name.clone(), doc },
            None => Suite::NotCompared { bench: name.clone(), why: why.to_string() },
        })
        .collect();
    if let Some(p) = &a.outputs.junit {
        results::write_atomic(p, junit::render_suites(&suites).as_bytes())?;
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

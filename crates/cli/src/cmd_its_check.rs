//! `irqlab its-check FILE`: check an ITS command stream (plus redistributor register writes and
//! TRANSLATER writes) against the GICv3/v4 functional model, for hypervisor authors. The format
//! and what is checked: docs/its-check.md; the model: `sim::arch::arm::{its, gicv4}`.
//!
//! Exit status: 0 clean, 1 the stream has violations (reported with their line numbers),
//! 2 the file is unreadable or a line is malformed.
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use sim::arch::arm::gicv4::{check, script};

use crate::{CliError, Outcome};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ItsFormat {
    /// Decoded commands, effects, final mappings and violations, for people.
    Text,
    /// The same as one JSON object, for tools.
    Json,
}

#[derive(Args)]
pub struct ItsCheckArgs {
    /// The stream: one command per line as four hex words `DW0 DW1 DW2 DW3` (see docs/its-check.md).
    pub file: PathBuf,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = ItsFormat::Text)]
    pub format: ItsFormat,
}

/// Streams are text of at most this many bytes (a million commands of four hex words).
pub const MAX_STREAM_BYTES: u64 = 64 << 20;

/// The stream, bounded like every reader: a regular file of at most [`MAX_STREAM_BYTES`];
/// bytes that are not UTF-8 are replaced (the parser then names the line).
fn read_stream(path: &std::path::Path) -> Result<String, CliError> {
    let name = path.display();
    let bytes = results::read_bytes_capped(path, MAX_STREAM_BYTES).map_err(|e| match e {
        results::ResultsError::NotRegular { .. } => CliError(format!("{name}: not a regular file; give an ITS command stream file")),
        results::ResultsError::TooLarge { bytes, .. } => CliError(format!("{name}: {bytes} bytes; irqlab reads at most {MAX_STREAM_BYTES} bytes here")),
        results::ResultsError::Read { source, .. } => CliError(format!("{name}: cannot read: {source}")),
        other => CliError(other.to_string()),
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

pub fn run(a: ItsCheckArgs) -> Result<Outcome, CliError> {
    let name = a.file.display().to_string();
    let text = read_stream(&a.file)?;
    let script = script::parse(&text).map_err(|e| CliError(format!("{name}: {e}")))?;
    let report = check::run(&script);
    match a.format {
        ItsFormat::Json => crate::term::out_data(&format!("{}\n", serde_json::to_string_pretty(&report)?))?,
        ItsFormat::Text => crate::term::out(&render(&name, &report))?,
    }
    Ok(if report.violations.is_empty() { Outcome::Ok } else { Outcome::Partial })
}

fn render(name: &str, r: &check::CheckReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "{name}: {}, {} CPUs, {} ITS(s), GITS_TYPER.VMOVP = {}", r.gic, r.cpus, r.its_count, r.vmovp as u8);
    for st in &r.steps {
        let at = match (st.its, st.index) {
            (Some(i), Some(n)) => format!(" [ITS {i} #{n}]"),
            (Some(i), None) => format!(" [ITS {i}]"),
            _ => String::new(),
        };
        let _ = writeln!(s, "{:>5}{at}: {}", st.line, st.decoded);
        for e in &st.effects {
            let _ = writeln!(s, "       -> {e}");
        }
    }
    let m = &r.mappings;
    let _ = writeln!(s, "\nfinal mappings:");
    for c in &m.collections {
        let _ = writeln!(s, "  ITS {} collection {} -> redistributor {}", c.its, c.collection, c.redistributor);
    }
    for d in &m.devices {
        let _ = writeln!(s, "  ITS {} device {:#x}: {} event bits, ITT at {:#x}", d.its, d.device, d.event_bits, d.itt);
        for e in &d.events {
            match (e.collection, e.vpe) {
                (Some(c), _) => {
                    let _ = writeln!(s, "    event {} -> LPI {} (collection {c})", e.event, e.intid);
                }
                (_, Some(v)) => {
                    let db = e.doorbell.map_or(String::new(), |d| format!(", doorbell {d}"));
                    let _ = writeln!(s, "    event {} -> vLPI {} of vPE {v}{db}", e.event, e.intid);
                }
                _ => {}
            }
        }
    }
    for v in &m.vpes {
        let res = v.resident_on.map_or("not resident".to_string(), |r| format!("resident on redistributor {r}"));
        let _ = writeln!(
            s,
            "  vPE {} on ITS {:?} -> redistributor {}, VPT at {:#x} ({} bits), {res}, pending vLPIs {:?}",
            v.vpe, v.its, v.redistributor, v.vpt, v.vintid_bits, v.pending_vlpis
        );
    }
    for (rd, p) in &m.pending_lpis {
        let _ = writeln!(s, "  redistributor {rd}: pending LPIs {p:?}");
    }
    if r.violations.is_empty() {
        let _ = writeln!(s, "\nno violations");
    } else {
        let _ = writeln!(s, "\n{} violation(s):", r.violations.len());
        for v in &r.violations {
            let _ = writeln!(s, "  line {}: {} [{}]", v.line, v.message, v.kind);
        }
    }
    s
}

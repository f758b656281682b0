//! `irqlab run … --breakdown [--trace N]`: one measurement with a host-side breakdown (crate
//! `kvm::tracefs`; `kvm::session` runs it traced). Tracing problems are usage errors before
//! anything runs (exit 2, the plain run is unaffected); the recording (stamps + raw trace) goes
//! next to result.json; the paths and the table are printed here.
use kvm::BenchConfig;

use crate::CliError;

/// Check that tracefs can be used (mounting it if absent and we are root), before any run.
pub fn check(cfg: Option<&BenchConfig>) -> Result<(), CliError> {
    let cfg = cfg.cloned().unwrap_or_default();
    let (_, notes) = kvm::preflight(&cfg).map_err(|e| CliError(e.to_string()))?;
    for n in notes {
        crate::term::note(&format!("irqlab: {n}\n"));
    }
    Ok(())
}

/// A traced point's sample paths and breakdown table, printed as the point ends.
pub fn show(name: &str, m: &kvm::Measurement) {
    if let Some(b) = &m.breakdown {
        for p in &b.paths {
            report_out(&format!("[{name}] {p}"));
        }
    }
    report_out(&format!("{}\n", report::table::breakdown_table(&m.to_config_result(name))));
}

/// Text on stdout from inside a measurement, which returns its result rather than an error: a
/// failed write is said on stderr and the measurement goes on.
fn report_out(s: &str) {
    if let Err(e) = crate::term::out(s) {
        crate::term::note(&format!("irqlab: {}\n", e.0));
    }
}

//! `irqlab run … --breakdown [--trace N]`: one measurement with a host-side breakdown (crate
//! `kvm::tracefs`). Tracing problems are usage errors before anything runs (exit 2, the plain run
//! is unaffected); the recording (stamps + raw trace) goes next to result.json.
use std::path::Path;

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

fn file_name(point: &str) -> String {
    let safe: String = point.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("trace-{safe}.txt")
}

/// Run one point traced and print its sample paths and breakdown table.
pub fn measure(cfg: &BenchConfig, name: &str, progress: &dyn Fn(u64), keep_paths: usize, dir: &Path) -> Result<kvm::Measurement, String> {
    let _ = std::fs::create_dir_all(dir);
    let opts = kvm::TraceOptions { keep_paths, save_to: Some(dir.join(file_name(name))), measure_overhead: true };
    let m = kvm::run_traced(cfg, progress, &opts).map_err(|e| e.to_string())?;
    if let Some(b) = &m.breakdown {
        for p in &b.paths {
            report_out(&format!("[{name}] {p}"));
        }
    }
    report_out(&format!("{}\n", report::table::breakdown_table(&m.to_config_result(name))));
    Ok(m)
}

/// Text on stdout from inside a measurement, which returns its result rather than an error: a
/// failed write is said on stderr and the measurement goes on.
fn report_out(s: &str) {
    if let Err(e) = crate::term::out(s) {
        crate::term::note(&format!("irqlab: {}\n", e.0));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn trace_file_names_are_safe() {
        assert_eq!(super::file_name("via=msi, wait=hlt"), "trace-via_msi__wait_hlt.txt");
    }
}

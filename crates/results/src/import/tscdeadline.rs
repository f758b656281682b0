//! kvm-unit-tests `x86/tscdeadline_latency.c`: one `latency: N` line per sample, N = TSC at the
//! interrupt − the programmed deadline, in TSC cycles (the test's `tsc_deadline_timer_isr`).
//! Other lines of the test's output (`enabling apic`, `PASS`, the QEMU banner) are ignored.
//! Cycles become ns with the TSC frequency the user gives (`--tsc-ghz`; the file does not say
//! it), so the result shares the unit of every other latency. Raw samples: exact min, mean, max.
use super::{class_from_buckets, num, Exact, ImportError, ImportOptions, Origin, Parsed};
use crate::run::ConfigResult;

pub(super) fn parse(text: &str, file: &str, opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let ghz = opts.tsc_ghz.ok_or_else(|| {
        ImportError::other(file, "tscdeadline_latency prints TSC cycles: give the TSC frequency with --tsc-ghz (e.g. from `dmesg | grep 'tsc: Refined'`)")
    })?;
    if !(ghz.is_finite() && ghz > 0.0) {
        return Err(ImportError::other(file, format!("--tsc-ghz {ghz}: expected a frequency > 0")));
    }
    let mut ns: Vec<u64> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(v) = line.trim().strip_prefix("latency:") else { continue };
        let cycles: i64 = num(file, i + 1, "`latency: N` with N in TSC cycles", v)?;
        ns.push(((cycles.max(0) as f64) / ghz).round() as u64);
    }
    if ns.is_empty() {
        return Err(ImportError::other(file, "no `latency: N` lines: expected kvm-unit-tests tscdeadline_latency output"));
    }
    let n = ns.len() as f64;
    let exact = Exact { min: ns.iter().min().copied(), max: ns.iter().max().copied(), mean: Some(ns.iter().map(|&v| v as f64).sum::<f64>() / n), overflow: 0 };
    let buckets: Vec<(u64, u64)> = ns.iter().map(|&v| (v, 1)).collect();
    let mut c = ConfigResult::new("tscdeadline_latency");
    c.params.insert("tsc_ghz".into(), ghz.to_string());
    c.classes.insert("timer".into(), class_from_buckets(file, "`latency:` lines", &buckets, exact)?);
    Ok(Parsed { origin: Origin { tool: "kvm-unit-tests tscdeadline_latency".into(), ..Origin::default() }, configs: vec![c], kind: crate::ResultKind::Measured })
}

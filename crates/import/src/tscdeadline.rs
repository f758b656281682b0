//! kvm-unit-tests `x86/tscdeadline_latency.c`: one `latency: N` line per sample, N = TSC at the
//! interrupt − the programmed deadline, in TSC cycles (the test's `tsc_deadline_timer_isr`).
//! Other lines of the test's output (`enabling apic`, `PASS`, the QEMU banner) are ignored.
//! Cycles become ns with the TSC frequency the user gives (`--tsc-ghz`; the file does not say
//! it), so the result shares the unit of every other latency. Raw samples: exact min, mean, max.
//! Negative latencies (the interrupt before the deadline) are kept signed, as `irqlab run`
//! keeps them: an EARLY count and class beside the main one (issue 36).
use super::{class_from_buckets, num, Exact, ImportError, ImportOptions, Origin, Parsed};
use results::ConfigResult;

pub(super) fn parse(text: &str, file: &str, opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let ghz = opts
        .tsc_ghz
        .ok_or_else(|| ImportError::other(file, "tscdeadline_latency prints TSC cycles: give the TSC frequency with --tsc-ghz (e.g. from `dmesg | grep 'tsc: Refined'`)"))?;
    if !(ghz.is_finite() && ghz > 0.0) {
        return Err(ImportError::other(file, format!("--tsc-ghz {ghz}: expected a frequency > 0")));
    }
    let mut ns: Vec<i64> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(v) = line.trim().strip_prefix("latency:") else { continue };
        let cycles: i64 = num(file, i + 1, "`latency: N` with N in TSC cycles", v)?;
        let t = (cycles as f64 / ghz).round();
        if t.abs() > super::MAX_NS as f64 {
            return Err(ImportError::line(file, i + 1, "a latency within 13 days", format!("{cycles} cycles")));
        }
        ns.push(t as i64);
    }
    if ns.is_empty() {
        return Err(ImportError::other(file, "no `latency: N` lines: expected kvm-unit-tests tscdeadline_latency output"));
    }
    // Early interrupts (before the deadline: negative) count as 0 in `timer` (`clamped_low`), and
    // how early they were goes into `timer_early` with figures `early.timer` and
    // `min_signed.timer` — as `irqlab run` keeps them (kvm::measurement).
    let at = |v: i64| v.max(0) as u64;
    let n = ns.len() as f64;
    let exact = Exact {
        min: ns.iter().map(|&v| at(v)).min(),
        max: ns.iter().map(|&v| at(v)).max(),
        mean: Some(ns.iter().map(|&v| at(v) as f64).sum::<f64>() / n),
        resolution: 1,
        ..Default::default()
    };
    let buckets: Vec<(u64, u64)> = ns.iter().map(|&v| (at(v), 1)).collect();
    let mut c = ConfigResult::new("tscdeadline_latency");
    c.params.insert("tsc_ghz".into(), ghz.to_string());
    let mut timer = class_from_buckets(file, "`latency:` lines", &buckets, exact)?;
    let early: Vec<(u64, u64)> = ns.iter().filter(|v| **v < 0).map(|v| (v.unsigned_abs(), 1)).collect();
    timer.summary.clamped_low = early.len() as u64;
    c.classes.insert("timer".into(), timer);
    if !early.is_empty() {
        let e = |f: fn(&mut dyn Iterator<Item = u64>) -> Option<u64>| f(&mut early.iter().map(|b| b.0));
        let mean = early.iter().map(|b| b.0 as f64).sum::<f64>() / early.len() as f64;
        let exact = Exact { min: e(|i| i.min()), max: e(|i| i.max()), mean: Some(mean), resolution: 1, ..Default::default() };
        c.classes.insert("timer_early".into(), class_from_buckets(file, "early `latency:` lines", &early, exact)?);
        c.set_figure("early.timer", early.len() as f64, "samples");
        c.set_figure("min_signed.timer", *ns.iter().min().expect("not empty") as f64, "ns");
        c.notes.push(format!("{} sample(s) arrived before the deadline (negative latency): 0 in `timer`, how early in `timer_early`", early.len()));
    }
    Ok(Parsed { origin: Origin { tool: "kvm-unit-tests tscdeadline_latency".into(), ..Origin::default() }, configs: vec![c], kind: results::ResultKind::Measured })
}

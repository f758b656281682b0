//! How `irqlab run` shows a measurement: its table (cyclictest's µs by default, ns, or TSC cycles
//! as kvm-unit-tests reports them), early arrivals, cyclictest's `-h` histogram and the
//! per-sample file of `--samples-out`.
//!
//! Early arrivals: with `lapic_timer_advance` KVM fires the guest's timer before its deadline, so
//! a latency can be negative. The result's histograms count them as 0; the table's MIN is the true
//! (negative) minimum, EARLY counts them, and a warning line says how early they were.
use std::fmt::Write as _;

use clap::ValueEnum;
use kvm::measurement::EARLY_SUFFIX;
use report::format::{group, thousands};
use report::table::render_grid;
use results::{ConfigResult, RunResult};

/// Latency unit of the run's table: µs (cyclictest, rtla), ns, or TSC cycles (kvm-unit-tests).
/// The µs/ns pair is `irqlab report --unit`'s; cycles need the run's TSC frequency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum RunUnit {
    #[default]
    Us,
    Ns,
    Cycles,
}

impl RunUnit {
    fn symbol(self) -> &'static str {
        match self {
            RunUnit::Us => "µs",
            RunUnit::Ns => "ns",
            RunUnit::Cycles => "TSC cycles",
        }
    }

    /// `ns` in this unit, as table text.
    pub fn show(self, ns: f64, tsc_khz: f64) -> String {
        match self {
            RunUnit::Us => group(ns / 1000.0, 2),
            RunUnit::Ns => group(ns, 0),
            RunUnit::Cycles => group(ns * tsc_khz / 1e6, 0),
        }
    }
}

/// The main latency classes of a configuration (early-arrival classes left out).
fn main_classes(c: &ConfigResult) -> impl Iterator<Item = (&String, &results::LatencyClass)> {
    c.classes.iter().filter(|(k, _)| !k.ends_with(EARLY_SUFFIX))
}

fn figure(c: &ConfigResult, key: &str) -> Option<f64> {
    c.figures.get(key).map(|f| f.value)
}

/// The TSC frequency in MHz with its kHz digits: 2596138 kHz → "2,596.138 MHz".
pub fn tsc_mhz(khz: f64) -> String {
    format!("{} MHz", group(khz / 1000.0, 3))
}

/// CONFIG CLASS COUNT EARLY MIN AVG p50 p90 p99 p99.9 MAX WARM_MAX, in `unit`; failed points after.
pub fn table(r: &RunResult, unit: RunUnit) -> String {
    let header: Vec<String> = ["CONFIG", "CLASS", "COUNT", "EARLY", "MIN", "AVG", "p50", "p90", "p99", "p99.9", "MAX", "WARM_MAX"].map(String::from).to_vec();
    let mut rows = Vec::new();
    let mut tail = String::new();
    for c in &r.configs {
        let khz = figure(c, "tsc_khz").unwrap_or(0.0);
        for (class, l) in main_classes(c) {
            let s = &l.summary;
            let min = figure(c, &format!("min_signed.{class}")).unwrap_or(s.min as f64);
            let early = figure(c, &format!("early.{class}")).unwrap_or(0.0);
            let mut row = vec![c.name.clone(), class.clone(), thousands(s.count), thousands(early as u64)];
            row.extend([min, s.mean, s.p50 as f64, s.p90 as f64, s.p99 as f64, s.p999 as f64, s.max as f64, s.warm_max as f64].map(|v| unit.show(v, khz)));
            rows.push(row);
        }
        if let Some(e) = &c.error {
            let _ = writeln!(tail, "{}  {}: {}", c.name, if c.classes.is_empty() { "FAILED" } else { "ENDED EARLY" }, e);
        }
    }
    let mut out = format!(
        "{} — {}   (latencies in {}; the first interrupt of each run is discarded, as kvm-unit-tests does; WARM_MAX also skips the next --warmup)\n",
        r.meta.scenario,
        r.meta.description,
        unit.symbol()
    );
    if !rows.is_empty() {
        out.push_str(&render_grid(&header, &rows, 2));
    }
    out.push_str(&tail);
    out
}

/// One warning line per class with early arrivals: how many and how early.
pub fn early_warnings(r: &RunResult, unit: RunUnit) -> Vec<String> {
    let advance = std::fs::read_to_string("/sys/module/kvm/parameters/lapic_timer_advance_ns").ok();
    let mut out = Vec::new();
    for c in &r.configs {
        let khz = figure(c, "tsc_khz").unwrap_or(0.0);
        for (class, l) in main_classes(c) {
            let Some(e) = c.classes.get(&format!("{class}{EARLY_SUFFIX}")) else { continue };
            let s = &e.summary;
            out.push(format!(
                "warning: [{}] {} of {} {class} interrupts arrived before their deadline, by {} to {} {} (median {}){}; they count as 0 in the percentiles, MIN shows the earliest, class {class}{EARLY_SUFFIX} holds how early",
                c.name,
                thousands(s.count),
                thousands(l.summary.count),
                unit.show(s.min as f64, khz),
                unit.show(s.max as f64, khz),
                unit.symbol(),
                unit.show(s.p50 as f64, khz),
                advance.as_deref().map(|a| format!("; host lapic_timer_advance_ns = {}", a.trim())).unwrap_or_default()
            ));
        }
    }
    out
}

/// cyclictest's `-h US` histogram of one configuration's samples (ns): one row per µs bucket
/// `0..buckets`, one column per class, then `# Total:`, `# Min/Avg/Max Latencies:` (µs),
/// `# Histogram Overflows:` and the overflow sample indices, in cyclictest's layout. Early
/// arrivals are counted in bucket 0 and said on their own line.
pub fn histogram(config: &str, classes: &[(String, Vec<f64>)], buckets: usize) -> String {
    let mut hist = vec![vec![0u64; classes.len()]; buckets];
    let mut over = vec![Vec::new(); classes.len()];
    let mut early = vec![0u64; classes.len()];
    for (j, (_, v)) in classes.iter().enumerate() {
        for (i, ns) in v.iter().enumerate() {
            if *ns < 0.0 {
                early[j] += 1;
            }
            let us = (ns.max(0.0) / 1000.0).floor() as usize;
            match hist.get_mut(us) {
                Some(row) => row[j] += 1,
                None => over[j].push(i),
            }
        }
    }
    let mut s = format!("# Histogram (irqlab run, config {config}; columns: {})\n", classes.iter().map(|c| c.0.as_str()).collect::<Vec<_>>().join(" "));
    for (i, row) in hist.iter().enumerate() {
        let cells: Vec<String> = row.iter().map(|n| format!("{n:06}")).collect();
        let _ = writeln!(s, "{i:06} {}", cells.join("\t"));
    }
    let col = |f: &dyn Fn(usize, &[f64]) -> String| classes.iter().enumerate().map(|(j, (_, v))| f(j, v)).collect::<String>();
    let us = |ns: f64| (ns / 1000.0).round() as i64;
    let _ = writeln!(s, "# Total:{}", col(&|_, v| format!(" {:09}", v.len())));
    let _ = writeln!(s, "# Min Latencies:{}", col(&|_, v| format!(" {:05}", us(v.iter().copied().fold(f64::INFINITY, f64::min)))));
    let _ = writeln!(s, "# Avg Latencies:{}", col(&|_, v| format!(" {:05}", us(v.iter().sum::<f64>() / v.len().max(1) as f64))));
    let _ = writeln!(s, "# Max Latencies:{}", col(&|_, v| format!(" {:05}", us(v.iter().copied().fold(f64::NEG_INFINITY, f64::max)))));
    let _ = writeln!(s, "# Histogram Overflows:{}", col(&|j, _| format!(" {:05}", over[j].len())));
    if early.iter().any(|e| *e > 0) {
        let _ = writeln!(s, "# Early Arrivals (in bucket 0):{}", col(&|j, _| format!(" {:05}", early[j])));
    }
    s.push_str("# Histogram Overflow at cycle number:\n");
    for (j, o) in over.iter().enumerate() {
        let shown: String = o.iter().take(100).map(|i| format!(" {i:05}")).collect();
        let more = if o.len() > 100 { format!(" # {} others", o.len() - 100) } else { String::new() };
        let _ = writeln!(s, "# Thread {j}:{shown}{more}");
    }
    s
}

/// One configuration's samples as `--samples-out` holds them: a `# config:` line, a header
/// naming the columns, then `index<TAB>ns<TAB>ns…` per sample (index 0 is the first kept sample).
/// Collected in memory and written once, atomically, after the run (a failed run leaves an
/// earlier file whole).
pub fn samples_text(config: &str, classes: &[(String, Vec<f64>)]) -> String {
    let mut w = String::new();
    let _ = writeln!(w, "# config: {config}");
    let _ = writeln!(w, "index\t{}", classes.iter().map(|c| format!("{}_ns", c.0)).collect::<Vec<_>>().join("\t"));
    let n = classes.iter().map(|c| c.1.len()).max().unwrap_or(0);
    for i in 0..n {
        let cells: Vec<String> = classes.iter().map(|c| c.1.get(i).map(|v| format!("{}", v.round() as i64)).unwrap_or_default()).collect();
        let _ = writeln!(w, "{i}\t{}", cells.join("\t"));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_tsc_frequency_read_exactly() {
        assert_eq!(RunUnit::Us.show(17_234.0, 0.0), "17.23");
        assert_eq!(RunUnit::Ns.show(-1_500.0, 0.0), "-1,500");
        assert_eq!(RunUnit::Cycles.show(1_000.0, 2_596_138.0), "2,596");
        assert_eq!(tsc_mhz(1_996_249.0), "1,996.249 MHz");
    }

    #[test]
    fn histogram_has_cyclictests_layout() {
        let classes = vec![("a".to_string(), vec![-300.0, 500.0, 1_500.0, 1_700.0, 9_000.0]), ("b".to_string(), vec![2_000.0])];
        let h = histogram("x", &classes, 3);
        let lines: Vec<&str> = h.lines().collect();
        assert!(lines[0].starts_with("# Histogram"));
        assert_eq!(lines[1], "000000 000002\t000000");
        assert_eq!(lines[2], "000001 000002\t000000");
        assert_eq!(lines[3], "000002 000000\t000001");
        assert_eq!(lines[4], "# Total: 000000005 000000001");
        assert_eq!(lines[5], "# Min Latencies: 00000 00002");
        assert_eq!(lines[6], "# Avg Latencies: 00002 00002");
        assert_eq!(lines[7], "# Max Latencies: 00009 00002");
        assert_eq!(lines[8], "# Histogram Overflows: 00001 00000");
        assert_eq!(lines[9], "# Early Arrivals (in bucket 0): 00001 00000");
        assert_eq!(lines[10], "# Histogram Overflow at cycle number:");
        assert_eq!(lines[11], "# Thread 0: 00004");
    }

    #[test]
    fn samples_file_has_one_row_per_sample() {
        let t = samples_text("ipi", &[("one".into(), vec![1.4, 2.6]), ("rt".into(), vec![3.0, 4.0])]);
        assert_eq!(t, "# config: ipi\nindex\tone_ns\trt_ns\n0\t1\t3\n1\t3\t4\n");
    }

    #[test]
    fn early_arrivals_show_as_negative_min_a_count_and_a_warning() {
        let mut m = kvm::Measurement::new(kvm::BenchConfig::default(), 2_000_000);
        m.classes.push(("timer".into(), vec![-300.0, 17_000.0, 18_000.0, -1_200.0, 20_000.0]));
        let mut r = RunResult::new(results::RunMeta { description: "d".into(), ..results::RunMeta::named("t", "run-timer", 0, results::ResultKind::Measured) });
        r.configs.push(m.to_config_result("timer"));
        let t = table(&r, RunUnit::Us);
        let row = t.lines().find(|l| l.starts_with("timer")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cells[..5], ["timer", "timer", "5", "2", "-1.20"], "{t}");
        assert!(!t.contains("timer_early"), "the early class is not a row of its own: {t}");
        let w = early_warnings(&r, RunUnit::Ns);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("warning: [timer] 2 of 5 timer interrupts arrived before their deadline, by 300 to 1,200 ns"), "{}", w[0]);
        let t = table(&r, RunUnit::Cycles);
        assert!(t.contains("-2,400"), "1.2 µs early at 2 GHz: {t}");
    }
}

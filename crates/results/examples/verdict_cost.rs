//! What the one-run B/A percentile interval costs on a large result (BENCHMARKS.md, "compare
//! verdicts: exact bootstrap"): 1,000 classes of 10,000 samples each (HDR histograms), the five
//! percentile intervals of every pair of neighbouring classes that have enough samples for them, at
//! 95 % and at the gate's Bonferroni level for 5,000 checks.
//!
//! `cargo run --release -p results --example verdict_cost -- bootstrap|price-bonett`
//! (time the process, e.g. with `/usr/bin/time -v`; the two methods on the same data).
use std::process::ExitCode;

use results::stats::bootstrap::quantile_ratio;
use results::stats::coverage::price_bonett;
use results::stats::order_ci::min_samples;
use results::stats::verdict::ClassData;
use results::stats::Confidence;
use results::LatencyRecorder;

fn main() -> ExitCode {
    let method = std::env::args().nth(1).unwrap_or_default();
    if method != "bootstrap" && method != "price-bonett" {
        eprintln!("verdict_cost: expected `bootstrap` or `price-bonett`, got `{method}`");
        return ExitCode::from(2);
    }
    let classes: Vec<ClassData> = (0..1000u64)
        .map(|c| {
            let mut rec = LatencyRecorder::new(0);
            (0..10_000u64).for_each(|i| rec.record(10_000 + c + (i * 7919) % 90_000));
            ClassData::from_class("timer", &rec.finish(), Vec::new()).expect("own histogram")
        })
        .collect();
    let stats = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999)];
    let (mut intervals, mut width) = (0usize, 0.0f64);
    for level in [0.95, 1.0 - 0.1 / 5000.0] {
        let conf = Confidence::new(level).expect("in (0, 1)");
        for pair in classes.windows(2) {
            let (a, b): (&ClassData, &ClassData) = (&pair[0], &pair[1]);
            for (name, p) in stats.into_iter().filter(|&(_, p)| min_samples(p, conf) <= 10_000) {
                let iv = if method == "bootstrap" { quantile_ratio(&a.bins, &b.bins, p, conf).map(|x| (x.lo, x.hi)) } else { price_bonett(a, b, name, conf) };
                if let Some((lo, hi)) = iv {
                    intervals += 1;
                    width += (hi / lo).ln();
                }
            }
        }
    }
    println!("{method}: {intervals} intervals, mean ln width {:.4}", width / intervals.max(1) as f64);
    ExitCode::SUCCESS
}

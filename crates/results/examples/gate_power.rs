//! The gate's power on a change in a rare slow path, percentile against exceedance (issue 45
//! item 5; the table in docs/is-it-real.md):
//!
//! `cargo run --release -p results --example gate_power -- [--pairs N] [--seed S]`
//!
//! A: 99 % of samples lognormal(10 µs, σ 0.1), 1 % lognormal(100 µs, σ 0.1) — a rare slow path.
//! B: the same, with the slow path 3× slower (300 µs) — "a 3× change on 1 % of samples". One run
//! per side (`compare --fail-on … --single-run`), n = 2,000 and 20,000 samples per run, N pairs
//! (default 400). For each gate — `slower:p99`, `slower:p99.9`, `slower:share>150us` (a threshold
//! between the modes) and `slower` (any statistic) — the share of A/B pairs it trips on (power),
//! the share of A/A pairs it trips on (false alarms, should be ≤ 5 %), and the share it could not
//! check (exit 5). It runs the real gate (`results::stats::gate::gate`) on irqlab's histograms.
//! Seeded: same arguments, same table.
use std::process::ExitCode;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use results::stats::gate::{gate, GateOutcome};
use results::stats::pairs::verdicts;
use results::stats::Confidence;
use results::{compare, ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};

fn side(rng: &mut ChaCha8Rng, n: usize, slow: f64) -> RunResult {
    let mut rec = LatencyRecorder::new(0);
    for _ in 0..n {
        let z: f64 = StandardNormal.sample(rng);
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let centre = if u < 0.99 { 10_000.0 } else { slow };
        rec.record((centre * (0.1 * z).exp()).round() as u64);
    }
    let mut c = ConfigResult::new("x");
    c.classes.insert("timer".into(), rec.finish());
    let mut r = RunResult::new(RunMeta::named("power", "x", 0, ResultKind::Measured));
    r.configs.push(c);
    r
}

const GATES: [Option<&str>; 4] = [Some("p99"), Some("p99.9"), Some("share>150us"), None];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut pairs = 400usize;
    let mut seed = 45u64;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--pairs", Some(v)) if v > 0 => pairs = v as usize,
            ("--seed", Some(v)) => seed = v,
            _ => {
                eprintln!("gate_power: `{flag}`: expected --pairs N (≥ 1) or --seed S");
                return ExitCode::from(2);
            }
        }
    }
    let conf = Confidence::default();
    println!("gate power: A 99 % at 10 µs + 1 % at 100 µs; B the slow 1 % at 300 µs; one run per side; {pairs} pairs per row; seed {seed}\n");
    println!("| samples per run | gate | trips on A/B (power) % | trips on A/A % | cannot check % |");
    println!("|---:|---|---:|---:|---:|");
    for n in [2_000usize, 20_000] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ n as u64);
        let mut counts = [(0usize, 0usize, 0usize); GATES.len()];
        for _ in 0..pairs {
            let (a, a2, b) = (side(&mut rng, n, 100_000.0), side(&mut rng, n, 100_000.0), side(&mut rng, n, 300_000.0));
            for (i, g) in GATES.iter().enumerate() {
                let run = |b: &RunResult| {
                    let c = compare(&a, b);
                    let v = verdicts(&a, b, &c, conf).expect("own results");
                    let g = gate(&a, b, &c, &v, *g, conf).expect("valid gate");
                    g.outcome
                };
                let (ab, aa) = (run(&b), run(&a2));
                counts[i].0 += usize::from(ab == GateOutcome::Slower);
                counts[i].1 += usize::from(aa == GateOutcome::Slower);
                counts[i].2 += usize::from(ab == GateOutcome::Unchecked);
            }
        }
        for (g, (p, f, u)) in GATES.iter().zip(counts) {
            let pc = |k: usize| format!("{:.1}", 100.0 * k as f64 / pairs as f64);
            println!("| {n} | `slower{}` | {} | {} | {} |", g.map(|s| format!(":{s}")).unwrap_or_default(), pc(p), pc(f), pc(u));
        }
    }
    ExitCode::SUCCESS
}

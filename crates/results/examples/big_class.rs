//! A result with one latency class of N samples, for timing `irqlab report` on a large class
//! (issue 45: `report` never ended on a class of more than ~15 M samples, a three-minute fio run
//! on NVMe; BENCHMARKS.md):
//!
//! `cargo run --release -p results --example big_class -- N OUT.json`
//!
//! The samples are lognormal (median 10 µs, σ 0.5) from a seeded ChaCha generator: same N, same
//! file. An existing OUT is refused.
use std::process::ExitCode;

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(out)) = (args.first().and_then(|a| a.parse::<u64>().ok()), args.get(1)) else {
        eprintln!("big_class: expected N OUT.json (N a whole number of samples)");
        return ExitCode::from(2);
    };
    let out = std::path::Path::new(out);
    if out.exists() {
        eprintln!("big_class: {} exists; give a new file", out.display());
        return ExitCode::from(2);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(45);
    let mut rec = LatencyRecorder::new(0);
    for _ in 0..n {
        let z: f64 = StandardNormal.sample(&mut rng);
        rec.record((10_000.0 * (0.5 * z).exp()).round().max(1.0) as u64);
    }
    let mut c = ConfigResult::new("big");
    c.classes.insert("io".into(), rec.finish());
    let mut r = RunResult::new(RunMeta::named("big-class", "big", 45, ResultKind::Measured));
    r.configs.push(c);
    match results::write_json(out, &r) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("big_class: {}: {e}", out.display());
            ExitCode::from(1)
        }
    }
}

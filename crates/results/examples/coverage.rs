//! Coverage and A/A false alarms of `irqlab compare`'s verdicts, by simulation with known truth
//! (issue 36 item 8; the table in docs/is-it-real.md):
//!
//! `cargo run --release -p results --example coverage -- [--pairs N] [--samples N] [--runs R] [--seed S] [--grid-pairs N]`
//!
//! For each shape (smooth, bimodal, rare slow path) and design (one run per side; one run per
//! side whose runs vary by 5 %; repetitions that vary so; paired A B A B whose pairs drift so),
//! N pairs, per statistic: how often identical sides are called different (should be ≤ 5 %), how
//! often the interval holds the true 5 % slow-down (should be ≥ 95 %), how often it is called
//! slower (power), and for one run per side the same for the old Price–Bonett interval. Then the
//! tied shapes (a 40 ns or 1 µs tick grid, with and without a slow path; issue 45 item 1), one run
//! per side at 200 … 100,000 samples, `--grid-pairs` pairs each (default 200): A/A false alarms,
//! split by direction, and power (coverage is not defined on a grid: rounding moves the true
//! ratio). The engine is `results::stats::coverage`; same arguments → same tables.
use std::process::ExitCode;

use results::stats::coverage::{simulate, Design, Setup, Shape};

fn arg(args: &[String], flag: &str) -> Result<Option<u64>, String> {
    match args.iter().position(|a| a == flag) {
        None => Ok(None),
        Some(i) => {
            let v = args.get(i + 1).ok_or(format!("{flag}: expected a number"))?;
            v.parse().map(Some).map_err(|_| format!("{flag}: expected a whole number, got `{v}`"))
        }
    }
}

fn pct(k: usize, n: usize) -> String {
    format!("{:.1}", 100.0 * k as f64 / n.max(1) as f64)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(bad) = args.iter().step_by(2).find(|a| !["--pairs", "--samples", "--runs", "--seed", "--grid-pairs"].contains(&a.as_str())) {
        eprintln!("coverage: unknown argument `{bad}`; expected --pairs N, --samples N, --runs R, --seed S, --grid-pairs N");
        return ExitCode::from(2);
    }
    let mut s = Setup::default();
    let mut grid_pairs = 200;
    let parsed = (|| -> Result<(), String> {
        grid_pairs = arg(&args, "--grid-pairs")?.map_or(grid_pairs, |v| v as usize);
        s.pairs = arg(&args, "--pairs")?.map_or(s.pairs, |v| v as usize);
        s.samples = arg(&args, "--samples")?.map_or(s.samples, |v| v as usize);
        s.runs = arg(&args, "--runs")?.map_or(s.runs, |v| v as usize);
        s.seed = arg(&args, "--seed")?.unwrap_or(s.seed);
        if s.pairs == 0 || s.samples < 2 || s.runs < 2 || grid_pairs == 0 {
            return Err("--pairs and --grid-pairs must be ≥ 1, --samples ≥ 2, --runs ≥ 2".into());
        }
        Ok(())
    })();
    if let Err(e) = parsed {
        eprintln!("coverage: {e}");
        return ExitCode::from(2);
    }
    let t0 = std::time::Instant::now();
    println!(
        "coverage of compare's 95 % intervals: {} pairs per row, {} samples per run, {} runs per side where repeated, run offset σ {:.0} %, true effect +{:.0} %, seed {}",
        s.pairs,
        s.samples,
        s.runs,
        s.offset * 100.0,
        s.effect * 100.0,
        s.seed
    );
    println!("A/A = % of identical pairs called faster or slower; cover = % of +5 % pairs whose interval holds 1.05; slower = % of +5 % pairs called slower; old = Price–Bonett (before)\n");
    println!("| shape | design | stat | A/A false alarms % | coverage % | called slower % | no interval % | old A/A % | old coverage % |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|");
    for shape in Shape::ALL {
        for design in Design::ALL {
            for c in simulate(&s, shape, design) {
                let (oa, oc) = c.old.map_or(("".to_string(), "".to_string()), |(a, cv)| (pct(a, c.pairs), pct(cv, c.pairs)));
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} | {oa} | {oc} |",
                    shape.name(),
                    design.name(),
                    c.stat,
                    pct(c.false_alarms, c.pairs),
                    pct(c.covered, c.pairs),
                    pct(c.slower, c.pairs),
                    pct(c.no_interval, c.pairs)
                );
            }
        }
    }
    println!(
        "\ntied data: {grid_pairs} pairs per row, one run per side; A/A = % of identical pairs called faster or slower (of which faster); slower = % of +5 % pairs called slower\n"
    );
    println!("| shape | samples per run | stat | A/A false alarms % | of which faster % | called slower % | no interval % |");
    println!("|---|---:|---|---:|---:|---:|---:|");
    for shape in Shape::GRID {
        for samples in [200, 1_000, 10_000, 100_000] {
            let g = Setup { pairs: grid_pairs, samples, ..s };
            for c in simulate(&g, shape, Design::OneRun) {
                println!(
                    "| {} | {samples} | {} | {} | {} | {} | {} |",
                    shape.name(),
                    c.stat,
                    pct(c.false_alarms, c.pairs),
                    pct(c.false_faster, c.pairs),
                    pct(c.slower, c.pairs),
                    pct(c.no_interval, c.pairs)
                );
            }
        }
    }
    eprintln!("coverage: {:.1} s", t0.elapsed().as_secs_f64());
    ExitCode::SUCCESS
}

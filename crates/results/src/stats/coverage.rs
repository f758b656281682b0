//! Coverage and false alarms of the verdicts, by simulation with known truth (issue 36 item 8):
//! the engine of `cargo run --release -p results --example coverage` and of its small test.
//!
//! Each pair draws A and two B's from one latency shape — B₀ identical to A (its false alarms:
//! an interval without 1), B₁ = A × (1 + effect) (its coverage: an interval holding 1 + effect;
//! scaling moves every statistic by exactly that factor, so the truth is known even for a
//! percentile between two modes) — records them into irqlab's histograms, and runs the real
//! verdict code ([`super::pairs::verdicts`], from `RunResult`s, as `irqlab compare` does).
//! Shapes: a smooth lognormal, a bimodal one (half at 10 µs, half at 20 µs: p50 in the gap) and
//! a rare slow path (99 % at 10 µs, 1 % ten times slower: p99 on the edge). Designs: one run per
//! side; one run per side whose runs vary (each run × e^N(0, offset), what every host does); R
//! repetitions per side that vary so; R paired runs A B A B whose pair shares a drift of that size
//! (each run also varying by 1 %), with start times that interleave. [`price_bonett`] is the
//! interval the one-run verdicts used before, kept here only to show what it did.
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

use super::order_ci::{percentile_of, quantile_ci, QuantileInterval};
use super::pairs::verdicts;
use super::verdict::{ClassData, Word};
use super::Confidence;
use crate::{compare, ConfigResult, LatencyRecorder, Repetitions, ResultKind, RunMeta, RunResult};

/// A latency distribution with known shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Lognormal, median 10 µs, σ 0.5.
    Smooth,
    /// Half lognormal(10 µs, σ 0.1), half lognormal(20 µs, σ 0.1).
    Bimodal,
    /// 99 % lognormal(10 µs, σ 0.1), 1 % lognormal(100 µs, σ 0.1).
    RareSlow,
    /// Smooth, on a 40 ns tick grid (values rounded to multiples of 40 ns).
    Grid40ns,
    /// Smooth, on a 1 µs grid (cyclictest's resolution).
    Grid1us,
    /// Rare-slow, on a 1 µs grid.
    Grid1usRareSlow,
}

impl Shape {
    /// The continuous shapes (the main table: truth known for every statistic).
    pub const ALL: [Shape; 3] = [Shape::Smooth, Shape::Bimodal, Shape::RareSlow];
    /// The tied shapes (issue 45 item 1): timer latencies on a tick grid.
    pub const GRID: [Shape; 3] = [Shape::Grid40ns, Shape::Grid1us, Shape::Grid1usRareSlow];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Smooth => "smooth",
            Shape::Bimodal => "bimodal",
            Shape::RareSlow => "rare-slow",
            Shape::Grid40ns => "smooth, 40 ns grid",
            Shape::Grid1us => "smooth, 1 µs grid",
            Shape::Grid1usRareSlow => "rare-slow, 1 µs grid",
        }
    }

    /// The tick grid (ns) values are rounded to, if any. On a grid, B₁ = A × (1 + effect) is
    /// rounded too, so a percentile's true ratio is not exactly 1 + effect: coverage is not
    /// defined there, A/A false alarms and power are.
    pub fn grid(self) -> Option<f64> {
        match self {
            Shape::Grid40ns => Some(40.0),
            Shape::Grid1us | Shape::Grid1usRareSlow => Some(1000.0),
            _ => None,
        }
    }

    fn draw(self, rng: &mut ChaCha8Rng) -> f64 {
        let z: f64 = StandardNormal.sample(rng);
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        match self {
            Shape::Smooth | Shape::Grid40ns | Shape::Grid1us => 10_000.0 * (0.5 * z).exp(),
            Shape::Bimodal => (if u < 0.5 { 10_000.0 } else { 20_000.0 }) * (0.1 * z).exp(),
            Shape::RareSlow | Shape::Grid1usRareSlow => (if u < 0.99 { 10_000.0 } else { 100_000.0 }) * (0.1 * z).exp(),
        }
    }
}

/// How the runs were made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// One run per side, runs that do not vary.
    OneRun,
    /// One run per side, each run offset by e^N(0, offset).
    OneRunVarying,
    /// R runs per side, each offset by e^N(0, offset).
    Repeated,
    /// R pairs A B, each pair offset by e^N(0, offset), each run by e^N(0, 0.01) more.
    Paired,
}

impl Design {
    pub const ALL: [Design; 4] = [Design::OneRun, Design::OneRunVarying, Design::Repeated, Design::Paired];

    pub fn name(self) -> &'static str {
        match self {
            Design::OneRun => "one run per side",
            Design::OneRunVarying => "one run per side, runs vary",
            Design::Repeated => "repetitions, runs vary",
            Design::Paired => "paired A B A B, pairs drift",
        }
    }
}

/// What to simulate.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// Pairs per (shape, design).
    pub pairs: usize,
    /// Samples per run.
    pub samples: usize,
    /// Runs per side (repeated and paired designs).
    pub runs: usize,
    /// Run-to-run (or pair-to-pair) offset, as the σ of its log: 0.05 ≈ 5 %.
    pub offset: f64,
    /// B₁'s true effect: 0.05 = 5 % slower.
    pub effect: f64,
    pub seed: u64,
    pub confidence: Confidence,
}

impl Default for Setup {
    fn default() -> Self {
        Setup { pairs: 1000, samples: 5000, runs: 5, offset: 0.05, effect: 0.05, seed: 36, confidence: Confidence::default() }
    }
}

/// The statistics the table reports.
pub const STATS: [&str; 5] = ["mean", "p50", "p90", "p99", "p99.9"];

/// Counts for one (shape, design, statistic).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub stat: String,
    pub pairs: usize,
    /// A/A pairs with an interval that excludes 1.
    pub false_alarms: usize,
    /// Of those, the ones called faster (the tie artefact of issue 45 item 1 was one-sided).
    pub false_faster: usize,
    /// Effect pairs whose interval holds the true ratio.
    pub covered: usize,
    /// Effect pairs called slower.
    pub slower: usize,
    /// Pairs without an interval (A/A or effect).
    pub no_interval: usize,
    /// The same counts for the old Price–Bonett interval (one-run designs only).
    pub old: Option<(usize, usize)>,
}

fn side(name: &str, runs: Vec<ConfigResult>) -> RunResult {
    let mut r = RunResult::new(RunMeta::named("coverage", name, 0, ResultKind::Measured));
    let mut first = runs[0].clone();
    if runs.len() > 1 {
        let reps = Repetitions::over(&runs.iter().collect::<Vec<_>>()).expect("one unit");
        first.repetitions = Some(reps);
    }
    r.configs.push(first);
    r
}

fn run_of(samples: &[f64], scale: f64, grid: Option<f64>) -> ConfigResult {
    let mut rec = LatencyRecorder::new(0);
    let tick = grid.unwrap_or(1.0);
    samples.iter().for_each(|&v| rec.record(((v * scale / tick).round() * tick).max(tick) as u64));
    let mut c = ConfigResult::new("x");
    c.classes.insert("timer".into(), rec.finish());
    c
}

/// Marks runs as started at interleaved times: A's run i at minute 2i, B's at 2i + 1.
fn interleave(r: &mut RunResult, b_side: bool) {
    if let Some(reps) = r.configs[0].repetitions.as_mut() {
        for (i, run) in reps.runs.iter_mut().enumerate() {
            let m = 2 * i + usize::from(b_side);
            run.started = Some(format!("2026-01-01T{:02}:{:02}:00Z", m / 60, m % 60));
        }
    }
}

/// Price & Bonett's interval of B/A for percentile `stat` (the one-run method before issue 36).
pub fn price_bonett(a: &ClassData, b: &ClassData, stat: &str, conf: Confidence) -> Option<(f64, f64)> {
    let p = percentile_of(stat)?;
    let (QuantileInterval::Ci(ca), QuantileInterval::Ci(cb)) = (quantile_ci(&a.bins, p, conf), quantile_ci(&b.bins, p, conf)) else { return None };
    let z = conf.z();
    let se = |lo: f64, hi: f64| (hi.max(1.0).ln() - lo.max(1.0).ln()) / (2.0 * z);
    let value = |d: &ClassData| crate::compare::summary_stat(&d.summary, stat).unwrap_or(f64::NAN);
    let centre = (value(b) / value(a)).ln();
    let half = z * (se(ca.lo, ca.hi).powi(2) + se(cb.lo, cb.hi).powi(2)).sqrt();
    Some(((centre - half).exp(), (centre + half).exp()))
}

fn class(r: &RunResult) -> ClassData {
    let c = &r.configs[0];
    ClassData::from_class("timer", &c.classes["timer"], Vec::new()).expect("own histogram")
}

/// One (shape, design): a cell per statistic of [`STATS`].
pub fn simulate(setup: &Setup, shape: Shape, design: Design) -> Vec<Cell> {
    let mut cells: Vec<Cell> = STATS.iter().map(|s| Cell { stat: s.to_string(), pairs: setup.pairs, ..Cell::default() }).collect();
    let key = setup.seed ^ ((shape as u64) << 32) ^ ((design as u64) << 40);
    let mut rng = ChaCha8Rng::seed_from_u64(key);
    let one_run = matches!(design, Design::OneRun | Design::OneRunVarying);
    let runs = if one_run { 1 } else { setup.runs.max(2) };
    let conf = setup.confidence;
    let truth = 1.0 + setup.effect;
    for _ in 0..setup.pairs {
        let offset = |rng: &mut ChaCha8Rng, sd: f64| {
            let z: f64 = StandardNormal.sample(rng);
            (sd * z).exp()
        };
        let (mut a, mut b0, mut b1) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let pair = if design == Design::Paired { offset(&mut rng, setup.offset) } else { 1.0 };
            let per_run = match design {
                Design::OneRun => 0.0,
                Design::Paired => 0.01,
                _ => setup.offset,
            };
            for (list, scale) in [(&mut a, 1.0), (&mut b0, 1.0), (&mut b1, truth)] {
                let s: Vec<f64> = (0..setup.samples).map(|_| shape.draw(&mut rng)).collect();
                list.push(run_of(&s, scale * pair * offset(&mut rng, per_run), shape.grid()));
            }
        }
        let (mut ra, mut rb0, mut rb1) = (side("a", a), side("b0", b0), side("b1", b1));
        if design == Design::Paired {
            interleave(&mut ra, false);
            interleave(&mut rb0, true);
            interleave(&mut rb1, true);
        }
        let judge = |b: &RunResult| {
            let v = verdicts(&ra, b, &compare(&ra, b), conf).expect("own results");
            v.classes.into_iter().next().expect("one class").stats
        };
        let (aa, eff) = (judge(&rb0), judge(&rb1));
        let old_data = one_run.then(|| (class(&ra), class(&rb0), class(&rb1)));
        for cell in cells.iter_mut() {
            let (Some(x), Some(y)) = (aa.iter().find(|v| v.stat == cell.stat), eff.iter().find(|v| v.stat == cell.stat)) else { continue };
            if x.interval.is_none() || y.interval.is_none() {
                cell.no_interval += 1;
            }
            cell.false_alarms += usize::from(x.word != Word::NoDifference);
            cell.false_faster += usize::from(x.word == Word::Faster);
            cell.covered += usize::from(y.interval.is_some_and(|(lo, hi)| lo <= truth && truth <= hi));
            cell.slower += usize::from(y.word == Word::Slower);
            if let (Some((ca, cb0, cb1)), Some(_)) = (&old_data, percentile_of(&cell.stat)) {
                let alarm = price_bonett(ca, cb0, &cell.stat, conf).is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0);
                let cover = price_bonett(ca, cb1, &cell.stat, conf).is_some_and(|(lo, hi)| lo <= truth && truth <= hi);
                let old = cell.old.get_or_insert((0, 0));
                old.0 += usize::from(alarm);
                old.1 += usize::from(cover);
            }
        }
    }
    cells
}

//! The statistics checked by simulation: an interval at 95 % must cover the truth about 95 % of
//! the time, verdicts on two draws of one distribution must rarely say "faster" or "slower", and
//! intervals must shrink as samples grow. Seeded ChaCha draws, so every run checks the same draws.
use proptest::prelude::*;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use results::stats::bins::Bins;
use results::stats::order_ci::{quantile_ci, QuantileInterval};
use results::stats::verdict::{compare_stat, ClassData, Word};
use results::stats::Confidence;
use results::LatencyRecorder;

fn uniform01(r: &mut ChaCha8Rng) -> f64 {
    ((r.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// Exponential latencies: 2 µs floor + mean 1 µs tail, in ns; the p-quantile is known exactly.
fn draw(r: &mut ChaCha8Rng) -> u64 {
    (2000.0 - 1000.0 * uniform01(r).ln()) as u64
}

fn true_quantile(p: f64) -> f64 {
    2000.0 - 1000.0 * (1.0 - p).ln()
}

fn samples(r: &mut ChaCha8Rng, n: usize) -> Vec<u64> {
    (0..n).map(|_| draw(r)).collect()
}

fn coverage(p: f64, n: usize, trials: usize, histogram: bool) -> f64 {
    let conf = Confidence::new(0.95).unwrap();
    let mut r = ChaCha8Rng::seed_from_u64(25);
    let truth = true_quantile(p);
    let mut hit = 0;
    for _ in 0..trials {
        let s = samples(&mut r, n);
        let bins = if histogram {
            let mut rec = LatencyRecorder::new(0);
            s.iter().for_each(|&v| rec.record(v));
            Bins::from_histogram(&rec.finish().histogram("t").unwrap())
        } else {
            Bins::from_samples(&s)
        };
        let QuantileInterval::Ci(ci) = quantile_ci(&bins, p, conf) else { panic!("n {n} suffices for p {p}") };
        // the samples are truncated to integers: the true quantile of what was drawn is floor(truth)
        if ci.lo <= truth.floor() && truth.floor() <= ci.hi {
            hit += 1;
        }
    }
    hit as f64 / trials as f64
}

#[test]
fn percentile_intervals_cover_at_their_level() {
    for &(p, n) in &[(0.5, 200), (0.99, 1000), (0.999, 4000)] {
        let c = coverage(p, n, 2000, false);
        eprintln!("p{} of {n} exact samples: 95 % interval covered {:.1} % of 2000 draws", p * 100.0, c * 100.0);
        assert!(c >= 0.93, "p {p} n {n}: coverage {c}");
        assert!(c <= 0.995, "p {p} n {n}: coverage {c} — far wider than asked");
    }
    let c = coverage(0.99, 1000, 2000, true);
    eprintln!("p99 of 1000 samples from the HDR histogram: covered {:.1} %", c * 100.0);
    assert!(c >= 0.93, "histogram coverage {c}");
}

/// Same distribution on both sides: how often does a verdict claim a difference?
fn false_positive_rate(stat: &str, n: usize, trials: usize, runs: usize) -> f64 {
    let conf = Confidence::new(0.95).unwrap();
    let mut r = ChaCha8Rng::seed_from_u64(2025);
    let side = |r: &mut ChaCha8Rng| {
        if runs <= 1 {
            return ClassData::from_samples(&samples(r, n));
        }
        let all: Vec<Vec<u64>> = (0..runs).map(|_| samples(r, n)).collect();
        let mut d = ClassData::from_samples(&all.concat());
        d.runs = all.iter().map(|s| ClassData::from_samples(s).summary).collect();
        d
    };
    let mut claims = 0;
    for _ in 0..trials {
        let (a, b) = (side(&mut r), side(&mut r));
        if compare_stat(&a, &b, stat, conf).unwrap().word != Word::NoDifference {
            claims += 1;
        }
    }
    claims as f64 / trials as f64
}

#[test]
fn verdicts_on_one_distribution_rarely_claim_a_difference() {
    for &(stat, n, runs) in &[("p50", 2000, 1), ("p99", 2000, 1), ("mean", 2000, 1), ("p99", 1000, 5), ("max", 1000, 5)] {
        let fp = false_positive_rate(stat, n, 600, runs);
        eprintln!("{stat}, {runs} run(s) of {n} per side: false 'faster/slower' in {:.1} % of 600 pairs", fp * 100.0);
        assert!(fp <= 0.075, "{stat} runs {runs}: false-positive rate {fp}");
    }
}

#[test]
fn a_real_ten_percent_shift_is_found() {
    let conf = Confidence::default();
    let mut r = ChaCha8Rng::seed_from_u64(7);
    let a = ClassData::from_samples(&samples(&mut r, 10_000));
    let b = ClassData::from_samples(&samples(&mut r, 10_000).iter().map(|v| v * 11 / 10).collect::<Vec<_>>());
    for stat in ["p50", "p90", "p99", "mean"] {
        let v = compare_stat(&a, &b, stat, conf).unwrap();
        assert_eq!(v.word, Word::Slower, "{stat}: {v:?}");
        let (lo, hi) = v.interval.unwrap();
        assert!(lo <= 1.1 && 1.1 <= hi * 1.02, "{stat}: {lo}..{hi}");
    }
}

/// Sixteen times the samples: the interval is about a quarter as wide (1/sqrt(16)) on average over
/// 24 seeded draws, and never wider in any one of them. One draw alone is too noisy to hold to a
/// ratio (p99 of 2,000 has 20 samples above it), which is why this is not a proptest with
/// unseeded cases: a statistical claim checked on fresh random draws fails now and then.
#[test]
fn intervals_shrink_with_n() {
    let conf = Confidence::default();
    let width = |n: usize, p: f64, r: &mut ChaCha8Rng| {
        let ci = *quantile_ci(&Bins::from_samples(&samples(r, n)), p, conf).ci().unwrap();
        ci.hi - ci.lo
    };
    for p in [0.5, 0.9, 0.99] {
        let mut r = ChaCha8Rng::seed_from_u64(112);
        let (mut small_sum, mut large_sum) = (0.0, 0.0);
        for _ in 0..24 {
            let (small, large) = (width(2_000, p, &mut r), width(32_000, p, &mut r));
            assert!(large < small, "p {p}: width {small} at 2,000, {large} at 32,000");
            small_sum += small;
            large_sum += large;
        }
        let ratio = large_sum / small_sum;
        eprintln!("p{}: mean width at 32,000 / at 2,000 = {ratio:.3} (1/sqrt(16) = 0.25)", p * 100.0);
        assert!((0.18..0.33).contains(&ratio), "p {p}: width ratio {ratio}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]
    /// Higher confidence never gives a narrower interval.
    #[test]
    fn higher_confidence_is_wider(seed in any::<u64>()) {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        let b = Bins::from_samples(&samples(&mut r, 3000));
        let at = |c: f64| *quantile_ci(&b, 0.9, Confidence::new(c).unwrap()).ci().unwrap();
        let (c80, c99) = (at(0.80), at(0.99));
        prop_assert!(c99.lo <= c80.lo && c99.hi >= c80.hi);
    }
}

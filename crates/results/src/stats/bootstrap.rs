//! The B/A interval of a percentile from one run per side: a seeded percentile bootstrap of the
//! ratio, resampled from the histograms' counts (issue 36 item 8).
//!
//! **Why not Price–Bonett.** Reading each side's standard error off its order-statistic interval
//! and adding them in quadrature assumes each side's log percentile is roughly normal. Where a
//! percentile falls in a gap between modes (99 % fast, 1 % ten times slower: p99 sits on the
//! edge), a side's sample p99 lands in either mode, and the normal approximation around the point
//! estimate is wrong: the old interval covered the truth in ~55 % of pairs (coverage table:
//! `docs/is-it-real.md`, `cargo run --release -p results --example coverage`). The bootstrap
//! distribution of the ratio follows both modes, so its interval spans them when it must.
//!
//! **How, exactly and cheaply.** A bootstrap resample of n values has as its k-th order statistic
//! `F̂⁻¹(U₍ₖ₎)`, with `U₍ₖ₎ ~ Beta(k, n − k + 1)` the k-th of n uniforms and `F̂` the side's
//! empirical (histogram) distribution (David & Nagaraja, *Order Statistics*, §2.1). So each
//! resample of a percentile is one Beta draw and one binary search over the bins — the same
//! answer as drawing n values from the histogram counts, in O(log bins) time whatever n is, and
//! no raw samples needed. k = ⌈p·n⌉ is the rank HDR's `value_at_quantile` reads, and a bin stands
//! for its highest value, as the summaries do, so the resampled ratio is the point estimate's.
//!
//! **How many resamples.** A percentile interval reads the α/2 and 1 − α/2 quantiles of the
//! resampled ratios; Efron & Tibshirani (*An Introduction to the Bootstrap*, §19.3) ask for
//! 1,000–2,000. Here at least [`MIN_RESAMPLES`], and more when the confidence is high (the gate's
//! Bonferroni-corrected level) so that each tail holds [`TAIL_RESAMPLES`]; never more than
//! [`MAX_RESAMPLES`] (1.6 MB of f64, ~20 ms), where a tail is then read from fewer resamples.
//!
//! **Deterministic.** The generator is ChaCha8 seeded from the inputs (both sides' bins, the
//! percentile, the confidence), so the same two results give byte-identical verdicts.
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use rand_distr::{Beta, Distribution};

use super::bins::Bins;
use super::Confidence;

/// Resamples at ordinary confidence levels (95 %: 50 in each tail).
pub const MIN_RESAMPLES: usize = 2_000;
/// Resamples wanted beyond each end of the interval.
pub const TAIL_RESAMPLES: f64 = 50.0;
/// The bound on time and memory per statistic.
pub const MAX_RESAMPLES: usize = 200_000;

/// The number of resamples used at `conf`.
pub fn resamples(conf: Confidence) -> usize {
    let want = (TAIL_RESAMPLES / conf.tail()).ceil();
    (want as usize).clamp(MIN_RESAMPLES, MAX_RESAMPLES)
}

/// The bootstrap of ln(B/A) for one percentile.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioBootstrap {
    /// B/A's percentile interval.
    pub lo: f64,
    pub hi: f64,
    /// Standard deviations of each side's resampled ln(percentile) (for sizing experiments).
    pub sd_a: f64,
    pub sd_b: f64,
}

/// FNV-1a over the bins, the percentile and the confidence.
fn seed(a: &Bins, b: &Bins, p: f64, conf: Confidence) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for byte in x.to_le_bytes() {
            h ^= byte as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for side in [a, b] {
        eat(side.bins().len() as u64);
        for bin in side.bins() {
            eat(bin.lo);
            eat(bin.hi);
            eat(bin.count);
        }
    }
    eat(p.to_bits());
    eat(conf.level().to_bits());
    h
}

/// The rank ⌈p·n⌉ (at least 1) that HDR's `value_at_quantile` reads.
fn rank(p: f64, n: u64) -> u64 {
    ((p * n as f64).ceil() as u64).clamp(1, n)
}

/// One side's resampler: the Beta law of U₍ₖ₎ and the map through the bins.
struct Side<'a> {
    bins: &'a Bins,
    n: u64,
    beta: Option<Beta<f64>>,
}

impl<'a> Side<'a> {
    fn new(bins: &'a Bins, p: f64) -> Option<Side<'a>> {
        let n = bins.count();
        if n == 0 {
            return None;
        }
        let k = rank(p, n);
        // Beta(k, n − k + 1); with n = 1 every resample is the one value
        let beta = if n > 1 { Some(Beta::new(k as f64, (n - k + 1) as f64).ok()?) } else { None };
        Some(Side { bins, n, beta })
    }

    fn draw(&self, rng: &mut ChaCha8Rng) -> f64 {
        let u = self.beta.as_ref().map_or(1.0, |b| b.sample(rng));
        let r = ((u * self.n as f64).ceil() as u64).clamp(1, self.n);
        self.bins.at_rank(r).map_or(f64::NAN, |b| b.hi.max(1) as f64)
    }
}

fn sd(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// The percentile bootstrap interval of B/A for percentile `p` at `conf`; `None` when a side is
/// empty.
pub fn quantile_ratio(a: &Bins, b: &Bins, p: f64, conf: Confidence) -> Option<RatioBootstrap> {
    let (sa, sb) = (Side::new(a, p)?, Side::new(b, p)?);
    let mut rng = ChaCha8Rng::seed_from_u64(seed(a, b, p, conf));
    let m = resamples(conf);
    let (mut la, mut lb) = (Vec::with_capacity(m), Vec::with_capacity(m));
    for _ in 0..m {
        la.push(sa.draw(&mut rng).ln());
        lb.push(sb.draw(&mut rng).ln());
    }
    let mut ratios: Vec<f64> = lb.iter().zip(&la).map(|(b, a)| b - a).collect();
    ratios.sort_unstable_by(f64::total_cmp);
    let lo_i = ((conf.tail() * m as f64).floor() as usize).min(m - 1);
    let hi_i = (((1.0 - conf.tail()) * m as f64).ceil() as usize).saturating_sub(1).min(m - 1);
    Some(RatioBootstrap { lo: ratios[lo_i].exp(), hi: ratios[hi_i].exp(), sd_a: sd(&la), sd_b: sd(&lb) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resample_counts_are_bounded() {
        assert_eq!(resamples(Confidence::default()), MIN_RESAMPLES);
        assert_eq!(resamples(Confidence::new(0.999).unwrap()), 100_000);
        assert_eq!(resamples(Confidence::new(0.999_999).unwrap()), MAX_RESAMPLES);
    }

    #[test]
    fn the_resampled_order_statistic_has_the_bootstrap_law() {
        // The median of 9 values 1..=9: the bootstrap median's law is known in closed form:
        // P(X*₍₅₎ ≤ j) = P(Binomial(9, j/9) ≥ 5).
        use statrs::distribution::{Binomial, DiscreteCDF};
        let bins = Bins::from_samples(&(1..=9).collect::<Vec<_>>());
        let side = Side::new(&bins, 0.5).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let draws: Vec<f64> = (0..40_000).map(|_| side.draw(&mut rng)).collect();
        for j in 1..9u64 {
            let want = 1.0 - Binomial::new(j as f64 / 9.0, 9).unwrap().cdf(4);
            let got = draws.iter().filter(|&&x| x <= j as f64).count() as f64 / draws.len() as f64;
            assert!((got - want).abs() < 0.01, "P(X* <= {j}): {got} vs {want}");
        }
    }

    #[test]
    fn same_inputs_same_interval_and_a_gap_is_spanned() {
        let a = Bins::from_samples(&(0..5000u64).map(|i| 1000 + (i * 7919) % 1000).collect::<Vec<_>>());
        let x = quantile_ratio(&a, &a, 0.5, Confidence::default()).unwrap();
        assert_eq!(x, quantile_ratio(&a, &a, 0.5, Confidence::default()).unwrap());
        assert!(x.lo < 1.0 && x.hi > 1.0, "{x:?}");
        // 99 % at ~1,000, 1 % at ~10,000, and p99 on the edge: the interval must reach both modes
        let gap: Vec<u64> = (0..5000u64).map(|i| if i % 100 == 0 { 10_000 + i % 7 } else { 1000 + i % 13 }).collect();
        let g = Bins::from_samples(&gap);
        let x = quantile_ratio(&g, &g, 0.99, Confidence::default()).unwrap();
        assert!(x.lo < 0.2 && x.hi > 5.0, "{x:?}");
    }
}

//! Distribution-free confidence intervals for percentiles, from order statistics.
//!
//! For n independent samples with continuous distribution F and ξ_p = F⁻¹(p), the number of
//! samples below ξ_p is Binomial(n, p), so for ranks l < u (1-based)
//! `P(X₍ₗ₎ ≤ ξ_p ≤ X₍ᵤ₎) = B(u−1) − B(l−1)` where B is the Binomial(n, p) CDF (David &
//! Nagaraja, *Order Statistics*, 3rd ed., §7.1; Hahn & Meeker, *Statistical Intervals*, §5.2).
//! The interval here is equal-tailed: `l − 1` is the largest k with B(k) ≤ α/2 and `u − 1` the
//! smallest k with B(k) ≥ 1 − α/2, so coverage is at least 1 − α whatever F is (ties only make it
//! more conservative). The binomial CDF is `statrs::distribution::Binomial` (0.18).
//!
//! **When a percentile means nothing.** The upper rank exists only if u ≤ n, i.e.
//! B(n−1) = 1 − pⁿ ≥ 1 − α/2, i.e. **pⁿ ≤ α/2**; the lower one only if (1 − p)ⁿ ≤ α/2. So a
//! percentile p has a two-sided interval at confidence 1 − α only from
//! `n ≥ ln(α/2) / ln(max(p, 1 − p))` samples ([`min_samples`]): at 95 %, p50 needs 6, p90 36, p99 368, p99.9
//! needs 3,688, p99.99 needs 36,887. Below that the sample's "p99.99" is its maximum, and no
//! amount of arithmetic says how far the true p99.99 lies above it: [`quantile_ci`] returns
//! [`QuantileInterval::TooFew`] instead of a number.
//!
//! From a histogram, an order statistic is known only to its bucket: the lower bound takes the
//! bucket's lowest value, the upper bound its highest, and the interval records the buckets'
//! relative width as its `resolution` (0 when exact).
use statrs::distribution::{Binomial, DiscreteCDF};

use super::bins::Bins;
use super::Confidence;

/// Smallest sample count at which percentile `p` (0 < p < 1) has a two-sided interval at `conf`.
pub fn min_samples(p: f64, conf: Confidence) -> u64 {
    let q = p.max(1.0 - p);
    (conf.tail().ln() / q.ln()).ceil().max(1.0) as u64
}

/// Smallest k in 0..=n with B(k) ≥ target (B(n) = 1, so one exists for target ≤ 1).
fn first_cdf_at_least(b: &Binomial, n: u64, target: f64) -> u64 {
    let (mut lo, mut hi) = (0u64, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if b.cdf(mid) >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The 1-based ranks `(l, u)` of the order statistics bounding percentile `p` of `n` samples at
/// `conf`, or `None` when one of them does not exist (see [`min_samples`]).
pub fn ranks(n: u64, p: f64, conf: Confidence) -> Option<(u64, u64)> {
    if n == 0 || !(p > 0.0 && p < 1.0) || n < min_samples(p, conf) {
        return None;
    }
    let b = Binomial::new(p, n).ok()?;
    let tail = conf.tail();
    // u − 1 = smallest k with B(k) ≥ 1 − α/2.
    let u = first_cdf_at_least(&b, n, 1.0 - tail) + 1;
    // l − 1 = largest k with B(k) ≤ α/2: one below the smallest k with B(k) > α/2.
    let first_above = first_cdf_at_least(&b, n, next_up(tail));
    let l = first_above; // (first_above − 1) + 1
    (l >= 1 && u <= n && l <= u).then_some((l, u))
}

fn next_up(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

/// A percentile's interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantileCi {
    pub p: f64,
    pub lo: f64,
    pub hi: f64,
    /// The order statistics used (1-based ranks).
    pub ranks: (u64, u64),
    /// Largest relative width of the buckets the bounds were read from (0 = exact samples).
    pub resolution: f64,
}

/// A percentile's interval, or why there is none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QuantileInterval {
    Ci(QuantileCi),
    /// `n` samples; at least `needed` are required for this percentile at this confidence.
    TooFew {
        n: u64,
        needed: u64,
    },
}

impl QuantileInterval {
    pub fn ci(&self) -> Option<&QuantileCi> {
        match self {
            QuantileInterval::Ci(c) => Some(c),
            QuantileInterval::TooFew { .. } => None,
        }
    }
}

/// Interval for percentile `p` of the distribution `bins` at `conf`.
pub fn quantile_ci(bins: &Bins, p: f64, conf: Confidence) -> QuantileInterval {
    let n = bins.count();
    let needed = min_samples(p, conf);
    let Some((l, u)) = ranks(n, p, conf) else { return QuantileInterval::TooFew { n, needed } };
    let (bl, bu) = (bins.at_rank(l).expect("rank within count"), bins.at_rank(u).expect("rank within count"));
    let rel = |b: &super::bins::Bin| if b.hi == b.lo { 0.0 } else { (b.hi - b.lo + 1) as f64 / b.lo.max(1) as f64 };
    QuantileInterval::Ci(QuantileCi { p, lo: bl.lo as f64, hi: bu.hi as f64, ranks: (l, u), resolution: rel(bl).max(rel(bu)) })
}

/// The percentile's fraction for a statistic name (`p50` → 0.5, `p99.9` → 0.999).
pub fn percentile_of(stat: &str) -> Option<f64> {
    let v: f64 = stat.strip_prefix('p')?.parse().ok()?;
    // rounded to 12 places so that `p99.99` is 0.9999, not 0.99989999…
    (v > 0.0 && v < 100.0).then(|| (v / 100.0 * 1e12).round() / 1e12)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c95() -> Confidence {
        Confidence::new(0.95).unwrap()
    }

    #[test]
    fn the_rule_matches_the_closed_form() {
        assert_eq!(min_samples(0.5, c95()), 6);
        assert_eq!(min_samples(0.99, c95()), 368);
        assert_eq!(min_samples(0.999, c95()), 3688);
        assert_eq!(min_samples(0.9999, c95()), 36887);
        // p99.99 of 5,000 samples: no upper order statistic
        assert_eq!(ranks(5_000, 0.9999, c95()), None);
        assert!(ranks(36_887, 0.9999, c95()).is_some());
        assert!(ranks(36_886, 0.9999, c95()).is_none());
    }

    #[test]
    fn ranks_have_the_binomial_coverage() {
        for &(n, p) in &[(6u64, 0.5), (100, 0.5), (1000, 0.9), (10_000, 0.99), (50_000, 0.9999), (368, 0.99)] {
            let (l, u) = ranks(n, p, c95()).unwrap();
            let b = Binomial::new(p, n).unwrap();
            let cover = b.cdf(u - 1) - if l >= 2 { b.cdf(l - 2) } else { 0.0 };
            assert!(cover >= 0.95 - 1e-12, "n {n} p {p}: ranks {l}..{u} cover {cover}");
            // and each tail is tight: one rank narrower would leave more than α/2 in it
            assert!(b.cdf(u - 2) < 0.975, "upper rank {u} not the smallest");
            assert!(b.cdf(l) > 0.025, "lower rank {l} not the largest");
        }
        // the median of 100: the textbook ranks 40 and 61
        assert_eq!(ranks(100, 0.5, c95()), Some((40, 61)));
    }

    #[test]
    fn intervals_from_samples_and_from_histograms() {
        let samples: Vec<u64> = (1..=1000).collect();
        let b = Bins::from_samples(&samples);
        let ci = *quantile_ci(&b, 0.5, c95()).ci().unwrap();
        assert_eq!((ci.lo, ci.hi, ci.resolution), (ci.ranks.0 as f64, ci.ranks.1 as f64, 0.0));
        assert!(ci.lo < 500.0 && ci.hi > 500.0);
        assert_eq!(quantile_ci(&b, 0.9999, c95()), QuantileInterval::TooFew { n: 1000, needed: 36887 });
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1 << 40, 3).unwrap();
        for v in 0..1000u64 {
            h.record(1_000_000 + v * 997).unwrap();
        }
        let hb = Bins::from_histogram(&h);
        let hci = *quantile_ci(&hb, 0.5, c95()).ci().unwrap();
        let exact = quantile_ci(&Bins::from_samples(&(0..1000u64).map(|v| 1_000_000 + v * 997).collect::<Vec<_>>()), 0.5, c95());
        let exact = exact.ci().unwrap();
        assert!(hci.lo <= exact.lo && hci.hi >= exact.hi, "histogram bounds enclose the exact ones");
        assert!(hci.resolution > 0.0 && hci.resolution <= 1.0 / 1024.0 + 1e-9);
    }

    #[test]
    fn percentile_names() {
        assert_eq!(percentile_of("p50"), Some(0.5));
        assert_eq!(percentile_of("p99.99"), Some(0.9999));
        assert_eq!(percentile_of("max"), None);
        assert_eq!(percentile_of("p100"), None);
    }
}

//! The B/A interval of a percentile from one run per side: the percentile bootstrap of the
//! ratio, computed exactly from the histograms' counts instead of by resampling (issue 36 item 8).
//!
//! **Why not Price–Bonett.** Reading each side's standard error off its order-statistic interval
//! and adding them in quadrature assumes each side's log percentile is roughly normal. Where a
//! percentile falls in a gap between modes (99 % fast, 1 % ten times slower: p99 sits on the
//! edge), a side's sample p99 lands in either mode, and the normal approximation around the point
//! estimate is wrong: the old interval covered the truth in 47 % of such pairs (coverage table:
//! `docs/is-it-real.md`, `cargo run --release -p results --example coverage`). The bootstrap
//! distribution of the ratio follows both modes, so its interval spans them when it must.
//!
//! **Exact, not resampled.** A bootstrap resample of n values has as its k-th order statistic
//! `F̂⁻¹(U₍ₖ₎)`, with `U₍ₖ₎ ~ Beta(k, n − k + 1)` the k-th of n uniforms and `F̂` the side's
//! empirical (histogram) distribution, so the resampled percentile lies at or below bin j with
//! probability `I_{F̂ⱼ}(k, n − k + 1)` (the regularized incomplete beta function; David &
//! Nagaraja, *Order Statistics*, §2.1; the "exact bootstrap" of Hutson & Ernst, JRSS B 62, 2000).
//! Each side's bootstrap law is thus known exactly on the few bins where it has mass, and the law
//! of ln b* − ln a* (the sides resample independently) is their convolution; its α/2 and
//! 1 − α/2 quantiles are the percentile interval, found by bisection. This is what an infinite
//! number of resamples would give: no Monte Carlo error, no random generator (the same inputs
//! give the same interval bit for bit), and the same cost at the gate's Bonferroni-corrected
//! levels (a tail of 10⁻⁶ needs no more work than one of 2.5 %), where a resampled bootstrap
//! would need ~50/tail resamples.
//!
//! **Bounded.** A side's law is kept on the bins whose cumulative probability lies within
//! [`NEGLIGIBLE`] of 0 or 1 (found by bisection over the bins), at most [`MAX_SUPPORT`] bins — the
//! rest of the mass, below 10⁻¹², is dropped; an order statistic of n samples spreads over about
//! ±7·√(n·p(1 − p)) ranks, and an HDR histogram has ~1,000 buckets per doubling, so the support
//! is tens to a few thousand bins. Cost: one incomplete-beta evaluation per bin of the support,
//! then 64 bisection steps of O(m_a · log m_b). A bin stands for its highest value and k = ⌈p·n⌉
//! is the rank HDR's `value_at_quantile` reads, as the summaries do, so the law is centred on the
//! point estimate.
use statrs::function::beta::beta_reg;

use super::bins::Bins;
use super::Confidence;

/// Probability left out at each end of a side's law.
pub const NEGLIGIBLE: f64 = 1e-12;
/// The most bins a side's law is kept on (the bins nearest the percentile's rank).
pub const MAX_SUPPORT: usize = 20_000;

/// The bootstrap of ln(B/A) for one percentile.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioBootstrap {
    /// B/A's percentile interval.
    pub lo: f64,
    pub hi: f64,
    /// Standard deviations of each side's bootstrap ln(percentile) (for sizing experiments).
    pub sd_a: f64,
    pub sd_b: f64,
    /// A side's law lies on both sides of an empty gap ([`Law::split`]): the percentile sits
    /// between two modes, and its spread does not shrink as 1/√n, so it sizes no experiment.
    pub between_modes: bool,
}

/// A gap between support points wider than this factor, with at least [`SPLIT_MASS`] of the law
/// on each side, makes a law two-point ([`RatioBootstrap::between_modes`]).
pub const SPLIT_GAP: f64 = 1.5;
/// See [`SPLIT_GAP`].
pub const SPLIT_MASS: f64 = 1e-3;

/// The rank ⌈p·n⌉ (at least 1) that HDR's `value_at_quantile` reads.
fn rank(p: f64, n: u64) -> u64 {
    ((p * n as f64).ceil() as u64).clamp(1, n)
}

/// One side's bootstrap law of ln(percentile): sorted values and cumulative probabilities.
#[derive(Debug, Clone, PartialEq)]
struct Law {
    ln: Vec<f64>,
    cdf: Vec<f64>,
}

impl Law {
    fn of(bins: &Bins, p: f64) -> Option<Law> {
        let n = bins.count();
        if n == 0 {
            return None;
        }
        let (k, all) = (rank(p, n), bins.bins());
        let (a, b) = (k as f64, (n - k + 1) as f64);
        // P(X* ≤ bin j) = I_{F_j}(k, n − k + 1), F_j the fraction of samples in bins 0..=j.
        let mut cum = 0u64;
        let fracs: Vec<f64> = all
            .iter()
            .map(|x| {
                cum += x.count;
                cum as f64 / n as f64
            })
            .collect();
        let cdf_at = |j: usize| if fracs[j] >= 1.0 { 1.0 } else { beta_reg(a, b, fracs[j]) };
        // first bin with CDF > NEGLIGIBLE, first with CDF ≥ 1 − NEGLIGIBLE (CDF is increasing)
        let first = |target: f64, strict: bool| {
            let (mut lo, mut hi) = (0usize, all.len() - 1);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let c = cdf_at(mid);
                if (strict && c > target) || (!strict && c >= target) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            lo
        };
        let start = first(NEGLIGIBLE, true);
        let end = first(1.0 - NEGLIGIBLE, false).max(start);
        // at most MAX_SUPPORT bins, centred on the percentile's own bin
        let centre = all.iter().scan(0u64, |c, x| {
            *c += x.count;
            Some(*c)
        });
        let at = centre.take_while(|&c| c < k).count();
        let (start, end) = if end - start + 1 > MAX_SUPPORT {
            let s = at.saturating_sub(MAX_SUPPORT / 2).max(start);
            (s, (s + MAX_SUPPORT - 1).min(end))
        } else {
            (start, end)
        };
        let mut ln = Vec::with_capacity(end - start + 1);
        let mut cdf = Vec::with_capacity(end - start + 1);
        for (j, bin) in all.iter().enumerate().take(end + 1).skip(start) {
            ln.push((bin.hi.max(1) as f64).ln());
            cdf.push(if j == end { 1.0 } else { cdf_at(j) });
        }
        Some(Law { ln, cdf })
    }

    /// P(ln X* ≤ x).
    fn cdf_at(&self, x: f64) -> f64 {
        let i = self.ln.partition_point(|&v| v <= x);
        if i == 0 {
            0.0
        } else {
            self.cdf[i - 1]
        }
    }

    /// (probability, value) of each support point.
    fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.cdf.iter().enumerate().map(|(i, &c)| (c - if i == 0 { 0.0 } else { self.cdf[i - 1] }, self.ln[i]))
    }

    /// Whether the law has at least [`SPLIT_MASS`] on each side of a gap between consecutive
    /// support points wider than a factor [`SPLIT_GAP`]: the resampled percentile jumps between two
    /// modes (issue 45 item 4).
    fn split(&self) -> bool {
        let gap = SPLIT_GAP.ln();
        (1..self.ln.len()).any(|i| self.ln[i] - self.ln[i - 1] > gap && self.cdf[i - 1] >= SPLIT_MASS && self.cdf[i - 1] <= 1.0 - SPLIT_MASS)
    }

    fn sd(&self) -> f64 {
        let m: f64 = self.points().map(|(w, v)| w * v).sum();
        self.points().map(|(w, v)| w * (v - m).powi(2)).sum::<f64>().max(0.0).sqrt()
    }
}

/// P(ln b* − ln a* ≤ t).
fn diff_cdf(a: &Law, b: &Law, t: f64) -> f64 {
    a.points().map(|(w, va)| w * b.cdf_at(va + t)).sum()
}

/// The smallest t with P(ln b* − ln a* ≤ t) ≥ q: bisection to the jump (the law is discrete),
/// then snapped onto the support point it converged to.
fn diff_quantile(a: &Law, b: &Law, q: f64) -> f64 {
    snap(a, b, bisect(a, b, q))
}

/// The support point lb − la nearest to `t`, when one lies within [`SNAP`] of it (else `t`).
///
/// Bisection ends within a few ulps of the jump but on either side of it, because
/// `la + t` rounds: on tied data (latencies on a 40 ns or 1 µs tick grid) the law has an atom at
/// exactly 0 and the end settled half an ulp below it, printed `1.000` and worded "faster"
/// (issue 45 item 1). The quantile of a discrete law *is* a support point, and a support point
/// with lb = la is exactly 0, so the ratio's end is exactly 1 and the word is right.
fn snap(a: &Law, b: &Law, t: f64) -> f64 {
    let mut best = (f64::INFINITY, t);
    for &va in &a.ln {
        let i = b.ln.partition_point(|&v| v < va + t);
        for &vb in b.ln.get(i.saturating_sub(1)..(i + 1).min(b.ln.len())).unwrap_or(&[]) {
            let d = vb - va;
            if (d - t).abs() < best.0 {
                best = ((d - t).abs(), d);
            }
        }
    }
    if best.0 <= SNAP {
        best.1
    } else {
        t
    }
}

/// How far (in ln ratio) a bisected end may lie from the support point it is snapped to: ~30
/// times the bisection's error (an ulp of ln(value), 3.6·10⁻¹⁵ for values up to e³⁰ ns), and below
/// |ln(b/a)| ≥ ~1/max(a, b) for any b ≠ a under 10⁴ s, so only a true tie snaps to exactly 0.
const SNAP: f64 = 1e-13;

fn bisect(a: &Law, b: &Law, q: f64) -> f64 {
    let (mut lo, mut hi) = (b.ln[0] - a.ln[a.ln.len() - 1], b.ln[b.ln.len() - 1] - a.ln[0]);
    if diff_cdf(a, b, lo) >= q {
        return lo;
    }
    for _ in 0..64 {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        if diff_cdf(a, b, mid) >= q {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The percentile bootstrap interval of B/A for percentile `p` at `conf`; `None` when a side is
/// empty.
pub fn quantile_ratio(a: &Bins, b: &Bins, p: f64, conf: Confidence) -> Option<RatioBootstrap> {
    let (la, lb) = (Law::of(a, p)?, Law::of(b, p)?);
    let lo = diff_quantile(&la, &lb, conf.tail());
    let hi = diff_quantile(&la, &lb, 1.0 - conf.tail());
    Some(RatioBootstrap { lo: lo.exp(), hi: hi.exp(), sd_a: la.sd(), sd_b: lb.sd(), between_modes: la.split() || lb.split() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::distribution::{Binomial, DiscreteCDF};

    #[test]
    fn the_law_of_a_resampled_order_statistic_is_exact() {
        // The median of 9 values 1..=9: P(X*₍₅₎ ≤ j) = P(Binomial(9, j/9) ≥ 5).
        let law = Law::of(&Bins::from_samples(&(1..=9).collect::<Vec<_>>()), 0.5).unwrap();
        for j in 1..9u64 {
            let want = 1.0 - Binomial::new(j as f64 / 9.0, 9).unwrap().cdf(4);
            assert!((law.cdf_at((j as f64).ln()) - want).abs() < 1e-12, "P(X* <= {j})");
        }
        assert_eq!(law.cdf_at(9f64.ln()), 1.0);
    }

    #[test]
    fn a_small_case_matches_enumeration() {
        // A = {1, 2}, B = {2, 4}, p50 of 2 samples (rank 1 = the smaller of the resample):
        // each side's resampled min is its low value w.p. 3/4. ln(b*/a*) = ln 2 w.p. 9/16 + 1/16,
        // ln 1 w.p. 3/16, ln 4 w.p. 3/16.
        let (a, b) = (Bins::from_samples(&[1, 2]), Bins::from_samples(&[2, 4]));
        let (la, lb) = (Law::of(&a, 0.5).unwrap(), Law::of(&b, 0.5).unwrap());
        let two = 2f64.ln();
        assert!((diff_cdf(&la, &lb, 0.0) - 3.0 / 16.0).abs() < 1e-12);
        assert!((diff_cdf(&la, &lb, two) - 13.0 / 16.0).abs() < 1e-12);
        assert!((diff_quantile(&la, &lb, 0.1) - 0.0).abs() < 1e-9);
        assert!((diff_quantile(&la, &lb, 0.5) - two).abs() < 1e-9);
        assert!((diff_quantile(&la, &lb, 0.9) - 2.0 * two).abs() < 1e-9);
    }

    #[test]
    fn same_inputs_same_interval_and_a_gap_is_spanned() {
        let a = Bins::from_samples(&(0..5000u64).map(|i| 1000 + (i * 7919) % 1000).collect::<Vec<_>>());
        let x = quantile_ratio(&a, &a, 0.5, Confidence::default()).unwrap();
        assert_eq!(x, quantile_ratio(&a, &a, 0.5, Confidence::default()).unwrap());
        assert!(x.lo < 1.0 && x.hi > 1.0 && (x.lo * x.hi - 1.0).abs() < 1e-9, "{x:?}");
        // 99 % at ~1,000, 1 % at ~10,000, and p99 on the edge: the interval must reach both modes
        let gap: Vec<u64> = (0..5000u64).map(|i| if i % 100 == 0 { 10_000 + i % 7 } else { 1000 + i % 13 }).collect();
        let g = Bins::from_samples(&gap);
        let gx = quantile_ratio(&g, &g, 0.99, Confidence::default()).unwrap();
        assert!(gx.lo < 0.2 && gx.hi > 5.0, "{gx:?}");
        assert!(gx.between_modes && !x.between_modes, "{gx:?} {x:?}");
        // a Bonferroni level costs nothing more and is wider
        let y = quantile_ratio(&a, &a, 0.5, Confidence::new(0.999_999).unwrap()).unwrap();
        assert!(y.lo < x.lo && y.hi > x.hi, "{y:?} vs {x:?}");
    }

    /// Issue 45 item 1: identical tied data (a 1 µs grid) must give an interval that holds 1
    /// exactly, not one whose upper end is 0.9999999999999991.
    #[test]
    fn tied_identical_sides_hold_exactly_one() {
        for n in [200u64, 1_000, 100_000] {
            let grid: Vec<u64> = (0..n).map(|i| 1000 * (8 + (i * 7919 % n) * 10 / n)).collect();
            let g = Bins::from_samples(&grid);
            for p in [0.5, 0.9, 0.99] {
                let x = quantile_ratio(&g, &g, p, Confidence::default()).unwrap();
                assert!(x.lo <= 1.0 && x.hi >= 1.0, "n {n} p {p}: {x:?}");
            }
        }
    }
}

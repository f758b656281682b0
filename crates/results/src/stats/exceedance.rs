//! The share of samples beyond a threshold (exceedance), and B − A of it with Newcombe's interval
//! (issue 45 item 5).
//!
//! **Why.** A patch that changes a rare slow path is what a gate most needs to catch, and a
//! percentile is the wrong lens for it: where 1 % of samples take a slow path, p99 sits on the
//! edge between the modes, its bootstrap interval spans both, and a real 1.7× change of the slow
//! path was caught 7–22 % of the time at 20,000 samples. The number of samples beyond a threshold
//! placed between the modes (say 50 µs, where the fast mode never reaches) is a binomial count
//! whatever the shape, and its difference between A and B resolves such a change from a few
//! thousand samples (the power table in docs/is-it-real.md).
//!
//! **The interval.** For k_A of n_A and k_B of n_B samples beyond T, the interval of
//! p_B − p_A is Newcombe's hybrid score interval (Newcombe, "Interval estimation for the
//! difference between independent proportions", Statistics in Medicine 17, 1998, method 10): each
//! side's Wilson score interval (Wilson, JASA 22, 1927) combined as
//! `δ − √((p_B − l_B)² + (u_A − p_A)²)` … `δ + √((u_B − p_B)² + (p_A − l_A)²)`. It behaves at
//! k = 0 and k = n (where the Wald interval has zero width) and keeps close to nominal coverage
//! for small counts; it assumes independent samples, like every within-run method here.
//!
//! **From a histogram**, a bucket counts as beyond T when its middle is above T: the threshold is
//! read to the bucket's resolution (0.1 % with irqlab's histograms), stated by [`Share::resolution`].
//! With repetitions the shares are of the pooled runs, which cannot see run-to-run variance (a
//! result keeps each run's summary, not its histogram); the row says so.
use serde::{Deserialize, Serialize};

use super::bins::Bins;
use super::verdict::{ClassData, Word};
use super::{Confidence, StatsError};

/// How many of a side's samples lie beyond the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub beyond: u64,
    pub n: u64,
    /// Relative width of the bucket the threshold falls in (0 when exact or on a bucket edge).
    pub resolution: f64,
}

impl Share {
    /// The share (0 when there are no samples).
    pub fn fraction(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.beyond as f64 / self.n as f64
        }
    }
}

/// The samples of `bins` beyond `threshold`.
pub fn share_beyond(bins: &Bins, threshold: u64) -> Share {
    let mut share = Share { beyond: 0, n: bins.count(), resolution: 0.0 };
    for b in bins.bins() {
        if b.mid() > threshold as f64 {
            share.beyond += b.count;
        }
        if b.lo <= threshold && threshold < b.hi {
            share.resolution = (b.hi - b.lo + 1) as f64 / b.lo.max(1) as f64;
        }
    }
    share
}

/// Wilson's score interval of k successes in n at normal quantile z.
fn wilson(k: u64, n: u64, z: f64) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Newcombe's hybrid score interval of p_B − p_A at `conf` (`None` when a side has no samples).
pub fn newcombe(a: Share, b: Share, conf: Confidence) -> Option<(f64, f64)> {
    if a.n == 0 || b.n == 0 {
        return None;
    }
    let z = conf.z();
    let ((la, ua), (lb, ub)) = (wilson(a.beyond, a.n, z), wilson(b.beyond, b.n, z));
    let (pa, pb) = (a.fraction(), b.fraction());
    let d = pb - pa;
    Some((d - ((pb - lb).powi(2) + (ua - pa).powi(2)).sqrt(), d + ((ub - pb).powi(2) + (pa - la).powi(2)).sqrt()))
}

/// B against A on the share beyond a threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareVerdict {
    /// The threshold (ns).
    pub threshold: u64,
    pub a: Share,
    pub b: Share,
    /// p_B − p_A.
    pub difference: f64,
    /// Its interval at the confidence asked (`None`: a side has no samples).
    pub interval: Option<(f64, f64)>,
    /// Slower: B has resolvably more samples beyond the threshold.
    pub word: Word,
    /// The runs were pooled (repetitions): the interval cannot see run-to-run variance.
    pub pooled_runs: bool,
}

impl ShareVerdict {
    /// The statistic's name, `share>T` with T in ns.
    pub fn stat(&self) -> String {
        format!("share>{}", self.threshold)
    }
}

/// Compare the share of samples beyond `threshold` (ns) of B against A at `conf`.
pub fn compare_share(a: &ClassData, b: &ClassData, threshold: u64, conf: Confidence) -> ShareVerdict {
    let (sa, sb) = (share_beyond(&a.bins, threshold), share_beyond(&b.bins, threshold));
    let interval = newcombe(sa, sb, conf);
    let word = match interval {
        Some((lo, _)) if lo > 0.0 => Word::Slower,
        Some((_, hi)) if hi < 0.0 => Word::Faster,
        _ => Word::NoDifference,
    };
    ShareVerdict { threshold, a: sa, b: sb, difference: sb.fraction() - sa.fraction(), interval, word, pooled_runs: a.runs.len() > 1 || b.runs.len() > 1 }
}

/// Parse a threshold: `50us`, `50µs`, `2ms`, `40000ns` or `40000` (ns), > 0.
pub fn parse_threshold(text: &str) -> Result<u64, StatsError> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(StatsError::Threshold(text.to_string())),
    };
    let v: f64 = num.parse().map_err(|_| StatsError::Threshold(text.to_string()))?;
    let ns = (v * scale).round();
    if ns.is_finite() && ns >= 1.0 && ns < 1e18 {
        Ok(ns as u64)
    } else {
        Err(StatsError::Threshold(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(beyond: u64, n: u64) -> Share {
        Share { beyond, n, resolution: 0.0 }
    }

    #[test]
    fn newcombe_matches_the_published_examples() {
        // Newcombe (1998), Table II, method 10: 56/70 − 48/80 → (0.0524, 0.3339); 9/10 − 3/10 →
        // (0.1705, 0.8090); 6/7 − 2/7 → (0.0582, 0.8062); 5/56 − 0/29 → (−0.0381, 0.1926).
        // Here A is the second group.
        let c = Confidence::default();
        for ((kb, nb, ka, na), (lo, hi)) in
            [((56, 70, 48, 80), (0.0524, 0.3339)), ((9, 10, 3, 10), (0.1705, 0.8090)), ((6, 7, 2, 7), (0.0582, 0.8062)), ((5, 56, 0, 29), (-0.0381, 0.1926))]
        {
            let (l, h) = newcombe(share(ka, na), share(kb, nb), c).unwrap();
            assert!((l - lo).abs() < 1e-3 && (h - hi).abs() < 1e-3, "{kb}/{nb} vs {ka}/{na}: ({l}, {h})");
        }
        // no events either side: an interval around 0, not a point
        let (l, h) = newcombe(share(0, 1000), share(0, 1000), c).unwrap();
        assert!(l < 0.0 && h > 0.0 && h < 0.005, "({l}, {h})");
        assert_eq!(newcombe(share(0, 0), share(1, 10), c), None);
    }

    #[test]
    fn a_rare_path_taken_more_often_is_slower_and_identical_sides_are_not() {
        let fast: Vec<u64> = (0..2000u64).map(|i| 10_000 + i % 500).collect();
        let mut slow = fast.clone();
        (0..60).for_each(|i| slow[i * 30] = 100_000);
        let (a, b) = (ClassData::from_samples(&fast), ClassData::from_samples(&slow));
        let v = compare_share(&a, &b, 50_000, Confidence::default());
        assert_eq!((v.a.beyond, v.b.beyond, v.word), (0, 60, Word::Slower), "{v:?}");
        assert!((v.difference - 0.03).abs() < 1e-12);
        assert_eq!(compare_share(&b, &a, 50_000, Confidence::default()).word, Word::Faster);
        assert_eq!(compare_share(&b, &b, 50_000, Confidence::default()).word, Word::NoDifference);
        assert_eq!(v.stat(), "share>50000");
    }

    #[test]
    fn thresholds_parse_with_units() {
        assert_eq!(parse_threshold("50us").unwrap(), 50_000);
        assert_eq!(parse_threshold("50µs").unwrap(), 50_000);
        assert_eq!(parse_threshold("1.5ms").unwrap(), 1_500_000);
        assert_eq!(parse_threshold("40000").unwrap(), 40_000);
        for bad in ["", "0", "-5us", "5 parsecs", "us", "1e30"] {
            assert!(parse_threshold(bad).is_err(), "{bad}");
        }
    }
}

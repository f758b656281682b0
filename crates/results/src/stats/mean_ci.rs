//! The interval of a mean: `mean ± t·s/√n` (Student's t, n − 1 degrees of freedom).
//!
//! Unlike the percentile intervals this rests on the central limit theorem, so it is honest only
//! when n is large against the tail's weight: a latency distribution with rare huge outliers
//! (a 10 ms preemption in 10,000 × 5 µs samples) has a mean whose interval understates its
//! uncertainty. The standard deviation comes from the bins (bucket midpoints, within 0.1 % for HDR
//! histograms); the point estimate is the exact mean the result stores.
use super::bins::Bins;
use super::Confidence;

/// `(lo, hi)` for the mean `mean` of `bins`; `None` below two samples.
pub fn mean_ci(bins: &Bins, mean: f64, conf: Confidence) -> Option<(f64, f64)> {
    let n = bins.count();
    if n < 2 {
        return None;
    }
    let (_, sd) = bins.mean_sd();
    let half = conf.t((n - 1) as f64) * sd / (n as f64).sqrt();
    Some((mean - half, mean + half))
}

/// Standard error of the mean.
pub fn mean_se(bins: &Bins) -> Option<f64> {
    let n = bins.count();
    (n >= 2).then(|| bins.mean_sd().1 / (n as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_interval_of_a_small_sample() {
        let b = Bins::from_samples(&[1, 2, 3, 4, 5]);
        let (lo, hi) = mean_ci(&b, 3.0, Confidence::new(0.95).unwrap()).unwrap();
        // s = 1.5811, t(4) = 2.7764 → half-width 1.9632
        assert!((hi - 3.0 - 1.96324).abs() < 1e-4 && (3.0 - lo - 1.96324).abs() < 1e-4, "{lo} {hi}");
        assert!(mean_ci(&Bins::from_samples(&[7]), 7.0, Confidence::default()).is_none());
    }
}

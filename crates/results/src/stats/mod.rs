//! # stats — is a difference real?
//!
//! Every source system was justified by an A/B benchmark whose spread nobody reported (issue 25).
//! This module turns a result's statistics into intervals and a comparison into verdicts:
//!
//! - [`bins`]: a latency distribution as sorted bins — exact values from raw samples, or the HDR
//!   histogram's buckets with their resolution — the one input every method here reads;
//! - [`order_ci`]: distribution-free confidence intervals for percentiles from order statistics
//!   (exact binomial), and the rule saying when a percentile has too few samples to mean anything;
//! - [`mean_ci`]: the interval of a mean (normal approximation, stated as such);
//! - [`interval`]: one statistic of one result with its interval (the report's error bars);
//! - [`bootstrap`]: the exact percentile bootstrap of a percentile's B/A from one run per side,
//!   from the histograms' counts (holds where a percentile falls between two modes);
//! - [`verdict`]: B/A with its interval and one word per statistic — within one run from the
//!   bootstrap (percentiles) or the t standard errors (mean), across repetitions from the
//!   between-run spread (Welch), for paired A B A B runs from the per-pair ratios;
//! - [`power`]: how many samples or repetitions would resolve a given effect;
//! - [`pairs`]: the verdicts of every paired class of a comparison, and what did not pair;
//! - [`gate`]: the one-sided regression gate of `compare --fail-on`, which names what it
//!   could not check instead of passing;
//! - [`early`]: early samples (before the deadline): which way is worse, and their share;
//! - [`exceedance`]: the share of samples beyond a threshold and B − A of it (Newcombe's
//!   interval), the statistic that catches a change in a rare slow path;
//! - [`ks`]: the two-sample Kolmogorov–Smirnov test on whole distributions;
//! - [`coverage`]: the simulation with known truth that checks all of the above (the table in
//!   docs/is-it-real.md, `cargo run --release -p results --example coverage`).
//!
//! Special functions (binomial and normal quantiles, Student's t, the incomplete beta) come from `statrs`; the
//! Kolmogorov distribution's series, which `statrs` lacks, is in [`ks`].
pub mod bins;
pub mod bootstrap;
pub mod coverage;
pub mod early;
pub mod exceedance;
pub mod gate;
pub mod interval;
pub mod ks;
pub mod mean_ci;
pub mod order_ci;
pub mod pairs;
pub mod power;
pub mod verdict;

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Bad parameters of a statistical question (they come from flags: the CLI exits 2 on them).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("confidence {0} is outside (0, 1); expected e.g. 0.95")]
    Confidence(f64),
    #[error("effect {0} must be greater than 0; expected e.g. 5% or 0.05")]
    Effect(f64),
    #[error("statistic `{0}` has no interval; expected one of mean, p50, p90, p99, p99.9, p99.99, min, max, warm_max")]
    UnknownStat(String),
    #[error("threshold `{0}`: expected a latency > 0 such as 50us, 2ms or 40000 (ns)")]
    Threshold(String),
}

/// A two-sided confidence level in (0, 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Confidence(f64);

impl Confidence {
    pub fn new(level: f64) -> Result<Confidence, StatsError> {
        if level > 0.0 && level < 1.0 {
            Ok(Confidence(level))
        } else {
            Err(StatsError::Confidence(level))
        }
    }

    pub fn level(self) -> f64 {
        self.0
    }

    /// α/2, the probability left in each tail.
    pub fn tail(self) -> f64 {
        (1.0 - self.0) / 2.0
    }

    /// The standard normal quantile z with P(|Z| ≤ z) = level.
    pub fn z(self) -> f64 {
        normal_quantile(1.0 - self.tail())
    }

    /// Student's t quantile with `df` degrees of freedom, two-sided at this level (`df` = ∞: the
    /// normal's).
    ///
    /// Up to [`T_EXACT_DF`] degrees of freedom from `statrs` (the inverse incomplete beta); above,
    /// from the Cornish–Fisher expansion in 1/df (Abramowitz & Stegun 26.7.5, four terms), whose
    /// error there is below 10⁻¹² at the levels irqlab uses. `statrs`' inverse incomplete beta
    /// never returns for a mean of ~15 M samples (df ≈ 1.5·10⁷), which hung `report` on a large
    /// class and `compare --effect 0.0001` (issue 45).
    pub fn t(self, df: f64) -> f64 {
        if df.is_nan() || df <= 0.0 {
            return f64::INFINITY;
        }
        let q = 1.0 - self.tail();
        if df > T_EXACT_DF {
            return t_expansion(normal_quantile(q), df);
        }
        StudentsT::new(0.0, 1.0, df).map(|t| t.inverse_cdf(q)).unwrap_or(f64::INFINITY)
    }
}

impl Default for Confidence {
    fn default() -> Self {
        Confidence(0.95)
    }
}

/// Above this many degrees of freedom [`Confidence::t`] uses the expansion [`t_expansion`].
pub const T_EXACT_DF: f64 = 1000.0;

/// Student's t quantile from the normal quantile `z` by the Cornish–Fisher expansion in 1/ν
/// (Abramowitz & Stegun 26.7.5); ν = ∞ gives `z`.
fn t_expansion(z: f64, nu: f64) -> f64 {
    let (z2, inv) = (z * z, 1.0 / nu);
    let g1 = z * (z2 + 1.0) / 4.0;
    let g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
    let g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
    let g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0;
    z + inv * (g1 + inv * (g2 + inv * (g3 + inv * g4)))
}

/// Standard normal quantile.
pub fn normal_quantile(q: f64) -> f64 {
    Normal::standard().inverse_cdf(q)
}

/// Parse an effect size: `5%` or `0.05` (relative change), must be > 0.
pub fn parse_effect(text: &str) -> Result<f64, StatsError> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| StatsError::Effect(f64::NAN))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(StatsError::Effect(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_bounds_and_quantiles() {
        assert!(Confidence::new(0.0).is_err() && Confidence::new(1.0).is_err() && Confidence::new(f64::NAN).is_err());
        let c = Confidence::new(0.95).unwrap();
        assert!((c.z() - 1.959964).abs() < 1e-5);
        assert!((c.t(4.0) - 2.776445).abs() < 1e-4);
        assert!(c.t(1e6) - c.z() < 1e-3);
    }

    /// Issue 45: the t quantile of a mean of 15–20 M samples never returned (statrs' inverse
    /// incomplete beta); above [`T_EXACT_DF`] the expansion gives it, continuous with statrs at
    /// the switch and equal to the normal's at ∞.
    #[test]
    fn t_quantiles_of_huge_samples_return_and_agree() {
        for level in [0.9, 0.95, 0.99, 0.999_999_9] {
            let c = Confidence::new(level).unwrap();
            let exact = StudentsT::new(0.0, 1.0, T_EXACT_DF).unwrap().inverse_cdf(1.0 - c.tail());
            assert!((t_expansion(c.z(), T_EXACT_DF) - exact).abs() < 1e-9 * exact, "level {level}: {exact}");
            for df in [1.5e7, 2e7, 1e12, f64::INFINITY] {
                let t = c.t(df);
                assert!(t >= c.z() && t - c.z() < 1e-5, "level {level} df {df}: {t}");
            }
        }
    }

    #[test]
    fn effects_parse_as_fractions() {
        assert_eq!(parse_effect("5%").unwrap(), 0.05);
        assert_eq!(parse_effect("0.1").unwrap(), 0.1);
        assert!(parse_effect("0").is_err() && parse_effect("-3%").is_err() && parse_effect("x").is_err());
    }
}

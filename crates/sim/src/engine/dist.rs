//! Cost distributions: how long one step of a delivery path takes.
//!
//! Published costs are usually a mean or median, sometimes with a tail; measurements give
//! samples. Supported: constant, uniform, normal clipped at zero, lognormal fitted from a median
//! and a p99 (the form tail-latency figures come in), and empirical (resample a list).
use super::rng::SimRng;
use super::time::SimTime;

/// z-score of the 99th percentile of the standard normal.
const Z99: f64 = 2.326_347_874_040_841;

/// A distribution of durations, parameters in nanoseconds.
#[derive(Clone, PartialEq)]
pub enum CostDist {
    Constant {
        ns: f64,
    },
    Uniform {
        min_ns: f64,
        max_ns: f64,
    },
    /// Normal, values below zero are clipped to zero.
    Normal {
        mean_ns: f64,
        sd_ns: f64,
    },
    /// Lognormal with the given median and 99th percentile (mu = ln median, sigma from p99).
    /// `sigma` is derived from the other two once, at construction ([`CostDist::lognormal`]),
    /// so that a draw costs one `exp` and no `ln`.
    LogNormal {
        median_ns: f64,
        p99_ns: f64,
        sigma: f64,
    },
    /// Resample uniformly from the listed values.
    Empirical {
        values_ns: Vec<f64>,
    },
}

/// Why a distribution's parameters are impossible.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DistError {
    #[error("cost must be a finite, non-negative number of ns, got {0}")]
    Negative(f64),
    #[error("cost must be at most {MAX_COST_NS:e} ns (1000 s), got {0:e}")]
    TooLarge(f64),
    #[error("uniform needs min_ns <= max_ns, got {0} > {1}")]
    UniformOrder(f64, f64),
    #[error("lognormal needs 0 < median_ns <= p99_ns, got median {0}, p99 {1}")]
    LogNormalOrder(f64, f64),
    #[error("empirical distribution needs at least one value")]
    EmptyEmpirical,
    #[error("lognormal needs p99_ns / median_ns at most {MAX_LOGNORMAL_SPREAD:e} (a tail the model can compute), got median {0:e}, p99 {1:e}")]
    LogNormalSpread(f64, f64),
}

/// Largest p99 / median of a lognormal cost: σ ≤ ln(1e6)/z₀.₉₉ ≈ 5.9. A median of 1e-300 ns
/// with any real p99 gave σ ≈ 300, whose mean e^(μ+σ²/2) is infinite (issue 36).
pub const MAX_LOGNORMAL_SPREAD: f64 = 1e6;

/// Largest single cost accepted (ns): 1000 s. Anything larger is a units mistake, and would
/// take the picosecond clock out of range within a few draws.
pub const MAX_COST_NS: f64 = 1e12;

fn check(v: f64) -> Result<(), DistError> {
    if v.is_finite() && v > MAX_COST_NS {
        return Err(DistError::TooLarge(v));
    }
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(DistError::Negative(v))
    }
}

/// sigma of the lognormal with this median and p99 (NaN or infinite for impossible parameters,
/// which [`CostDist::validate`] rejects).
fn lognormal_sigma(median_ns: f64, p99_ns: f64) -> f64 {
    (p99_ns / median_ns).ln() / Z99
}

// Written out rather than derived: the derived form would show `sigma`, and results record
// each cost's `Debug` text in their metadata, which must not change with how it is sampled.
impl std::fmt::Debug for CostDist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CostDist::Constant { ns } => f.debug_struct("Constant").field("ns", ns).finish(),
            CostDist::Uniform { min_ns, max_ns } => f.debug_struct("Uniform").field("min_ns", min_ns).field("max_ns", max_ns).finish(),
            CostDist::Normal { mean_ns, sd_ns } => f.debug_struct("Normal").field("mean_ns", mean_ns).field("sd_ns", sd_ns).finish(),
            CostDist::LogNormal { median_ns, p99_ns, .. } => f.debug_struct("LogNormal").field("median_ns", median_ns).field("p99_ns", p99_ns).finish(),
            CostDist::Empirical { values_ns } => f.debug_struct("Empirical").field("values_ns", values_ns).finish(),
        }
    }
}

impl CostDist {
    pub fn constant_ns(ns: f64) -> Self {
        CostDist::Constant { ns }
    }

    /// The lognormal with this median and 99th percentile.
    pub fn lognormal(median_ns: f64, p99_ns: f64) -> Self {
        CostDist::LogNormal { median_ns, p99_ns, sigma: lognormal_sigma(median_ns, p99_ns) }
    }

    /// Reject impossible parameters. Every constructor path from user input calls this.
    pub fn validate(&self) -> Result<(), DistError> {
        match self {
            CostDist::Constant { ns } => check(*ns),
            CostDist::Uniform { min_ns, max_ns } => {
                check(*min_ns)?;
                check(*max_ns)?;
                if min_ns > max_ns {
                    return Err(DistError::UniformOrder(*min_ns, *max_ns));
                }
                Ok(())
            }
            CostDist::Normal { mean_ns, sd_ns } => {
                check(*mean_ns)?;
                check(*sd_ns)
            }
            CostDist::LogNormal { median_ns, p99_ns, .. } => {
                check(*median_ns)?;
                check(*p99_ns)?;
                if *median_ns <= 0.0 || median_ns > p99_ns {
                    return Err(DistError::LogNormalOrder(*median_ns, *p99_ns));
                }
                if !(p99_ns / median_ns <= MAX_LOGNORMAL_SPREAD) {
                    return Err(DistError::LogNormalSpread(*median_ns, *p99_ns));
                }
                Ok(())
            }
            CostDist::Empirical { values_ns } => {
                if values_ns.is_empty() {
                    return Err(DistError::EmptyEmpirical);
                }
                values_ns.iter().try_for_each(|v| check(*v))
            }
        }
    }

    /// Draw one duration in nanoseconds. The two kinds nearly every profile cost has are drawn
    /// inline at the call site (a few instructions and no call); the rest out of line.
    #[inline]
    pub fn sample_ns(&self, rng: &mut SimRng) -> f64 {
        match self {
            CostDist::LogNormal { median_ns, sigma, .. } => median_ns * super::exp::exp(sigma * rng.standard_normal()),
            CostDist::Constant { ns } => *ns,
            _ => self.sample_other_ns(rng),
        }
    }

    #[inline(never)]
    fn sample_other_ns(&self, rng: &mut SimRng) -> f64 {
        match self {
            CostDist::Constant { ns } => *ns,
            CostDist::Uniform { min_ns, max_ns } => min_ns + (max_ns - min_ns) * rng.f64(),
            CostDist::Normal { mean_ns, sd_ns } => (mean_ns + sd_ns * rng.standard_normal()).max(0.0),
            CostDist::LogNormal { median_ns, sigma, .. } => median_ns * super::exp::exp(sigma * rng.standard_normal()),
            CostDist::Empirical { values_ns } => values_ns[rng.below(values_ns.len() as u64) as usize],
        }
    }

    /// Draw one duration.
    #[inline]
    pub fn sample(&self, rng: &mut SimRng) -> SimTime {
        SimTime::from_ns_f64(self.sample_ns(rng))
    }

    /// The distribution's mean in ns (exact for all kinds except the clipped normal, where the
    /// unclipped mean is returned).
    pub fn mean_ns(&self) -> f64 {
        match self {
            CostDist::Constant { ns } => *ns,
            CostDist::Uniform { min_ns, max_ns } => (min_ns + max_ns) / 2.0,
            CostDist::Normal { mean_ns, .. } => *mean_ns,
            CostDist::LogNormal { median_ns, sigma, .. } => median_ns * (sigma * sigma / 2.0).exp(),
            CostDist::Empirical { values_ns } => values_ns.iter().sum::<f64>() / values_ns.len() as f64,
        }
    }

    /// The fields of a profile's `[costs.NAME]` entry that describe this distribution (without
    /// `source` and `basis`).
    pub fn to_spec_table(&self) -> toml::Table {
        let mut t = toml::Table::new();
        let mut put = |k: &str, v: f64| {
            t.insert(k.into(), toml::Value::Float((v * 1000.0).round() / 1000.0));
        };
        match self {
            CostDist::Constant { ns } => put("ns", *ns),
            CostDist::Uniform { min_ns, max_ns } => {
                put("min_ns", *min_ns);
                put("max_ns", *max_ns);
            }
            CostDist::Normal { mean_ns, sd_ns } => {
                put("mean_ns", *mean_ns);
                put("sd_ns", *sd_ns);
            }
            CostDist::LogNormal { median_ns, p99_ns, .. } => {
                put("median_ns", *median_ns);
                put("p99_ns", *p99_ns);
            }
            CostDist::Empirical { values_ns } => {
                t.insert("values_ns".into(), toml::Value::Array(values_ns.iter().map(|v| toml::Value::Float(*v)).collect()));
            }
        }
        t
    }

    /// The same distribution with every duration multiplied by `f` (e.g. a DEBUG build).
    pub fn scaled(&self, f: f64) -> CostDist {
        match self {
            CostDist::Constant { ns } => CostDist::Constant { ns: ns * f },
            CostDist::Uniform { min_ns, max_ns } => CostDist::Uniform { min_ns: min_ns * f, max_ns: max_ns * f },
            CostDist::Normal { mean_ns, sd_ns } => CostDist::Normal { mean_ns: mean_ns * f, sd_ns: sd_ns * f },
            CostDist::LogNormal { median_ns, p99_ns, .. } => CostDist::lognormal(median_ns * f, p99_ns * f),
            CostDist::Empirical { values_ns } => CostDist::Empirical { values_ns: values_ns.iter().map(|v| v * f).collect() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::RngStreams;

    fn quantile(d: &CostDist, q: f64) -> f64 {
        let mut r = RngStreams::new(3).stream("d");
        let mut v: Vec<f64> = (0..100_000).map(|_| d.sample_ns(&mut r)).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[(q * v.len() as f64) as usize]
    }

    #[test]
    fn lognormal_hits_median_and_p99() {
        let d = CostDist::lognormal(1000.0, 3000.0);
        let m = quantile(&d, 0.5);
        let p = quantile(&d, 0.99);
        assert!((m - 1000.0).abs() < 20.0, "median {m}");
        assert!((p - 3000.0).abs() < 120.0, "p99 {p}");
    }

    #[test]
    fn normal_is_clipped_at_zero() {
        let d = CostDist::Normal { mean_ns: 1.0, sd_ns: 10.0 };
        assert_eq!(quantile(&d, 0.01), 0.0);
    }

    #[test]
    fn uniform_and_empirical_stay_in_range() {
        let u = CostDist::Uniform { min_ns: 5.0, max_ns: 7.0 };
        assert!(quantile(&u, 0.0) >= 5.0 && quantile(&u, 0.9999) < 7.0);
        let e = CostDist::Empirical { values_ns: vec![1.0, 2.0, 9.0] };
        let mut r = RngStreams::new(1).stream("e");
        let seen: std::collections::BTreeSet<u64> = (0..300).map(|_| e.sample_ns(&mut r) as u64).collect();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![1, 2, 9]);
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        assert_eq!(CostDist::Constant { ns: -1.0 }.validate(), Err(DistError::Negative(-1.0)));
        assert!(CostDist::Constant { ns: f64::NAN }.validate().is_err());
        assert!(CostDist::Uniform { min_ns: 3.0, max_ns: 1.0 }.validate().is_err());
        assert!(CostDist::lognormal(5.0, 1.0).validate().is_err());
        assert!(CostDist::lognormal(0.0, 1.0).validate().is_err());
        assert!(CostDist::Empirical { values_ns: vec![] }.validate().is_err());
        assert!(CostDist::Normal { mean_ns: 1.0, sd_ns: -2.0 }.validate().is_err());
    }

    #[test]
    fn means_and_scaling() {
        assert_eq!(CostDist::Uniform { min_ns: 2.0, max_ns: 4.0 }.mean_ns(), 3.0);
        assert_eq!(CostDist::Constant { ns: 2.0 }.scaled(1.5), CostDist::Constant { ns: 3.0 });
        let ln = CostDist::lognormal(100.0, 100.0);
        assert!((ln.mean_ns() - 100.0).abs() < 1e-9);
    }
}

//! One result's statistic with its interval (no comparison): what `report` draws as error bars.
//!
//! One run: percentiles from order statistics ([`super::order_ci`], with the histogram's
//! resolution folded in), the mean from [`super::mean_ci`]. With repetitions: the runs' values
//! of the statistic, `exp(m ± t·s/√R)` on the log scale (Student's t, R − 1 degrees of freedom) —
//! the between-run spread, as in [`super::verdict`]. Percentiles without enough samples (per run
//! with repetitions) and the extremes of one run get no interval and the reason.
use crate::compare::summary_stat;

use super::order_ci::{min_samples, percentile_of, quantile_ci, QuantileInterval};
use super::verdict::ClassData;
use super::{mean_ci, Confidence};

/// A statistic's value and interval, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct StatInterval {
    pub stat: String,
    pub value: f64,
    pub interval: Result<(f64, f64), NoInterval>,
}

/// Why a statistic has no interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoInterval {
    #[error("too few samples per run (needs {needs}, a run has {has})")]
    FewPerRun { needs: u64, has: u64 },
    #[error("a run's value is 0")]
    ZeroRun,
    #[error("too few samples (needs {needs}, has {has})")]
    FewSamples { needs: u64, has: u64 },
    #[error("fewer than 2 samples")]
    FewerThanTwo,
    #[error("an extreme of one run has no interval")]
    Extreme,
}

/// `stat` (a name of `VERDICT_STATS`) of `d` at `conf`.
pub fn stat_interval(d: &ClassData, stat: &str, conf: Confidence) -> Option<StatInterval> {
    let value = summary_stat(&d.summary, stat)?;
    let p = percentile_of(stat);
    let interval = if d.runs.len() >= 2 {
        let shortest = d.runs.iter().map(|s| s.count).min().unwrap_or(0);
        match p.map(|p| min_samples(p, conf)).filter(|&n| shortest < n) {
            Some(n) => Err(NoInterval::FewPerRun { needs: n, has: shortest }),
            None => {
                let v: Vec<f64> = d.runs.iter().filter_map(|s| summary_stat(s, stat)).collect();
                if v.iter().any(|&x| x <= 0.0) {
                    Err(NoInterval::ZeroRun)
                } else {
                    let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
                    let r = l.len() as f64;
                    let m = l.iter().sum::<f64>() / r;
                    let s = (l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (r - 1.0)).sqrt();
                    let half = conf.t(r - 1.0) * s / r.sqrt();
                    Ok(((m - half).exp(), (m + half).exp()))
                }
            }
        }
    } else if let Some(p) = p {
        match quantile_ci(&d.bins, p, conf) {
            QuantileInterval::Ci(c) => Ok((c.lo, c.hi)),
            QuantileInterval::TooFew { n, needed } => Err(NoInterval::FewSamples { needs: needed, has: n }),
        }
    } else if stat == "mean" {
        mean_ci::mean_ci(&d.bins, value, conf).ok_or(NoInterval::FewerThanTwo)
    } else {
        Err(NoInterval::Extreme)
    };
    Some(StatInterval { stat: stat.into(), value, interval })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::Summary;

    #[test]
    fn one_run_and_repetitions() {
        let d = ClassData::from_samples(&(1..=2000u64).collect::<Vec<_>>());
        let c = Confidence::default();
        let p50 = stat_interval(&d, "p50", c).unwrap();
        let (lo, hi) = p50.interval.unwrap();
        assert!(lo < p50.value && p50.value < hi);
        assert!(stat_interval(&d, "p99.99", c).unwrap().interval.unwrap_err().to_string().contains("36887"));
        assert!(stat_interval(&d, "max", c).unwrap().interval.is_err());
        let mut r = d.clone();
        r.runs = [100u64, 110, 90].iter().map(|&v| Summary { count: 2000, max: v, ..Default::default() }).collect();
        let (lo, hi) = stat_interval(&r, "max", c).unwrap().interval.unwrap();
        assert!(lo < 99.0 && hi > 101.0 && lo > 60.0 && hi < 160.0, "{lo} {hi}");
    }
}

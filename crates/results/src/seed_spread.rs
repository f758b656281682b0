//! The same configuration run with several seeds: the median and range of each statistic.
//!
//! A single seed can hide a model that is bimodal across seeds (a busy neighbour that sometimes
//! lands on the vCPU's wake-up, sometimes not): one table row then says "p50 1.9 µs" where other
//! seeds give 0.5–0.9 ms. With `seeds = N` every point runs N times; the row keeps the first
//! seed's result (so N = 1 and N > 1 agree on it) and carries this spread beside it.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::compare::{summary_stat, COMPARED_STATS};
use crate::run::ConfigResult;

/// Median, minimum and maximum of one statistic over the seeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    #[serde(with = "crate::float")]
    pub median: f64,
    #[serde(with = "crate::float")]
    pub min: f64,
    #[serde(with = "crate::float")]
    pub max: f64,
}

impl Spread {
    /// Of a non-empty list of values (NaN sorts last and so never becomes the minimum).
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Some(Spread { median, min: v[0], max: v[n - 1] })
    }

    /// max / min, the factor the seeds disagree by (infinite when min is 0 and max is not).
    pub fn ratio(&self) -> f64 {
        if self.max == self.min {
            1.0
        } else {
            self.max / self.min
        }
    }
}

/// Spread of every latency statistic (`class/stat`, ns) and figure (`figure/NAME`) over the seeds
/// a configuration ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SeedSpread {
    /// The seeds, in the order they ran; the first is the configuration's own `seed`.
    pub seeds: Vec<u64>,
    pub stats: BTreeMap<String, Spread>,
}

impl SeedSpread {
    /// Over replicas of one configuration (the same point, different seeds; none failed).
    pub fn over(replicas: &[&ConfigResult]) -> SeedSpread {
        let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in replicas {
            for (class, lat) in &r.classes {
                for stat in COMPARED_STATS {
                    if let Some(v) = summary_stat(&lat.summary, stat) {
                        values.entry(format!("{class}/{stat}")).or_default().push(v);
                    }
                }
            }
            for (name, f) in &r.figures {
                values.entry(format!("figure/{name}")).or_default().push(f.value);
            }
        }
        SeedSpread { seeds: replicas.iter().map(|r| r.seed).collect(), stats: values.into_iter().filter_map(|(k, v)| Some((k, Spread::of(&v)?))).collect() }
    }

    /// Spread of `stat` of `class` (stat names as in [`COMPARED_STATS`]).
    pub fn latency(&self, class: &str, stat: &str) -> Option<&Spread> {
        self.stats.get(&format!("{class}/{stat}"))
    }

    pub fn figure(&self, name: &str) -> Option<&Spread> {
        self.stats.get(&format!("figure/{name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts_and_range() {
        let s = Spread::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (3.0, 1.0, 5.0));
        let s = Spread::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 4.0));
        assert!(Spread::of(&[]).is_none());
        assert_eq!(Spread::of(&[2.0, 8.0]).unwrap().ratio(), 4.0);
    }

    #[test]
    fn spread_over_replicas_reads_each_class_and_figure() {
        let mk = |seed: u64, base: u64, tput: f64| {
            let mut rec = crate::LatencyRecorder::new(0);
            for i in 0..100 {
                rec.record(base + i);
            }
            let mut c = ConfigResult::new("x");
            c.seed = seed;
            c.classes.insert("timer".into(), rec.finish());
            c.set_figure("iops", tput, "1/s");
            c
        };
        let (a, b, c) = (mk(7, 1000, 10.0), mk(8, 5000, 30.0), mk(9, 2000, 20.0));
        let s = SeedSpread::over(&[&a, &b, &c]);
        assert_eq!(s.seeds, vec![7, 8, 9]);
        let min = s.latency("timer", "min").unwrap();
        assert_eq!((min.min, min.median, min.max), (1000.0, 2000.0, 5000.0));
        let f = s.figure("iops").unwrap();
        assert_eq!((f.min, f.median, f.max), (10.0, 20.0, 30.0));
    }
}

//! Repetitions as data: each run's summary and the pooled distribution.
//!
//! One run says nothing about run-to-run noise: a fresh VM lands its vCPU thread on another
//! core, a seed puts a neighbour's burst elsewhere. With `irqlab run --repeat N` or `irqlab sim
//! --seeds N` a configuration keeps, per class, every repetition's summary (count, mean, p50 …
//! p99.99, max) in run order and the pooled histogram of all of them. The verdicts of `compare`
//! read the per-run summaries for the between-run spread (`stats::verdict`), and the pooled
//! histogram for the whole-distribution test.
//!
//! Old results have no `repetitions` and still read (the field is optional, so schema version 1
//! is unchanged: a reader that predates it ignores it and sees the configuration's own classes).
use std::collections::BTreeMap;

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::latency::{LatencyClass, Summary, HIST_HIGH_NS, HIST_SIGFIG};
use crate::run::ConfigResult;

/// One repetition of a configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Repetition {
    /// The seed it ran with (model runs); absent for measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// When the run started, UTC, RFC 3339 (its result's `provenance.started`), when known.
    /// With it, `compare` sees that A's and B's runs were made alternately (A B A B) and pairs
    /// run i of A with run i of B (`stats::pairs`). Optional: older results read without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// Summary per class.
    pub classes: BTreeMap<String, Summary>,
}

/// Every repetition of a configuration and the pooled distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Repetitions {
    pub runs: Vec<Repetition>,
    /// Per class, all repetitions' samples in one histogram (exact count, mean, min, max).
    pub pooled: BTreeMap<String, LatencyClass>,
}

/// Why repetitions could not be pooled.
#[derive(Debug, thiserror::Error)]
pub enum RepetitionsError {
    #[error("repetition {run}: {source}")]
    Histogram { run: usize, source: crate::ResultsError },
    #[error("repetition {run}: class `{class}` is in {unit_here} but repetition 1 has it in {unit_first}")]
    Unit { run: usize, class: String, unit_here: String, unit_first: String },
}

impl Repetitions {
    /// Over the repetitions of one configuration, in run order (failed ones left out by the
    /// caller). A class missing from some runs is pooled over the runs that have it.
    pub fn over(runs: &[&ConfigResult]) -> Result<Repetitions, RepetitionsError> {
        let mut pooled: BTreeMap<String, (String, Histogram<u64>, Vec<Summary>)> = BTreeMap::new();
        for (i, r) in runs.iter().enumerate() {
            for (class, lc) in &r.classes {
                let h = lc.histogram(class).map_err(|source| RepetitionsError::Histogram { run: i + 1, source })?;
                let entry = pooled
                    .entry(class.clone())
                    .or_insert_with(|| (lc.unit.clone(), Histogram::new_with_bounds(1, HIST_HIGH_NS, HIST_SIGFIG).expect("constant bounds"), Vec::new()));
                if entry.0 != lc.unit {
                    return Err(RepetitionsError::Unit { run: i + 1, class: class.clone(), unit_here: lc.unit.clone(), unit_first: entry.0.clone() });
                }
                entry.1.add(&h).expect("same bounds");
                entry.2.push(lc.summary.clone());
            }
        }
        Ok(Repetitions {
            runs: runs.iter().map(|r| Repetition { seed: Some(r.seed), started: None, classes: r.classes.iter().map(|(k, v)| (k.clone(), v.summary.clone())).collect() }).collect(),
            pooled: pooled.into_iter().map(|(k, (unit, h, sums))| (k, pooled_class(unit, &h, &sums))).collect(),
        })
    }

    /// Each run's summary of `class`, in run order (runs without it left out).
    pub fn summaries(&self, class: &str) -> Vec<Summary> {
        self.runs.iter().filter_map(|r| r.classes.get(class).cloned()).collect()
    }

    /// The runs' start times, when every run has one.
    pub fn started(&self) -> Option<Vec<&str>> {
        self.runs.iter().map(|r| r.started.as_deref()).collect()
    }

    pub fn len(&self) -> usize {
        self.runs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

/// The pooled class: percentiles from the merged histogram (clamped to the exact min and max),
/// count, min, mean, max and warm max exact from the runs' summaries.
fn pooled_class(unit: String, h: &Histogram<u64>, sums: &[Summary]) -> LatencyClass {
    let count: u64 = sums.iter().map(|s| s.count).sum();
    let nonempty = || sums.iter().filter(|s| s.count > 0);
    let min = nonempty().map(|s| s.min).min().unwrap_or(0);
    let max = nonempty().map(|s| s.max).max().unwrap_or(0);
    let mean = if count == 0 { 0.0 } else { nonempty().map(|s| s.mean * s.count as f64).sum::<f64>() / count as f64 };
    let q = |p: f64| if count == 0 { 0 } else { h.value_at_quantile(p).clamp(min, max) };
    let summary = Summary {
        count,
        min,
        mean,
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        p999: q(0.999),
        p9999: q(0.9999),
        max,
        warm_max: sums.iter().map(|s| s.warm_max).max().unwrap_or(0),
        warmup: sums.first().map(|s| s.warmup).unwrap_or(0),
        clamped_low: sums.iter().map(|s| s.clamped_low).sum(),
        clamped_high: sums.iter().map(|s| s.clamped_high).sum(),
    };
    let mut buf = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut buf).expect("serialising into a Vec cannot fail");
    LatencyClass { unit, summary, histogram: base64::engine::general_purpose::STANDARD.encode(buf) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LatencyRecorder;

    fn run(seed: u64, values: impl Iterator<Item = u64>) -> ConfigResult {
        let mut rec = LatencyRecorder::new(0);
        values.for_each(|v| rec.record(v));
        let mut c = ConfigResult::new("x");
        c.seed = seed;
        c.classes.insert("timer".into(), rec.finish());
        c
    }

    #[test]
    fn pooled_equals_one_recorder_over_all_samples() {
        let (a, b) = (run(1, 1000..2000), run(2, 5000..5500));
        let reps = Repetitions::over(&[&a, &b]).unwrap();
        assert_eq!(reps.len(), 2);
        assert_eq!(reps.runs[1].seed, Some(2));
        assert_eq!(reps.summaries("timer")[0], a.classes["timer"].summary);
        let all = run(0, (1000..2000).chain(5000..5500));
        assert_eq!(reps.pooled["timer"].summary, all.classes["timer"].summary);
        assert_eq!(reps.pooled["timer"].histogram("timer").unwrap().len(), 1500);
    }

    #[test]
    fn results_with_and_without_repetitions_read() {
        let (a, b) = (run(1, 1000..2000), run(2, 5000..5500));
        let mut r = crate::RunResult::new(crate::RunMeta::named("t", "s", 1, crate::ResultKind::Predicted));
        let mut row = a.clone();
        row.repetitions = Some(Repetitions::over(&[&a, &b]).unwrap());
        r.configs.push(row);
        let text = crate::to_json_string(&r);
        assert_eq!(crate::from_json_str(&text, "new.json").unwrap(), r);
        // an older result has no `repetitions` key at all, and schema version 1 still
        let old = text.replace("\"repetitions\"", "\"ignored_by_old_readers\"");
        let back = crate::from_json_str(&old, "old.json").unwrap();
        assert!(back.configs[0].repetitions.is_none() && back.schema_version == 1);
        // start times are optional: absent they are not written, present they read back
        assert!(!text.contains("\"started\": \"") && r.configs[0].repetitions.as_ref().unwrap().started().is_none());
        let mut timed = r.clone();
        let reps = timed.configs[0].repetitions.as_mut().unwrap();
        reps.runs.iter_mut().zip(["2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"]).for_each(|(run, t)| run.started = Some(t.into()));
        let back = crate::from_json_str(&crate::to_json_string(&timed), "timed.json").unwrap();
        assert_eq!(back.configs[0].repetitions.as_ref().unwrap().started(), Some(vec!["2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"]));
        // a broken pooled histogram is refused, naming it
        let bad = text.replacen(&r.configs[0].repetitions.as_ref().unwrap().pooled["timer"].histogram, "AAAA", 1);
        let e = crate::from_json_str(&bad, "bad.json").unwrap_err().to_string();
        assert!(e.contains("bad.json") && e.contains("pooled repetitions"), "{e}");
    }

    #[test]
    fn mixed_units_are_refused_with_the_run() {
        let a = run(1, 1..10);
        let mut b = run(2, 1..10);
        b.classes.get_mut("timer").unwrap().unit = "cycles".into();
        let e = Repetitions::over(&[&a, &b]).unwrap_err().to_string();
        assert!(e.contains("repetition 2") && e.contains("cycles"), "{e}");
    }
}

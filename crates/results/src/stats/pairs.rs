//! Verdicts for every paired (configuration, class) of a comparison, and what did not pair.
//!
//! [`crate::compare`] pairs configurations; this reads each pair's classes into
//! [`ClassData`] — the pooled distribution and the per-run summaries when a side has
//! repetitions, the class itself otherwise — and runs [`compare_stat`] on every statistic and
//! the KS test on the whole distribution. Differences that make a verdict mean less are stated,
//! not hidden: a class in one side only, different units (no verdict), different repetition
//! counts, repetitions on one side only (the within-run method then treats the pooled runs as
//! one, which ignores their spread).
use crate::compare::Comparison;
use crate::run::{ConfigResult, RunResult};

use super::ks::{ks_two_sample, KsTest};
use super::verdict::{compare_stat, ClassData, Verdict, VERDICT_STATS};
use super::Confidence;

/// The verdicts of one paired class.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassVerdicts {
    /// The pair's label (as in the comparison's rows).
    pub config: String,
    pub class: String,
    /// Repetitions behind each side (1 without).
    pub runs_a: usize,
    pub runs_b: usize,
    pub stats: Vec<Verdict>,
    pub ks: Option<KsTest>,
}

impl ClassVerdicts {
    pub fn get(&self, stat: &str) -> Option<&Verdict> {
        self.stats.iter().find(|v| v.stat == stat)
    }
}

/// Every paired class's verdicts and the notes on what did not pair.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdicts {
    pub classes: Vec<ClassVerdicts>,
    pub mismatches: Vec<String>,
}

/// One side's data for `class` of `config`.
pub fn class_data(config: &ConfigResult, class: &str) -> Result<Option<ClassData>, crate::ResultsError> {
    if let Some(reps) = config.repetitions.as_ref().filter(|r| r.len() > 1) {
        if let Some(pooled) = reps.pooled.get(class) {
            return ClassData::from_class(class, pooled, reps.summaries(class)).map(Some);
        }
    }
    config.classes.get(class).map(|lc| ClassData::from_class(class, lc, Vec::new())).transpose()
}

fn runs(c: &ConfigResult) -> usize {
    c.repetitions.as_ref().map(|r| r.len()).filter(|&n| n > 1).unwrap_or(1)
}

/// Verdicts for every pair of `comparison` (made from `a` and `b`).
pub fn verdicts(a: &RunResult, b: &RunResult, comparison: &Comparison, conf: Confidence) -> Result<Verdicts, crate::ResultsError> {
    let mut out = Verdicts::default();
    for p in &comparison.pairs {
        let (ca, cb) = (&a.configs[p.a], &b.configs[p.b]);
        let label = if ca.name == cb.name { ca.name.clone() } else { format!("{} | {}", ca.name, cb.name) };
        for class in ca.classes.keys().filter(|k| !cb.classes.contains_key(*k)) {
            out.mismatches.push(format!("{label}: class `{class}` is only in A"));
        }
        for class in cb.classes.keys().filter(|k| !ca.classes.contains_key(*k)) {
            out.mismatches.push(format!("{label}: class `{class}` is only in B"));
        }
        let (ra, rb) = (runs(ca), runs(cb));
        if ra != rb {
            let how = if ra == 1 || rb == 1 {
                "the side without repetitions is compared within its run, and the other's runs are pooled as one, ignoring their spread"
            } else {
                "Welch's interval allows unequal counts, but the experiments differ"
            };
            out.mismatches.push(format!("{label}: A has {ra} repetition(s), B has {rb}: {how}"));
        }
        for (class, la) in &ca.classes {
            let Some(lb) = cb.classes.get(class) else { continue };
            if la.unit != lb.unit {
                out.mismatches.push(format!("{label}: class `{class}` is in {} in A but {} in B: no verdict", la.unit, lb.unit));
                continue;
            }
            let (Some(da), Some(db)) = (class_data(ca, class)?, class_data(cb, class)?) else { continue };
            let stats = VERDICT_STATS.iter().map(|s| compare_stat(&da, &db, s, conf).expect("known statistic")).collect();
            out.classes.push(ClassVerdicts { config: label.clone(), class: class.clone(), runs_a: ra, runs_b: rb, stats, ks: ks_two_sample(&da.bins, &db.bins) });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::verdict::Word;
    use crate::{compare, LatencyRecorder, Repetitions, ResultKind, RunMeta};

    fn config(name: &str, base: u64, reps: usize) -> ConfigResult {
        let one = |k: u64| {
            let mut rec = LatencyRecorder::new(0);
            (0..5000u64).for_each(|i| rec.record(base + (i * 7919 + k * 13) % 5000));
            let mut c = ConfigResult::new(name);
            c.seed = k;
            c.classes.insert("timer".into(), rec.finish());
            c
        };
        let all: Vec<ConfigResult> = (0..reps as u64).map(one).collect();
        let mut first = all[0].clone();
        if reps > 1 {
            first.repetitions = Some(Repetitions::over(&all.iter().collect::<Vec<_>>()).unwrap());
        }
        first
    }

    fn result(configs: Vec<ConfigResult>) -> RunResult {
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured));
        r.configs = configs;
        r
    }

    #[test]
    fn every_pair_gets_verdicts_and_mismatches_are_named() {
        let a = result(vec![config("x", 10_000, 1), config("y", 10_000, 3)]);
        let mut yb = config("y", 12_000, 2);
        yb.classes.insert("ipi".into(), yb.classes["timer"].clone());
        let b = result(vec![config("x", 10_000, 1), yb]);
        let v = verdicts(&a, &b, &compare(&a, &b), Confidence::default()).unwrap();
        assert_eq!(v.classes.len(), 2);
        let x = &v.classes[0];
        assert_eq!(x.get("p50").unwrap().word, Word::NoDifference);
        assert!(x.ks.unwrap().d < 1e-9);
        let y = &v.classes[1];
        assert_eq!((y.runs_a, y.runs_b), (3, 2));
        assert_eq!(y.get("p50").unwrap().word, Word::Slower, "{:?}", y.get("p50"));
        assert!(y.ks.unwrap().differs(0.95));
        assert!(v.mismatches.iter().any(|m| m.contains("`ipi` is only in B")), "{:?}", v.mismatches);
        assert!(v.mismatches.iter().any(|m| m.contains("A has 3 repetition(s), B has 2")), "{:?}", v.mismatches);
    }

    #[test]
    fn different_units_get_no_verdict() {
        let a = result(vec![config("x", 10_000, 1)]);
        let mut b = a.clone();
        b.configs[0].classes.get_mut("timer").unwrap().unit = "cycles".into();
        let v = verdicts(&a, &b, &compare(&a, &b), Confidence::default()).unwrap();
        assert!(v.classes.is_empty());
        assert!(v.mismatches[0].contains("ns in A but cycles in B"), "{:?}", v.mismatches);
    }
}

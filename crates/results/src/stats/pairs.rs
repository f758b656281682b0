//! Verdicts for every paired (configuration, class) of a comparison, and what did not pair.
//!
//! [`crate::compare`] pairs configurations; this reads each pair's classes into
//! [`ClassData`] — the pooled distribution and the per-run summaries when a side has
//! repetitions, the class itself otherwise — and runs [`compare_stat`] on every statistic.
//! Differences that make a verdict mean less are stated, not hidden: a class in one side only,
//! different units (no verdict), different repetition counts, repetitions on one side only.
//!
//! **Paired runs.** When both sides have the same number R ≥ 2 of runs and run i of A and run i
//! of B were made one after the other — their recorded start times interleave (A₁ B₁ A₂ B₂ …, as
//! `irqlab-lab ab` runs them), or `compare --paired` says so — the verdicts use the per-pair
//! ratios ([`compare_paired`]) and [`ClassVerdicts::paired`] says how the pairing was known.
//!
//! **The whole-distribution test.** The KS test is given for one run per side only, labelled as
//! blind to run-to-run variance. With repetitions it is not given: over pooled runs it treats
//! every run's samples as one independent sample and called 58–99.5 % of identical pairs
//! "distributions differ" when runs vary by a few percent (issue 36), and a per-run KS is not
//! possible because a result keeps each run's summary, not its histogram. The per-statistic
//! verdicts above it, which do use the between-run spread, are the answer there.
use crate::compare::Comparison;
use crate::run::{ConfigResult, RunResult};

use super::exceedance::{compare_share, ShareVerdict};
use super::ks::{ks_two_sample, KsTest};
use super::verdict::{compare_paired, compare_stat, ClassData, Verdict, VERDICT_STATS};
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
    /// KS over one run per side (`None` with repetitions: see the module doc, and `ks_note`).
    pub ks: Option<KsTest>,
    /// Why there is no KS test, or what it cannot see.
    pub ks_note: String,
    /// How the runs were known to be paired (A B A B), when the paired analysis was used.
    pub paired: Option<String>,
    /// The share beyond each threshold asked for ([`verdicts_beyond`]), in the order asked.
    pub shares: Vec<ShareVerdict>,
}

/// The note of a KS test over one run per side.
pub const KS_ONE_RUN: &str = "one run per side: cannot see run-to-run variance";
/// Why there is no KS test with repetitions.
pub const KS_NOT_WITH_RUNS: &str = "not tested: KS over pooled runs ignores run-to-run variance (the per-statistic verdicts above account for it)";

impl Verdicts {
    /// Each verdict with what would resolve a relative `effect` at `conf` ([`super::power`]),
    /// so that formatting only lays it out (issue 44 item 3).
    pub fn recommend(mut self, effect: f64, conf: Confidence) -> Verdicts {
        for v in self.classes.iter_mut().flat_map(|c| c.stats.iter_mut()) {
            v.needed = super::power::needed(v, effect, conf);
        }
        self
    }
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
    /// `compare --paired`: the runs were declared paired in order.
    pub declared_paired: bool,
}

/// Whether the runs' recorded start times show A's run i and B's run i made one after the
/// other: every pair's two runs start before either run of the next pair. RFC 3339 UTC times of
/// one layout (irqlab writes `YYYY-MM-DDTHH:MM:SSZ`) order as text; a missing or different
/// layout, or a tie, is not taken as interleaved.
pub fn interleaved(a: &ConfigResult, b: &ConfigResult) -> bool {
    let times = |c: &ConfigResult| c.repetitions.as_ref().and_then(|r| r.started()).map(|v| v.into_iter().map(str::to_string).collect::<Vec<_>>());
    let (Some(ta), Some(tb)) = (times(a), times(b)) else { return false };
    if ta.len() != tb.len() || ta.len() < 2 {
        return false;
    }
    let layout = ta[0].len();
    if !ta.iter().chain(&tb).all(|t| t.len() == layout && t.ends_with('Z')) {
        return false;
    }
    (0..ta.len() - 1).all(|i| {
        let (first, next) = (ta[i].as_str().max(tb[i].as_str()), ta[i + 1].as_str().min(tb[i + 1].as_str()));
        first < next && ta[i] != tb[i]
    })
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

/// Verdicts for every pair of `comparison` (made from `a` and `b`); runs are paired when their
/// start times interleave.
pub fn verdicts(a: &RunResult, b: &RunResult, comparison: &Comparison, conf: Confidence) -> Result<Verdicts, crate::ResultsError> {
    verdicts_with(a, b, comparison, conf, false)
}

/// As [`verdicts`]; `declared_paired` (`compare --paired`) pairs run i of A with run i of B
/// wherever both sides have the same number of runs, whatever their recorded times.
pub fn verdicts_with(a: &RunResult, b: &RunResult, comparison: &Comparison, conf: Confidence, declared_paired: bool) -> Result<Verdicts, crate::ResultsError> {
    verdicts_beyond(a, b, comparison, conf, declared_paired, &[])
}

/// As [`verdicts_with`], and for each threshold (ns) the share of samples beyond it
/// ([`super::exceedance`]).
pub fn verdicts_beyond(
    a: &RunResult,
    b: &RunResult,
    comparison: &Comparison,
    conf: Confidence,
    declared_paired: bool,
    thresholds: &[u64],
) -> Result<Verdicts, crate::ResultsError> {
    let mut out = Verdicts { declared_paired, ..Verdicts::default() };
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
                "the single run is compared with the other side's runs, assuming both sides vary alike between runs"
            } else {
                "Welch's interval allows unequal counts, but the experiments differ"
            };
            out.mismatches.push(format!("{label}: A has {ra} repetition(s), B has {rb}: {how}"));
            if declared_paired {
                out.mismatches.push(format!("{label}: --paired needs the same number of runs on each side: not paired"));
            }
        }
        if declared_paired && ra == 1 && rb == 1 {
            out.mismatches.push(format!("{label}: --paired: one run per side, nothing to pair"));
        }
        let paired = if ra != rb || ra < 2 {
            None
        } else if interleaved(ca, cb) {
            Some("start times interleave (A B A B)".to_string())
        } else if declared_paired {
            Some("--paired".to_string())
        } else {
            None
        };
        for (class, la) in &ca.classes {
            let Some(lb) = cb.classes.get(class) else { continue };
            if la.unit != lb.unit {
                out.mismatches.push(format!("{label}: class `{class}` is in {} in A but {} in B: no verdict", la.unit, lb.unit));
                continue;
            }
            let (Some(da), Some(db)) = (class_data(ca, class)?, class_data(cb, class)?) else { continue };
            let one = |s: &&str| if paired.is_some() { compare_paired(&da, &db, s, conf) } else { compare_stat(&da, &db, s, conf) };
            let stats = VERDICT_STATS.iter().map(|s| one(s).expect("known statistic")).collect();
            let (ks, ks_note) = if ra == 1 && rb == 1 { (ks_two_sample(&da.bins, &db.bins), KS_ONE_RUN) } else { (None, KS_NOT_WITH_RUNS) };
            let shares = thresholds.iter().map(|&t| compare_share(&da, &db, t, conf)).collect();
            out.classes.push(ClassVerdicts {
                config: label.clone(),
                class: class.clone(),
                runs_a: ra,
                runs_b: rb,
                stats,
                ks,
                ks_note: ks_note.into(),
                paired: paired.clone(),
                shares,
            });
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
        // no KS over pooled runs: it cannot see their spread
        assert!(y.ks.is_none() && y.ks_note.contains("run-to-run"), "{y:?}");
        assert!(x.ks_note.contains("cannot see run-to-run variance"));
        assert!(v.mismatches.iter().any(|m| m.contains("`ipi` is only in B")), "{:?}", v.mismatches);
        assert!(v.mismatches.iter().any(|m| m.contains("A has 3 repetition(s), B has 2")), "{:?}", v.mismatches);
    }

    #[test]
    fn runs_whose_start_times_interleave_are_paired() {
        // pair i drifts by (i − 2) × 4 % on both sides; B is 2 % slower than A within each pair
        let side = |b: bool| {
            let all: Vec<ConfigResult> = (0..5u64)
                .map(|i| {
                    let scale = (96 + 4 * i) * if b { 102 } else { 100 };
                    let mut rec = LatencyRecorder::new(0);
                    (0..5000u64).for_each(|k| rec.record((10_000 + (k * 7919 + i * 31) % 5000) * scale / 10_000));
                    let mut c = ConfigResult::new("x");
                    c.classes.insert("timer".into(), rec.finish());
                    c
                })
                .collect();
            let mut first = all[0].clone();
            let mut reps = Repetitions::over(&all.iter().collect::<Vec<_>>()).unwrap();
            for (i, r) in reps.runs.iter_mut().enumerate() {
                r.started = Some(format!("2026-01-01T00:{:02}:00Z", 2 * i + usize::from(b)));
            }
            first.repetitions = Some(reps);
            first
        };
        let (a, b) = (result(vec![side(false)]), result(vec![side(true)]));
        assert!(interleaved(&a.configs[0], &b.configs[0]));
        let v = verdicts(&a, &b, &compare(&a, &b), Confidence::default()).unwrap();
        let c = &v.classes[0];
        assert_eq!(c.paired.as_deref(), Some("start times interleave (A B A B)"));
        let p50 = c.get("p50").unwrap();
        assert_eq!(p50.word, Word::Slower, "{p50:?}");
        assert!(matches!(p50.basis, crate::stats::verdict::Basis::Paired { pairs: 5, .. }), "{p50:?}");
        // the same runs without the times: Welch sees the drift as noise and cannot resolve 2 %
        let strip = |mut r: RunResult| {
            r.configs[0].repetitions.as_mut().unwrap().runs.iter_mut().for_each(|x| x.started = None);
            r
        };
        let (a2, b2) = (strip(a.clone()), strip(b.clone()));
        let v = verdicts(&a2, &b2, &compare(&a2, &b2), Confidence::default()).unwrap();
        assert!(v.classes[0].paired.is_none());
        assert_eq!(v.classes[0].get("p50").unwrap().word, Word::NoDifference);
        // ... unless the user says the runs were paired
        let v = verdicts_with(&a2, &b2, &compare(&a2, &b2), Confidence::default(), true).unwrap();
        assert_eq!(v.classes[0].paired.as_deref(), Some("--paired"));
        assert_eq!(v.classes[0].get("p50").unwrap().word, Word::Slower);
        // B's runs all before A's: not interleaved
        let mut late = a.clone();
        late.configs[0].repetitions.as_mut().unwrap().runs.iter_mut().enumerate().for_each(|(i, r)| r.started = Some(format!("2026-01-01T01:{:02}:00Z", i)));
        assert!(!interleaved(&late.configs[0], &b.configs[0]));
    }

    #[test]
    fn different_units_get_no_verdict() {
        let a = result(vec![config("x", 10_000, 1)]);
        let mut b = a.clone();
        b.configs[0].classes.get_mut("timer").unwrap().unit = "cycles".into();
        let v = verdicts(&a, &b, &compare(&a, &b), Confidence::default()).unwrap();
        assert!(v.classes.is_empty());
        assert!(v.mismatches[0].contains("ns in A but cycles in B"), "{:?}", v.mismatches);
        let v = verdicts_with(&a, &a, &compare(&a, &a), Confidence::default(), true).unwrap();
        assert!(v.mismatches.iter().any(|m| m.contains("--paired: one run per side")), "{:?}", v.mismatches);
    }
}

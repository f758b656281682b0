//! The regression gate of `compare --fail-on slower[:STAT]`: one-sided, corrected for what can
//! trip, and unable to pass by accident (issue 36).
//!
//! A gate that says 0 must mean "B was checked and is not resolvably slower", never "nothing
//! could be checked". So before any statistic is looked at, everything that would make the gate
//! blind is collected as *unchecked*: nothing paired, a configuration of either side without a
//! partner, a failed configuration on either side, a class in one side only or in other units,
//! and — for `slower:STAT` — that statistic without an interval. Any unchecked item gives
//! [`GateOutcome::Unchecked`] (the CLI's exit status 5), naming each.
//!
//! With `slower` (any statistic) the gate checks every statistic the design can give an interval
//! (with one run per side the percentiles and the mean; with repetitions all of them); those
//! without one *for this data* (a p99.99 of 5,000 samples) are named in [`GateReport::not_checked`]
//! and do not trip it. The question is one-sided (is B slower?), so each check is the lower end of
//! a one-sided interval, and the family error is held by Bonferroni over the checks that can trip:
//! `k` checks at one-sided level `1 − α/k`, i.e. two-sided intervals at `1 − 2α/k`. Counting the
//! statistics that cannot trip (min, max, warm max of one run) would only make the gate blind to
//! real slow-downs. Statistics the table calls slower at the plain confidence but the corrected
//! gate does not are listed in [`GateReport::table_only`], so the two never disagree silently.
use crate::compare::Comparison;
use crate::run::RunResult;

use super::pairs::{verdicts_with, Verdicts};
use super::verdict::{Basis, Word};
use super::Confidence;

/// Why the gate could not be evaluated as asked.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error(transparent)]
    Results(#[from] crate::ResultsError),
    #[error(transparent)]
    Stats(#[from] super::StatsError),
}

/// How the gate ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateOutcome {
    /// Everything gated was checked; nothing is resolvably slower.
    Pass,
    /// B is resolvably slower on at least one gated statistic.
    Slower,
    /// Something the gate covers could not be compared (see [`GateReport::unchecked`]).
    Unchecked,
}

/// What the gate checked and found.
#[derive(Debug, Clone, PartialEq)]
pub struct GateReport {
    pub outcome: GateOutcome,
    /// Number of (configuration, class, statistic) checks that could trip.
    pub checks: usize,
    /// The two-sided level of each check's interval (`1 − 2α/checks`).
    pub level: f64,
    /// `config class stat (B/A r, lower bound l)` for each resolvably slower check.
    pub slower: Vec<String>,
    /// What the gate covers but could not compare, with the reason; non-empty ⇒ `Unchecked`.
    pub unchecked: Vec<String>,
    /// With `slower` (any): statistics without an interval for this data, named, not gated.
    pub not_checked: Vec<String>,
    /// Slower in the table (at the plain confidence) but not at the gate's corrected level.
    pub table_only: Vec<String>,
}

/// Evaluate `--fail-on slower[:stat]` on a comparison whose plain-confidence verdicts are `table`.
pub fn gate(a: &RunResult, b: &RunResult, comparison: &Comparison, table: &Verdicts, stat: Option<&str>, conf: Confidence) -> Result<GateReport, GateError> {
    let mut unchecked = Vec::new();
    if comparison.pairs.is_empty() {
        unchecked.push("no configuration of A pairs with one of B".to_string());
    }
    for n in &comparison.unpaired_a {
        unchecked.push(format!("configuration `{n}` of A has no partner in B"));
    }
    for n in &comparison.unpaired_b {
        unchecked.push(format!("configuration `{n}` of B has no partner in A"));
    }
    for n in &comparison.ambiguous {
        unchecked.push(format!("configuration `{n}` of A matches several of B"));
    }
    for p in &comparison.pairs {
        for (side, c) in [("A", &a.configs[p.a]), ("B", &b.configs[p.b])] {
            if let Some(e) = &c.error {
                unchecked.push(format!("configuration `{}` failed in {side}: {e}", c.name));
            } else if c.classes.is_empty() {
                unchecked.push(format!("configuration `{}` has no latency class in {side}", c.name));
            }
        }
    }
    // Class only in one side, or in other units (the verdicts' own notes).
    unchecked.extend(table.mismatches.iter().filter(|m| m.contains(" is only in ") || m.contains(": no verdict")).cloned());

    // What can trip: statistics with an interval at the plain level.
    let mut candidates = Vec::new();
    let mut not_checked = Vec::new();
    for c in &table.classes {
        for v in &c.stats {
            if stat.is_some_and(|s| s != v.stat) {
                continue;
            }
            let label = format!("{} {} {}", c.config, c.class, v.stat);
            match (&v.interval, &v.basis) {
                (Some(_), _) => candidates.push((c.config.clone(), c.class.clone(), v.stat.clone())),
                (None, Basis::None { reason }) if stat.is_some() => unchecked.push(format!("{label}: {reason}")),
                (None, Basis::None { reason }) => not_checked.push(format!("{label}: {reason}")),
                (None, _) => not_checked.push(label),
            }
        }
    }
    if stat.is_some() && table.classes.is_empty() && unchecked.is_empty() {
        unchecked.push("no paired class to check".into());
    }
    let k = candidates.len().max(1);
    let alpha = 1.0 - conf.level();
    let gate_conf = Confidence::new(1.0 - 2.0 * alpha / k as f64)?;
    let strict = if (gate_conf.level() - conf.level()).abs() < 1e-15 { table.clone() } else { verdicts_with(a, b, comparison, gate_conf, table.declared_paired)? };
    let mut slower = Vec::new();
    let mut table_only = Vec::new();
    for (config, class, st) in &candidates {
        let find = |vs: &Verdicts| vs.classes.iter().find(|c| &c.config == config && &c.class == class).and_then(|c| c.get(st)).cloned();
        let (Some(plain), Some(v)) = (find(table), find(&strict)) else { continue };
        if v.word == Word::Slower {
            let lo = v.interval.map(|i| i.0).unwrap_or(f64::NAN);
            slower.push(format!("{config} {class} {st} (B/A {:.3}, lower bound {lo:.3})", v.ratio));
        } else if plain.word == Word::Slower {
            table_only.push(format!("{config} {class} {st} (B/A {:.3})", plain.ratio));
        }
    }
    let outcome = if !unchecked.is_empty() {
        GateOutcome::Unchecked
    } else if !slower.is_empty() {
        GateOutcome::Slower
    } else {
        GateOutcome::Pass
    };
    Ok(GateReport { outcome, checks: candidates.len(), level: gate_conf.level(), slower, unchecked, not_checked, table_only })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::pairs::verdicts;
    use crate::{compare, ConfigResult, LatencyRecorder, ResultKind, RunMeta};

    fn config(name: &str, base: u64) -> ConfigResult {
        let mut rec = LatencyRecorder::new(0);
        (0..5000u64).for_each(|i| rec.record(base + (i * 7919) % 5000));
        let mut c = ConfigResult::new(name);
        c.classes.insert("timer".into(), rec.finish());
        c
    }

    fn result(configs: Vec<ConfigResult>) -> RunResult {
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured));
        r.configs = configs;
        r
    }

    fn run_gate(a: &RunResult, b: &RunResult, stat: Option<&str>) -> GateReport {
        let c = compare(a, b);
        let v = verdicts(a, b, &c, Confidence::default()).unwrap();
        gate(a, b, &c, &v, stat, Confidence::default()).unwrap()
    }

    #[test]
    fn a_failed_b_or_a_missing_class_is_unchecked_not_a_pass() {
        let a = result(vec![config("x", 10_000)]);
        let failed = result(vec![ConfigResult::failed("x", Default::default(), "guest did not boot".into())]);
        let g = run_gate(&a, &failed, None);
        assert_eq!(g.outcome, GateOutcome::Unchecked, "{g:?}");
        assert!(g.unchecked.iter().any(|u| u.contains("failed in B") && u.contains("did not boot")), "{g:?}");
        let mut other = config("x", 10_000);
        other.classes = [("ipi".to_string(), other.classes["timer"].clone())].into();
        let g = run_gate(&a, &result(vec![other]), Some("p50"));
        assert_eq!(g.outcome, GateOutcome::Unchecked);
        assert!(g.unchecked.iter().any(|u| u.contains("`timer` is only in A")), "{g:?}");
        let g = run_gate(&a, &result(vec![config("x", 10_000), config("y", 1)]), None);
        assert!(g.unchecked.iter().any(|u| u.contains("`y` of B has no partner")), "{g:?}");
    }

    #[test]
    fn declared_pairs_are_kept_at_the_gates_level() {
        // three runs a side, pair i drifting by 3 % both sides, B 2 % slower within each pair
        let side = |b: bool| {
            let all: Vec<ConfigResult> = (0..3u64).map(|i| config("x", (10_000 + 300 * i) * if b { 102 } else { 100 } / 100)).collect();
            let mut first = all[0].clone();
            first.repetitions = Some(crate::Repetitions::over(&all.iter().collect::<Vec<_>>()).unwrap());
            result(vec![first])
        };
        let (a, b) = (side(false), side(true));
        let c = compare(&a, &b);
        let unpaired = verdicts(&a, &b, &c, Confidence::default()).unwrap();
        assert_eq!(gate(&a, &b, &c, &unpaired, Some("p50"), Confidence::default()).unwrap().outcome, GateOutcome::Pass);
        let paired = verdicts_with(&a, &b, &c, Confidence::default(), true).unwrap();
        let g = gate(&a, &b, &c, &paired, Some("p50"), Confidence::default()).unwrap();
        assert_eq!(g.outcome, GateOutcome::Slower, "{g:?}");
    }

    #[test]
    fn the_same_data_passes_a_slow_down_trips_and_short_runs_are_named() {
        let a = result(vec![config("x", 10_000)]);
        let g = run_gate(&a, &a, None);
        assert_eq!(g.outcome, GateOutcome::Pass, "{g:?}");
        // mean and p50/p90/p99/p99.9 of 5,000 samples can trip; p99.99, min, max, warm max cannot
        assert_eq!(g.checks, 5, "{g:?}");
        assert!(g.not_checked.iter().any(|n| n.contains("p99.99")), "{g:?}");
        assert!((g.level - (1.0 - 2.0 * 0.05 / 5.0)).abs() < 1e-12);
        let g = run_gate(&a, &result(vec![config("x", 12_000)]), None);
        assert_eq!(g.outcome, GateOutcome::Slower, "{g:?}");
        // asked for p99.99 by name: it cannot be checked, so the gate says so
        let g = run_gate(&a, &a, Some("p99.99"));
        assert_eq!(g.outcome, GateOutcome::Unchecked, "{g:?}");
    }
}

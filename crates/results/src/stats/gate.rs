//! The regression gate of `irqlab compare --fail-on slower[:STAT]` (and `irqlab-lab ab`): is B
//! resolvably slower than A anywhere it is checked?
//!
//! The gate checks many (pair, class, statistic) verdicts at once; each alone is wrong with
//! probability 1 − confidence, so it judges every one at Bonferroni's level over all it checks,
//! and a false alarm on noise stays below 1 − confidence for the whole comparison. One function,
//! so the command-line compare and the lab's A/B gate say the same thing.
use crate::compare::Comparison;
use crate::run::RunResult;

use super::pairs::{verdicts, Verdicts};
use super::verdict::Word;
use super::Confidence;

/// Why the gate could not be judged.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error(transparent)]
    Stats(#[from] super::StatsError),
    #[error(transparent)]
    Results(#[from] crate::ResultsError),
}

/// What the gate found.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// Verdicts checked (pairs × classes × statistics).
    pub checked: usize,
    /// The per-verdict confidence used (Bonferroni).
    pub level: f64,
    /// `config class stat (B/A ratio)` for each resolvably slower statistic.
    pub slower: Vec<String>,
}

/// Checks `stat` (every statistic when `None`) of every paired class; `at` are the verdicts at
/// `confidence`, reused when only one verdict is checked.
pub fn slower(
    a: &RunResult,
    b: &RunResult,
    comparison: &Comparison,
    confidence: f64,
    stat: Option<&str>,
    at: &Verdicts,
) -> Result<Gate, GateError> {
    let per_class = if stat.is_some() {
        1
    } else {
        super::verdict::VERDICT_STATS.len()
    };
    let checked = (at.classes.len() * per_class).max(1);
    let level = Confidence::new(1.0 - (1.0 - confidence) / checked as f64)?;
    let own;
    let gate = if checked > 1 {
        own = verdicts(a, b, comparison, level)?;
        &own
    } else {
        at
    };
    let slower = gate
        .classes
        .iter()
        .flat_map(|c| c.stats.iter().map(move |s| (c, s)))
        .filter(|(_, s)| s.word == Word::Slower && stat.is_none_or(|st| st == s.stat))
        .map(|(c, s)| format!("{} {} {} (B/A {:.3})", c.config, c.class, s.stat, s.ratio))
        .collect();
    Ok(Gate {
        checked,
        level: level.level(),
        slower,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compare, ConfigResult, LatencyRecorder, ResultKind, RunMeta};

    fn result(base: u64) -> RunResult {
        let mut rec = LatencyRecorder::new(0);
        (0..4000u64).for_each(|i| rec.record(base + (i * 7919) % 1000));
        let mut c = ConfigResult::new("timer");
        c.classes.insert("timer".into(), rec.finish());
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured));
        r.configs.push(c);
        r
    }

    #[test]
    fn slower_b_trips_the_gate_and_same_does_not() {
        let (a, b) = (result(10_000), result(20_000));
        let c = compare(&a, &b);
        let v = verdicts(&a, &b, &c, Confidence::new(0.95).unwrap()).unwrap();
        let g = slower(&a, &b, &c, 0.95, None, &v).unwrap();
        assert_eq!(g.checked, 9);
        assert!(g.level > 0.99 && !g.slower.is_empty(), "{g:?}");
        let g = slower(&a, &b, &c, 0.95, Some("p50"), &v).unwrap();
        assert_eq!((g.checked, g.slower.len()), (1, 1));
        assert!(g.slower[0].contains("timer timer p50"), "{g:?}");
        let same = result(10_000);
        let c = compare(&a, &same);
        let v = verdicts(&a, &same, &c, Confidence::new(0.95).unwrap()).unwrap();
        assert!(slower(&a, &same, &c, 0.95, None, &v)
            .unwrap()
            .slower
            .is_empty());
    }
}

//! Which sample traces to keep (`irqlab sim --trace N --trace-at WHICH`).
//!
//! The first interrupts of a run are the cold-cache outliers, rarely the ones a user wants to
//! look at: they ask for the slowest, for typical ones near a percentile (p50, p99), or for
//! specific rounds. A [`Picker`] decides, one finished trace at a time, whether it joins the kept
//! set, keeping at most `n` with no allocation beyond them. Nearest-to-a-percentile needs the
//! percentile first: the runner runs the scenario once to learn it and again to pick (the model
//! is deterministic, so the second run has the same samples).
use std::collections::BTreeMap;
use std::sync::Arc;

use super::time::SimTime;
use super::trace::Trace;

/// What the user asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum TracePick {
    /// The first `n` of each class.
    First,
    /// The `n` slowest of each class, slowest first.
    Slowest,
    /// The `n` nearest to this percentile (0..100, exclusive) of each class's latency, nearest first.
    Percentile(f64),
    /// These rounds of each class, counted from 0 in the order the paths happen (a timer
    /// model's label `timer #17` is round 17), in order.
    Rounds(Arc<[u64]>),
}

/// Why a `--trace-at` value is refused; the text quotes it and shows what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TracePickError {
    #[error("`{0}`: a percentile is p<number> with 0 < number < 100, e.g. p99 or p99.9")]
    Percentile(String),
    #[error("`{0}`: expected first, slowest, a percentile (p50, p99, p99.9) or round numbers from 0 (e.g. 0,17,250)")]
    Unknown(String),
}

impl TracePick {
    /// Parse `first`, `slowest`, `p99` / `p99.9` / `p50`, or a list of round numbers `0,17,250`.
    pub fn parse(s: &str) -> Result<TracePick, TracePickError> {
        let s = s.trim();
        match s {
            "first" => return Ok(TracePick::First),
            "slowest" => return Ok(TracePick::Slowest),
            _ => {}
        }
        if let Some(p) = s.strip_prefix('p') {
            return match p.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v < 100.0 => Ok(TracePick::Percentile(v)),
                _ => Err(TracePickError::Percentile(s.to_string())),
            };
        }
        let mut rounds = Vec::new();
        for part in s.split(',') {
            match part.trim().parse::<u64>() {
                Ok(r) => rounds.push(r),
                _ => return Err(TracePickError::Unknown(s.to_string())),
            }
        }
        rounds.sort_unstable();
        rounds.dedup();
        Ok(TracePick::Rounds(rounds.into()))
    }

    /// How the result file names this choice.
    pub fn describe(&self) -> String {
        match self {
            TracePick::First => "first".into(),
            TracePick::Slowest => "slowest".into(),
            TracePick::Percentile(p) => format!("nearest p{p}"),
            TracePick::Rounds(r) => format!("rounds {}", r.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(",")),
        }
    }
}

/// The choice as a model's trace set applies it: a quantile already resolved to a latency.
#[derive(Debug, Clone, PartialEq)]
pub enum PickRule {
    First,
    Slowest,
    Nearest(SimTime),
    Rounds(Arc<[u64]>),
}

/// What a run keeps: the rule per class (quantile targets differ per class) and how many.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceKeep {
    pub n: usize,
    pub rule: PickRule,
    /// With `Nearest`: the target per class name (a class without one keeps the first `n`).
    pub targets: BTreeMap<String, SimTime>,
}

impl TraceKeep {
    /// Keep nothing.
    pub fn none() -> TraceKeep {
        TraceKeep { n: 0, rule: PickRule::First, targets: BTreeMap::new() }
    }

    /// The first `n` of each class (what `--trace N` always did).
    pub fn first(n: usize) -> TraceKeep {
        TraceKeep { n, rule: PickRule::First, targets: BTreeMap::new() }
    }

    /// The picker for one class's traces.
    pub fn picker(&self, class: &str) -> Picker {
        let rule = match (&self.rule, self.targets.get(class)) {
            (PickRule::Nearest(_), Some(t)) => PickRule::Nearest(*t),
            (PickRule::Nearest(_), None) => PickRule::First,
            (r, _) => r.clone(),
        };
        Picker { n: self.n, rule, seen: 0 }
    }
}

/// Decides trace by trace what to keep (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    n: usize,
    rule: PickRule,
    /// Traces offered so far (the round number of the next one).
    seen: u64,
}

impl Default for Picker {
    fn default() -> Self {
        Picker { n: 0, rule: PickRule::First, seen: 0 }
    }
}

impl Picker {
    /// The first `n`.
    pub fn first(n: usize) -> Picker {
        Picker { n, rule: PickRule::First, seen: 0 }
    }

    /// Whether the next trace could be kept (so a model builds its label and segments only then).
    #[inline]
    pub fn may_keep(&self, kept: usize) -> bool {
        if self.n == 0 {
            return false;
        }
        match &self.rule {
            PickRule::First => kept < self.n,
            PickRule::Slowest | PickRule::Nearest(_) => true,
            PickRule::Rounds(r) => kept < self.n && r.binary_search(&self.seen).is_ok(),
        }
    }

    /// Offer a finished trace. It joins `kept` (which stays in the rule's order: arrival,
    /// slowest first, nearest first) or is handed back, as is a trace it displaces.
    pub fn offer(&mut self, kept: &mut Vec<Trace>, t: Trace) -> Option<Trace> {
        let round = self.seen;
        self.seen += 1;
        if self.n == 0 {
            return Some(t);
        }
        match &self.rule {
            PickRule::First => {
                if kept.len() < self.n {
                    kept.push(t);
                    return None;
                }
                Some(t)
            }
            PickRule::Rounds(r) => {
                if kept.len() < self.n && r.binary_search(&round).is_ok() {
                    kept.push(t);
                    return None;
                }
                Some(t)
            }
            PickRule::Slowest => {
                let total = t.total();
                Self::insert_ranked(kept, self.n, t, |x| std::cmp::Reverse(x.total()), std::cmp::Reverse(total))
            }
            PickRule::Nearest(target) => {
                let target = *target;
                let dist = |x: &Trace| x.total().ps().abs_diff(target.ps());
                let d = dist(&t);
                Self::insert_ranked(kept, self.n, t, dist, d)
            }
        }
    }

    /// Insert into `kept`, sorted ascending by `key`, bounded to `n`; earlier arrivals win ties.
    fn insert_ranked<K: Ord>(kept: &mut Vec<Trace>, n: usize, t: Trace, key: impl Fn(&Trace) -> K, k: K) -> Option<Trace> {
        let at = kept.partition_point(|x| key(x) <= k);
        if at >= n {
            return Some(t);
        }
        kept.insert(at, t);
        if kept.len() > n {
            return kept.pop();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tr(i: u64, ns: u64) -> Trace {
        let mut t = Trace::new(format!("#{i}"), SimTime::from_ns(i));
        t.push("path", SimTime::from_ns(ns));
        t
    }

    fn run(mut p: Picker, totals: &[u64]) -> Vec<String> {
        let mut kept = Vec::new();
        for (i, ns) in totals.iter().enumerate() {
            let _ = p.offer(&mut kept, tr(i as u64 + 1, *ns));
        }
        kept.iter().map(|t| t.label.clone()).collect()
    }

    const T: &[u64] = &[500, 100, 900, 300, 900, 700, 200];

    #[test]
    fn first_keeps_the_first_n() {
        assert_eq!(run(Picker::first(2), T), ["#1", "#2"]);
    }

    #[test]
    fn slowest_keeps_the_n_largest_slowest_first_earlier_wins_ties() {
        let k = TraceKeep { n: 3, rule: PickRule::Slowest, targets: BTreeMap::new() };
        assert_eq!(run(k.picker("x"), T), ["#3", "#5", "#6"]);
    }

    #[test]
    fn nearest_keeps_the_closest_to_the_class_target() {
        let mut targets = BTreeMap::new();
        targets.insert("timer".to_string(), SimTime::from_ns(320));
        let k = TraceKeep { n: 2, rule: PickRule::Nearest(SimTime::ZERO), targets };
        assert_eq!(run(k.picker("timer"), T), ["#4", "#7"], "300 (20 away), then 200 (120 away; 500 is 180 away)");
        // A class without a target falls back to the first ones.
        assert_eq!(run(k.picker("other"), T), ["#1", "#2"]);
    }

    #[test]
    fn rounds_keep_those_sample_numbers_and_announce_them() {
        let k = TraceKeep { n: 10, rule: PickRule::Rounds(vec![1, 4, 40].into()), targets: BTreeMap::new() };
        let p = k.picker("x");
        assert!(!p.may_keep(0), "round 0 is not asked for");
        assert_eq!(run(p, T), ["#2", "#5"]);
    }

    #[test]
    fn nothing_is_kept_with_n_zero() {
        let p = TraceKeep::none().picker("x");
        assert!(!p.may_keep(0));
        assert!(run(p, T).is_empty());
    }

    #[test]
    fn parse_accepts_the_documented_forms_and_names_the_bad_ones() {
        assert_eq!(TracePick::parse("slowest").unwrap(), TracePick::Slowest);
        assert_eq!(TracePick::parse("p99.9").unwrap(), TracePick::Percentile(99.9));
        assert_eq!(TracePick::parse("250, 17,17").unwrap(), TracePick::Rounds(vec![17, 250].into()));
        for bad in ["p100", "p0", "pnan", "p-1", "-1", "x", "1,,2", ""] {
            assert!(TracePick::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(TracePick::parse("p100").unwrap_err().to_string(), "`p100`: a percentile is p<number> with 0 < number < 100, e.g. p99 or p99.9");
        assert!(TracePick::parse("sometimes").unwrap_err().to_string().starts_with("`sometimes`: expected first, slowest"));
        assert_eq!(TracePick::Percentile(99.0).describe(), "nearest p99");
    }
}

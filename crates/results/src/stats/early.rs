//! Early samples: interrupts that arrived before their deadline (issue 45 item 3).
//!
//! A timer benchmark's latency is arrival − deadline, and an interrupt can arrive early (a
//! negative latency: the host programmed the timer short, or the guest's clock runs ahead). irqlab
//! keeps them apart (`kvm::measurement`, the tscdeadline importer): 0 in the main class, *how
//! early* (ns before the deadline, a positive number) in a class named `CLASS_early`, and their
//! count in the figure `early.CLASS`.
//!
//! **Which way is worse.** An early interrupt breaks the timer's contract (it fired before it was
//! due), and the further before the deadline, the worse. So in an `_early` class a larger value is
//! worse, as a larger latency is in the main class: B/A > 1 there means B's early interrupts
//! arrive *earlier*, and the gate trips on it. The words say so — "earlier" and "less early",
//! never "slower" and "faster" ([`word_text`]).
//!
//! **How many.** More early interrupts are worse too, and one early sample on one side only is
//! not a blind spot but a count: the share of early samples, k early of the n samples of the main
//! class (which counts them as 0), compared between A and B with Newcombe's interval
//! ([`super::exceedance::newcombe`]). The gate checks that share wherever either side has early
//! samples ([`early_shares`]), and no longer stops at "class `timer_early` is only in B".
use crate::compare::Comparison;
use crate::run::{ConfigResult, RunResult};

use super::exceedance::{newcombe, Share};
use super::verdict::{Verdict, Word};
use super::Confidence;

/// The suffix of a class of early samples.
pub const SUFFIX: &str = "_early";

/// Whether `class` holds how early samples were.
pub fn is_early(class: &str) -> bool {
    class.ends_with(SUFFIX) && class.len() > SUFFIX.len()
}

/// The verdict's word as shown for `class`: in an `_early` class, "earlier" / "less early".
pub fn word_text(class: &str, v: &Verdict) -> &'static str {
    match (is_early(class), v.interval, v.word) {
        (true, Some(_), Word::Slower) => "earlier",
        (true, Some(_), Word::Faster) => "less early",
        _ => v.word_text(),
    }
}

/// The share of early samples of one main class, A against B.
#[derive(Debug, Clone, PartialEq)]
pub struct EarlyShare {
    pub config: String,
    /// The main class (`timer` for `timer_early`).
    pub class: String,
    pub a: Share,
    pub b: Share,
    /// Newcombe's interval of p_B − p_A (`None`: a side has no samples in the main class).
    pub interval: Option<(f64, f64)>,
}

impl EarlyShare {
    /// B − A.
    pub fn difference(&self) -> f64 {
        self.b.fraction() - self.a.fraction()
    }
}

fn share(c: &ConfigResult, class: &str) -> Share {
    let count = |name: &str| c.classes.get(name).map_or(0, |l| l.summary.count);
    let n = count(class);
    Share { beyond: count(&format!("{class}{SUFFIX}")).min(n), n, resolution: 0.0 }
}

/// The early shares of every paired configuration where either side has an `_early` class.
pub fn early_shares(a: &RunResult, b: &RunResult, comparison: &Comparison, conf: Confidence) -> Vec<EarlyShare> {
    let mut out = Vec::new();
    for p in &comparison.pairs {
        let (ca, cb) = (&a.configs[p.a], &b.configs[p.b]);
        let label = if ca.name == cb.name { ca.name.clone() } else { format!("{} | {}", ca.name, cb.name) };
        let mut mains: Vec<&str> = ca.classes.keys().chain(cb.classes.keys()).filter(|k| is_early(k)).map(|k| &k[..k.len() - SUFFIX.len()]).collect();
        mains.sort_unstable();
        mains.dedup();
        for main in mains {
            let (sa, sb) = (share(ca, main), share(cb, main));
            out.push(EarlyShare { config: label.clone(), class: main.to_string(), a: sa, b: sb, interval: newcombe(sa, sb, conf) });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compare, LatencyRecorder, ResultKind, RunMeta};

    fn side(early: u64) -> RunResult {
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured));
        let mut c = ConfigResult::new("x");
        let mut rec = LatencyRecorder::new(0);
        (0..2000u64).for_each(|i| rec.record(if i < early { 0 } else { 10_000 + i % 300 }));
        c.classes.insert("timer".into(), rec.finish());
        if early > 0 {
            let mut e = LatencyRecorder::new(0);
            (0..early).for_each(|i| e.record(500 + i));
            c.classes.insert("timer_early".into(), e.finish());
        }
        r.configs.push(c);
        r
    }

    #[test]
    fn early_shares_count_a_side_without_early_samples_as_zero() {
        let (a, b) = (side(0), side(1));
        let s = early_shares(&a, &b, &compare(&a, &b), Confidence::default());
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].class.as_str(), s[0].a.beyond, s[0].b.beyond, s[0].b.n), ("timer", 0, 1, 2000));
        let (lo, hi) = s[0].interval.unwrap();
        assert!(lo < 0.0 && hi > 0.0, "one early sample is no resolvable change: {s:?}");
        let s = early_shares(&a, &side(100), &compare(&a, &side(100)), Confidence::default());
        assert!(s[0].interval.unwrap().0 > 0.0, "5 % early is: {s:?}");
    }

    #[test]
    fn early_words_say_earlier_not_slower() {
        assert!(is_early("timer_early") && !is_early("timer") && !is_early("_early"));
        let v = Verdict {
            stat: "p50".into(),
            a: 1.0,
            b: 2.0,
            ratio: 2.0,
            interval: Some((1.5, 2.5)),
            word: Word::Slower,
            basis: super::super::verdict::Basis::None { reason: String::new() },
            needs_samples: None,
            samples: 10,
            needed: None,
        };
        assert_eq!(word_text("timer_early", &v), "earlier");
        assert_eq!(word_text("timer", &v), "slower");
    }
}

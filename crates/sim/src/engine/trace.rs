//! Per-interrupt traces: the segments an interrupt went through and how long each took.
//!
//! Every simulated interrupt carries a [`Trace`]; the latency is the sum of its segments, the
//! run's breakdown is the per-segment aggregate, and `--trace N` prints the first N traces. This is
//! what tells a user *where* the time went, which none of the peer tools does.
use results::BreakdownBuilder;

use super::time::SimTime;

/// One interrupt's path: (segment name, duration) in order, plus free-form notes per step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub label: String,
    pub start: SimTime,
    pub segments: Vec<(&'static str, SimTime)>,
}

impl Trace {
    pub fn new(label: impl Into<String>, start: SimTime) -> Self {
        Trace { label: label.into(), start, segments: Vec::with_capacity(8) }
    }

    /// Append a segment; zero-length segments are kept (they document the path).
    #[inline]
    pub fn push(&mut self, segment: &'static str, d: SimTime) {
        self.segments.push((segment, d));
    }

    pub fn total(&self) -> SimTime {
        self.segments.iter().map(|s| s.1).sum()
    }

    /// Human-readable one-interrupt path, one line per segment.
    pub fn render(&self) -> String {
        let mut s = format!("{} @ {}: total {}\n", self.label, self.start, self.total());
        let mut t = self.start;
        for (name, d) in &self.segments {
            s.push_str(&format!("  +{:>12}  {:<28} {}\n", format!("{}", t - self.start), name, d));
            t += *d;
        }
        s
    }

    /// The trace as stored in a result (times in ns).
    pub fn to_sample(&self) -> results::SampleTrace {
        results::SampleTrace {
            label: self.label.clone(),
            start_ns: self.start.ns_f64(),
            total_ns: self.total().ns_f64(),
            segments: self.segments.iter().map(|(n, d)| (n.to_string(), d.ns_f64())).collect(),
        }
    }
}

/// Aggregates traces of one class into a breakdown and keeps the first `keep` for printing.
#[derive(Debug, Clone, Default)]
pub struct TraceSet {
    keep: usize,
    pub kept: Vec<Trace>,
    breakdown: BreakdownBuilder,
}

impl TraceSet {
    pub fn new(keep: usize) -> Self {
        TraceSet { keep, kept: Vec::new(), breakdown: BreakdownBuilder::default() }
    }

    pub fn add(&mut self, t: Trace) {
        for (name, d) in &t.segments {
            self.breakdown.add_ps(name, d.ps());
        }
        if self.kept.len() < self.keep {
            self.kept.push(t);
        }
    }

    /// Whether another trace would still be kept for printing.
    pub fn wants_more(&self) -> bool {
        self.kept.len() < self.keep
    }

    /// Aggregate `count` passes through `segment` totalling `total` (see `BreakdownBuilder::add_many`).
    pub fn add_segment_total(&mut self, segment: &str, count: u64, total: u128) {
        self.breakdown.add_many(segment, count, total);
    }

    /// Keep a trace for printing without aggregating it (its segments were added already).
    pub fn keep(&mut self, t: Trace) {
        if self.wants_more() {
            self.kept.push(t);
        }
    }

    pub fn breakdown(&self) -> Vec<results::SegmentStat> {
        self.breakdown.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_render_and_aggregate() {
        let mut t = Trace::new("timer #0", SimTime::from_ns(100));
        t.push("exit", SimTime::from_ns(300));
        t.push("inject", SimTime::from_ns(50));
        assert_eq!(t.total(), SimTime::from_ns(350));
        let r = t.render();
        assert!(r.contains("exit") && r.contains("+    300.0 ns  inject"), "{r}");
        let mut set = TraceSet::new(1);
        set.add(t.clone());
        set.add(t);
        assert_eq!(set.kept.len(), 1);
        let b = set.breakdown();
        assert_eq!(b[0].count, 2);
        assert_eq!(b[0].mean_ns, 300.0);
    }
}

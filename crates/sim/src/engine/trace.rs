//! Per-interrupt traces: the segments an interrupt went through and how long each took.
//!
//! Every simulated interrupt carries a [`Trace`]; the latency is the sum of its segments, the
//! run's breakdown is the per-segment aggregate, and `--trace N` prints the first N traces. This is
//! what tells a user *where* the time went, which none of the peer tools does.
use results::BreakdownBuilder;

use super::time::SimTime;
use super::trace_pick::Picker;

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
///
/// Built for one call per simulated interrupt: segments are tallied by their `&'static str`
/// name, looked up first where the previous segment's successor was (a path repeats in order)
/// and compared by address before by text; a trace that is not kept gives its segment buffer
/// back for the next one ([`TraceSet::start`]), so steady state allocates nothing. The
/// breakdown is the same as adding every segment to a [`BreakdownBuilder`] in order.
#[derive(Debug, Clone, Default)]
pub struct TraceSet {
    /// Which traces are kept (the first N, the slowest, ...).
    picker: Picker,
    pub kept: Vec<Trace>,
    /// (segment, passes, total ps), in first-seen order.
    tally: Vec<(&'static str, u64, u128)>,
    /// Where the next segment is looked for first.
    cursor: usize,
    /// The segment buffer of the last trace aggregated and not kept.
    spare: Vec<(&'static str, SimTime)>,
}

/// The same segment name: usually the same literal, so the address check decides.
#[inline]
fn same(a: &'static str, b: &str) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b
}

impl TraceSet {
    /// Keep the first `keep` traces.
    pub fn new(keep: usize) -> Self {
        TraceSet::picking(Picker::first(keep))
    }

    /// Keep what `picker` chooses (see [`super::trace_pick`]).
    pub fn picking(picker: Picker) -> Self {
        TraceSet { picker, ..Default::default() }
    }

    /// A new, unlabelled trace starting at `start`, reusing a spare segment buffer.
    pub fn start(&mut self, start: SimTime) -> Trace {
        let mut segments = std::mem::take(&mut self.spare);
        segments.clear();
        if segments.capacity() == 0 {
            segments.reserve(8);
        }
        Trace { label: String::new(), start, segments }
    }

    /// The tally slot of `segment` (appended when first seen).
    #[inline]
    fn slot(&mut self, segment: &'static str) -> usize {
        let i = match self.tally.get(self.cursor) {
            Some(s) if same(s.0, segment) => self.cursor,
            _ => match self.tally.iter().position(|s| same(s.0, segment)) {
                Some(i) => i,
                None => {
                    self.tally.push((segment, 0, 0));
                    self.tally.len() - 1
                }
            },
        };
        self.cursor = i + 1;
        i
    }

    pub fn add(&mut self, t: Trace) {
        for &(name, d) in &t.segments {
            let i = self.slot(name);
            let s = &mut self.tally[i];
            s.1 += 1;
            s.2 += d.ps() as u128;
        }
        if let Some(back) = self.picker.offer(&mut self.kept, t) {
            self.spare = back.segments;
        }
    }

    /// Whether the next trace could be kept for printing (label it only then).
    #[inline]
    pub fn wants_more(&self) -> bool {
        self.picker.may_keep(self.kept.len())
    }

    /// Aggregate `count` passes through `segment` totalling `total` (see `BreakdownBuilder::add_many`).
    pub fn add_segment_total(&mut self, segment: &'static str, count: u64, total: u128) {
        let i = self.slot(segment);
        let s = &mut self.tally[i];
        s.1 += count;
        s.2 += total;
    }

    /// Keep a trace for printing without aggregating it (its segments were added already).
    pub fn keep(&mut self, t: Trace) {
        let _ = self.picker.offer(&mut self.kept, t);
    }

    pub fn breakdown(&self) -> Vec<results::SegmentStat> {
        let mut b = BreakdownBuilder::default();
        for &(name, count, total) in &self.tally {
            b.add_many(name, count, total);
        }
        b.finish()
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

    /// The tally equals a `BreakdownBuilder` fed every segment in order, whatever the paths
    /// (repeated, skipped and new segments, names equal in text but not in address).
    #[test]
    fn tally_matches_breakdown_builder() {
        let leaked: &'static str = Box::leak(String::from("exit").into_boxed_str());
        let paths: [&[&'static str]; 4] = [&["exit", "inject", "ack"], &["exit", "ack"], &["wake", "exit", "inject", "ack", "ack"], &[leaked, "late"]];
        let mut set = TraceSet::new(2);
        let mut reference = BreakdownBuilder::default();
        for k in 0..40u64 {
            let mut t = set.start(SimTime::from_ns(k));
            for (j, name) in paths[(k * 7 % 4) as usize].iter().enumerate() {
                let d = SimTime::from_ps(k * 1000 + j as u64 * 17);
                t.push(name, d);
                reference.add_ps(name, d.ps());
            }
            set.add(t);
        }
        set.add_segment_total("bulk", 3, 999);
        reference.add_many("bulk", 3, 999);
        assert_eq!(set.breakdown(), reference.finish());
        assert_eq!(set.kept.len(), 2);
        assert!(set.kept.iter().all(|t| !t.segments.is_empty()));
    }
}

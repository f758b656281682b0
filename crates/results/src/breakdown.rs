//! Where the time went: per-segment totals along an interrupt's delivery path.
use serde::{Deserialize, Serialize};

/// Aggregated time spent in one named segment (e.g. `exit`, `doorbell`, `guest-ack`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentStat {
    pub segment: String,
    /// How many interrupts went through this segment.
    pub count: u64,
    /// Total time in this segment over all interrupts, ns.
    #[serde(with = "crate::float")]
    pub total_ns: f64,
    /// Mean time per interrupt that went through it, ns.
    #[serde(with = "crate::float")]
    pub mean_ns: f64,
}

/// Accumulates segments in first-seen order (the path order for a single path).
#[derive(Debug, Clone, Default)]
pub struct BreakdownBuilder {
    segments: Vec<(String, u64, u128)>, // name, count, total picoseconds
}

impl BreakdownBuilder {
    /// Add `ps` picoseconds spent in `segment` by one interrupt.
    pub fn add_ps(&mut self, segment: &str, ps: u64) {
        self.add_many(segment, 1, ps as u128);
    }

    /// Add `count` interrupts that spent `total_ps` picoseconds in `segment` altogether (for
    /// models that accumulate hot-path segments in local counters).
    pub fn add_many(&mut self, segment: &str, count: u64, total_ps: u128) {
        if let Some(s) = self.segments.iter_mut().find(|s| s.0 == segment) {
            s.1 += count;
            s.2 += total_ps;
        } else {
            self.segments.push((segment.to_string(), count, total_ps));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    pub fn finish(&self) -> Vec<SegmentStat> {
        self.segments
            .iter()
            .map(|(name, count, total)| {
                let total_ns = *total as f64 / 1000.0;
                SegmentStat { segment: name.clone(), count: *count, total_ns, mean_ns: if *count == 0 { 0.0 } else { total_ns / *count as f64 } }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_first_seen_order_and_means() {
        let mut b = BreakdownBuilder::default();
        b.add_ps("exit", 1000);
        b.add_ps("inject", 500);
        b.add_ps("exit", 3000);
        let s = b.finish();
        assert_eq!(s[0].segment, "exit");
        assert_eq!(s[0].count, 2);
        assert_eq!(s[0].mean_ns, 2.0);
        assert_eq!(s[1].segment, "inject");
        assert_eq!(s[1].total_ns, 0.5);
    }
}

//! Kept sample traces: the path of individual interrupts (`irqlab sim --trace N`), stored with
//! the result so that the HTML report and later readers see the same paths the terminal showed,
//! and which ones they are (the first, the slowest, the ones nearest a percentile, chosen rounds).
use serde::{Deserialize, Serialize};

/// How the kept traces of a configuration were chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceChoice {
    /// `first`, `slowest`, `near p99` (the traces closest to that percentile of their class),
    /// or `rounds 1,5,10` (1-based sample numbers of each class).
    pub how: String,
    /// How many were asked for per class.
    pub per_class: u64,
}

/// One interrupt's path, in the order the model went through it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleTrace {
    /// What the trace is, e.g. `timer #12 (guest idle)`.
    pub label: String,
    /// Simulated time of its start (deadline, trigger, send), ns.
    pub start_ns: f64,
    /// Sum of the segments, ns.
    pub total_ns: f64,
    /// (segment name, duration in ns), in path order.
    pub segments: Vec<(String, f64)>,
}

impl SampleTrace {
    /// Largest number of traces kept per configuration in a result file (a reader bound: a
    /// crafted file cannot make `report` render millions of rows).
    pub const MAX_PER_CONFIG: usize = 10_000;
}

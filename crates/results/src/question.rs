//! The question a run answers, stored with the result so that `irqlab report` can put the
//! answer first without the scenario file.
//!
//! A scenario declares it in a `[[question]]` table (validated by `sim::scenario::question`);
//! `irqlab compare RESULT --by PARAM=A,B` builds one on the command line. The answer itself
//! (pairing configurations that differ only in `param`, the changes per group) is computed by
//! `report::answer` from this record and the configurations' results.
use serde::{Deserialize, Serialize};

/// "What does changing `param` from `baseline` to each of `variants` do to `stats`, within each
/// group of `within`?"
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// One plain-language line, e.g. "What does GICv4 direct injection buy per I/O?".
    pub title: String,
    /// The parameter under study, a dotted key as in `[sweep]` (`hypervisor.direct_lpi`).
    pub param: String,
    /// Its baseline value, as the configurations' `params` show it (`off`, `false`).
    pub baseline: String,
    /// The values compared with the baseline.
    pub variants: Vec<String>,
    /// Parameters whose values name the groups the answer is given within. Other parameters
    /// that vary are folded (each group then summarises several pairs, and says so); empty:
    /// every other varying parameter names the groups (nothing folded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<String>,
    /// Statistics that matter: latency summary fields (`mean`, `p50`, `p99`, `p99.9`, …) or
    /// `figure:NAME` (a throughput, say).
    pub stats: Vec<String>,
    /// Latency classes the latency statistics are of; empty: every class of the paired runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<String>,
}

//! The gate's answer as one outcome per check — passed or tripped, with the estimate (B/A, or
//! B − A for a share) and its interval at the gate's level, or cannot-check with the reason —
//! which JUnit's test cases and the Markdown summary's rows map one to one. These are the
//! per-check outcomes `results::stats::gate` itself reports (issue 45); [`from_gate`] is the one
//! place the document takes them from.
use results::stats::gate::GateReport;
pub use results::stats::gate::{CheckResult, GateCheck as Check, Scale};

/// The per-check outcomes of gate report `g`: what blinds the whole gate first, then per
/// configuration × class × statistic in the table's order (the gate's own list).
pub fn from_gate(g: &GateReport) -> Vec<Check> {
    g.items.clone()
}

/// A check's JSON: its fields and its result, tagged `passed`/`tripped`/`cannot_check`.
pub fn check_json(c: &Check) -> serde_json::Value {
    serde_json::to_value(c).unwrap_or(serde_json::Value::Null)
}

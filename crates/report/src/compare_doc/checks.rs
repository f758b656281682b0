//! The gate's answer as one outcome per check — passed or tripped, with B/A and its interval at
//! the gate's level, or cannot-check with the reason — which JUnit's test cases and the Markdown
//! summary's rows map one to one. The types have the shape of the per-check outcomes issue 45
//! gives `results::stats::gate` itself; until that lands, [`from_gate`] is the one place that
//! derives them from today's gate report, and becomes a copy of the gate's own list after.
use results::stats::gate::{GateError, GateReport};
use results::stats::pairs::{verdicts_with, Verdicts};
use results::stats::verdict::{Basis, Word};
use results::stats::Confidence;
use results::{Comparison, RunResult};

/// The result of one check.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckResult {
    /// Checked at the gate's level: the interval's lower end is not above 1.
    Passed {
        ratio: f64,
        /// B/A's two-sided interval at the gate's level.
        interval: (f64, f64),
        /// The table (at the plain confidence) calls it slower.
        table_slower: bool,
    },
    /// Checked at the gate's level: B is resolvably slower.
    Tripped { ratio: f64, interval: (f64, f64) },
    /// Not checkable; `blocks` when this makes the gate's outcome `Unchecked`.
    CannotCheck { reason: String, blocks: bool },
}

/// One (configuration × class × statistic) the gate was asked about; `class` and `stat` are
/// `None` for what concerns a whole configuration, `config` too for the whole comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub config: Option<String>,
    pub class: Option<String>,
    pub stat: Option<String>,
    pub result: CheckResult,
}

impl Check {
    /// `config class stat`, as far as given.
    pub fn label(&self) -> String {
        [&self.config, &self.class, &self.stat].into_iter().flatten().cloned().collect::<Vec<_>>().join(" ")
    }

    pub fn json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({"config": self.config, "class": self.class, "stat": self.stat});
        match &self.result {
            CheckResult::Passed { ratio, interval, table_slower } => {
                v["result"] = "passed".into();
                v["ratio"] = (*ratio).into();
                v["interval"] = serde_json::json!([interval.0, interval.1]);
                v["table_slower"] = (*table_slower).into();
            }
            CheckResult::Tripped { ratio, interval } => {
                v["result"] = "tripped".into();
                v["ratio"] = (*ratio).into();
                v["interval"] = serde_json::json!([interval.0, interval.1]);
            }
            CheckResult::CannotCheck { reason, blocks } => {
                v["result"] = "cannot_check".into();
                v["reason"] = reason.as_str().into();
                v["blocks"] = (*blocks).into();
            }
        }
        v
    }
}

/// The per-check outcomes of gate report `g`, made from `table` (the verdicts at `conf`) and
/// the verdicts at the gate's level, as the gate made its own: what blinds the whole gate first,
/// then per configuration × class × statistic in the table's order.
pub fn from_gate(a: &RunResult, b: &RunResult, comparison: &Comparison, table: &Verdicts, conf: Confidence, g: &GateReport, stat: Option<&str>) -> Result<Vec<Check>, GateError> {
    let strict = if (g.level - conf.level()).abs() < 1e-15 { table.clone() } else { verdicts_with(a, b, comparison, Confidence::new(g.level)?, table.declared_paired)? };
    let mut per_stat = Vec::new();
    for c in &table.classes {
        for v in c.stats.iter().filter(|v| stat.is_none_or(|s| s == v.stat)) {
            let result = match (&v.interval, &v.basis) {
                (Some(_), _) => {
                    let s = strict.classes.iter().find(|x| x.config == c.config && x.class == c.class).and_then(|x| x.get(&v.stat));
                    match s.and_then(|s| s.interval.map(|i| (s, i))) {
                        Some((s, i)) if s.word == Word::Slower => CheckResult::Tripped { ratio: s.ratio, interval: i },
                        Some((s, i)) => CheckResult::Passed { ratio: s.ratio, interval: i, table_slower: v.word == Word::Slower },
                        None => CheckResult::CannotCheck { reason: "no interval at the gate's level".into(), blocks: stat.is_some() },
                    }
                }
                (None, Basis::None { reason }) => CheckResult::CannotCheck { reason: reason.clone(), blocks: stat.is_some() },
                (None, _) => CheckResult::CannotCheck { reason: "no interval for this data".into(), blocks: stat.is_some() },
            };
            per_stat.push(Check { config: Some(c.config.clone()), class: Some(c.class.clone()), stat: Some(v.stat.clone()), result });
        }
    }
    // What blinds the gate beyond single statistics: the unchecked items no statistic above names.
    let labels: Vec<String> = per_stat.iter().map(|c| format!("{}: ", c.label())).collect();
    let mut out: Vec<Check> = g
        .unchecked
        .iter()
        .filter(|u| !labels.iter().any(|l| u.starts_with(l.as_str())))
        .map(|u| Check { config: None, class: None, stat: None, result: CheckResult::CannotCheck { reason: u.clone(), blocks: true } })
        .collect();
    out.extend(per_stat);
    Ok(out)
}

//! Published figures a scenario reproduces, and the check of a result against them.
use serde::Deserialize;

use results::RunResult;

/// One published figure: `stat` of `class` in configuration `config` should be `value`
/// within `tolerance` (relative, e.g. 0.15 for ±15 %). `stat` is a summary field
/// (`mean`, `min`, `p50`, `p99`, `p99.9`, `max`, `warm_max`), `figure:NAME` for a scalar figure,
/// or `ratio:NAME` with `over` naming the configuration in the denominator.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub config: String,
    #[serde(default)]
    pub class: String,
    pub stat: String,
    pub value: f64,
    pub tolerance: f64,
    pub source: String,
    /// For `ratio:` stats: the configuration whose figure is the denominator.
    #[serde(default)]
    pub over: Option<String>,
}

/// Result of checking one reference.
#[derive(Debug, Clone, PartialEq)]
pub struct RefCheck {
    pub reference: Reference,
    /// The simulated value, or why there is none.
    pub got: Result<f64, String>,
}

impl RefCheck {
    pub fn within(&self) -> bool {
        matches!(self.got, Ok(v) if (v - self.reference.value).abs() <= self.reference.tolerance * self.reference.value.abs())
    }
    pub fn deviation(&self) -> Option<f64> {
        self.got.as_ref().ok().map(|v| v / self.reference.value - 1.0)
    }
}

fn stat_of(r: &RunResult, config: &str, class: &str, stat: &str) -> Result<f64, String> {
    let c = r.configs.iter().find(|c| c.name == config).ok_or_else(|| format!("no configuration `{config}`"))?;
    if let Some(e) = &c.error {
        return Err(format!("configuration failed: {e}"));
    }
    if let Some(name) = stat.strip_prefix("figure:") {
        return c.figures.get(name).map(|f| f.value).ok_or_else(|| format!("no figure `{name}`"));
    }
    let l = c.classes.get(class).ok_or_else(|| format!("no class `{class}`"))?;
    let s = &l.summary;
    Ok(match stat {
        "mean" => s.mean,
        "min" => s.min as f64,
        "p50" => s.p50 as f64,
        "p90" => s.p90 as f64,
        "p99" => s.p99 as f64,
        "p99.9" => s.p999 as f64,
        "p99.99" => s.p9999 as f64,
        "max" => s.max as f64,
        "warm_max" => s.warm_max as f64,
        other => return Err(format!("unknown stat `{other}`")),
    })
}

/// Check every reference against a result.
pub fn check_references(refs: &[Reference], r: &RunResult) -> Vec<RefCheck> {
    refs.iter()
        .map(|rf| {
            let got = if let Some(name) = rf.stat.strip_prefix("ratio:") {
                let over = rf.over.as_deref().unwrap_or("");
                let stat = if name.contains(':') || ["mean", "min", "p50", "p99", "max", "warm_max"].contains(&name) {
                    name.to_string()
                } else {
                    format!("figure:{name}")
                };
                stat_of(r, &rf.config, &rf.class, &stat)
                    .and_then(|a| stat_of(r, over, &rf.class, &stat).map(|b| a / b))
            } else {
                stat_of(r, &rf.config, &rf.class, &rf.stat)
            };
            RefCheck { reference: rf.clone(), got }
        })
        .collect()
}

//! Published figures a scenario is checked against, and the check of a result against them.
//!
//! Each `[[reference]]` row carries a `role`: `fit` (the figure was used to calibrate a cost) or
//! `check` (held out, never used to calibrate). Rows are validated when the scenario is loaded:
//! the configuration must exist, the stat must be one irqlab computes, the value finite, the
//! tolerance a finite non-negative fraction, the source non-empty. Class and figure names are
//! only known once the model has run; a reference naming one the model did not produce is then
//! an error of the scenario, not an "OUT" row.
use serde::Deserialize;

use results::{ReferenceOutcome, ReferenceRole, RunResult, Spread};

use super::error::ScenarioError;

/// Summary statistics a reference may name ([`results::vocab::stat::LATENCY`]).
pub const LATENCY_STATS: &[&str] = &results::vocab::stat::names(results::vocab::stat::LATENCY);

/// One published figure: `stat` of `class` in configuration `config` should be `value`
/// within `tolerance` (relative, e.g. 0.15 for ±15 %). `stat` is a summary field
/// (see [`LATENCY_STATS`]), `figure:NAME` for a scalar figure, or `ratio:X` with `over` naming
/// the configuration in the denominator (X a summary field or a figure name).
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
    /// `fit` (used to calibrate) or `check` (held out).
    pub role: ReferenceRole,
    /// For `ratio:` stats: the configuration whose figure is the denominator.
    #[serde(default)]
    pub over: Option<String>,
}

/// What a stat string asks for.
#[derive(Debug, Clone, PartialEq)]
enum StatKind<'a> {
    Latency(&'a str),
    Figure(&'a str),
}

/// Why a reference's `stat` names nothing irqlab computes; the text is what the row's key expects.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum StatError {
    #[error("`figure:` needs a figure name")]
    EmptyFigure,
    #[error("`ratio:` needs a stat or figure name")]
    EmptyRatio,
    #[error("one of {}, `figure:NAME` or `ratio:...`", LATENCY_STATS.join(", "))]
    Unknown,
}

/// Why a configuration that ran has no value for a reference: it failed (an `OUT`-less row that
/// says so), or it has no such class or figure (an error of the scenario).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum ValueError {
    #[error("configuration `{config}` failed: {error}")]
    Failed { config: String, error: String },
    #[error("configuration `{config}` has no {what} `{name}` (it has: {})", if have.is_empty() { "none".to_string() } else { have.join(", ") })]
    NotProduced { config: String, what: &'static str, name: String, have: Vec<String> },
}

fn parse_stat(stat: &str) -> Result<StatKind<'_>, StatError> {
    if let Some(name) = stat.strip_prefix("figure:") {
        return if name.is_empty() { Err(StatError::EmptyFigure) } else { Ok(StatKind::Figure(name)) };
    }
    if LATENCY_STATS.contains(&stat) {
        return Ok(StatKind::Latency(stat));
    }
    Err(StatError::Unknown)
}

impl Reference {
    /// The stat of numerator and denominator (`ratio:X` → X).
    fn inner_stat(&self) -> Result<StatKind<'_>, StatError> {
        match self.stat.strip_prefix("ratio:") {
            Some(x) if LATENCY_STATS.contains(&x) => Ok(StatKind::Latency(x)),
            Some(x) => parse_stat(x).or(if x.is_empty() { Err(StatError::EmptyRatio) } else { Ok(StatKind::Figure(x)) }),
            None => parse_stat(&self.stat),
        }
    }

    /// Validate the row against the scenario's configuration names. `i` is its index.
    pub fn validate(&self, file: &str, i: usize, configs: &[String]) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("reference[{i}].{k}");
        let bad = |k: &str, expected: &str, got: &dyn std::fmt::Display| ScenarioError::invalid(file, &key(k), expected, got);
        let known = |name: &str| configs.iter().any(|c| c == name);
        let list = || if configs.len() <= 12 { configs.join(", ") } else { format!("{}, … ({} in all)", configs[..12].join(", "), configs.len()) };
        if !known(&self.config) {
            return Err(bad("config", &format!("a configuration of this scenario ({})", list()), &format!("`{}`", self.config)));
        }
        let kind = self.inner_stat().map_err(|e| bad("stat", &e.to_string(), &format!("`{}`", self.stat)))?;
        match (&kind, self.class.is_empty()) {
            (StatKind::Latency(_), true) => return Err(bad("class", "the latency class this stat is of (e.g. `timer`)", &"nothing")),
            (StatKind::Figure(_), false) => return Err(bad("class", "no class for a figure", &format!("`{}`", self.class))),
            _ => {}
        }
        match (self.stat.starts_with("ratio:"), &self.over) {
            (true, None) => return Err(bad("over", "the denominator configuration of a `ratio:` stat", &"nothing")),
            (true, Some(o)) if !known(o) => return Err(bad("over", &format!("a configuration of this scenario ({})", list()), &format!("`{o}`"))),
            (false, Some(_)) => return Err(bad("over", "no `over` unless stat is `ratio:...`", &"a value")),
            _ => {}
        }
        if !self.value.is_finite() || self.value == 0.0 {
            return Err(bad("value", "a finite, non-zero published value", &self.value));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(bad("tolerance", "a finite relative tolerance >= 0 (0.15 = ±15%)", &self.tolerance));
        }
        if self.source.trim().is_empty() {
            return Err(bad("source", "where the published figure comes from", &"an empty string"));
        }
        Ok(())
    }
}

/// The model's value of a statistic and, when the configuration ran with several seeds, its
/// spread over them (the value is then the median). `Ok(None)`: the configuration was not run;
/// `Err`: why there is no value (the caller distinguishes "not run" from "failed").
fn stat_of(r: &RunResult, config: &str, class: &str, kind: &StatKind) -> Result<Option<(f64, Option<Spread>)>, ValueError> {
    let Some(c) = r.configs.iter().find(|c| c.name == config) else {
        return Ok(None);
    };
    if let Some(e) = &c.error {
        return Err(ValueError::Failed { config: config.into(), error: e.clone() });
    }
    let unknown =
        |what: &'static str, name: &str, have: Vec<&String>| ValueError::NotProduced { config: config.into(), what, name: name.into(), have: have.into_iter().cloned().collect() };
    let seeds = c.seed_spread.as_ref().filter(|s| s.seeds.len() > 1);
    let (value, spread) = match kind {
        StatKind::Figure(name) => {
            let f = c.figures.get(*name).ok_or_else(|| unknown("figure", name, c.figures.keys().collect()))?;
            (f.value, seeds.and_then(|s| s.figure(name)))
        }
        StatKind::Latency(stat) => {
            let l = c.classes.get(class).ok_or_else(|| unknown("latency class", class, c.classes.keys().collect()))?;
            (results::summary_stat(&l.summary, stat).expect("validated stat"), seeds.and_then(|s| s.latency(class, stat)))
        }
    };
    Ok(Some(match spread {
        Some(s) => (s.median, Some(*s)),
        None => (value, None),
    }))
}

/// Check every (validated) reference against a result. A reference to a configuration that was
/// not run has no model value and says so; a reference naming a class or figure that the model
/// did not produce is an error of the scenario.
pub fn check_references(file: &str, refs: &[Reference], r: &RunResult) -> Result<Vec<ReferenceOutcome>, ScenarioError> {
    let mut out = Vec::with_capacity(refs.len());
    for (i, rf) in refs.iter().enumerate() {
        let kind = rf.inner_stat().map_err(|e| ScenarioError::invalid(file, &format!("reference[{i}].stat"), e.to_string(), &rf.stat))?;
        let one = |config: &str| -> Result<Result<(f64, Option<Spread>), String>, ScenarioError> {
            match stat_of(r, config, &rf.class, &kind) {
                Ok(Some(v)) => Ok(Ok(v)),
                Ok(None) => Ok(Err(format!("not run: configuration `{config}` was not part of this run"))),
                Err(e @ ValueError::NotProduced { .. }) => Err(ScenarioError::invalid(file, &format!("reference[{i}]"), "a class/figure the model produces", e)),
                Err(e @ ValueError::Failed { .. }) => Ok(Err(e.to_string())),
            }
        };
        let num = one(&rf.config)?;
        // A ratio over seeds is the ratio of the two medians (the replicas of two configurations
        // are not paired), without a range.
        let value = match (&rf.over, num) {
            (Some(over), Ok((a, _))) => one(over)?.map(|(b, _)| (a / b, None)),
            (_, v) => v,
        };
        let (model, over_seeds, missing) = match value {
            Ok((v, s)) if v.is_finite() => (Some(v), s, None),
            Ok((v, _)) => (None, None, Some(format!("the model's value is not finite ({v})"))),
            Err(e) => (None, None, Some(e)),
        };
        out.push(ReferenceOutcome {
            config: rf.config.clone(),
            class: rf.class.clone(),
            stat: rf.stat.clone(),
            over: rf.over.clone(),
            role: rf.role,
            published: rf.value,
            tolerance: rf.tolerance,
            source: rf.source.clone(),
            model,
            over_seeds,
            missing,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(extra: &str) -> Reference {
        let base = "config = \"a\"\nclass = \"timer\"\nstat = \"mean\"\nvalue = 10\ntolerance = 0.1\nsource = \"S3\"\nrole = \"check\"\n";
        let mut t: toml::Table = toml::from_str(base).unwrap();
        let e: toml::Table = toml::from_str(extra).unwrap();
        t.extend(e);
        toml::Value::Table(t).try_into().unwrap()
    }

    fn err(r: &Reference) -> String {
        r.validate("s.toml", 3, &["a".into(), "b".into()]).unwrap_err().to_string()
    }

    /// Whether a reference names a class the model did not produce is decided by the error's
    /// kind, not by its text: a failed configuration whose message happens to read "configuration
    /// … has no …" is a row without a model value, not an error of the scenario.
    #[test]
    fn a_failed_configuration_is_a_missing_value_whatever_its_message_says() {
        use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta};
        let mut r = RunResult::new(RunMeta::named("t", "s", 0, ResultKind::Predicted));
        r.configs.push(ConfigResult::failed("a", Default::default(), "configuration `q` has no latency class `x`".into()));
        let mut b = ConfigResult::failed("b", Default::default(), String::new());
        b.error = None;
        let mut ipi = LatencyRecorder::new(0);
        ipi.record(100);
        b.classes.insert("ipi".into(), ipi.finish());
        r.configs.push(b);
        let out = check_references("s.toml", &[row("")], &r).unwrap();
        assert_eq!(out[0].model, None);
        assert_eq!(out[0].missing.as_deref(), Some("configuration `a` failed: configuration `q` has no latency class `x`"));
        let e = check_references("s.toml", &[row("config = \"b\"")], &r).unwrap_err().to_string();
        assert!(e.contains("reference[0]") && e.contains("configuration `b` has no latency class `timer` (it has: ipi)"), "{e}");
    }

    #[test]
    fn a_good_row_validates() {
        row("").validate("s.toml", 0, &["a".into()]).unwrap();
        row("stat = \"figure:iops\"\nclass = \"\"").validate("s.toml", 0, &["a".into()]).unwrap();
        row("stat = \"ratio:mean\"\nover = \"b\"").validate("s.toml", 0, &["a".into(), "b".into()]).unwrap();
    }

    #[test]
    fn bad_rows_name_the_key() {
        assert!(err(&row("config = \"nope\"")).contains("reference[3].config"));
        assert!(err(&row("stat = \"avg\"")).contains("reference[3].stat"));
        assert!(err(&row("class = \"\"")).contains("reference[3].class"));
        assert!(err(&row("stat = \"figure:x\"")).contains("no class for a figure"));
        assert!(err(&row("value = nan")).contains("reference[3].value"));
        assert!(err(&row("tolerance = -0.1")).contains("reference[3].tolerance"));
        assert!(err(&row("tolerance = inf")).contains("reference[3].tolerance"));
        assert!(err(&row("source = \" \"")).contains("reference[3].source"));
        assert!(err(&row("stat = \"ratio:mean\"")).contains("reference[3].over"));
        assert!(err(&row("stat = \"ratio:mean\"\nover = \"zz\"")).contains("`zz`"));
        assert!(err(&row("over = \"b\"")).contains("no `over`"));
    }

    #[test]
    fn role_is_required_and_closed() {
        let t = "config = \"a\"\nclass = \"timer\"\nstat = \"mean\"\nvalue = 10\ntolerance = 0.1\nsource = \"S3\"\n";
        assert!(toml::from_str::<Reference>(t).is_err());
        assert!(toml::from_str::<Reference>(&format!("{t}role = \"predict\"")).is_err());
    }
}

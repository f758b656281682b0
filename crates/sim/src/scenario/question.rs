//! `[[question]]`: the question a scenario answers, read strictly.
//!
//! A scenario names the parameter under study, its baseline and the variants compared with it,
//! the groups to answer within and the statistics that matter (issue 28). Everything that can
//! be checked before the run is checked when the scenario is loaded, against the values the
//! scenario's points actually take (a parameter no point varies, or a value none takes, is an
//! error naming `question[i].<key>`). Latency classes and `figure:` names are only known once
//! the model has run; [`check_questions`] then checks them, as `check_references` does for
//! `[[reference]]` rows.
use std::collections::{BTreeMap, BTreeSet};

use results::{Question, RunResult};
use serde::Deserialize;

use super::error::ScenarioError;
use super::reference::LATENCY_STATS;
use super::sweep::show;

/// One `[[question]]` table as written. Values may be strings, booleans or numbers, as in
/// `[sweep]`; they are compared as the configurations' `params` show them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QuestionEntry {
    title: String,
    param: String,
    baseline: toml::Value,
    variants: Vec<toml::Value>,
    #[serde(default)]
    within: Vec<String>,
    stats: Vec<String>,
    #[serde(default)]
    classes: Vec<String>,
}

/// A short list for an error message.
fn list<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    let v: Vec<String> = items.into_iter().map(|s| format!("`{s}`")).collect();
    if v.is_empty() { "none".into() } else { v.join(", ") }
}

/// Is `stat` one a question may name?
pub fn question_stat_ok(stat: &str) -> bool {
    LATENCY_STATS.contains(&stat) || stat.strip_prefix("figure:").is_some_and(|n| !n.is_empty())
}

impl QuestionEntry {
    /// Check the entry against the parameters of every point (`params`, one map per point) and
    /// turn it into the stored [`Question`]. `i` is its index in the file.
    ///
    /// `in_doc` says whether a dotted key names a value of the points' documents: a parameter
    /// that exists but that no point varies (a copy of a scenario with its `[sweep]` removed) is
    /// accepted, unchecked, and the answer then says that nothing pairs; a key that exists
    /// nowhere is a typo and an error.
    pub(crate) fn validate(self, file: &str, i: usize, params: &[BTreeMap<String, String>], in_doc: &dyn Fn(&str) -> bool) -> Result<Question, ScenarioError> {
        let key = |k: &str| format!("question[{i}].{k}");
        let bad = |k: &str, expected: String, got: String| ScenarioError::invalid(file, &key(k), expected, got);
        if self.title.trim().is_empty() {
            return Err(bad("title", "a plain-language question".into(), "an empty string".into()));
        }
        let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for p in params {
            for (k, v) in p {
                values.entry(k.as_str()).or_default().insert(v.as_str());
            }
        }
        let varying: Vec<String> = values.iter().filter(|(_, v)| v.len() > 1).map(|(k, _)| k.to_string()).collect();
        let Some(taken) = values.get(self.param.as_str()).filter(|v| v.len() > 1) else {
            if in_doc(&self.param) && !self.variants.is_empty() {
                let show_all = |v: &[toml::Value]| v.iter().map(show).collect::<Vec<_>>();
                return Ok(Question { title: self.title, param: self.param, baseline: show(&self.baseline), variants: show_all(&self.variants), within: self.within, stats: self.stats, classes: self.classes });
            }
            return Err(bad(
                "param",
                format!(
                    "a parameter this scenario's configurations or sweep vary (one of: {}){}",
                    list(&varying),
                    super::did_you_mean(&self.param, varying.iter().map(String::as_str))
                ),
                format!("`{}`", self.param),
            ));
        };
        let taken_list = || list(&taken.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let value_ok = |k: &str, v: &toml::Value| -> Result<String, ScenarioError> {
            let s = show(v);
            if taken.contains(s.as_str()) {
                Ok(s)
            } else {
                Err(bad(
                    k,
                    format!("a value `{}` takes in this scenario (one of: {}){}", self.param, taken_list(), super::did_you_mean(&s, taken.iter().copied())),
                    format!("`{s}`"),
                ))
            }
        };
        let baseline = value_ok("baseline", &self.baseline)?;
        if self.variants.is_empty() {
            return Err(bad("variants", "at least one value to compare with the baseline".into(), "an empty list".into()));
        }
        let mut variants = Vec::new();
        for (j, v) in self.variants.iter().enumerate() {
            let k = format!("variants[{j}]");
            let s = value_ok(&k, v)?;
            if s == baseline || variants.contains(&s) {
                return Err(bad(&k, "a value other than the baseline and the other variants".into(), format!("`{s}` again")));
            }
            variants.push(s);
        }
        for (j, w) in self.within.iter().enumerate() {
            let k = format!("within[{j}]");
            if w == &self.param {
                return Err(bad(&k, "a parameter other than the one under study".into(), format!("`{w}`")));
            }
            if !values.contains_key(w.as_str()) && !in_doc(w) {
                let known: Vec<String> = values.keys().filter(|k| **k != self.param).map(|k| k.to_string()).collect();
                return Err(bad(&k, format!("a parameter of this scenario's configurations (one of: {}){}", list(&known), super::did_you_mean(w, known.iter().map(String::as_str))), format!("`{w}`")));
            }
            if self.within[..j].contains(w) {
                return Err(bad(&k, "each parameter once".into(), format!("`{w}` again")));
            }
        }
        if self.stats.is_empty() {
            return Err(bad("stats", format!("at least one of {} or `figure:NAME`", LATENCY_STATS.join(", ")), "an empty list".into()));
        }
        for (j, s) in self.stats.iter().enumerate() {
            if !question_stat_ok(s) {
                return Err(bad(
                    &format!("stats[{j}]"),
                    format!("one of {} or `figure:NAME`{}", LATENCY_STATS.join(", "), super::did_you_mean(s, LATENCY_STATS.iter().copied())),
                    format!("`{s}`"),
                ));
            }
        }
        Ok(Question { title: self.title, param: self.param, baseline, variants, within: self.within, stats: self.stats, classes: self.classes })
    }
}

/// After the run: every class and `figure:` a question names must be one the model produced
/// in some configuration (a typo would otherwise give an answer with holes).
pub fn check_questions(file: &str, questions: &[Question], r: &RunResult) -> Result<(), ScenarioError> {
    let ok: Vec<_> = r.configs.iter().filter(|c| c.error.is_none()).collect();
    if ok.is_empty() {
        return Ok(());
    }
    let classes: BTreeSet<&String> = ok.iter().flat_map(|c| c.classes.keys()).collect();
    let figures: BTreeSet<&String> = ok.iter().flat_map(|c| c.figures.keys()).collect();
    for (i, q) in questions.iter().enumerate() {
        for (j, c) in q.classes.iter().enumerate() {
            if !classes.contains(c) {
                return Err(ScenarioError::invalid(file, &format!("question[{i}].classes[{j}]"), format!("a latency class the model produces (one of: {})", list(classes.iter().copied())), format!("`{c}`")));
            }
        }
        for (j, s) in q.stats.iter().enumerate() {
            if let Some(name) = s.strip_prefix("figure:") {
                if !figures.iter().any(|f| f.as_str() == name) {
                    return Err(ScenarioError::invalid(file, &format!("question[{i}].stats[{j}]"), format!("a figure the model produces (one of: {})", list(figures.iter().copied())), format!("`{s}`")));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Vec<BTreeMap<String, String>> {
        let mk = |a: &str, b: &str| BTreeMap::from([("hypervisor.vwfi".to_string(), a.to_string()), ("workload.other".to_string(), b.to_string())]);
        vec![mk("trap", "busy"), mk("native", "busy"), mk("trap", "idle"), mk("native", "idle")]
    }

    fn entry(extra: &str) -> QuestionEntry {
        let base = "title = \"q\"\nparam = \"hypervisor.vwfi\"\nbaseline = \"trap\"\nvariants = [\"native\"]\nstats = [\"mean\"]\n";
        let mut t: toml::Table = toml::from_str(base).unwrap();
        t.extend(toml::from_str::<toml::Table>(extra).unwrap());
        toml::Value::Table(t).try_into().unwrap()
    }

    fn err(extra: &str) -> String {
        entry(extra).validate("s.toml", 2, &params(), &|_| false).unwrap_err().to_string()
    }

    #[test]
    fn a_good_question_is_stored_with_shown_values() {
        let q = entry("within = [\"workload.other\"]\nstats = [\"mean\", \"p99.9\", \"figure:iops\"]").validate("s.toml", 0, &params(), &|_| false).unwrap();
        assert_eq!((q.baseline.as_str(), q.variants.clone()), ("trap", vec!["native".to_string()]));
        assert_eq!(q.within, ["workload.other"]);
    }

    #[test]
    fn every_bad_key_is_named_with_the_file() {
        let e = err("param = \"hypervisor.vwfy\"");
        assert!(e.starts_with("s.toml: key `question[2].param`"), "{e}");
        assert!(e.contains("did you mean `hypervisor.vwfi`"), "{e}");
        assert!(err("baseline = \"trapp\"").contains("question[2].baseline"));
        assert!(err("variants = [\"native\", \"adaptive\"]").contains("question[2].variants[1]"));
        assert!(err("variants = [\"trap\"]").contains("question[2].variants[0]"));
        assert!(err("variants = []").contains("question[2].variants"));
        assert!(err("within = [\"workload.job\"]").contains("question[2].within[0]"));
        assert!(err("within = [\"hypervisor.vwfi\"]").contains("other than the one under study"));
        assert!(err("stats = [\"p95\"]").contains("question[2].stats[0]"));
        assert!(err("stats = []").contains("question[2].stats"));
        assert!(err("title = \" \"").contains("question[2].title"));
    }

    #[test]
    fn a_parameter_that_exists_nowhere_is_refused_one_that_does_not_vary_is_kept() {
        let one = vec![params()[0].clone()];
        let e = entry("").validate("s.toml", 0, &one, &|_| false).unwrap_err().to_string();
        assert!(e.contains("question[0].param") && e.contains("vary"), "{e}");
        let q = entry("").validate("s.toml", 0, &one, &|k| k == "hypervisor.vwfi").unwrap();
        assert_eq!(q.variants, ["native"]);
    }

    #[test]
    fn unknown_keys_are_refused_by_the_reader() {
        let t = "title = \"q\"\nparam = \"a\"\nbaseline = 1\nvariants = [2]\nstats = [\"mean\"]\nbaseline_value = 3\n";
        assert!(toml::from_str::<QuestionEntry>(t).is_err());
    }

    #[test]
    fn booleans_compare_as_shown() {
        let p = vec![BTreeMap::from([("h.pv".to_string(), "false".to_string())]), BTreeMap::from([("h.pv".to_string(), "true".to_string())])];
        let q: QuestionEntry = toml::from_str("title = \"q\"\nparam = \"h.pv\"\nbaseline = false\nvariants = [true]\nstats = [\"p50\"]").unwrap();
        assert_eq!(q.validate("f", 0, &p, &|_| false).unwrap().variants, ["true"]);
    }
}

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
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Is `stat` one a question may name?
pub fn question_stat_ok(stat: &str) -> bool {
    LATENCY_STATS.contains(&stat) || stat.strip_prefix("figure:").is_some_and(|n| !n.is_empty())
}

/// The values each parameter takes over a scenario's points, plus the document's own value of
/// the keys it sets (a default is a value too): what a question's baseline and variants are
/// checked against.
pub type Domain = BTreeMap<String, BTreeSet<String>>;

/// The [`Domain`] of points' parameters.
pub fn domain(params: &[BTreeMap<String, String>]) -> Domain {
    let mut d = Domain::new();
    for p in params {
        for (k, v) in p {
            d.entry(k.clone()).or_default().insert(v.clone());
        }
    }
    d
}

fn varying(d: &Domain) -> Vec<String> {
    d.iter().filter(|(_, v)| v.len() > 1).map(|(k, _)| k.clone()).collect()
}

impl QuestionEntry {
    /// Check the names of the entry (parameter, groups, statistics) and turn it into the stored
    /// [`Question`]. `i` is its index in the file; `d` the values the points take.
    ///
    /// `in_doc` says whether a dotted key names a value of the scenario's document: a parameter
    /// that exists but that no point varies is accepted (the answer then says nothing pairs); a
    /// key that exists nowhere is a typo and an error. A scenario whose points vary nothing at all
    /// (a copy with its `[sweep]` and `[[configs]]` removed) cannot answer a question, and its
    /// questions are kept unchecked. The values are checked by [`check_values`] once the model has
    /// accepted every point, so that a bad sweep value is reported as what it is.
    pub(crate) fn validate(self, file: &str, i: usize, d: &Domain, in_doc: &dyn Fn(&str) -> bool) -> Result<Question, ScenarioError> {
        let key = |k: &str| format!("question[{i}].{k}");
        let bad = |k: &str, expected: String, got: String| ScenarioError::invalid(file, &key(k), expected, got);
        if self.title.trim().is_empty() {
            return Err(bad("title", "a plain-language question".into(), "an empty string".into()));
        }
        let vary = varying(d);
        let checked = !vary.is_empty();
        let known = |k: &str| d.get(k).is_some_and(|v| v.len() > 1) || in_doc(k);
        if checked && !known(&self.param) {
            return Err(bad(
                "param",
                format!("a parameter this scenario's configurations or sweep vary (one of: {}){}", list(&vary), super::did_you_mean(&self.param, vary.iter().map(String::as_str))),
                format!("`{}`", self.param),
            ));
        }
        let baseline = show(&self.baseline);
        if self.variants.is_empty() {
            return Err(bad("variants", "at least one value to compare with the baseline".into(), "an empty list".into()));
        }
        let mut variants: Vec<String> = Vec::new();
        for (j, v) in self.variants.iter().enumerate() {
            let s = show(v);
            if s == baseline || variants.contains(&s) {
                return Err(bad(&format!("variants[{j}]"), "a value other than the baseline and the other variants".into(), format!("`{s}` again")));
            }
            variants.push(s);
        }
        for (j, w) in self.within.iter().enumerate() {
            let k = format!("within[{j}]");
            if w == &self.param {
                return Err(bad(&k, "a parameter other than the one under study".into(), format!("`{w}`")));
            }
            if checked && !d.contains_key(w.as_str()) && !in_doc(w) {
                let names: Vec<String> = d.keys().filter(|k| **k != self.param).cloned().collect();
                return Err(bad(
                    &k,
                    format!("a parameter of this scenario's configurations (one of: {}){}", list(&names), super::did_you_mean(w, names.iter().map(String::as_str))),
                    format!("`{w}`"),
                ));
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

/// Every baseline and variant of a question whose parameter varies must be a value the points
/// take, or the scenario's own (default) value of it (`base`, from the document); an error names
/// `question[i].baseline` or `question[i].variants[j]` and the values there are.
pub fn check_values(file: &str, questions: &[Question], d: &Domain, base: &toml::Table) -> Result<(), ScenarioError> {
    for (i, q) in questions.iter().enumerate() {
        let Some(taken) = d.get(&q.param).filter(|v| v.len() > 1) else { continue };
        let mut allowed = taken.clone();
        if let Some(v) = super::sweep::get_path(base, &q.param) {
            allowed.insert(show(v));
        }
        let keys = std::iter::once(("baseline".to_string(), &q.baseline)).chain(q.variants.iter().enumerate().map(|(j, v)| (format!("variants[{j}]"), v)));
        for (k, v) in keys {
            if !allowed.contains(v) {
                return Err(ScenarioError::invalid(
                    file,
                    &format!("question[{i}].{k}"),
                    format!("a value `{}` takes in this scenario (one of: {}){}", q.param, list(allowed.iter()), super::did_you_mean(v, allowed.iter().map(String::as_str))),
                    format!("`{v}`"),
                ));
            }
        }
    }
    Ok(())
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
                return Err(ScenarioError::invalid(
                    file,
                    &format!("question[{i}].classes[{j}]"),
                    format!("a latency class the model produces (one of: {})", list(classes.iter().copied())),
                    format!("`{c}`"),
                ));
            }
        }
        for (j, s) in q.stats.iter().enumerate() {
            if let Some(name) = s.strip_prefix("figure:") {
                if !figures.iter().any(|f| f.as_str() == name) {
                    return Err(ScenarioError::invalid(
                        file,
                        &format!("question[{i}].stats[{j}]"),
                        format!("a figure the model produces (one of: {})", list(figures.iter().copied())),
                        format!("`{s}`"),
                    ));
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

    /// The error of `extra`, from the name checks or else the value checks.
    fn err(extra: &str) -> String {
        let d = domain(&params());
        match entry(extra).validate("s.toml", 2, &d, &|_| false) {
            Err(e) => e.to_string(),
            // As the third question, so that the error names `question[2]`.
            Ok(q) => {
                let good = entry("").validate("s.toml", 0, &d, &|_| false).unwrap();
                check_values("s.toml", &[good.clone(), good, q], &d, &toml::Table::new()).unwrap_err().to_string()
            }
        }
    }

    #[test]
    fn a_good_question_is_stored_with_shown_values() {
        let d = domain(&params());
        let q = entry("within = [\"workload.other\"]\nstats = [\"mean\", \"p99.9\", \"figure:iops\"]").validate("s.toml", 0, &d, &|_| false).unwrap();
        assert_eq!((q.baseline.as_str(), q.variants.clone()), ("trap", vec!["native".to_string()]));
        assert_eq!(q.within, ["workload.other"]);
        check_values("s.toml", &[q], &d, &toml::Table::new()).unwrap();
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
    fn the_documents_own_value_is_a_value() {
        let d = domain(&params());
        let q = entry("baseline = \"adaptive\"").validate("s.toml", 0, &d, &|_| false).unwrap();
        assert!(check_values("s.toml", std::slice::from_ref(&q), &d, &toml::Table::new()).is_err());
        let base: toml::Table = toml::from_str("[hypervisor]\nvwfi = \"adaptive\"").unwrap();
        check_values("s.toml", &[q], &d, &base).unwrap();
    }

    #[test]
    fn a_parameter_that_exists_nowhere_is_refused_one_that_does_not_vary_is_kept() {
        let mut p = params();
        p[1].insert("workload.other".into(), "busy".into());
        let d = domain(&p);
        let e = entry("param = \"hypervisor.nope\"").validate("s.toml", 0, &d, &|_| false).unwrap_err().to_string();
        assert!(e.contains("question[0].param") && e.contains("vary"), "{e}");
        entry("param = \"hypervisor.pcpus\"").validate("s.toml", 0, &d, &|k| k == "hypervisor.pcpus").unwrap();
        // Nothing varies at all: kept unchecked.
        let one = domain(&[params()[0].clone()]);
        entry("param = \"x.y\"").validate("s.toml", 0, &one, &|_| false).unwrap();
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
        let q = q.validate("f", 0, &domain(&p), &|_| false).unwrap();
        assert_eq!(q.variants, ["true"]);
        check_values("f", &[q], &domain(&p), &toml::Table::new()).unwrap();
    }
}

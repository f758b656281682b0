//! `irqlab compare RESULT --by PARAM=A,B[,C…]`: the answer block for an ad-hoc question.
//!
//! Pairs the configurations of one result that differ only in PARAM (A the baseline, the others
//! variants) and prints the same answer `irqlab sim` opens with, so a question needs no new
//! scenario (issue 28). The pairing and the sentence are `report::answer` / `answer_view`.
use std::path::Path;

use results::Question;

use crate::term::{note, out};
use crate::{CliError, Outcome};

/// Statistics answered when `--stat` is not given.
pub const DEFAULT_STATS: &[&str] = &["mean", "p50", "p99", "p99.9"];

/// `PARAM=A,B[,C…]` as typed.
pub fn parse_by(s: &str) -> Result<(String, Vec<String>), String> {
    let (param, values) = s.split_once('=').ok_or_else(|| format!("expected PARAM=BASELINE,VARIANT[,…], got `{s}`"))?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if param.trim().is_empty() || values.len() < 2 || values.iter().any(String::is_empty) {
        return Err(format!("expected PARAM=BASELINE,VARIANT[,…] (a baseline and at least one variant), got `{s}`"));
    }
    if let Some((i, v)) = values.iter().enumerate().find(|(i, v)| values[..*i].contains(v)) {
        return Err(format!("value `{v}` is given twice (#{}) in `{s}`; each value once", i + 1));
    }
    Ok((param.trim().to_string(), values))
}

/// A parameter named by full key or by its last part (`vwfi` for `hypervisor.vwfi`).
fn resolve_param(r: &results::RunResult, name: &str) -> Result<String, CliError> {
    let keys: std::collections::BTreeSet<&String> = r.configs.iter().flat_map(|c| c.params.keys()).collect();
    if keys.contains(&name.to_string()) {
        return Ok(name.to_string());
    }
    let by_short: Vec<&&String> = keys.iter().filter(|k| report::answer::short(k) == name).collect();
    match by_short.as_slice() {
        [one] => Ok((**one).clone()),
        _ => {
            let known: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
            let shorts: Vec<&str> = known.iter().map(|k| report::answer::short(k)).collect();
            let hint = match sim::scenario::did_you_mean(name, shorts.iter().copied()) {
                h if h.is_empty() => sim::scenario::did_you_mean(name, known.iter().copied()),
                h => h,
            };
            Err(CliError(format!("--by: no parameter `{name}` in this result (its parameters: {}){}", if known.is_empty() { "none".into() } else { known.join(", ") }, hint)))
        }
    }
}

/// Every `--stat` a known statistic or `figure:NAME`, each once; checked whether or not --by is
/// given, so a typo is never silently ignored (issue 36).
pub fn check_stats(stats: &[String]) -> Result<(), CliError> {
    for (i, s) in stats.iter().enumerate() {
        if !sim::scenario::question::question_stat_ok(s) {
            return Err(CliError(format!("--stat `{s}` (#{}): expected one of {} or figure:NAME", i + 1, sim::scenario::LATENCY_STATS.join(", "))));
        }
        if stats[..i].contains(s) {
            return Err(CliError(format!("--stat `{s}` is given twice (#{}); each statistic once", i + 1)));
        }
    }
    Ok(())
}

/// Each `figure:NAME` names a figure some configuration of the result has.
fn check_figures(r: &results::RunResult, path: &Path, stats: &[String]) -> Result<(), CliError> {
    let known: std::collections::BTreeSet<&str> = r.configs.iter().flat_map(|c| c.figures.keys().map(String::as_str)).collect();
    for s in stats {
        if let Some(name) = s.strip_prefix("figure:").filter(|n| !known.contains(n)) {
            let list: Vec<&str> = known.iter().copied().collect();
            return Err(CliError(format!(
                "--stat {s}: {} has no figure `{name}` (its figures: {}){}",
                path.display(),
                if list.is_empty() { "none".into() } else { list.join(", ") },
                sim::scenario::did_you_mean(name, list.iter().copied())
            )));
        }
    }
    Ok(())
}

pub fn run(path: &Path, by: &(String, Vec<String>), stats: &[String], unit: results::LatencyUnit) -> Result<Outcome, CliError> {
    let r = results::read_json(path)?;
    let param = resolve_param(&r, &by.0)?;
    check_stats(stats)?;
    check_figures(&r, path, stats)?;
    let q = Question {
        title: format!("What does changing `{param}` from {} to {} do?", by.1[0], by.1[1..].join(" / ")),
        param,
        baseline: by.1[0].clone(),
        variants: by.1[1..].to_vec(),
        within: Vec::new(),
        stats: if stats.is_empty() { DEFAULT_STATS.iter().map(|s| s.to_string()).collect() } else { stats.to_vec() },
        classes: Vec::new(),
    };
    let a = report::answer::answer(&r, &q).map_err(|e| CliError(format!("--by: {}: {e}", path.display())))?;
    out(&format!("QUESTION: {}\n", q.title))?;
    if let Some(lab) = r.emulation() {
        out(&format!("(emulation, not hardware latency: {})\n", results::escape_control(lab)))?;
    }
    out(&report::answer_view::answer_text(&a, unit))?;
    if a.groups.is_empty() {
        note(&format!("irqlab: compare --by: no two configurations of {} differ only in `{}`\n", path.display(), q.param));
        return Ok(Outcome::Partial);
    }
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_needs_a_baseline_and_a_variant() {
        assert_eq!(parse_by("vwfi=trap,native").unwrap(), ("vwfi".into(), vec!["trap".into(), "native".into()]));
        assert_eq!(parse_by("a.b=1, 2,3").unwrap().1, ["1", "2", "3"]);
        for bad in ["vwfi", "vwfi=trap", "=a,b", "vwfi=a,", "vwfi=,b", "vwfi=trap,native,trap", "vwfi=a, a"] {
            assert!(parse_by(bad).is_err(), "{bad}");
        }
    }
}

//! `irqlab merge OUT.json PART.json...`: put the shards of a sweep (`irqlab sim --shard I/N`)
//! back together into the result the unsharded run would have written.
//!
//! Point k of a scenario belongs to shard (k mod N) + 1; each shard records the indices of its
//! points, so the original order is rebuilt exactly; seeds never depend on the sharding.
//! Parts must come from the same scenario, seed, tool version and commit, and the same prepared
//! scenario (the fingerprint each shard stores, see [`crate::fingerprint`]: point list, seeds,
//! overrides, references, document); all N shards must be present exactly once. The output
//! directory may not be one of the parts' own. References are checked again on the merged result (a ratio's
//! two configurations may sit in different shards). Everything but `provenance` is then
//! byte-identical to the unsharded result.
use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use results::RunResult;
use sim::scenario::{check_references, Reference};

use crate::{CliError, Outcome};

#[derive(Args)]
pub struct MergeArgs {
    /// Where to write the merged result (result.json; result.csv is written next to it).
    pub out: PathBuf,
    /// The shards' result.json files, in any order.
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
}

struct Part {
    path: String,
    shard: usize,
    of: usize,
    total: usize,
    result: RunResult,
}

fn shard_of(path: &str, r: &RunResult) -> Result<(usize, usize, usize), CliError> {
    let p = r.provenance.as_ref().ok_or_else(|| CliError(format!("{path}: no provenance: not written by `irqlab sim --shard`")))?;
    let shard = p.details.get("shard").ok_or_else(|| CliError(format!("{path}: not a shard (run with `irqlab sim --shard I/N`)")))?;
    let (i, n) = crate::cmd_sim::parse_shard(shard).map_err(|e| CliError(format!("{path}: {}", e.0)))?;
    let total = p.details.get("points_total").and_then(|t| t.parse().ok()).ok_or_else(|| CliError(format!("{path}: shard without `points_total` in its provenance")))?;
    Ok((i, n, total))
}

/// What differs between two shards' fingerprints of their prepared scenario, in words.
fn fingerprint_differences(a: &Part, b: &Part) -> Option<String> {
    let details = |p: &Part| p.result.provenance.as_ref().map(|x| x.details.clone()).unwrap_or_default();
    let (da, db) = (details(a), details(b));
    let mut d = crate::fingerprint::differences(&da, &db);
    if d.is_empty() {
        d = crate::fingerprint::differences(&db, &da);
    }
    if d.is_empty() {
        return None;
    }
    let missing = |x: &std::collections::BTreeMap<String, String>| !x.contains_key(&crate::fingerprint::key("points"));
    let why = if missing(&da) || missing(&db) { " (a shard without a fingerprint was written by an older irqlab: run the shards again)" } else { "" };
    Some(format!("their prepared scenarios differ in: {}{why}", d.join("; ")))
}

/// Merge parts; errors name the file and what differs.
fn merge(parts: Vec<Part>) -> Result<RunResult, CliError> {
    let first = &parts[0];
    for p in &parts[1..] {
        let what = if p.result.meta.scenario != first.result.meta.scenario {
            Some(format!("scenario `{}` vs `{}`", p.result.meta.scenario, first.result.meta.scenario))
        } else if p.result.meta.seed != first.result.meta.seed {
            Some(format!("seed {} vs {}", p.result.meta.seed, first.result.meta.seed))
        } else if p.result.meta.tool_version != first.result.meta.tool_version {
            Some(format!("tool version `{}` vs `{}`", p.result.meta.tool_version, first.result.meta.tool_version))
        } else if p.result.provenance.as_ref().map(|x| &x.git_commit) != first.result.provenance.as_ref().map(|x| &x.git_commit) {
            Some("git commit of the tool".into())
        } else if p.of != first.of || p.total != first.total {
            Some(format!("sharding {}/{} of {} points vs {}/{} of {}", p.shard, p.of, p.total, first.shard, first.of, first.total))
        } else if let Some(d) = fingerprint_differences(first, p) {
            Some(d)
        } else if p.result.meta != first.result.meta {
            Some("run metadata (platform, knobs or description)".into())
        } else if p.result.provenance.as_ref().map(|x| x.details.iter().filter(|(k, _)| k.starts_with("set.") || *k == "configs").collect::<Vec<_>>())
            != first.result.provenance.as_ref().map(|x| x.details.iter().filter(|(k, _)| k.starts_with("set.") || *k == "configs").collect::<Vec<_>>())
        {
            Some("--set overrides or --config selection".into())
        } else {
            None
        };
        if let Some(w) = what {
            return Err(CliError(format!("{} and {} are not parts of the same run: {w}", first.path, p.path)));
        }
    }
    let n = first.of;
    let mut by_shard: BTreeMap<usize, &Part> = BTreeMap::new();
    for p in &parts {
        if let Some(prev) = by_shard.insert(p.shard, p) {
            return Err(CliError(format!("shard {}/{n} given twice: {} and {}", p.shard, prev.path, p.path)));
        }
    }
    let missing: Vec<String> = (1..=n).filter(|i| !by_shard.contains_key(i)).map(|i| format!("{i}/{n}")).collect();
    if !missing.is_empty() {
        return Err(CliError(format!("missing shard(s) {} of {n}", missing.join(", "))));
    }
    // Each shard records the scenario-wide index of every point it ran: sort them back.
    let mut indexed: Vec<(usize, &results::ConfigResult)> = Vec::new();
    for p in by_shard.values() {
        let idx = p.result.provenance.as_ref().and_then(|x| x.details.get("point_indices")).map(String::as_str).unwrap_or("");
        let idx: Vec<usize> = idx
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse())
            .collect::<Result<_, _>>()
            .map_err(|_| CliError(format!("{}: malformed `point_indices` in its provenance", p.path)))?;
        if idx.len() != p.result.configs.len() {
            return Err(CliError(format!("{}: {} configurations but {} point indices", p.path, p.result.configs.len(), idx.len())));
        }
        for (k, c) in idx.into_iter().zip(&p.result.configs) {
            if k >= first.total || k % n != p.shard - 1 {
                return Err(CliError(format!("{}: point {k} does not belong to shard {}/{n}", p.path, p.shard)));
            }
            indexed.push((k, c));
        }
    }
    indexed.sort_by_key(|(k, _)| *k);
    if let Some(w) = indexed.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(CliError(format!("point {} appears twice", w[0].0)));
    }
    let mut merged = first.result.clone();
    merged.configs = indexed.into_iter().map(|(_, c)| c.clone()).collect();
    let refs: Vec<Reference> = first
        .result
        .references
        .iter()
        .map(|r| Reference {
            config: r.config.clone(),
            class: r.class.clone(),
            stat: r.stat.clone(),
            value: r.published,
            tolerance: r.tolerance,
            source: r.source.clone(),
            role: r.role,
            over: r.over.clone(),
        })
        .collect();
    merged.references = check_references(&first.path, &refs, &merged)?;
    Ok(merged)
}

pub fn run(a: MergeArgs) -> Result<Outcome, CliError> {
    let dir = a.out.parent().filter(|d| !d.as_os_str().is_empty()).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    if a.out.file_name().is_none_or(|f| f != "result.json") {
        return Err(CliError(format!("{}: the merged result is written as result.json (and result.csv) in a directory; give DIR/result.json", a.out.display())));
    }
    // The parts are inputs: merging into a shard's own directory would replace it.
    crate::output::check_output_dir(&dir, &a.parts)?;
    let mut parts = Vec::new();
    for path in &a.parts {
        let shown = path.display().to_string();
        let result = results::read_json(path)?;
        let (shard, of, total) = shard_of(&shown, &result)?;
        parts.push(Part { path: shown, shard, of, total, result });
    }
    let mut merged = merge(parts)?;
    let mut details = BTreeMap::new();
    details.insert("merged_from".into(), a.parts.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" "));
    if let Some(c) = merged.provenance.as_ref().and_then(|p| p.details.get("configs")).cloned() {
        details.insert("configs".into(), c);
    }
    for (k, v) in merged.provenance.as_ref().map(|p| p.details.clone()).unwrap_or_default() {
        if k.starts_with("set.") {
            details.insert(k, v);
        }
    }
    merged.provenance = Some(crate::provenance::current(details));
    let json = crate::output::write_files(&dir, &merged, &a.parts)?;
    crate::term::note(&format!("merged {} shards, {} configurations: wrote {} and result.csv\n", a.parts.len(), merged.configs.len(), json.display()));
    Ok(Outcome::Ok)
}

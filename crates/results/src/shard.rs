//! The shards of a sweep (`irqlab sim --shard I/N`) and putting them back together: what `irqlab
//! merge` does, as a library, so that the CLI only reads flags and prints.
//!
//! Point k of a scenario belongs to shard (k mod N) + 1; each shard records the indices of its
//! points, so the original order is rebuilt exactly; seeds never depend on the sharding. Parts
//! must come from the same scenario, seed, tool version and commit, and the same prepared
//! scenario (the fingerprint each shard stores: point list, seeds, overrides, references,
//! document); all N shards must be present exactly once. The fingerprint's hashes are computed
//! where the scenario is (`sim`); here are only its parts' names and how two are compared.
use std::collections::BTreeMap;

use crate::{ConfigResult, RunResult};

/// Why shards cannot be merged; every message names the file or what differs.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--shard `{0}`: expected I/N with 1 <= I <= N (e.g. 2/8)")]
    BadSpec(String),
    #[error("{0}: no provenance: not written by `irqlab sim --shard`")]
    NoProvenance(String),
    #[error("{0}: not a shard (run with `irqlab sim --shard I/N`)")]
    NotAShard(String),
    #[error("{path}: {err}")]
    BadShardSpec { path: String, err: Box<ShardError> },
    #[error("{0}: shard without `points_total` in its provenance")]
    NoPointsTotal(String),
    #[error("{a} and {b} are not parts of the same run: {what}")]
    NotSameRun { a: String, b: String, what: String },
    #[error("shard {shard}/{n} given twice: {a} and {b}")]
    Twice { shard: usize, n: usize, a: String, b: String },
    #[error("missing shard(s) {missing} of {n}")]
    Missing { missing: String, n: usize },
    #[error("{0}: malformed `point_indices` in its provenance")]
    BadIndices(String),
    #[error("{path}: {configs} configurations but {indices} point indices")]
    IndexCount { path: String, configs: usize, indices: usize },
    #[error("{path}: point {k} does not belong to shard {shard}/{n}")]
    WrongShard { path: String, k: usize, shard: usize, n: usize },
    #[error("point {0} appears twice")]
    PointTwice(usize),
}

/// `--shard I/N` (1-based).
pub fn parse_shard(s: &str) -> Result<(usize, usize), ShardError> {
    let bad = || ShardError::BadSpec(s.to_string());
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (i.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// The fingerprint's parts, in the order a mismatch is reported, with the words a message uses
/// for each.
pub const FINGERPRINT_PARTS: [(&str, &str); 5] = [
    ("points", "point list (the scenario's configurations or sweep changed between the shard runs)"),
    ("seeds", "seeds (--seed or --seeds)"),
    ("overrides", "--set overrides"),
    ("references", "references"),
    ("document", "scenario document"),
];

/// Provenance key of a fingerprint part.
pub fn fingerprint_key(part: &str) -> String {
    format!("fingerprint.{part}")
}

/// The fingerprint parts in which two shards' provenance details differ (or that `a` lacks), in words.
pub fn fingerprint_differences(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<&'static str> {
    FINGERPRINT_PARTS.iter().filter(|(part, _)| a.get(&fingerprint_key(part)).is_none() || a.get(&fingerprint_key(part)) != b.get(&fingerprint_key(part))).map(|p| p.1).collect()
}

/// One shard read from a file.
pub struct ShardPart {
    /// The file, as shown in messages.
    pub path: String,
    pub shard: usize,
    pub of: usize,
    pub total: usize,
    pub result: RunResult,
}

impl ShardPart {
    /// A shard from its result, or an error naming `path` when the result is not one.
    pub fn new(path: String, result: RunResult) -> Result<ShardPart, ShardError> {
        let p = result.provenance.as_ref().ok_or_else(|| ShardError::NoProvenance(path.clone()))?;
        let spec = p.details.get("shard").ok_or_else(|| ShardError::NotAShard(path.clone()))?;
        let (shard, of) = parse_shard(spec).map_err(|e| ShardError::BadShardSpec { path: path.clone(), err: Box::new(e) })?;
        let total = p.details.get("points_total").and_then(|t| t.parse().ok()).ok_or_else(|| ShardError::NoPointsTotal(path.clone()))?;
        Ok(ShardPart { path, shard, of, total, result })
    }

    fn details(&self) -> BTreeMap<String, String> {
        self.result.provenance.as_ref().map(|x| x.details.clone()).unwrap_or_default()
    }

    fn selection(&self) -> Option<Vec<(&String, &String)>> {
        self.result.provenance.as_ref().map(|x| x.details.iter().filter(|(k, _)| k.starts_with("set.") || *k == "configs").collect())
    }
}

/// What differs between two shards' fingerprints of their prepared scenario, in words.
fn fingerprint_mismatch(a: &ShardPart, b: &ShardPart) -> Option<String> {
    let (da, db) = (a.details(), b.details());
    let mut d = fingerprint_differences(&da, &db);
    if d.is_empty() {
        d = fingerprint_differences(&db, &da);
    }
    if d.is_empty() {
        return None;
    }
    let missing = |x: &BTreeMap<String, String>| !x.contains_key(&fingerprint_key("points"));
    let why = if missing(&da) || missing(&db) { " (a shard without a fingerprint was written by an older irqlab: run the shards again)" } else { "" };
    Some(format!("their prepared scenarios differ in: {}{why}", d.join("; ")))
}

/// Why `p` is not a part of the same run as `first`, if it is not.
fn not_same_run(first: &ShardPart, p: &ShardPart) -> Option<String> {
    let (a, b) = (&p.result.meta, &first.result.meta);
    if a.scenario != b.scenario {
        Some(format!("scenario `{}` vs `{}`", a.scenario, b.scenario))
    } else if a.seed != b.seed {
        Some(format!("seed {} vs {}", a.seed, b.seed))
    } else if a.tool_version != b.tool_version {
        Some(format!("tool version `{}` vs `{}`", a.tool_version, b.tool_version))
    } else if p.result.provenance.as_ref().map(|x| &x.git_commit) != first.result.provenance.as_ref().map(|x| &x.git_commit) {
        Some("git commit of the tool".into())
    } else if p.of != first.of || p.total != first.total {
        Some(format!("sharding {}/{} of {} points vs {}/{} of {}", p.shard, p.of, p.total, first.shard, first.of, first.total))
    } else if let Some(d) = fingerprint_mismatch(first, p) {
        Some(d)
    } else if a != b {
        Some("run metadata (platform, knobs or description)".into())
    } else if p.selection() != first.selection() {
        Some("--set overrides or --config selection".into())
    } else {
        None
    }
}

/// Merge parts (at least one) into the first part's result with every configuration in the
/// unsharded order. References are not checked again here: that needs the scenario layer.
pub fn merge_shards(parts: &[ShardPart]) -> Result<RunResult, ShardError> {
    let first = &parts[0];
    for p in &parts[1..] {
        if let Some(what) = not_same_run(first, p) {
            return Err(ShardError::NotSameRun { a: first.path.clone(), b: p.path.clone(), what });
        }
    }
    let n = first.of;
    let mut by_shard: BTreeMap<usize, &ShardPart> = BTreeMap::new();
    for p in parts {
        if let Some(prev) = by_shard.insert(p.shard, p) {
            return Err(ShardError::Twice { shard: p.shard, n, a: prev.path.clone(), b: p.path.clone() });
        }
    }
    let missing: Vec<String> = (1..=n).filter(|i| !by_shard.contains_key(i)).map(|i| format!("{i}/{n}")).collect();
    if !missing.is_empty() {
        return Err(ShardError::Missing { missing: missing.join(", "), n });
    }
    // Each shard records the scenario-wide index of every point it ran: sort them back.
    let mut indexed: Vec<(usize, &ConfigResult)> = Vec::new();
    for p in by_shard.values() {
        let idx = p.result.provenance.as_ref().and_then(|x| x.details.get("point_indices")).map(String::as_str).unwrap_or("");
        let idx: Vec<usize> = idx.split(',').filter(|s| !s.is_empty()).map(|s| s.parse()).collect::<Result<_, _>>().map_err(|_| ShardError::BadIndices(p.path.clone()))?;
        if idx.len() != p.result.configs.len() {
            return Err(ShardError::IndexCount { path: p.path.clone(), configs: p.result.configs.len(), indices: idx.len() });
        }
        for (k, c) in idx.into_iter().zip(&p.result.configs) {
            if k >= first.total || k % n != p.shard - 1 {
                return Err(ShardError::WrongShard { path: p.path.clone(), k, shard: p.shard, n });
            }
            indexed.push((k, c));
        }
    }
    indexed.sort_by_key(|(k, _)| *k);
    if let Some(w) = indexed.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(ShardError::PointTwice(w[0].0));
    }
    let mut merged = first.result.clone();
    merged.configs = indexed.into_iter().map(|(_, c)| c.clone()).collect();
    Ok(merged)
}

/// The provenance details of a merged result: the parts it came from, and the shards'
/// `--config` selection and `--set` overrides.
pub fn merged_details(part_paths: &[String], merged: &RunResult) -> BTreeMap<String, String> {
    let mut details = BTreeMap::new();
    details.insert("merged_from".into(), part_paths.join(" "));
    let shard_details = merged.provenance.as_ref().map(|p| p.details.clone()).unwrap_or_default();
    if let Some(c) = shard_details.get("configs") {
        details.insert("configs".into(), c.clone());
    }
    details.extend(shard_details.into_iter().filter(|(k, _)| k.starts_with("set.")));
    details
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_are_one_based_and_bad_ones_named() {
        assert_eq!(parse_shard("2/8").unwrap(), (2, 8));
        assert_eq!(parse_shard(" 1 / 1 ").unwrap(), (1, 1));
        for bad in ["0/2", "3/2", "1/0", "x/2", "2"] {
            assert_eq!(parse_shard(bad).unwrap_err().to_string(), format!("--shard `{bad}`: expected I/N with 1 <= I <= N (e.g. 2/8)"));
        }
    }

    #[test]
    fn fingerprint_differences_name_each_part() {
        let a: BTreeMap<String, String> = FINGERPRINT_PARTS.iter().map(|(p, _)| (fingerprint_key(p), "1".to_string())).collect();
        assert!(fingerprint_differences(&a, &a).is_empty());
        let mut b = a.clone();
        b.insert(fingerprint_key("seeds"), "2".into());
        assert_eq!(fingerprint_differences(&a, &b), [FINGERPRINT_PARTS[1].1]);
        assert_eq!(fingerprint_differences(&BTreeMap::new(), &a).len(), 5, "a part without a fingerprint differs");
    }
}

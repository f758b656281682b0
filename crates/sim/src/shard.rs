//! Shards of a sweep, on the scenario's side: the fingerprint of a prepared scenario that every
//! shard (`sim --shard I/N`) stores, and the merge of shards with the references checked again
//! on the merged result (a ratio's two configurations may sit in different shards). The merge
//! itself and the fingerprint's parts are `results::shard`'s.
//!
//! The fingerprint proves that parts come from the same run: the same point list (names,
//! overrides and derived seeds, in order), the same seeds (`--seed`, `--seeds`), the same `--set`
//! overrides, the same references and the same scenario document. Each part is hashed with
//! FNV-1a 64 (the `fnv` crate): not cryptographic — it guards against mistakes, not forgery — but
//! stable across platforms and releases, which `std`'s `DefaultHasher` does not promise.
use std::collections::BTreeMap;
use std::hash::Hasher;
use std::path::PathBuf;

use results::shard::{fingerprint_key, merge_shards, ShardError, ShardPart, FINGERPRINT_PARTS};
use results::{ResultsError, RunResult};

use crate::scenario::{check_references, Reference, Scenario, ScenarioError};

/// Why a fingerprint or a merge failed; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ShardMergeError {
    #[error(transparent)]
    Read(#[from] ResultsError),
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

fn fnv(text: &str) -> String {
    let mut h = fnv::FnvHasher::default();
    h.write(text.as_bytes());
    format!("{:016x}", h.finish())
}

/// The fingerprint of `sc` run with `seed`, as provenance details (`fingerprint.points` …).
pub fn fingerprint(sc: &Scenario, seed: u64) -> Result<BTreeMap<String, String>, ScenarioError> {
    let mut whole = sc.clone();
    whole.selected.clear();
    whole.shard = None;
    let points: String = whole.points(seed)?.iter().map(|(i, p)| format!("{i}\t{}\t{:?}\t{}\n", p.name, p.params, p.seed)).collect();
    let texts = [
        points,
        format!("seed {seed}, {} seed(s) per point", sc.header.seeds),
        format!("{:?}", sc.sets),
        format!("{:?}", sc.references),
        toml::to_string(&sc.doc).unwrap_or_default(),
    ];
    Ok(FINGERPRINT_PARTS.iter().zip(texts).map(|((part, _), t)| (fingerprint_key(part), fnv(&t))).collect())
}

/// Read the shards' result files and merge them into the result the unsharded run writes, its
/// references checked again (the provenance is still the first shard's: the caller's to set).
pub fn merge(paths: &[PathBuf]) -> Result<RunResult, ShardMergeError> {
    let mut parts = Vec::new();
    for path in paths {
        let result = results::read_json(path)?;
        parts.push(ShardPart::new(path.display().to_string(), result)?);
    }
    let mut merged = merge_shards(&parts)?;
    let first = &parts[0];
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

#[cfg(test)]
mod tests {
    use super::*;
    use results::shard::fingerprint_differences as differences;

    fn scenario(sweep: &str, seeds: u64) -> Scenario {
        let text = format!(
            "[scenario]\nmodel = \"timer-inject\"\nseeds = {seeds}\n[platform]\nprofile = \"demo-arm64-a53\"\n[workload]\nsamples = 10\n[sweep]\n\"hypervisor.idle\" = {sweep}\n"
        );
        Scenario::parse(&text, "t.toml", "t", None).unwrap()
    }

    #[test]
    fn the_same_scenario_matches_and_each_change_is_named() {
        let of = fingerprint;
        let a = of(&scenario("[\"trap\", \"native\"]", 1), 1).unwrap();
        assert_eq!(a.len(), 5);
        assert!(differences(&a, &of(&scenario("[\"trap\", \"native\"]", 1), 1).unwrap()).is_empty());
        let reordered = differences(&a, &of(&scenario("[\"native\", \"trap\"]", 1), 1).unwrap());
        assert_eq!(reordered[0], FINGERPRINT_PARTS[0].1, "{reordered:?}");
        assert_eq!(differences(&a, &of(&scenario("[\"trap\", \"native\"]", 3), 1).unwrap()), [FINGERPRINT_PARTS[1].1, FINGERPRINT_PARTS[4].1]);
        assert!(differences(&a, &of(&scenario("[\"trap\", \"native\"]", 1), 2).unwrap()).contains(&FINGERPRINT_PARTS[1].1));
        let mut sharded = scenario("[\"trap\", \"native\"]", 1);
        sharded.set_shard(2, 2).unwrap();
        assert!(differences(&a, &of(&sharded, 1).unwrap()).is_empty(), "the shard itself is not part of it");
    }
}

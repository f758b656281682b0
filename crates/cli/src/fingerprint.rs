//! The fingerprint of a prepared scenario, stored in every shard (`sim --shard I/N`) so that
//! `irqlab merge` can prove its parts come from the same run: the same point list (names,
//! overrides and derived seeds, in order), the same seeds (`--seed`, `--seeds`), the same `--set`
//! overrides, the same references and the same scenario document. Shards of a scenario edited
//! between the shard runs (a sweep reordered: one point twice, another missing) or run with
//! other `--seeds` (rows over 3 and 8 seeds mixed) are refused, naming what differs.
//!
//! Each part is hashed with FNV-1a 64 (the `fnv` crate): not cryptographic — it guards against
//! mistakes, not forgery — but stable across platforms and releases, which `std`'s `DefaultHasher`
//! does not promise.
use std::collections::BTreeMap;
use std::hash::Hasher;

use sim::scenario::Scenario;

/// The parts, in the order a mismatch is reported, with the words a message uses for each.
pub const PARTS: [(&str, &str); 5] = [
    ("points", "point list (the scenario's configurations or sweep changed between the shard runs)"),
    ("seeds", "seeds (--seed or --seeds)"),
    ("overrides", "--set overrides"),
    ("references", "references"),
    ("document", "scenario document"),
];

/// Provenance key of a part.
pub fn key(part: &str) -> String {
    format!("fingerprint.{part}")
}

fn fnv(text: &str) -> String {
    let mut h = fnv::FnvHasher::default();
    h.write(text.as_bytes());
    format!("{:016x}", h.finish())
}

#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    #[error(transparent)]
    Scenario(#[from] sim::scenario::ScenarioError),
}

/// The fingerprint of `sc` run with `seed`, as provenance details (`fingerprint.points` …).
pub fn of(sc: &Scenario, seed: u64) -> Result<BTreeMap<String, String>, FingerprintError> {
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
    Ok(PARTS.iter().zip(texts).map(|((part, _), t)| (key(part), fnv(&t))).collect())
}

/// The parts in which two shards' provenance details differ (or that one lacks), in words.
pub fn differences(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<&'static str> {
    PARTS.iter().filter(|(part, _)| a.get(&key(part)).is_none() || a.get(&key(part)) != b.get(&key(part))).map(|p| p.1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(sweep: &str, seeds: u64) -> Scenario {
        let text = format!(
            "[scenario]\nmodel = \"timer-inject\"\nseeds = {seeds}\n[platform]\nprofile = \"demo-arm64-a53\"\n[workload]\nsamples = 10\n[sweep]\n\"hypervisor.idle\" = {sweep}\n"
        );
        Scenario::parse(&text, "t.toml", "t", None).unwrap()
    }

    #[test]
    fn the_same_scenario_matches_and_each_change_is_named() {
        let a = of(&scenario("[\"trap\", \"native\"]", 1), 1).unwrap();
        assert_eq!(a.len(), 5);
        assert!(differences(&a, &of(&scenario("[\"trap\", \"native\"]", 1), 1).unwrap()).is_empty());
        let reordered = differences(&a, &of(&scenario("[\"native\", \"trap\"]", 1), 1).unwrap());
        assert_eq!(reordered[0], PARTS[0].1, "{reordered:?}");
        assert_eq!(differences(&a, &of(&scenario("[\"trap\", \"native\"]", 3), 1).unwrap()), [PARTS[1].1, PARTS[4].1]);
        assert!(differences(&a, &of(&scenario("[\"trap\", \"native\"]", 1), 2).unwrap()).contains(&PARTS[1].1));
        let mut sharded = scenario("[\"trap\", \"native\"]", 1);
        sharded.set_shard(2, 2).unwrap();
        assert!(differences(&a, &of(&sharded, 1).unwrap()).is_empty(), "the shard itself is not part of it");
        assert_eq!(differences(&BTreeMap::new(), &a).len(), 5, "a part without a fingerprint differs");
    }
}

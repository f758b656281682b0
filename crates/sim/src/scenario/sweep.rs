//! Expanding configurations × sweep axes into points, each with its own document and seed.
use std::collections::BTreeMap;

use crate::engine::rng::derive_seed;

/// One configuration to simulate (a table row).
#[derive(Debug, Clone)]
pub struct Point {
    pub name: String,
    /// The overrides that define this point (dotted key → value as written).
    pub params: BTreeMap<String, String>,
    /// Seed derived from the scenario seed and `params`.
    pub seed: u64,
    /// The scenario document with this point's overrides applied, or why they could not be.
    pub doc: Result<toml::Table, PathError>,
}

/// Why a dotted key cannot be set in a scenario document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("`{0}` is not a dotted key")]
    NotDotted(String),
    #[error("`{path}`: `{part}` indexes an array; expected a number")]
    NotAnIndex { path: String, part: String },
    #[error("`{path}`: index {index} out of range (array has {len})")]
    OutOfRange { path: String, index: usize, len: usize },
    #[error("`{path}`: `{prefix}` is a {kind}, not a table")]
    NotATable { path: String, prefix: String, kind: &'static str },
}

pub use results::vocab::sweep::show;

/// Set a dotted key (`hypervisor.vwfi`, `vm.0.vcpus`) in a document, creating tables as needed.
pub fn set_path(doc: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), PathError> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(PathError::NotDotted(path.into()));
    }
    let mut cur: &mut toml::Value = doc.entry(parts[0].to_string()).or_insert_with(|| if parts.len() == 1 { value.clone() } else { toml::Value::Table(Default::default()) });
    if parts.len() == 1 {
        *cur = value;
        return Ok(());
    }
    for (i, part) in parts.iter().enumerate().skip(1) {
        let last = i == parts.len() - 1;
        cur = match cur {
            toml::Value::Table(t) => {
                let e = t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
                if last {
                    *e = value;
                    return Ok(());
                }
                e
            }
            toml::Value::Array(a) => {
                let idx: usize = part.parse().map_err(|_| PathError::NotAnIndex { path: path.into(), part: part.to_string() })?;
                let len = a.len();
                let e = a.get_mut(idx).ok_or_else(|| PathError::OutOfRange { path: path.into(), index: idx, len })?;
                if last {
                    *e = value;
                    return Ok(());
                }
                e
            }
            other => return Err(PathError::NotATable { path: path.into(), prefix: parts[..i].join("."), kind: other.type_str() }),
        };
    }
    unreachable!()
}

/// The value at a dotted key (`hypervisor.vwfi`, `vm.0.vcpus`), if the document has one.
pub fn get_path<'a>(doc: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut parts = path.split('.');
    let mut cur = doc.get(parts.next()?)?;
    for part in parts {
        cur = match cur {
            toml::Value::Table(t) => t.get(part)?,
            toml::Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// The sweep's axes and their one expansion: the shared vocabulary's (`results::vocab::sweep`).
pub use results::vocab::sweep::Axes;

/// The points of a scenario, generated one at a time (a sweep of 10 axes × 10 values is never
/// materialised as a list of cloned documents): configuration-major, then the sweep axes as a
/// mixed-radix number with the first axis slowest.
pub(crate) struct Expansion<'a> {
    pub doc: &'a toml::Table,
    pub scenario: &'a str,
    pub configs: &'a [(String, toml::Table)],
    pub axes: &'a [(String, Vec<toml::Value>)],
    pub seed: u64,
    /// `scenario.same_seed_across`: parameters left out of the point's seed.
    pub same_seed_across: &'a [String],
}

impl Expansion<'_> {
    /// Number of axis combinations, or `None` when it does not fit in a usize.
    pub fn combos(&self) -> Option<usize> {
        Axes(self.axes).combos()
    }

    /// Number of points, or `None` on overflow.
    pub fn len(&self) -> Option<usize> {
        self.combos()?.checked_mul(self.configs.len().max(1))
    }

    /// The configuration name of point `i` (None when the scenario has no `[[configs]]`).
    pub fn config_of(&self, i: usize) -> Option<&str> {
        let combos = self.combos().unwrap_or(1).max(1);
        self.configs.get(i / combos).map(|c| c.0.as_str())
    }

    /// Point `i` (0-based, below [`len`](Self::len)).
    pub fn point(&self, i: usize) -> Point {
        let combos = self.combos().unwrap_or(1).max(1);
        let (cname, set) = match self.configs.get(i / combos) {
            Some((n, s)) => (Some(n.as_str()), Some(s)),
            None => (None, None),
        };
        let combo = Axes(self.axes).combo(i);
        let mut d = self.doc.clone();
        d.remove("sweep");
        d.remove("configs");
        d.remove("reference");
        d.remove("question");
        let mut params = BTreeMap::new();
        let mut err = None;
        let mut flat: Vec<(String, toml::Value)> = Vec::new();
        if let Some(set) = set {
            flatten("", set, &mut flat);
        }
        for (k, v) in flat.iter().map(|(k, v)| (k.as_str(), v)).chain(combo.iter().copied()) {
            params.insert(k.to_string(), show(v));
            if let Err(e) = set_path(&mut d, k, v.clone()) {
                err.get_or_insert(e);
            }
        }
        let axis_label = Axes::label(&combo);
        let name = match (cname, axis_label.is_empty()) {
            (Some(n), true) => n.to_string(),
            (Some(n), false) => format!("{n}, {}", axis_label.join(", ")),
            (None, false) => axis_label.join(", "),
            (None, true) => self.scenario.to_string(),
        };
        let label: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let point_seed = if self.same_seed_across.is_empty() {
            derive_seed(self.seed, &format!("{name}|{}", label.join(";")))
        } else {
            // Common random numbers: neither the name nor the shared parameters enter the seed.
            let kept: Vec<&str> = params.keys().zip(&label).filter(|(k, _)| !self.same_seed_across.iter().any(|s| s == *k)).map(|(_, l)| l.as_str()).collect();
            derive_seed(self.seed, &format!("same seed across {}|{}", self.same_seed_across.join(","), kept.join(";")))
        };
        Point { name, params, seed: point_seed, doc: err.map_or(Ok(d), Err) }
    }
}

#[cfg(test)]
pub(crate) fn expand(doc: &toml::Table, scenario: &str, configs: &[(String, toml::Table)], axes: &[(String, Vec<toml::Value>)], seed: u64) -> Vec<Point> {
    let e = Expansion { doc, scenario, configs, axes, seed, same_seed_across: &[] };
    (0..e.len().unwrap()).map(|i| e.point(i)).collect()
}

/// Flatten a `set` table: `{ hypervisor = { vwfi = "trap" } }` or `{ "hypervisor.vwfi" = "trap" }`
/// both become `hypervisor.vwfi`. Arrays and scalars are leaves.
pub(crate) fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            toml::Value::Table(inner) => flatten(&key, inner, out),
            other => out.push((key, other.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn set_path_creates_and_indexes() {
        let mut d = table("[[vm]]\nvcpus = 1\n[[vm]]\nvcpus = 2");
        set_path(&mut d, "vm.1.vcpus", toml::Value::Integer(8)).unwrap();
        set_path(&mut d, "hypervisor.vwfi", "native".into()).unwrap();
        assert_eq!(d["vm"][1]["vcpus"].as_integer(), Some(8));
        assert_eq!(d["hypervisor"]["vwfi"].as_str(), Some("native"));
        assert!(set_path(&mut d, "vm.5.vcpus", 1.into()).unwrap_err().to_string().contains("out of range"));
        assert!(set_path(&mut d, "hypervisor.vwfi.x", 1.into()).unwrap_err().to_string().contains("not a table"));
    }

    #[test]
    fn cartesian_product_with_configs_and_distinct_seeds() {
        let doc = table("[hypervisor]\nvwfi = \"trap\"");
        let configs = vec![("a".to_string(), table("hypervisor.sched = \"null\"")), ("b".to_string(), table("[hypervisor]\nsched = \"credit2\""))];
        let axes = vec![("hypervisor.vwfi".to_string(), vec!["trap".into(), "native".into()]), ("workload.n".to_string(), vec![1.into(), 2.into(), 3.into()])];
        let pts = expand(&doc, "s", &configs, &axes, 9);
        assert_eq!(pts.len(), 12);
        assert_eq!(pts[0].name, "a, vwfi=trap, n=1");
        assert_eq!(pts[11].name, "b, vwfi=native, n=3");
        let d = pts[11].doc.as_ref().unwrap();
        assert_eq!(d["hypervisor"]["sched"].as_str(), Some("credit2"));
        assert_eq!(d["workload"]["n"].as_integer(), Some(3));
        let seeds: std::collections::BTreeSet<u64> = pts.iter().map(|p| p.seed).collect();
        assert_eq!(seeds.len(), 12);
        // Same inputs → same seeds.
        let again = expand(&doc, "s", &configs, &axes, 9);
        assert!(pts.iter().zip(&again).all(|(a, b)| a.seed == b.seed));
    }

    #[test]
    fn no_configs_no_axes_is_one_point_named_after_scenario() {
        let pts = expand(&table("a = 1"), "scen", &[], &[], 1);
        assert_eq!(pts.len(), 1);
        assert_eq!(pts[0].name, "scen");
    }

    #[test]
    fn bad_override_fails_only_its_point() {
        let doc = table("[[vm]]\nvcpus = 1");
        let axes = vec![("vm.0.vcpus".to_string(), vec![1.into()]), ("vm.x.y".to_string(), vec![1.into()])];
        let pts = expand(&doc, "s", &[], &axes, 1);
        assert!(pts[0].doc.is_err());
    }
}

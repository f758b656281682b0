//! Loading a profile file and resolving scenario overrides.
use std::collections::BTreeMap;

use serde::Deserialize;

use super::cost_spec::{Basis, CostSpec, ParamSpec};
use super::timing::{CoreTiming, TimingError, TimingSpec};
use crate::engine::CostDist;

/// Profiles compiled into the binary: (name, TOML text), from `crates/sim/platforms/`.
pub const SHIPPED_PROFILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_profiles.rs"));

/// Errors naming the profile (or scenario) file and the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlatformError {
    /// The profile text is not valid TOML or has unknown/mistyped keys.
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    /// One entry is impossible.
    #[error("{file}: key `{key}`: {message}")]
    Invalid { file: String, key: String, message: String },
    /// A model asked for a cost the profile does not have.
    #[error("platform profile `{profile}` has no cost `costs.{key}` (needed by model `{model}`)")]
    MissingCost { profile: String, key: String, model: String },
    /// A model asked for a parameter the profile does not have.
    #[error("platform profile `{profile}` has no parameter `params.{key}` (needed by model `{model}`)")]
    MissingParam { profile: String, key: String, model: String },
    /// No shipped profile of that name and no such file.
    #[error("unknown platform profile `{name}`; shipped profiles: {known}")]
    Unknown { name: String, known: String },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    profile: ProfileHeader,
    #[serde(default)]
    params: BTreeMap<String, ParamSpec>,
    #[serde(default)]
    costs: BTreeMap<String, CostSpec>,
    /// The per-core timing model (platform/timing.rs): optional until every board has one.
    #[serde(default)]
    timing: Option<TimingSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileHeader {
    name: String,
    description: String,
    arch: String,
    cpu_ghz: f64,
    cpus: u32,
    #[serde(default)]
    facts: BTreeMap<String, String>,
}

/// A resolved cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub dist: CostDist,
    pub source: String,
    pub basis: Basis,
}

/// A resolved parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub value: f64,
    pub source: String,
    pub basis: Basis,
}

/// A platform profile with scenario overrides applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Platform {
    pub name: String,
    pub description: String,
    pub arch: String,
    pub cpu_ghz: f64,
    pub cpus: u32,
    pub facts: BTreeMap<String, String>,
    pub costs: BTreeMap<String, Cost>,
    pub params: BTreeMap<String, Param>,
    /// The board's per-core timing model (`[timing]`), which times census-counted paths.
    pub timing: Option<CoreTiming>,
    /// Costs and parameters a model has looked up (`cost.NAME` / `param.NAME`): a scenario
    /// override of one that no model uses is a typo, and is reported as one.
    used: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

fn resolve_costs(file: &str, prefix: &str, specs: &BTreeMap<String, CostSpec>, ghz: f64, into: &mut BTreeMap<String, Cost>) -> Result<(), PlatformError> {
    for (k, spec) in specs {
        let dist = spec.to_dist(ghz).map_err(|e| PlatformError::Invalid { file: file.into(), key: format!("{prefix}costs.{k}"), message: e.to_string() })?;
        into.insert(k.clone(), Cost { dist, source: spec.source.clone(), basis: spec.basis });
    }
    Ok(())
}

fn resolve_params(file: &str, prefix: &str, specs: &BTreeMap<String, ParamSpec>, into: &mut BTreeMap<String, Param>) -> Result<(), PlatformError> {
    for (k, p) in specs {
        if !p.value.is_finite() || p.source.trim().is_empty() {
            return Err(PlatformError::Invalid { file: file.into(), key: format!("{prefix}params.{k}"), message: "expected a finite value and a non-empty `source`".into() });
        }
        into.insert(k.clone(), Param { value: p.value, source: p.source.clone(), basis: p.basis });
    }
    Ok(())
}

impl Platform {
    /// Parse a profile file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Platform, PlatformError> {
        // TOML syntax first, then the typed read with the path of the value at fault, so that
        // `basis = -1` is reported at `costs.NAME.basis`, not as a bare "wanted string or table".
        let doc: toml::Table = toml::from_str(text).map_err(|e| PlatformError::Parse { file: file.into(), message: e.to_string() })?;
        let pf: ProfileFile = serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
            let path = e.path().to_string();
            PlatformError::Invalid {
                file: file.into(),
                key: if path.is_empty() || path == "." { "(top level)".into() } else { path },
                message: e.inner().message().trim().to_string(),
            }
        })?;
        let h = pf.profile;
        let invalid = |key: &str, message: &str| PlatformError::Invalid { file: file.into(), key: key.into(), message: message.into() };
        if !(h.cpu_ghz > 0.0 && h.cpu_ghz.is_finite()) {
            return Err(invalid("profile.cpu_ghz", "expected a positive frequency in GHz"));
        }
        if h.cpus == 0 {
            return Err(invalid("profile.cpus", "expected at least 1 CPU"));
        }
        let mut p = Platform {
            name: h.name,
            description: h.description,
            arch: h.arch,
            cpu_ghz: h.cpu_ghz,
            cpus: h.cpus,
            facts: h.facts,
            costs: BTreeMap::new(),
            params: BTreeMap::new(),
            timing: None,
            used: Default::default(),
        };
        if let Some(spec) = &pf.timing {
            p.timing =
                Some(CoreTiming::resolve(spec, "timing", p.cpu_ghz).map_err(|TimingError::Invalid { key, message }| PlatformError::Invalid { file: file.into(), key, message })?);
        }
        resolve_costs(file, "", &pf.costs, p.cpu_ghz, &mut p.costs)?;
        resolve_params(file, "", &pf.params, &mut p.params)?;
        Ok(p)
    }

    /// A shipped profile by name.
    pub fn shipped(name: &str) -> Result<Platform, PlatformError> {
        let (_, text) = SHIPPED_PROFILES
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| PlatformError::Unknown { name: name.into(), known: SHIPPED_PROFILES.iter().map(|p| p.0).collect::<Vec<_>>().join(", ") })?;
        Platform::parse(text, &format!("platforms/{name}.toml"))
    }

    /// Apply a scenario's `[platform.costs.*]` / `[platform.params.*]` overrides and `cpus`.
    pub fn apply_overrides(&mut self, file: &str, costs: &BTreeMap<String, CostSpec>, params: &BTreeMap<String, ParamSpec>) -> Result<(), PlatformError> {
        resolve_costs(file, "platform.", costs, self.cpu_ghz, &mut self.costs)?;
        resolve_params(file, "platform.", params, &mut self.params)
    }

    /// The cost `key`, or an error naming the profile, the key and the model that needs it.
    pub fn cost(&self, key: &str, model: &str) -> Result<&CostDist, PlatformError> {
        self.used.borrow_mut().insert(format!("cost.{key}"));
        self.costs.get(key).map(|c| &c.dist).ok_or_else(|| PlatformError::MissingCost { profile: self.name.clone(), key: key.into(), model: model.into() })
    }

    /// The parameter `key`, or an error naming the profile, the key and the model.
    pub fn param(&self, key: &str, model: &str) -> Result<f64, PlatformError> {
        self.used.borrow_mut().insert(format!("param.{key}"));
        self.params.get(key).map(|p| p.value).ok_or_else(|| PlatformError::MissingParam { profile: self.name.clone(), key: key.into(), model: model.into() })
    }

    /// Whether a model has looked up `costs.NAME` (`kind` = "cost") or `params.NAME` ("param").
    pub fn was_used(&self, kind: &str, name: &str) -> bool {
        self.used.borrow().contains(&format!("{kind}.{name}"))
    }

    /// Names of the costs (`kind` = "cost") or parameters ("param") a model has looked up.
    pub fn used_names(&self, kind: &str) -> Vec<String> {
        let prefix = format!("{kind}.");
        self.used.borrow().iter().filter_map(|k| k.strip_prefix(&prefix).map(String::from)).collect()
    }

    /// Flat description for result metadata: profile facts plus every cost with its basis.
    pub fn describe(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        m.insert("profile".into(), self.name.clone());
        m.insert("description".into(), self.description.clone());
        m.insert("arch".into(), self.arch.clone());
        m.insert("cpu_ghz".into(), format!("{}", self.cpu_ghz));
        m.insert("cpus".into(), self.cpus.to_string());
        for (k, v) in &self.facts {
            m.insert(format!("fact.{k}"), v.clone());
        }
        for (k, c) in &self.costs {
            m.insert(format!("cost.{k}"), format!("{:?} [{}: {}]", c.dist, c.basis.as_str(), c.source));
        }
        for (k, p) in &self.params {
            m.insert(format!("param.{k}"), format!("{} [{}: {}]", p.value, p.basis.as_str(), p.source));
        }
        if let Some(t) = &self.timing {
            m.extend(t.describe());
        }
        m
    }

    /// Whether any cost or parameter in use was calibrated (the result is then labelled so).
    /// Once a model has looked costs up, only those it used count.
    pub fn has_calibrated(&self) -> bool {
        let any_used = !self.used.borrow().is_empty();
        let counts = |kind: &str, k: &str| !any_used || self.was_used(kind, k);
        self.costs.iter().any(|(k, c)| c.basis == Basis::Calibrated && counts("cost", k)) || self.params.iter().any(|(k, p)| p.basis == Basis::Calibrated && counts("param", k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[profile]
name = "t"
description = "test"
arch = "arm64"
cpu_ghz = 1.0
cpus = 2
[params.list_registers]
value = 4
source = "GIC-400 TRM"
basis = "published"
[costs.exit]
ns = 300
source = "guess"
basis = "guess"
"#;

    #[test]
    fn parses_and_looks_up() {
        let p = Platform::parse(GOOD, "t.toml").unwrap();
        assert_eq!(p.cost("exit", "m").unwrap(), &CostDist::Constant { ns: 300.0 });
        assert_eq!(p.param("list_registers", "m").unwrap(), 4.0);
        let e = p.cost("nope", "timer").unwrap_err().to_string();
        assert!(e.contains("costs.nope") && e.contains("`t`") && e.contains("timer"), "{e}");
    }

    #[test]
    fn errors_name_file_and_key() {
        let bad = GOOD.replace("ns = 300", "ns = -300");
        let e = Platform::parse(&bad, "t.toml").unwrap_err().to_string();
        assert!(e.starts_with("t.toml: key `costs.exit`"), "{e}");
        let bad = GOOD.replace("cpus = 2", "cpus = 0");
        assert!(Platform::parse(&bad, "t.toml").unwrap_err().to_string().contains("profile.cpus"));
        let bad = GOOD.replace("arch = ", "colour = \"red\"\narch = ");
        let e = Platform::parse(&bad, "t.toml").unwrap_err().to_string();
        assert!(e.contains("t.toml") && e.contains("colour"), "{e}");
    }

    #[test]
    fn overrides_replace_costs_and_mark_calibration() {
        let mut p = Platform::parse(GOOD, "t.toml").unwrap();
        assert!(!p.has_calibrated());
        let over: BTreeMap<String, CostSpec> = toml::from_str("[exit]\nns = 500\nsource = \"fit to S3\"\nbasis = \"calibrated\"").unwrap();
        p.apply_overrides("s.toml", &over, &BTreeMap::new()).unwrap();
        assert_eq!(p.cost("exit", "m").unwrap(), &CostDist::Constant { ns: 500.0 });
        assert!(p.has_calibrated());
    }

    #[test]
    fn timing_keys_are_validated_naming_file_and_key() {
        let with = |extra: &str| Platform::parse(&format!("{GOOD}{extra}"), "t.toml");
        let e = with("[timing.cpi.hyp_c]\nvalue = 1\nsource = \"guess\"\nbasis = \"guess\"\n").unwrap_err().to_string();
        assert!(e.starts_with("t.toml: key `timing.cpi.hyp_entry`") && e.contains("missing"), "{e}");
        let e = with("[timing.colour]\nx = 1\n").unwrap_err().to_string();
        assert!(e.contains("t.toml") && e.contains("colour"), "{e}");
        let z = Platform::shipped("zynq-ultrascale-a53").unwrap();
        let t = z.timing.as_ref().expect("the A53 board has a timing model");
        assert_eq!(t.cpu_ghz, 1.2);
        assert!(z.describe().contains_key("timing.cpi.hyp_c"));
    }

    #[test]
    fn every_shipped_profile_parses_and_sources_every_entry() {
        assert!(!SHIPPED_PROFILES.is_empty());
        for (name, _) in SHIPPED_PROFILES {
            let p = Platform::shipped(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&p.name, name, "profile name must match its file name");
            for (k, c) in &p.costs {
                assert!(!c.source.trim().is_empty(), "{name}: cost {k} has no source");
            }
        }
        assert!(Platform::shipped("nope").unwrap_err().to_string().contains("shipped profiles"));
    }
}

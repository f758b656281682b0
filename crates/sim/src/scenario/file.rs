//! Parsing the top level of a scenario file.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::ScenarioError;
use super::reference::Reference;
use super::shipped::shipped_scenario;
use super::sweep::{expand, Point};
use crate::platform::{CostSpec, ParamSpec, Platform};

const TOP_LEVEL: &[&str] = &["scenario", "platform", "hypervisor", "vm", "workload", "configs", "sweep", "reference"];

/// The `[scenario]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioHeader {
    /// Defaults to the file stem.
    pub name: Option<String>,
    pub model: String,
    #[serde(default)]
    pub description: String,
    /// Which published result this reproduces or which experiment it predicts.
    #[serde(default)]
    pub reproduces: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn default_seed() -> u64 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlatformSection {
    profile: String,
    #[serde(default)]
    costs: BTreeMap<String, CostSpec>,
    #[serde(default)]
    params: BTreeMap<String, ParamSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigEntry {
    name: String,
    #[serde(default)]
    set: toml::Table,
}

/// A parsed scenario: header, the raw document, named configurations and sweep axes.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file as named by the user (for error messages).
    pub file: String,
    pub dir: Option<PathBuf>,
    pub header: ScenarioHeader,
    pub name: String,
    pub doc: toml::Table,
    configs: Vec<(String, toml::Table)>,
    axes: Vec<(String, Vec<toml::Value>)>,
    pub references: Vec<Reference>,
}

pub(crate) fn from_value<T: serde::de::DeserializeOwned>(v: toml::Value, file: &str, section: &str) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." || path.is_empty() { section.to_string() } else { format!("{section}.{path}") };
        ScenarioError::Syntax { file: file.into(), message: format!("key `{key}`: {}", e.inner()) }
    })
}

impl Scenario {
    /// Load a scenario by path, or by shipped name (e.g. `xen-arm-zynq-timer`).
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        let path = Path::new(name_or_path);
        if path.exists() {
            let text = std::fs::read_to_string(path)
                .map_err(|e| ScenarioError::Read { file: name_or_path.into(), message: e.to_string() })?;
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            return Scenario::parse(&text, name_or_path, &stem, path.parent().map(Path::to_path_buf));
        }
        match shipped_scenario(name_or_path) {
            Some(text) => Scenario::parse(text, &format!("scenarios/{name_or_path}.toml"), name_or_path, None),
            None => Err(ScenarioError::NotFound { name: name_or_path.into() }),
        }
    }

    /// Parse scenario text. `file` names it in errors; `stem` is the default name.
    pub fn parse(text: &str, file: &str, stem: &str, dir: Option<PathBuf>) -> Result<Scenario, ScenarioError> {
        let doc: toml::Table =
            toml::from_str(text).map_err(|e| ScenarioError::Syntax { file: file.into(), message: e.to_string() })?;
        for key in doc.keys() {
            if !TOP_LEVEL.contains(&key.as_str()) {
                return Err(ScenarioError::Syntax {
                    file: file.into(),
                    message: format!("unknown top-level key `{key}`, expected one of: {}", TOP_LEVEL.join(", ")),
                });
            }
        }
        let header_v = doc.get("scenario").cloned().ok_or_else(|| ScenarioError::Syntax {
            file: file.into(),
            message: "missing table `[scenario]` (with at least `model = \"...\"`)".into(),
        })?;
        let header: ScenarioHeader = from_value(header_v, file, "scenario")?;
        if !doc.contains_key("platform") {
            return Err(ScenarioError::Syntax { file: file.into(), message: "missing table `[platform]` (with `profile = \"...\"`)".into() });
        }
        let configs: Vec<ConfigEntry> = match doc.get("configs") {
            Some(v) => from_value(v.clone(), file, "configs")?,
            None => Vec::new(),
        };
        let mut names = std::collections::BTreeSet::new();
        for (i, c) in configs.iter().enumerate() {
            if !names.insert(c.name.clone()) {
                return Err(ScenarioError::invalid(file, &format!("configs[{i}].name"), "a unique configuration name", format!("duplicate `{}`", c.name)));
            }
        }
        let axes: Vec<(String, Vec<toml::Value>)> = match doc.get("sweep") {
            Some(toml::Value::Table(t)) => t
                .iter()
                .map(|(k, v)| match v {
                    toml::Value::Array(a) if !a.is_empty() => Ok((k.clone(), a.clone())),
                    other => Err(ScenarioError::invalid(file, &format!("sweep.{k}"), "a non-empty array of values", other)),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(ScenarioError::invalid(file, "sweep", "a table of axes", other)),
            None => Vec::new(),
        };
        for (k, _) in &axes {
            if k.starts_with("sweep") || k.starts_with("configs") || k.starts_with("scenario") {
                return Err(ScenarioError::invalid(file, &format!("sweep.{k}"), "a key under platform, hypervisor, vm or workload", k));
            }
        }
        let references: Vec<Reference> = match doc.get("reference") {
            Some(v) => from_value(v.clone(), file, "reference")?,
            None => Vec::new(),
        };
        let name = header.name.clone().unwrap_or_else(|| stem.to_string());
        Ok(Scenario {
            file: file.into(),
            dir,
            name,
            header,
            configs: configs.into_iter().map(|c| (c.name, c.set)).collect(),
            axes,
            doc,
            references,
        })
    }

    /// Every point of the scenario (configurations × sweep axes), with its resolved document.
    /// Points whose overrides cannot be applied carry an error instead of a document.
    pub fn points(&self, seed: u64) -> Vec<Point> {
        expand(&self.doc, &self.name, &self.configs, &self.axes, seed)
    }

    /// The platform profile of one point's document, with the point's overrides applied.
    pub fn platform(&self, doc: &toml::Table) -> Result<Platform, ScenarioError> {
        let v = doc.get("platform").cloned().unwrap_or(toml::Value::Table(Default::default()));
        let sec: PlatformSection = from_value(v, &self.file, "platform")?;
        let perr = |message: String| ScenarioError::Platform { file: self.file.clone(), message };
        let mut p = if sec.profile.ends_with(".toml") {
            let path = match &self.dir {
                Some(d) => d.join(&sec.profile),
                None => PathBuf::from(&sec.profile),
            };
            let text = std::fs::read_to_string(&path).map_err(|e| perr(format!("profile file {}: {e}", path.display())))?;
            Platform::parse(&text, &path.display().to_string()).map_err(|e| perr(e.to_string()))?
        } else {
            Platform::shipped(&sec.profile).map_err(|e| perr(e.to_string()))?
        };
        p.apply_overrides(&self.file, &sec.costs, &sec.params).map_err(|e| perr(e.to_string()))?;
        Ok(p)
    }

    /// Number of points.
    pub fn point_count(&self) -> usize {
        self.configs.len().max(1) * self.axes.iter().map(|a| a.1.len()).product::<usize>()
    }
}

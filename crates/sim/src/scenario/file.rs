//! Parsing the top level of a scenario file.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::ScenarioError;
use super::overrides::{check_key, keys_overlap, MAX_VALUE_CHARS};
use super::question::QuestionEntry;
use super::reference::Reference;
use super::shipped::shipped_scenario;
use super::sweep::{flatten, set_path, Expansion, Point};
use crate::platform::{CostSpec, ParamSpec, Platform};

const TOP_LEVEL: &[&str] = &["scenario", "platform", "hypervisor", "vm", "workload", "configs", "sweep", "reference", "question", "census"];

/// Default bound on the number of points a scenario may expand to (`--max-points` raises it).
pub const DEFAULT_MAX_POINTS: usize = 10_000;

/// Largest scenario file read (bytes): far above any real scenario, far below memory trouble.
pub const MAX_SCENARIO_BYTES: u64 = 4 << 20;

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
    /// Run every point with this many seeds (the first is the point's own) and report each
    /// statistic's median and range over them beside the first seed's row.
    #[serde(default = "default_seeds")]
    pub seeds: u64,
    /// Common random numbers: parameters (dotted keys that `[[configs]]` or `[sweep]` vary) left
    /// out of each point's seed, so points that differ only in them draw the same random numbers
    /// and their difference is the parameter's effect, not sampling noise. A model that runs its
    /// own baseline with the point's seed (kvm-x86's `min_reduction_pct`) then reproduces the
    /// visible baseline row exactly. Empty (the default): every point has a seed of its own.
    #[serde(default)]
    pub same_seed_across: Vec<String>,
}

fn default_seed() -> u64 {
    1
}

fn default_seeds() -> u64 {
    1
}

/// Upper bound on `scenario.seeds` / `--seeds`.
pub const MAX_SEEDS: u64 = 1000;

impl ScenarioHeader {
    /// `seeds` within 1..=[`MAX_SEEDS`].
    pub fn check_seeds(file: &str, key: &str, n: u64) -> Result<(), ScenarioError> {
        if (1..=MAX_SEEDS).contains(&n) {
            Ok(())
        } else {
            Err(ScenarioError::invalid(file, key, format!("a number of seeds per point from 1 to {MAX_SEEDS}"), n))
        }
    }
}

/// Boards a scenario may name with `platform.board` (a sweep axis), and their shipped profiles.
pub const BOARDS: &[(&str, &str)] = &[("neoverse-n1", "neoverse-n1"), ("kunpeng-920", "kunpeng-920")];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlatformSection {
    /// A shipped profile name or a `.toml` file.
    #[serde(default)]
    profile: Option<String>,
    /// A board by name instead of `profile` (one of [`BOARDS`]), so that a sweep can vary it.
    #[serde(default)]
    board: Option<String>,
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
    /// The questions this scenario answers (`[[question]]`), validated against its points.
    pub questions: Vec<results::Question>,
    /// The values each parameter takes over all the points (before `--config`/`--shard`), for
    /// checking the questions' values once the model has accepted the points.
    pub question_domain: super::question::Domain,
    /// `--set` overrides applied to the document (key, value as shown).
    pub sets: Vec<(String, String)>,
    /// `--config` selection (empty: all configurations).
    pub selected: Vec<String>,
    /// `--shard I/N` (1-based I).
    pub shard: Option<(usize, usize)>,
    /// Bound on the number of points (before selection and sharding).
    pub max_points: usize,
}

pub(crate) fn from_value<T: serde::de::DeserializeOwned>(v: toml::Value, file: &str, section: &str) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." || path.is_empty() { section.to_string() } else { format!("{section}.{path}") };
        ScenarioError::Syntax { file: file.into(), message: format!("key `{key}`: {}", plain_message(e.inner().message())) }
    })
}

/// Serde's wording for people: Rust type names become what a scenario author writes.
fn plain_message(m: &str) -> String {
    let mut s = m.trim().to_string();
    for (rust, plain) in [
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer (below 2^32)"),
        ("expected u16", "expected a non-negative integer (below 65536)"),
        ("expected u8", "expected an integer from 0 to 255"),
        ("expected usize", "expected a non-negative integer"),
        ("expected i64", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
    ] {
        s = s.replace(rust, plain);
    }
    s
}

impl Scenario {
    /// Load a scenario by path, or by shipped name (e.g. `xen-arm-zynq-timer`).
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        let path = Path::new(name_or_path);
        if path.exists() {
            let read_err = |message: String| ScenarioError::Read { file: name_or_path.into(), message };
            // The one bounded reader (type and size first, the read itself capped: a file growing
            // meanwhile cannot pass the bound; issue 45's audit).
            let text = results::read_text_capped(path, MAX_SCENARIO_BYTES).map_err(|e| {
                read_err(match e {
                    results::ResultsError::NotRegular { .. } => "not a regular file".into(),
                    results::ResultsError::TooLarge { bytes, .. } => format!("{bytes} bytes; a scenario file is at most {MAX_SCENARIO_BYTES} bytes"),
                    other => other.to_string(),
                })
            })?;
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            return Scenario::parse(&text, name_or_path, &stem, path.parent().map(Path::to_path_buf));
        }
        match shipped_scenario(name_or_path) {
            Some(text) => Scenario::parse(text, &format!("scenarios/{name_or_path}.toml"), name_or_path, None),
            None => Err(ScenarioError::NotFound { name: name_or_path.into(), hint: super::did_you_mean(name_or_path, super::SHIPPED_SCENARIOS.iter().map(|s| s.0)) }),
        }
    }

    /// Parse scenario text. `file` names it in errors; `stem` is the default name.
    pub fn parse(text: &str, file: &str, stem: &str, dir: Option<PathBuf>) -> Result<Scenario, ScenarioError> {
        let doc: toml::Table = toml::from_str(text).map_err(|source| ScenarioError::Toml { file: file.into(), source })?;
        for key in doc.keys() {
            if !TOP_LEVEL.contains(&key.as_str()) {
                return Err(ScenarioError::Syntax { file: file.into(), message: format!("unknown top-level key `{key}`, expected one of: {}", TOP_LEVEL.join(", ")) });
            }
        }
        let header_v = doc
            .get("scenario")
            .cloned()
            .ok_or_else(|| ScenarioError::Syntax { file: file.into(), message: "missing table `[scenario]` (with at least `model = \"...\"`)".into() })?;
        let header: ScenarioHeader = from_value(header_v, file, "scenario")?;
        ScenarioHeader::check_seeds(file, "scenario.seeds", header.seeds)?;
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
        for (k, values) in &axes {
            check_key(k).map_err(|e| ScenarioError::Syntax { file: file.into(), message: format!("[sweep]: {e}") })?;
            for (j, v) in values.iter().enumerate() {
                check_value_size(file, &format!("sweep.\"{k}\"[{j}]"), v)?;
                // Points are named by their values as shown: `"1"` and `1` are one name too.
                if let Some(i) = values[..j].iter().position(|w| super::sweep::show(w) == super::sweep::show(v)) {
                    return Err(ScenarioError::invalid(
                        file,
                        &format!("sweep.{k}"),
                        "distinct values (each value is one point, and two points of one name cannot be told apart)",
                        format!("`{}` twice (entries {i} and {j})", super::sweep::show(v)),
                    ));
                }
            }
        }
        for (i, c) in configs.iter().enumerate() {
            let mut flat = Vec::new();
            flatten("", &c.set, &mut flat);
            for (k, v) in &flat {
                check_key(k).map_err(|e| ScenarioError::Syntax { file: file.into(), message: format!("configs[{i}] (`{}`).set: {e}", c.name) })?;
                check_value_size(file, &format!("configs[{i}].set.{k}"), v)?;
                if let Some((axis, _)) = axes.iter().find(|(a, _)| keys_overlap(a, k)) {
                    return Err(ScenarioError::invalid(
                        file,
                        &format!("configs[{i}].set.{k}"),
                        "a key no sweep axis also sets (the row would be labelled with a value that is overwritten)",
                        format!("also swept as `{axis}`"),
                    ));
                }
            }
        }
        for (i, k) in header.same_seed_across.iter().enumerate() {
            let varied = axes.iter().any(|(a, _)| a == k)
                || super::sweep::get_path(&doc, k).is_some()
                || configs.iter().any(|c| {
                    let mut flat = Vec::new();
                    flatten("", &c.set, &mut flat);
                    flat.iter().any(|(f, _)| f == k)
                });
            if !varied {
                return Err(ScenarioError::invalid(
                    file,
                    &format!("scenario.same_seed_across[{i}]"),
                    "a parameter of the scenario (set in its tables, a [sweep] axis or a [[configs]] entry)",
                    format!("`{k}`"),
                ));
            }
        }
        let references: Vec<Reference> = match doc.get("reference") {
            Some(v) => from_value(v.clone(), file, "reference")?,
            None => Vec::new(),
        };
        let entries: Vec<QuestionEntry> = match doc.get("question") {
            Some(v) => from_value(v.clone(), file, "question")?,
            None => Vec::new(),
        };
        let name = header.name.clone().unwrap_or_else(|| stem.to_string());
        let mut sc = Scenario {
            file: file.into(),
            dir,
            name,
            header,
            configs: configs.into_iter().map(|c| (c.name, c.set)).collect(),
            axes,
            doc,
            references,
            questions: Vec::new(),
            question_domain: Default::default(),
            sets: Vec::new(),
            selected: Vec::new(),
            shard: None,
            max_points: DEFAULT_MAX_POINTS,
        };
        if !sc.references.is_empty() {
            let names = sc.all_point_names()?;
            for (i, r) in sc.references.iter().enumerate() {
                r.validate(file, i, &names)?;
            }
        }
        if !entries.is_empty() {
            // A scenario too large to expand is refused later, with its own error (--max-points).
            let points = sc.points(sc.header.seed).unwrap_or_default();
            let params: Vec<_> = points.iter().map(|(_, p)| p.params.clone()).collect();
            let d = super::question::domain(&params);
            let in_doc = |k: &str| super::sweep::get_path(&sc.doc, k).is_some() || points.iter().any(|(_, p)| p.doc.as_ref().is_ok_and(|d| super::sweep::get_path(d, k).is_some()));
            sc.questions = entries.into_iter().enumerate().map(|(i, q)| q.validate(file, i, &d, &in_doc)).collect::<Result<_, _>>()?;
            sc.question_domain = d;
        }
        Ok(sc)
    }

    fn expansion(&self, seed: u64) -> Expansion<'_> {
        Expansion { doc: &self.doc, scenario: &self.name, configs: &self.configs, axes: &self.axes, seed, same_seed_across: &self.header.same_seed_across }
    }

    /// Number of points of the whole scenario (before `--config` and `--shard`), bounded.
    pub fn point_count(&self) -> Result<usize, ScenarioError> {
        let n = self.expansion(0).len();
        match n {
            Some(n) if n <= self.max_points => Ok(n),
            _ => Err(ScenarioError::invalid(
                &self.file,
                "sweep",
                format!("at most {} points (raise the bound with --max-points)", self.max_points),
                match n {
                    Some(n) => format!("{n} points"),
                    None => "more points than fit in memory".into(),
                },
            )),
        }
    }

    /// The first point of each configuration (point 0 when there are none), ignoring `--config`
    /// and `--shard`: preparing these finds every problem of the shared document (an unknown
    /// key, a bad value) before the run materialises one document per point.
    pub fn probe_points(&self, seed: u64) -> Result<Vec<(usize, Point)>, ScenarioError> {
        let n = self.point_count()?;
        let e = self.expansion(seed);
        let combos = e.combos().unwrap_or(1).max(1);
        Ok((0..n).step_by(combos).map(|i| (i, e.point(i))).collect())
    }

    /// Names of every point (for validating references).
    fn all_point_names(&self) -> Result<Vec<String>, ScenarioError> {
        let e = self.expansion(0);
        Ok((0..self.point_count()?).map(|i| e.point(i).name).collect())
    }

    /// The `[[configs]]` names, in file order.
    pub fn config_names(&self) -> Vec<&str> {
        self.configs.iter().map(|c| c.0.as_str()).collect()
    }

    /// The sweep axes' keys, in file order.
    pub fn axis_keys(&self) -> Vec<&str> {
        self.axes.iter().map(|a| a.0.as_str()).collect()
    }

    /// Apply `--set` overrides to the document. A key that a configuration or a sweep axis
    /// also sets is an error: the rows would be labelled with values that were never applied.
    pub fn apply_sets(&mut self, sets: &[(String, toml::Value)]) -> Result<(), ScenarioError> {
        for (k, v) in sets {
            let err = |expected: String, got: String| ScenarioError::invalid("--set", k, expected, got);
            check_key(k).map_err(|e| err("a dotted key".into(), e.to_string()))?;
            if let Some((axis, _)) = self.axes.iter().find(|(a, _)| keys_overlap(a, k)) {
                return Err(err("a key the scenario does not sweep (remove the axis from [sweep] to set it)".to_string(), format!("swept as `{axis}`")));
            }
            for (name, set) in &self.configs {
                let mut flat = Vec::new();
                flatten("", set, &mut flat);
                if let Some((ck, _)) = flat.iter().find(|(ck, _)| keys_overlap(ck, k)) {
                    return Err(err("a key no configuration sets (choose configurations with --config)".into(), format!("set by configuration `{name}` as `{ck}`")));
                }
            }
            set_path(&mut self.doc, k, v.clone()).map_err(|e| err("a settable place in the scenario".into(), e.to_string()))?;
            self.sets.push((k.clone(), super::sweep::show(v)));
        }
        Ok(())
    }

    /// Every key some configuration, sweep axis or `--set` sets: the parameters that can
    /// distinguish two points.
    fn varied_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.axes.iter().map(|a| a.0.clone()).collect();
        for (_, set) in &self.configs {
            let mut flat = Vec::new();
            flatten("", set, &mut flat);
            keys.extend(flat.into_iter().map(|(k, _)| k));
        }
        keys.extend(self.sets.iter().map(|(k, _)| k.clone()));
        keys.sort();
        keys.dedup();
        keys
    }

    /// Run only the named `[[configs]]` (`--config`).
    pub fn select_configs(&mut self, names: &[String]) -> Result<(), ScenarioError> {
        for n in names {
            if !self.configs.iter().any(|c| &c.0 == n) {
                let known = self.config_names();
                let expected = if known.is_empty() {
                    "no --config: this scenario has no [[configs]]".to_string()
                } else {
                    format!("one of: {}{}", known.join(" | "), super::did_you_mean(n, known.iter().copied()))
                };
                return Err(ScenarioError::invalid("--config", "name", expected, format!("`{n}`")));
            }
        }
        self.selected = names.to_vec();
        Ok(())
    }

    /// Run only shard `i` of `n` (1-based): point k belongs to shard (k mod n) + 1.
    pub fn set_shard(&mut self, i: usize, n: usize) -> Result<(), ScenarioError> {
        if n == 0 || i == 0 || i > n {
            return Err(ScenarioError::invalid("--shard", "I/N", "1 <= I <= N", format!("{i}/{n}")));
        }
        self.shard = Some((i, n));
        Ok(())
    }

    /// The points this run covers (configurations × sweep axes, then `--config` and `--shard`),
    /// each with its resolved document and its index among all the scenario's points.
    /// Points whose overrides cannot be applied carry an error instead of a document.
    pub fn points(&self, seed: u64) -> Result<Vec<(usize, Point)>, ScenarioError> {
        let n = self.point_count()?;
        let per_point = value_count(&self.doc);
        if per_point.saturating_mul(n) > MAX_POINT_VALUES {
            return Err(ScenarioError::invalid(
                &self.file,
                "sweep",
                format!("at most {MAX_POINT_VALUES} values over all points' documents (each point holds its own copy; shard the run with --shard, or trim the document)"),
                format!("{n} points × {per_point} values"),
            ));
        }
        let e = self.expansion(seed);
        let keys = self.varied_keys();
        let mut out = Vec::new();
        for i in 0..n {
            if let Some((k, of)) = self.shard {
                if i % of != k - 1 {
                    continue;
                }
            }
            if !self.selected.is_empty() && !e.config_of(i).is_some_and(|c| self.selected.iter().any(|s| s == c)) {
                continue;
            }
            let mut p = e.point(i);
            for (k, v) in &self.sets {
                p.params.insert(k.clone(), v.clone());
            }
            fill_params(&mut p, &keys);
            out.push((i, p));
        }
        Ok(out)
    }

    /// The platform profile of one point's document, with the point's overrides applied.
    pub fn platform(&self, doc: &toml::Table) -> Result<Platform, ScenarioError> {
        let v = doc.get("platform").cloned().unwrap_or(toml::Value::Table(Default::default()));
        let sec: PlatformSection = from_value(v, &self.file, "platform")?;
        let perr = |message: String| ScenarioError::Platform { file: self.file.clone(), message };
        let profile_err = |source| ScenarioError::Profile { file: self.file.clone(), source };
        let profile = match (&sec.profile, &sec.board) {
            (Some(p), None) => p.clone(),
            (None, Some(b)) => match BOARDS.iter().find(|(name, _)| name == b) {
                Some((_, profile)) => profile.to_string(),
                None => {
                    let known = BOARDS.iter().map(|(n, _)| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
                    return Err(ScenarioError::invalid(&self.file, "platform.board", format!("one of {known}"), b));
                }
            },
            (Some(_), Some(_)) => return Err(ScenarioError::invalid(&self.file, "platform.board", "either `profile` or `board`, not both", "both")),
            (None, None) => return Err(ScenarioError::invalid(&self.file, "platform.profile", "a profile name or file, or `board = \"...\"`", "nothing")),
        };
        let prof = profile.as_str();
        let mut p = if prof.ends_with(".toml") {
            let path = match &self.dir {
                Some(d) => d.join(prof),
                None => PathBuf::from(prof),
            };
            // Bounded like the scenario itself: a regular file (a link to /dev/zero is refused).
            let text = results::read_text_capped(&path, MAX_SCENARIO_BYTES).map_err(|e| perr(format!("profile file {e}")))?;
            Platform::parse(&text, &path.display().to_string()).map_err(profile_err)?
        } else {
            Platform::shipped(prof).map_err(profile_err)?
        };
        p.apply_overrides(&self.file, &sec.costs, &sec.params).map_err(profile_err)?;
        Ok(p)
    }
}

/// Bound on the values held by all points' documents together (each point has its own copy of
/// the scenario document): a few GB at most. An 88 KB scenario of 10,000 points holding a
/// 20,000-element array would otherwise need 30 GB.
pub const MAX_POINT_VALUES: usize = 20_000_000;

/// Number of TOML values a point's copy of the document holds (tables and arrays count their
/// elements; `sweep`, `configs` and `reference` are not copied into points).
fn value_count(t: &toml::Table) -> usize {
    fn one(v: &toml::Value) -> usize {
        1 + match v {
            toml::Value::Table(t) => t.values().map(one).sum(),
            toml::Value::Array(a) => a.iter().map(one).sum(),
            _ => 0,
        }
    }
    t.iter().filter(|(k, _)| !matches!(k.as_str(), "sweep" | "configs" | "reference")).map(|(_, v)| one(v)).sum()
}

/// Give a point a value for every key that some other point sets, read from its own document
/// (the scenario's default where it does not override it). Without this a configuration that
/// keeps the default (`xen`) has no `hypervisor.vwfi` while its neighbour (`xen vwfi=native`)
/// has one, and a pivot or an answer cannot tell them apart. The seed was derived before, from
/// the overrides alone, so results do not change.
fn fill_params(p: &mut Point, keys: &[String]) {
    let Ok(doc) = &p.doc else { return };
    for k in keys {
        if !p.params.contains_key(k) {
            if let Some(v) = super::sweep::get_path(doc, k) {
                p.params.insert(k.clone(), super::sweep::show(v));
            }
        }
    }
}

fn check_value_size(file: &str, key: &str, v: &toml::Value) -> Result<(), ScenarioError> {
    let n = super::sweep::show(v).chars().count();
    if n > MAX_VALUE_CHARS {
        return Err(ScenarioError::invalid(file, key, format!("a value of at most {MAX_VALUE_CHARS} characters"), format!("{n} characters")));
    }
    Ok(())
}

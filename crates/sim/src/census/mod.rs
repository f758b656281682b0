//! The lab's path census as the models read it (issue 43, item 2; the census itself is issue 42).
//!
//! The Arm lab runs the real Xen / KVM code under QEMU TCG and a plugin counts, per delivered
//! interrupt, what ran on its path (docs/design.md, "The lab and the models meet in the path
//! census"; docs/path-census.md). The counts are exact and deterministic under `-icount`; their
//! time on a board is not, and comes from the board's per-core timing model
//! ([`crate::platform::timing`]).
//!
//! **One format.** The models read the lab's own files, `crates/sim/census/lab/*.json`, as
//! `scripts/census-data.py` writes them: `{"lab_run": {...}, "census": results::census::Census}`
//! (the schema is [`results::census::Census`]; nothing here is a second format or a converted
//! copy). What a model needs that the file does not hold as such is computed from it
//! ([`view`]): the split of Xen's EL2 instructions into entry code and C paths (from the
//! functions' symbols), the GIC accesses per register class (from the registers), exceptions and
//! returns per exception level (from the vectors and the `eret` count). This module loads a
//! file and checks it for what every census must be (named lab run, at least one class, counts
//! that add up); [`spec`] checks it against the path a model's segment stands for and times it;
//! [`segments`] is the table of the segments the models take from the census.
//!
//! Every file under `crates/sim/census/lab/` is compiled into the binary (`crates/sim/build.rs`)
//! and loadable by its file stem; a scenario may name another file (`[census]`, see
//! [`segments`]). A file that does not parse or check is refused naming the file and the key
//! ([`CensusError`]); the CLI turns it into exit 2.
pub mod segments;
pub mod spec;
mod view;

use std::collections::BTreeMap;

use serde::Deserialize;

pub use spec::{GicIf, PathSpec, Segment, Spread};
pub use view::ClassView;

/// Census files larger than this are refused (the lab's are under 100 KB).
pub const MAX_CENSUS_BYTES: u64 = 4 << 20;

/// Census files compiled into the binary: (name, JSON text), from `crates/sim/census/lab/`.
pub const SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_census.rs"));

/// Exception levels a census attributes instructions to (`by_el` keys); `unknown` is code in
/// no known image, which no timing model can price.
pub const CENSUS_LEVELS: [&str; 4] = ["EL2", "EL1", "EL0", "unknown"];

/// Errors name the census file and the key at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CensusError {
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: key `{key}`: {message}")]
    Invalid { file: String, key: String, message: String },
    #[error("census `{name}`: no shipped census of that name and no such file ({reason}); shipped: {known}")]
    Unknown { name: String, reason: String, known: String },
}

/// The lab run that produced a census (`lab_run`, written by `scripts/census-data.py`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct LabRun {
    /// The lab command of the run (`scripts/arm-lab.sh xen --icount --census …`).
    pub command: String,
    /// The command that regenerates this file.
    pub regenerate: String,
    /// The irqlab commit of the lab run.
    pub irqlab_commit: String,
    /// The run's parameters (`bench`, `sched`, `vwfi`, `xen_version`, `icount`, …).
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// What it ran on (`hypervisor`, `machine`, …).
    #[serde(default)]
    pub platform: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct LabFile {
    lab_run: LabRun,
    census: results::census::Census,
}

/// A loaded, checked census file.
#[derive(Debug, Clone, PartialEq)]
pub struct LabCensus {
    /// The file as named (`crates/sim/census/lab/<name>.json` or the path given).
    pub file: String,
    pub run: LabRun,
    pub census: results::census::Census,
}

impl LabCensus {
    fn invalid(&self, key: impl Into<String>, message: impl Into<String>) -> CensusError {
        CensusError::Invalid { file: self.file.clone(), key: key.into(), message: message.into() }
    }

    /// Parse and check a census file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<LabCensus, CensusError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let f: LabFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            if path.is_empty() || path == "." {
                CensusError::Parse { file: file.into(), message: e.inner().to_string() }
            } else {
                CensusError::Invalid { file: file.into(), key: path, message: e.inner().to_string() }
            }
        })?;
        let c = LabCensus { file: file.into(), run: f.lab_run, census: f.census };
        c.check()?;
        Ok(c)
    }

    fn check(&self) -> Result<(), CensusError> {
        for (k, v) in [("lab_run.command", &self.run.command), ("lab_run.regenerate", &self.run.regenerate), ("lab_run.irqlab_commit", &self.run.irqlab_commit)] {
            if v.trim().is_empty() {
                return Err(self.invalid(k, "the lab run must be named: its command, the irqlab commit and the command that regenerates this file"));
            }
        }
        if self.census.classes.is_empty() {
            return Err(self.invalid("census.classes", "at least one path class"));
        }
        for (name, p) in &self.census.classes {
            let at = |k: &str| format!("census.classes.{name}.{k}");
            if p.paths == 0 {
                return Err(self.invalid(at("paths"), "at least 1 path counted"));
            }
            let s = &p.insns;
            if !(s.median.is_finite() && s.min as f64 <= s.median && s.median <= s.max as f64) {
                return Err(self.invalid(at("insns"), format!("min <= median <= max, got {} / {} / {}", s.min, s.median, s.max)));
            }
            for el in p.by_el.keys() {
                if !CENSUS_LEVELS.contains(&el.as_str()) {
                    return Err(self.invalid(at(&format!("by_el.{el}")), format!("unknown exception level; expected one of {}", CENSUS_LEVELS.join(", "))));
                }
            }
            // The per-EL sums are over all paths: their mean per path lies within min..max.
            let total: u64 = p.by_el.values().sum();
            let mean = total as f64 / p.paths as f64;
            if mean < s.min as f64 - 0.5 || mean > s.max as f64 + 0.5 {
                return Err(self.invalid(at("by_el"), format!("{mean:.1} instructions per path on average, outside the paths' own {}..{}", s.min, s.max)));
            }
            let mut by_fn: BTreeMap<&str, u64> = BTreeMap::new();
            for f in &p.functions {
                if !CENSUS_LEVELS.contains(&f.el.as_str()) {
                    return Err(self.invalid(at(&format!("functions.{}.el", f.name)), format!("unknown exception level `{}`", f.el)));
                }
                *by_fn.entry(f.el.as_str()).or_default() += f.insns;
            }
            for (el, n) in by_fn {
                let of_el = p.by_el.get(el).copied().unwrap_or(0);
                if n > of_el {
                    return Err(self.invalid(at("functions"), format!("the functions at {el} add up to {n} instructions, more than `by_el.{el}` ({of_el})")));
                }
            }
            for g in &p.gic {
                if g.kind != "sysreg" && g.kind != "mmio" {
                    return Err(self.invalid(at(&format!("gic.{}.kind", g.register)), format!("`sysreg` or `mmio`, got `{}`", g.kind)));
                }
                if g.rw != "r" && g.rw != "w" {
                    return Err(self.invalid(at(&format!("gic.{}.rw", g.register)), format!("`r` or `w`, got `{}`", g.rw)));
                }
            }
            for k in p.exceptions.keys() {
                if view::exception_level(k).is_none() {
                    return Err(self.invalid(at(&format!("exceptions.{k}")), "an exception named by its level first (`EL2 IRQ from lower EL`, `EL1 sync …`)"));
                }
            }
        }
        Ok(())
    }

    /// A shipped census by name (`crates/sim/census/lab/<name>.json`), or a `.json` file path.
    pub fn load(name: &str) -> Result<LabCensus, CensusError> {
        if let Some((_, text)) = SHIPPED.iter().find(|(n, _)| *n == name) {
            return LabCensus::parse(text, &format!("crates/sim/census/lab/{name}.json"));
        }
        let known = SHIPPED.iter().map(|s| s.0).collect::<Vec<_>>().join(", ");
        if !name.ends_with(".json") {
            return Err(CensusError::Unknown { name: name.into(), reason: "not a .json path".into(), known });
        }
        let text = results::read_text_capped(std::path::Path::new(name), MAX_CENSUS_BYTES).map_err(|e| CensusError::Unknown { name: name.into(), reason: e.to_string(), known })?;
        LabCensus::parse(&text, name)
    }

    /// The path class `name`, or an error naming `census.classes.<name>` and the classes the file has.
    pub fn class(&self, name: &str) -> Result<&results::census::PathCensus, CensusError> {
        self.census.classes.get(name).ok_or_else(|| {
            self.invalid(format!("census.classes.{name}"), format!("no such path class; this census has {}", self.census.classes.keys().cloned().collect::<Vec<_>>().join(", ")))
        })
    }

    /// The run in one line, for a segment's provenance.
    pub fn run_line(&self) -> String {
        let r = &self.run;
        let p = |k: &str| r.params.get(k).map_or("?", |s| s.as_str());
        format!(
            "lab run: Xen {} sched={} vwfi={} bench {} under -icount {} on {}; irqlab commit {}; regenerate: {}",
            p("xen_version"),
            p("sched"),
            p("vwfi"),
            p("bench"),
            p("icount"),
            r.platform.get("machine").map_or("?", |s| s.as_str()),
            r.irqlab_commit,
            r.regenerate
        )
    }
}

#[cfg(test)]
mod tests;

//! The lab's path census as the models read it (issue 43, item 2; the census itself is issue 42).
//!
//! The Arm lab runs the real Xen / KVM code under QEMU TCG and a plugin counts, per delivered
//! interrupt, what ran on its path (docs/design.md, "The lab and the models meet in the path
//! census"). The counts are exact and deterministic; their time on a board is not, and comes from
//! the board's per-core timing model ([`crate::platform::timing`]). This module loads a census
//! file, checks it, and turns one path class into [`PathCounts`] for a model segment. The file
//! (JSON, one per lab run, under `crates/sim/census/`; [`FORMAT`]):
//!
//! ```json
//! { "format": "irqlab-census/1",
//!   "run": { "build": "…", "bench": "…", "commit": "…", "command": "the command that regenerates this file" },
//!   "paths": {
//!     "xen-vtimer-running": {
//!       "interrupts": 200,
//!       "instructions": { "el2": { "median": 812, "min": 806, "max": 830 }, "el1": { … } },
//!       "functions": { "el2": { "vgic_inject_irq": 212, "guest_irq": 96, … } },
//!       "gic": { "gicc_read": 1, "gicc_write": 2, "gich_write": 1 },
//!       "exceptions": { "el2": { "irq": 1 }, "el1": { "irq": 1 } },
//!       "erets": { "el2": 1 } } } }
//! ```
//!
//! Counts are per interrupt (medians over `interrupts`); `instructions` carry their own spread
//! (`min`, `max`), which is what a model's path may differ from its census by ([`Spread`]).
//! `functions` may be absent (the census then had no symbols: issue 42 "Bad input"), and the
//! split of EL2 code into entry code and C paths is then unknown: every EL2 instruction is timed
//! as C ([`Segment::counts`] says so in its note). Which functions are entry code is the model's
//! knowledge of its hypervisor ([`PathSpec::entry_symbols`]), not the census's.
//!
//! A census file that does not match the path a scenario's model expects — a missing path class,
//! GIC register classes of the other GIC generation, no exception into EL2 where the path traps —
//! is refused naming the file and the key ([`CensusError`]); the CLI turns it into exit 2.
mod spec;

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::platform::timing::{gic_keys, LEVELS};
use crate::platform::PathCounts;

pub use spec::{PathSpec, Segment, Spread};

/// The format string a census file must carry.
pub const FORMAT: &str = "irqlab-census/1";

/// Census files larger than this are refused (a census is a few KB).
pub const MAX_CENSUS_BYTES: u64 = 4 << 20;

/// Census files compiled into the binary: (name, JSON text), from `crates/sim/census/`.
pub const SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_census.rs"));

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

/// The lab run that produced a census.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// What ran (hypervisor build, its configuration, QEMU CPU and GIC).
    pub build: String,
    /// The bench and its flags.
    pub bench: String,
    /// The irqlab commit of the lab run.
    pub commit: String,
    /// The command that regenerates this file.
    pub command: String,
}

/// An instruction count with its spread over the run's interrupts.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Count {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// One path class of a census.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CensusPath {
    pub interrupts: u64,
    pub instructions: BTreeMap<String, Count>,
    #[serde(default)]
    pub functions: Option<BTreeMap<String, BTreeMap<String, f64>>>,
    #[serde(default)]
    pub gic: BTreeMap<String, f64>,
    #[serde(default)]
    pub exceptions: BTreeMap<String, BTreeMap<String, f64>>,
    #[serde(default)]
    pub erets: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CensusFile {
    format: String,
    run: Run,
    paths: BTreeMap<String, CensusPath>,
}

/// A loaded, checked census.
#[derive(Debug, Clone, PartialEq)]
pub struct Census {
    /// The file as named (shipped name or path), for messages and provenance.
    pub file: String,
    pub run: Run,
    pub paths: BTreeMap<String, CensusPath>,
}

fn nonneg(file: &str, key: String, v: f64) -> Result<(), CensusError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(CensusError::Invalid { file: file.into(), key, message: format!("a finite count >= 0, got {v}") })
    }
}

fn level(file: &str, key: String, el: &str) -> Result<(), CensusError> {
    if LEVELS.contains(&el) {
        Ok(())
    } else {
        Err(CensusError::Invalid { file: file.into(), key, message: format!("unknown exception level `{el}`; expected one of {}", LEVELS.join(", ")) })
    }
}

impl Census {
    /// Parse and check a census file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Census, CensusError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let f: CensusFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            if path.is_empty() || path == "." {
                CensusError::Parse { file: file.into(), message: e.inner().to_string() }
            } else {
                CensusError::Invalid { file: file.into(), key: path, message: e.inner().to_string() }
            }
        })?;
        let inv = |key: &str, message: String| CensusError::Invalid { file: file.into(), key: key.into(), message };
        if f.format != FORMAT {
            return Err(inv("format", format!("\"{FORMAT}\", got \"{}\"", f.format)));
        }
        for (k, v) in [("run.build", &f.run.build), ("run.bench", &f.run.bench), ("run.commit", &f.run.commit), ("run.command", &f.run.command)] {
            if v.trim().is_empty() {
                return Err(inv(k, "the lab run must be named: build, bench, commit and the command that regenerates this file".into()));
            }
        }
        if f.paths.is_empty() {
            return Err(inv("paths", "at least one path class".into()));
        }
        let gk = gic_keys();
        for (name, p) in &f.paths {
            let at = |k: &str| format!("paths.{name}.{k}");
            if p.interrupts == 0 {
                return Err(inv(&at("interrupts"), "at least 1 interrupt counted".into()));
            }
            if p.instructions.is_empty() {
                return Err(inv(&at("instructions"), "instructions at one exception level at least".into()));
            }
            for (el, c) in &p.instructions {
                level(file, at(&format!("instructions.{el}")), el)?;
                for (f, v) in [("median", c.median), ("min", c.min), ("max", c.max)] {
                    nonneg(file, at(&format!("instructions.{el}.{f}")), v)?;
                }
                if !(c.min <= c.median && c.median <= c.max) {
                    return Err(inv(&at(&format!("instructions.{el}")), format!("min <= median <= max, got {} / {} / {}", c.min, c.median, c.max)));
                }
            }
            if let Some(fns) = &p.functions {
                for (el, by) in fns {
                    level(file, at(&format!("functions.{el}")), el)?;
                    let total = p.instructions.get(el).ok_or_else(|| inv(&at(&format!("functions.{el}")), format!("functions at {el} but no `instructions.{el}`")))?;
                    let mut sum = 0.0;
                    for (f, v) in by {
                        nonneg(file, at(&format!("functions.{el}.{f}")), *v)?;
                        sum += v;
                    }
                    // Medians of parts need not add up to the median of the whole, but cannot exceed its max.
                    if sum > total.max * 1.001 + 1.0 {
                        return Err(inv(&at(&format!("functions.{el}")), format!("the functions add up to {sum} instructions, more than the path's most ({})", total.max)));
                    }
                }
            }
            for (k, v) in &p.gic {
                if !gk.contains(k) {
                    return Err(inv(&at(&format!("gic.{k}")), format!("unknown GIC register class; expected <class>_<read|write>, one of {}", gk.join(", "))));
                }
                nonneg(file, at(&format!("gic.{k}")), *v)?;
            }
            for (el, by) in &p.exceptions {
                level(file, at(&format!("exceptions.{el}")), el)?;
                for (class, v) in by {
                    nonneg(file, at(&format!("exceptions.{el}.{class}")), *v)?;
                }
            }
            for (el, v) in &p.erets {
                level(file, at(&format!("erets.{el}")), el)?;
                nonneg(file, at(&format!("erets.{el}")), *v)?;
            }
        }
        Ok(Census { file: file.into(), run: f.run, paths: f.paths })
    }

    /// A shipped census by name (`crates/sim/census/<name>.json`), or a `.json` file path.
    pub fn load(name: &str) -> Result<Census, CensusError> {
        if let Some((_, text)) = SHIPPED.iter().find(|(n, _)| *n == name) {
            return Census::parse(text, &format!("crates/sim/census/{name}.json"));
        }
        let known = if SHIPPED.is_empty() { "none yet".to_string() } else { SHIPPED.iter().map(|s| s.0).collect::<Vec<_>>().join(", ") };
        if !name.ends_with(".json") {
            return Err(CensusError::Unknown { name: name.into(), reason: "not a .json path".into(), known });
        }
        let text = results::read_text_capped(std::path::Path::new(name), MAX_CENSUS_BYTES).map_err(|e| CensusError::Unknown { name: name.into(), reason: e.to_string(), known })?;
        Census::parse(&text, name)
    }

    /// The path class `name`, or an error naming `paths.<name>` and the classes the file has.
    pub fn path(&self, name: &str) -> Result<&CensusPath, CensusError> {
        self.paths.get(name).ok_or_else(|| CensusError::Invalid {
            file: self.file.clone(),
            key: format!("paths.{name}"),
            message: format!("no such path class; this census has {}", self.paths.keys().cloned().collect::<Vec<_>>().join(", ")),
        })
    }
}

impl CensusPath {
    /// Counts at `pick` (median, min or max of the instruction counts) for the timing model;
    /// EL2 instructions in `entry_symbols` are entry code, the rest C; EL1/EL0 are the guest's.
    /// Returns the counts and whether the entry/C split was known (the census had functions).
    pub fn counts(&self, entry_symbols: &[&str], pick: fn(&Count) -> f64) -> (PathCounts, bool) {
        let el2 = self.instructions.get("el2").map_or(0.0, pick);
        let guest: f64 = ["el1", "el0"].iter().filter_map(|el| self.instructions.get(*el)).map(pick).sum();
        let (entry, known) = match self.functions.as_ref().and_then(|f| f.get("el2")) {
            Some(by) => (by.iter().filter(|(f, _)| entry_symbols.contains(&f.as_str())).map(|(_, v)| *v).sum::<f64>().min(el2), true),
            None => (0.0, el2 == 0.0),
        };
        let mut exceptions = BTreeMap::new();
        for el in LEVELS {
            let entries: f64 = self.exceptions.get(el).map_or(0.0, |b| b.values().sum());
            let erets = self.erets.get(el).copied().unwrap_or(0.0);
            if entries > 0.0 || erets > 0.0 {
                exceptions.insert(el.to_string(), (entries, erets));
            }
        }
        (PathCounts { hyp_entry: entry, hyp_c: el2 - entry, guest, gic: self.gic.clone(), exceptions }, known)
    }
}

#[cfg(test)]
mod tests;

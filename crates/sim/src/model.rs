//! The interface between scenarios and timed models.
//!
//! A model is named by `scenario.model`. For each point it [`prepare`](Model::prepare)s: reads
//! its sections from the point's document (rejecting unknown keys and impossible values with
//! errors that name the key) and the costs it needs from the platform. The prepared point then
//! runs and returns a [`ConfigResult`] plus sample traces. Preparing every point before running
//! any means bad input is reported before minutes of simulation.
use results::ConfigResult;

use crate::engine::Trace;
use crate::platform::{Platform, PlatformError};
use crate::scenario::ScenarioError;

/// Longest simulated run accepted (ns): 100 days, half of what u64 picoseconds hold.
pub const MAX_SIMULATED_NS: f64 = 100.0 * 86_400.0 * 1e9;

/// Largest sample / operation count a scenario may ask for.
pub const MAX_SAMPLES: u64 = 1_000_000_000;

/// What a model needs to prepare one point.
pub struct PointCtx<'a> {
    /// Scenario file name, for error messages.
    pub file: &'a str,
    pub point_name: &'a str,
    /// The scenario document with this point's overrides applied.
    pub doc: &'a toml::Table,
    pub platform: &'a Platform,
    pub seed: u64,
    /// Sections the model has read through [`section`](Self::section): a section in the
    /// document that the model never reads is reported as an error (its keys would be ignored).
    pub read: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

impl<'a> PointCtx<'a> {
    /// A context for one point.
    pub fn new(file: &'a str, point_name: &'a str, doc: &'a toml::Table, platform: &'a Platform, seed: u64) -> Self {
        PointCtx { file, point_name, doc, platform, seed, read: Default::default() }
    }

    /// Check a count read from the scenario (`samples`, `operations`...): `min..=max`.
    pub fn check_count(&self, key: &str, v: u64, min: u64, max: u64) -> Result<(), ScenarioError> {
        if v < min || v > max {
            return Err(self.invalid(key, &format!("{min}..={max}"), v));
        }
        Ok(())
    }

    /// Check that a run whose simulated time is about `total_ns` fits the picosecond clock with
    /// room to spare (at most [`MAX_SIMULATED_NS`]); `what` says how the total was computed.
    pub fn check_horizon(&self, key: &str, total_ns: f64, what: &str) -> Result<(), ScenarioError> {
        if !(total_ns.is_finite() && total_ns <= MAX_SIMULATED_NS) {
            return Err(self.invalid(key, &format!("a run of at most 100 simulated days ({what} must stay below {MAX_SIMULATED_NS:e} ns)"), format!("{total_ns:.3e} ns")));
        }
        Ok(())
    }

    /// Check a duration or size read from the scenario: finite and within `min..=max`
    /// (`min_exclusive`: strictly above `min`).
    pub fn check_range(&self, key: &str, v: f64, min: f64, min_exclusive: bool, max: f64) -> Result<(), ScenarioError> {
        let low_ok = if min_exclusive { v > min } else { v >= min };
        if !(v.is_finite() && low_ok && v <= max) {
            let lo = if min_exclusive { format!("above {min}") } else { format!("at least {min}") };
            return Err(self.invalid(key, &format!("a finite number {lo} and at most {max}"), v));
        }
        Ok(())
    }

    /// Deserialize a top-level section (`hypervisor`, `vm`, `workload`) into the model's type.
    /// A missing section deserializes from an empty table, so `#[serde(default)]` fields work.
    pub fn section<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T, ScenarioError> {
        self.read.borrow_mut().insert(name.to_string());
        let v = self.doc.get(name).cloned().unwrap_or_else(|| toml::Value::Table(Default::default()));
        crate::scenario::file_from_value(v, self.file, name)
    }

    /// The scenario's `[[vm]]` list when the model takes exactly one VM.
    pub fn single_vm<T: serde::de::DeserializeOwned>(&self) -> Result<T, ScenarioError> {
        let mut vms: Vec<T> = self.section("vm")?;
        if vms.len() != 1 {
            return Err(self.invalid("vm", "exactly one [[vm]] table", format!("{} VMs", vms.len())));
        }
        Ok(vms.remove(0))
    }

    /// Check a `pin` list (`key`, e.g. `vm[0].pin`): one pCPU per vCPU, each on the platform.
    pub fn check_pins(&self, key: &str, pins: &[u32], vcpus: u32) -> Result<(), ScenarioError> {
        if pins.len() != vcpus as usize {
            return Err(self.invalid(key, &format!("one pCPU per vCPU ({vcpus} entries)"), format!("{} entries", pins.len())));
        }
        let cpus = self.platform.cpus;
        match pins.iter().enumerate().find(|(_, p)| **p >= cpus) {
            Some((i, p)) => Err(self.invalid(&format!("{key}[{i}]"), &format!("a pCPU below {cpus} (platform `{}` has {cpus} CPUs)", self.platform.name), p)),
            None => Ok(()),
        }
    }

    /// An "impossible value" error for `key`.
    pub fn invalid(&self, key: &str, expected: &str, got: impl std::fmt::Display) -> ScenarioError {
        ScenarioError::invalid(self.file, key, expected, got)
    }

    /// A platform lookup failure as a scenario error.
    pub fn platform_err(&self, e: PlatformError) -> ScenarioError {
        ScenarioError::Profile { file: self.file.into(), source: e }
    }
}

/// Options for running a prepared point.
pub struct RunOpts<'a> {
    /// Which sample traces to keep per class (`--trace N --trace-at WHICH`).
    pub traces: &'a crate::engine::TraceKeep,
    /// Called now and then with the number of work units done since the last call.
    pub progress: &'a (dyn Fn(u64) + Sync),
}

/// What running a point produced.
pub struct PointOutput {
    pub result: ConfigResult,
    /// Sample traces, at most `keep_traces` per class, labelled with their class.
    pub traces: Vec<Trace>,
    /// Simulated events processed (for `--stats`).
    pub events: u64,
}

/// A simulation failure at run time (a model invariant broke, a guest configuration is
/// unsatisfiable...). The message names what went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SimError(pub String);

/// A point ready to run.
pub trait PreparedPoint: Send {
    /// Work units `run` will report through `progress` (e.g. interrupts to simulate).
    fn work(&self) -> u64;
    fn run(self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError>;
}

/// A timed model.
pub trait Model: Sync {
    /// The name used in `scenario.model`.
    fn name(&self) -> &'static str;
    /// One line for `irqlab scenarios`.
    fn summary(&self) -> &'static str;
    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError>;
}

/// Look a model up by name.
pub fn find_model(name: &str) -> Option<&'static dyn Model> {
    crate::models::REGISTRY.iter().copied().find(|m| m.name() == name)
}

/// Names of all models, for error messages.
pub fn model_names() -> String {
    crate::models::REGISTRY.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
}

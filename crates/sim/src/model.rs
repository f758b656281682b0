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

/// What a model needs to prepare one point.
pub struct PointCtx<'a> {
    /// Scenario file name, for error messages.
    pub file: &'a str,
    pub point_name: &'a str,
    /// The scenario document with this point's overrides applied.
    pub doc: &'a toml::Table,
    pub platform: &'a Platform,
    pub seed: u64,
}

impl PointCtx<'_> {
    /// Deserialize a top-level section (`hypervisor`, `vm`, `workload`) into the model's type.
    /// A missing section deserializes from an empty table, so `#[serde(default)]` fields work.
    pub fn section<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T, ScenarioError> {
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
            Some((i, p)) => Err(self.invalid(
                &format!("{key}[{i}]"),
                &format!("a pCPU below {cpus} (platform `{}` has {cpus} CPUs)", self.platform.name),
                p,
            )),
            None => Ok(()),
        }
    }

    /// An "impossible value" error for `key`.
    pub fn invalid(&self, key: &str, expected: &str, got: impl std::fmt::Display) -> ScenarioError {
        ScenarioError::invalid(self.file, key, expected, got)
    }

    /// A platform lookup failure as a scenario error.
    pub fn platform_err(&self, e: PlatformError) -> ScenarioError {
        ScenarioError::Platform { file: self.file.into(), message: e.to_string() }
    }
}

/// Options for running a prepared point.
pub struct RunOpts<'a> {
    /// How many sample traces to keep per class (for `--trace N`).
    pub keep_traces: usize,
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

//! The run-level and configuration-level result records.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::breakdown::SegmentStat;
use crate::latency::LatencyClass;
pub use crate::provenance::Provenance;
pub use crate::reference::{ReferenceOutcome, ReferenceRole, ReferenceStatus};

/// Version of the JSON schema written by this crate. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Where the numbers come from. Reports label every figure with this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultKind {
    /// Model output whose costs come from published or guessed values.
    Predicted,
    /// Model output whose costs were fitted to the result it reproduces.
    Calibrated,
    /// Measured on a real host.
    Measured,
}

impl ResultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultKind::Predicted => "predicted",
            ResultKind::Calibrated => "calibrated",
            ResultKind::Measured => "measured",
        }
    }
}

/// Metadata describing one run: enough to reproduce it or to know what it means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// `irqlab <version>`.
    pub tool_version: String,
    /// Scenario name (the file stem for shipped scenarios, or `run-timer` etc. for measurements).
    pub scenario: String,
    /// Scenario description, one line.
    #[serde(default)]
    pub description: String,
    /// Base seed (points derive their own; see each config's `seed`).
    pub seed: u64,
    pub kind: ResultKind,
    /// Platform profile (model) or host description (measurement), key → value.
    pub platform: BTreeMap<String, String>,
    /// Every knob that applies to the whole run.
    pub knobs: BTreeMap<String, String>,
}

impl RunMeta {
    /// A run's metadata with a name, base seed and kind only (no description, platform or
    /// knobs; the tool version is `tool_version`): the base that examples and tests fill in with
    /// `RunMeta { platform, ..RunMeta::named(..) }`.
    pub fn named(tool_version: &str, scenario: &str, seed: u64, kind: ResultKind) -> RunMeta {
        RunMeta { tool_version: tool_version.into(), scenario: scenario.into(), description: String::new(), seed, kind, platform: BTreeMap::new(), knobs: BTreeMap::new() }
    }
}

/// A named scalar figure: throughput, a total, a ratio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Non-finite values are written as `"NaN"`, `"inf"`, `"-inf"` (see `float`).
    #[serde(with = "crate::float")]
    pub value: f64,
    pub unit: String,
}

/// The result of one configuration (one sweep point, one table row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ConfigResult {
    /// Row label, e.g. `vwfi=trap` or `x2apic cluster, pv-ipi`.
    pub name: String,
    /// The parameters that distinguish this configuration.
    pub params: BTreeMap<String, String>,
    /// Seed used for this configuration (derived from the run seed and `params`).
    #[serde(default)]
    pub seed: u64,
    /// Latency per interrupt class (`timer`, `ipi`, `device`, ...).
    pub classes: BTreeMap<String, LatencyClass>,
    /// Event counters: exits by reason, injections, doorbells, wake-ups...
    pub counters: BTreeMap<String, u64>,
    /// Scalar figures: throughput, totals, wall-clock times.
    pub figures: BTreeMap<String, Figure>,
    /// Per class: where the time went, segments in path order.
    pub breakdown: BTreeMap<String, Vec<SegmentStat>>,
    /// Free-text notes (e.g. "PV IPI unsupported on this host").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Set when this configuration failed; whatever was collected before the failure is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With `seeds = N > 1`: each statistic's median and range over the N seeds (the fields
    /// above are the first seed's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_spread: Option<crate::SeedSpread>,
    /// With `--seeds N` / `--repeat N` (N > 1): each repetition's summary and the pooled
    /// distribution (see `repetitions`). Absent in results that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<crate::Repetitions>,
    /// Kept sample traces (`irqlab sim --trace N`) and how they were chosen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<crate::SampleTrace>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_choice: Option<crate::TraceChoice>,
    /// The lab's path census (`irqlab-lab ... --census`): what the code executed per interrupt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub census: Option<crate::census::Census>,
}

impl ConfigResult {
    pub fn new(name: impl Into<String>) -> Self {
        ConfigResult { name: name.into(), ..Default::default() }
    }

    /// A configuration that failed before producing anything.
    pub fn failed(name: impl Into<String>, params: BTreeMap<String, String>, error: String) -> Self {
        ConfigResult { name: name.into(), params, error: Some(error), ..Default::default() }
    }

    pub fn add_counter(&mut self, key: &str, n: u64) {
        match self.counters.get_mut(key) {
            Some(v) => *v += n,
            None => {
                self.counters.insert(key.to_string(), n);
            }
        }
    }

    pub fn set_figure(&mut self, key: &str, value: f64, unit: &str) {
        self.figures.insert(key.to_string(), Figure { value, unit: unit.to_string() });
    }
}

/// A whole run: metadata plus one result per configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub meta: RunMeta,
    /// Who made this result, when and how. The only part of a result that is not a function of
    /// the scenario and seed: determinism is defined on the result without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    pub configs: Vec<ConfigResult>,
    /// The scenario's published figures checked against this result, fit and held-out apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<ReferenceOutcome>,
    /// The questions the scenario asks of this result (`[[question]]`); the answer is computed
    /// from the configurations when shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<crate::Question>,
}

impl RunResult {
    pub fn new(meta: RunMeta) -> Self {
        RunResult { schema_version: SCHEMA_VERSION, meta, provenance: None, configs: Vec::new(), references: Vec::new(), questions: Vec::new() }
    }

    /// Figure name → its unit, the first unit seen (a name has one unit within a run).
    pub fn figure_units(&self) -> std::collections::BTreeMap<String, String> {
        let mut units = std::collections::BTreeMap::new();
        for c in &self.configs {
            for (k, f) in &c.figures {
                units.entry(k.clone()).or_insert_with(|| f.unit.clone());
            }
        }
        units
    }

    /// Why this result's numbers are emulation, not hardware latency, if they are: the Arm lab's
    /// label (`platform.lab`, written by irqlab-lab on a measured result) or a lab console
    /// import's host (`platform.host` starting `QEMU TCG`). `None` for a real host or a model.
    pub fn emulation(&self) -> Option<&str> {
        let p = &self.meta.platform;
        p.get("lab").or_else(|| p.get("host").filter(|h| h.starts_with("QEMU TCG"))).map(String::as_str)
    }

    /// The same result without its provenance: what must be byte-identical between two runs of
    /// the same scenario and seed, however and whenever they were started.
    pub fn without_provenance(&self) -> RunResult {
        RunResult { provenance: None, ..self.clone() }
    }

    /// Configurations that failed, with their errors.
    pub fn failures(&self) -> impl Iterator<Item = (&str, &str)> {
        self.configs.iter().filter_map(|c| c.error.as_deref().map(|e| (c.name.as_str(), e)))
    }
}

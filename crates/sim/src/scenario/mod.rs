//! Scenario files: platform profile + hypervisor configuration + VMs + workload + optional sweep.
//!
//! A scenario is TOML with these top-level tables:
//! - `[scenario]`: `model` (which timed model runs it), `description`, `seed`, `reproduces`;
//! - `[platform]`: `profile` (a shipped profile name or a path to a profile file) and optional
//!   `[platform.costs.*]` / `[platform.params.*]` overrides, each with its own source;
//! - `[hypervisor]`, `[[vm]]`, `[workload]`: read by the model, which rejects unknown keys;
//! - `[[configs]]`: named configurations, each a `set` of dotted-key overrides (table rows);
//! - `[sweep]`: axes, dotted key → list of values; points are the cartesian product, crossed
//!   with the configurations;
//! - `[[reference]]`: published figures this scenario reproduces, with a tolerance;
//! - `[[question]]`: the question it answers (parameter under study, baseline → variants,
//!   groups, statistics); see [`question`].
//!
//! Each point's document is the scenario with its overrides applied; the model deserialises its
//! sections from it. Every point is prepared (and so validated) before any runs: a typo or an
//! impossible value anywhere makes the whole input unusable, with one error naming the key.

mod error;
mod file;
pub mod overrides;
pub mod question;
mod reference;
mod shipped;
mod sweep;

pub use error::ScenarioError;
pub(crate) use file::from_value as file_from_value;
pub use file::{Scenario, ScenarioHeader, DEFAULT_MAX_POINTS, MAX_SCENARIO_BYTES};
pub use overrides::parse_set;
pub use question::check_questions;
pub use reference::{check_references, Reference, LATENCY_STATS};
pub use shipped::{shipped_scenario, SHIPPED_SCENARIOS};
pub use sweep::{get_path, set_path, show as show_value, Axes, PathError, Point};

/// The did-you-mean hint every key reader gives: the shared vocabulary's.
pub use results::vocab::did_you_mean;

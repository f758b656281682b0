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
//! - `[[reference]]`: published figures this scenario reproduces, with a tolerance.
//!
//! Each point's document is the scenario with its overrides applied; the model deserialises its
//! sections from it, so a bad value in one point fails that point only.

mod error;
mod file;
mod reference;
mod shipped;
mod sweep;

pub use error::ScenarioError;
pub use file::{Scenario, ScenarioHeader};
pub use reference::{check_references, RefCheck, Reference};
pub use shipped::{shipped_scenario, SHIPPED_SCENARIOS};
pub use sweep::{set_path, Point};
pub(crate) use file::from_value as file_from_value;

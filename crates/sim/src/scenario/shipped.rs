//! Scenarios shipped in `scenarios/` at the repository root, compiled into the binary.

/// (name, TOML text) of every shipped scenario, sorted by name.
pub const SHIPPED_SCENARIOS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_scenarios.rs"));

/// The text of a shipped scenario.
pub fn shipped_scenario(name: &str) -> Option<&'static str> {
    SHIPPED_SCENARIOS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

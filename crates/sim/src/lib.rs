//! # sim — the deterministic model of virtual interrupt delivery
//!
//! `engine` provides time (integer picoseconds), the event queue, seeded per-component random
//! streams, cost distributions and per-interrupt traces. `arch` holds the interrupt hardware as
//! pure state machines (no time inside): commands and register writes in, effects out. `hyp`
//! holds hypervisor policies. `platform` loads cost profiles (every cost names its source),
//! `scenario` parses scenario files and expands sweeps, and `models` are the timed simulations
//! that combine all of these into a [`results::ConfigResult`]. `runner` runs a scenario's points;
//! `session` is `irqlab sim`'s work around it (the command line's selection, the run's details).
#![forbid(unsafe_code)]

pub mod arch;
pub mod calibrate;
pub mod census;
pub mod engine;
pub mod fit;
pub mod hyp;
pub mod model;
pub mod models;
pub mod platform;
pub mod runner;
pub mod scenario;
pub mod session;
pub mod shard;

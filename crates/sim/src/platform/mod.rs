//! Platform cost profiles: data files (TOML) where every cost and parameter names its source.
//!
//! A profile describes one machine (CPU frequency, CPU count, interrupt-controller facts) and the
//! cost of every step a model charges time for, as a [`CostDist`](crate::engine::CostDist). Each
//! entry must say where it comes from (`source`) and on what basis (`basis`: published,
//! measured, derived, calibrated or guess), so a reader can tell a reproduced number from a fitted
//! one. Shipped profiles live in `crates/sim/platforms/` and are compiled into the binary; a
//! scenario may override single costs (e.g. calibrated ones) with their own source.
//!
//! A profile may also carry a per-core timing model (`[timing]`, [`timing`]): CPI by kind of code,
//! GIC access latency by register class, exception entry and return, a cold-cache term — what
//! turns a path the lab's census counted ([`crate::census`]) into time on this board.

mod cost_spec;
mod profile;
pub mod timing;

pub use cost_spec::{Basis, CostSpec, ParamSpec};
pub use profile::{Cost, Param, Platform, PlatformError, SHIPPED_PROFILES};
pub use timing::{CoreTiming, PathCounts, PathTime};

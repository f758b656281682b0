//! The discrete-event engine: time, the event queue, seeded randomness, cost distributions and
//! per-interrupt traces. Nothing here knows about interrupts; models build on it.

pub mod dist;
pub mod exp;
pub mod queue;
pub mod rng;
pub mod time;
pub mod trace;

pub use dist::{CostDist, DistError};
pub use queue::EventQueue;
pub use rng::{RngStreams, SimRng};
pub use time::SimTime;
pub use trace::{Trace, TraceSet};

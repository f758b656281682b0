//! The discrete-event engine: time, the event queue, seeded randomness, cost distributions and
//! per-interrupt traces. Nothing here knows about interrupts; models build on it.

pub mod dist;
pub mod exp;
pub mod normal;
pub mod queue;
pub mod rng;
pub mod time;
pub mod trace;
pub mod trace_pick;

pub use dist::{CostDist, DistError};
pub use queue::EventQueue;
pub use rng::{RngStreams, SimRng};
pub use time::SimTime;
pub use trace::{Trace, TraceSet};
pub use trace_pick::{PickRule, Picker, TraceKeep, TracePick, TracePickError};

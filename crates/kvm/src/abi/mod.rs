//! The guest contract, the lowest layer of the crate: the shared page's slots, the sample ring,
//! benchmark and completion codes (`contract.rs`, which `build.rs` also includes to generate the
//! guest assembly's constants), and [`SharedPage`], the host's view of that page. The page trait
//! lives here rather than with the run loop so that the architectures (which implement it) and
//! the drivers (which read it) both import it from below.
include!("contract.rs");

mod page;
pub use page::{SharedPage, SlotError};

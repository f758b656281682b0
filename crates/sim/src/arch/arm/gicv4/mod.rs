//! GICv4.0 / GICv4.1 direct vLPI injection: the redistributors and the system around the ITS
//! (docs/sources.md B.2–B.4), as pure state machines: register writes, commands and device
//! events in, [`Effect`]s and [`Violation`](crate::arch::arm::its::Violation)s out. No time.
//!
//! - [`redistributor`]: physical LPIs: configuration (cached, INV refreshes), pending tables;
//! - [`vpe_residency`]: GICR_VPROPBASER / GICR_VPENDBASER, Valid / Dirty / PendingLast / DB;
//! - [`doorbell`]: the v4.0 doorbell proxy device versus v4.1 INVDB;
//! - [`vmovp_order`]: the cross-ITS VMOVP SeqNum / ITSList rule;
//! - [`system`] + `vlpi`: [`GicSystem`], the hardware: ITSs + redistributors + memory;
//! - [`kvm_driver`]: [`KvmGicV4`], what Linux/KVM do with it — the API for timed models
//!   (`make_resident`, `make_non_resident`, `deliver`, `map_vlpi`);
//! - [`check`] + [`script`]: the text stream format of `irqlab its-check` and its checker.
pub mod check;
pub mod doorbell;
pub mod effect;
pub mod kvm_driver;
pub mod redistributor;
pub mod script;
pub mod system;
mod vlpi;
pub mod vmovp_order;
pub mod vpe_residency;

pub use effect::{DropReason, Effect, NoDoorbell};
pub use kvm_driver::{DriverVpe, KvmGicV4, Outcome};
pub use system::{CommandReport, GicConfig, GicSystem, VpeState};

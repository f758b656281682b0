//! `kvm-ipi`: the IPI microbenchmark (rows Dry-run, Self-IPI, Normal IPI, Broadcast IPI,
//! Broadcast lock; Yury Norov's module as quoted by the KVM PV IPI series, S2, the KVM PV IPI series, Wanpeng Li, kvm list, 2018) on a KVM
//! x86 guest, with the sender's path chosen by the guest's APIC mode and whether it uses the PV
//! IPI hypercall.
//!
//! Function and time stay apart: which ICR writes or hypercalls a multicast needs comes from
//! `arch::x86::destination::icr_writes` and `arch::x86::pv_ipi::pack`; what a destination's
//! posted-interrupt descriptor and LAPIC do comes from `posted_interrupt` and `lapic`; whether a
//! target is still halt-polling comes from KVM's grow/shrink rule in `hyp::halt_poll`
//! (`hypervisor.halt_poll`, a kernel's defaults; `fixed` for a window that never adapts). This
//! module only charges the platform's costs along those paths (`bench.rs`) and, in Broadcast lock,
//! queues handlers on one spinlock (`lock.rs`).

mod bench;
mod config;
mod icr_exit;
mod lock;

use crate::model::{Model, PointCtx, PreparedPoint};
use crate::scenario::ScenarioError;

pub use config::Row;

pub struct KvmIpi;

impl Model for KvmIpi {
    fn name(&self) -> &'static str {
        "kvm-ipi"
    }
    fn summary(&self) -> &'static str {
        "IPI microbenchmark on a KVM x86 guest: ICR-write exits per destination/cluster vs the PV IPI hypercall"
    }
    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError> {
        Ok(Box::new(config::prepare(ctx, self.name())?))
    }
}

//! One path, one model (issue 43, item 3): the handler Xen runs for a guest's timer interrupt,
//! the one segment the S3 model (`xen-arm`, scenario `xen-arm-zynq-timer`) and the dom0less model
//! (`xen-arm-dom0less`) both charge for it.
//!
//! Both models take the interrupt of a running vCPU the same way — arrival (`timer_irq_raise`),
//! trap to EL2 (`trap_to_el2`), this handler, one list-register write, `eret` — and differ only in
//! the timer and in where the benchmark stops its clock:
//! - the **physical** timer (S3's tbm) is emulated by Xen: `htimer_interrupt` raises
//!   TIMER_SOFTIRQ → `timer_softirq_action` → `vtimer.c:phys_timer_expired` → `vgic_inject_irq`;
//!   the handler is the profile's `xen_irq_handler` (fitted on S3's table);
//! - the **virtual** timer's PPI 27 is handled by `time.c:vtimer_interrupt`, which calls
//!   `vgic_inject_irq` at once: the same handler less the softirq share,
//!   `params.vtimer_softirq_share` (a guess from reading the code until the lab's census counts
//!   both paths: issue 42's `xen timer` classes; the share is then one minus the ratio of their
//!   EL2 instructions).
//! - endpoints: S3's tbm stops at its IAR read (`guest_ack`), the dom0less bench at the handler's
//!   first instruction (`guest_exception_entry`): segments after `eret`, named in each model.
//!
//! Before this module the dom0less model scaled the handler itself and the S3 model charged the
//! physical handler to every timer, virtual ones included, so the two gave 1,449 and 1,834 ns for
//! what the issue read as the same path (a test now runs both on one virtual timer:
//! `tests/one_path.rs`).
use crate::arch::arm::generic_timer::TimerKind;
use crate::engine::CostDist;
use crate::model::PointCtx;
use crate::scenario::ScenarioError;

/// The handler segment of a timer interrupt: its trace name and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct TimerHandler {
    pub name: &'static str,
    pub cost: CostDist,
}

/// Trace name of the physical timer's handler segment.
pub const PHYS: &str = "xen-irq-handler";
/// Trace name of the virtual timer's handler segment.
pub const VIRT: &str = "vtimer_interrupt+vgic_inject_irq";

/// The handler for `kind`, from `handler` (the loaded, DEBUG-scaled `xen_irq_handler`).
/// The virtual timer reads `params.vtimer_softirq_share` (a fraction 0 ≤ s < 1).
pub fn timer_handler(ctx: &PointCtx, model: &str, handler: &CostDist, kind: TimerKind) -> Result<TimerHandler, ScenarioError> {
    match kind {
        TimerKind::Physical => Ok(TimerHandler { name: PHYS, cost: handler.clone() }),
        TimerKind::Virtual => {
            let share = ctx.platform.param("vtimer_softirq_share", model).map_err(|e| ctx.platform_err(e))?;
            if !(0.0..1.0).contains(&share) {
                return Err(ctx.invalid("platform.params.vtimer_softirq_share", "a fraction from 0 to below 1", share));
            }
            Ok(TimerHandler { name: VIRT, cost: handler.scaled(1.0 - share) })
        }
    }
}

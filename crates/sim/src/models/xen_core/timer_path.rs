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

/// The census path class of Xen's timer interrupt to a running vCPU (issue 42's lab run).
pub const CENSUS_CLASS: &str = "xen-vtimer-running";

/// Xen's EL2 entry code (xen/arch/arm/arm64/entry.S: the vectors, register save and restore):
/// timed at `cpi.hyp_entry`, the rest of EL2 as C.
pub const XEN_ENTRY_SYMBOLS: &[&str] = &["hyp_irq", "hyp_sync", "guest_irq", "guest_sync", "guest_sync_slowpath", "return_from_trap", "return_to_new_vcpu64"];

/// The profile's virtual-timer path from the exception to the guest's vector (`path`: trap,
/// the handler's cost, one list-register write, eret, guest exception entry; mean ns, warm) against the census's
/// count of the same path timed on the board: `Err` with both figures when the profile's path
/// lies outside the time of the census's own spread (issue 43 item 2).
pub fn check_against_census(
    path: &[&CostDist],
    census: &crate::census::Census,
    gic: results::vocab::Gic,
    timing: &crate::platform::CoreTiming,
) -> Result<crate::census::Spread, String> {
    let spec = crate::census::PathSpec { class: CENSUS_CLASS, gic, enters_el2: true, entry_symbols: XEN_ENTRY_SYMBOLS };
    let seg = crate::census::Segment::new(census, &spec, timing).map_err(|e| e.to_string())?;
    let model: f64 = path.iter().map(|d| d.mean_ns()).sum();
    if seg.spread.holds(model) {
        Ok(seg.spread)
    } else {
        Err(format!(
            "the profile's Xen vtimer path is {model:.0} ns; {} times it at {:.0} ns ({:.0}–{:.0} over its spread)",
            seg.provenance, seg.spread.median_ns, seg.spread.min_ns, seg.spread.max_ns
        ))
    }
}

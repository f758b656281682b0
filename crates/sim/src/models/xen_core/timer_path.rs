//! One path, one model (issue 43, items 2 and 3): the handler Xen runs for a guest's timer
//! interrupt, the one segment the S3 model (`xen-arm`, scenario `xen-arm-zynq-timer`) and the
//! dom0less model (`xen-arm-dom0less`) both charge for it.
//!
//! Both models take the interrupt of a running vCPU the same way — arrival (`timer_irq_raise`),
//! trap to EL2 (`trap_to_el2`), this handler, one list-register write, `eret` — and differ only in
//! the timer and in where the benchmark stops its clock:
//! - the **virtual** timer's PPI 27 is handled by `time.c:vtimer_interrupt`, which calls
//!   `vgic_inject_irq` at once. This path is the lab's census segment `xen-vtimer-running`
//!   ([`crate::census::segments`]: Debian's Xen 4.17, `vwfi=native`, class `timer`, 904
//!   instructions from the EL2 IRQ vector to the guest's vector), timed on the board's
//!   `[timing]`. The trap, LR write and eret keep their profile costs as trace segments; the
//!   handler is what the census's path leaves after them, so that the four add up to the census
//!   path (on average: the handler keeps the shape of `xen_irq_handler`'s distribution, scaled).
//!   A profile whose trap, LR write and eret alone exceed the census path is refused.
//! - the **physical** timer (S3's tbm) is emulated by Xen: `htimer_interrupt` raises
//!   TIMER_SOFTIRQ → `timer_softirq_action` → `vtimer.c:phys_timer_expired` → `vgic_inject_irq`;
//!   the handler is the profile's `xen_irq_handler`, fitted on S3's table. The lab's guest uses
//!   the virtual timer, so no census counts this path: it stays fitted.
//! - endpoints: S3's tbm stops at its IAR read (`guest_ack`), the dom0less bench at the handler's
//!   first instruction (`guest_exception_entry`): segments after `eret`, named in each model.
//!
//! Before the census, the virtual handler was the physical one less a guessed softirq share
//! (`params.vtimer_softirq_share`, 0.35); that guess is retired. Cold: the model's
//! `cold_factor` scales the derived handler as every other segment (the census's own cold term,
//! `timing.cold`, is reported in the segment, not charged), as before.
use super::XenCosts;
use crate::arch::arm::generic_timer::TimerKind;
use crate::census::{self, GicIf, Segment};
use crate::engine::CostDist;
use crate::hyp::debug_build::DebugBuild;
use crate::model::PointCtx;
use crate::scenario::ScenarioError;

/// The handler segment of a timer interrupt: its trace name and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct TimerHandler {
    pub name: &'static str,
    pub cost: CostDist,
    /// The census segment the cost was derived from (the virtual timer).
    pub census: Option<Segment>,
}

/// Trace name of the physical timer's handler segment.
pub const PHYS: &str = "xen-irq-handler";
/// Trace name of the virtual timer's handler segment.
pub const VIRT: &str = "vtimer_interrupt+vgic_inject_irq";

/// The census segment behind the virtual timer's path.
pub const CENSUS_SEGMENT: &str = "xen-vtimer-running";

/// The board's GIC CPU interface, for a census segment (results::vocab::Gic says which).
pub fn board_gic(ctx: &PointCtx) -> Result<GicIf, ScenarioError> {
    Ok(if super::config::gic_version(ctx)?.sysreg_cpu_interface() { GicIf::Sysreg } else { GicIf::Mmio })
}

/// The handler for `kind`: the physical timer's is `costs.handler` (the loaded, DEBUG-scaled
/// `xen_irq_handler`); the virtual timer's is the census path less `costs`' trap, LR write
/// and eret, scaled by the DEBUG multiplier (the census counted a release build).
pub fn timer_handler(ctx: &PointCtx, costs: &XenCosts, dbg: DebugBuild, kind: TimerKind) -> Result<TimerHandler, ScenarioError> {
    match kind {
        TimerKind::Physical => Ok(TimerHandler { name: PHYS, cost: costs.handler.clone(), census: None }),
        TimerKind::Virtual => {
            let seg = census::segments::timed(ctx, CENSUS_SEGMENT, board_gic(ctx)?)?;
            let cost = from_census(ctx, &seg, &[&costs.trap, &costs.lr_access, &costs.eret], &costs.handler, dbg.multiplier)?;
            Ok(TimerHandler { name: VIRT, cost, census: Some(seg) })
        }
    }
}

/// The cost of the part of census segment `seg` that a model's `around` segments (trap, LR
/// write, eret: profile costs kept in its trace) leave: `shape` scaled to that mean × `factor`
/// (the DEBUG multiplier). A profile whose `around` alone exceed the census path is refused.
pub fn from_census(ctx: &PointCtx, seg: &Segment, around: &[&CostDist], shape: &CostDist, factor: f64) -> Result<CostDist, ScenarioError> {
    let kept: f64 = around.iter().map(|d| d.mean_ns()).sum();
    let left = seg.warm.total_ns() - kept;
    if left <= 0.0 {
        return Err(ctx.invalid(
            "platform.costs.trap_to_el2",
            &format!(
                "profile segments around the census part ({kept:.0} ns together: trap, eret, LR write) shorter than the whole census path they are part of ({:.0} ns, {})",
                seg.warm.total_ns(),
                seg.provenance
            ),
            around.first().map_or(0.0, |d| d.mean_ns()),
        ));
    }
    Ok(shape.scaled(left * factor / shape.mean_ns()))
}

impl TimerHandler {
    /// The result notes naming the census segment behind this handler (none for the physical timer).
    pub fn census_notes(&self) -> Vec<String> {
        self.census.as_ref().map_or_else(Vec::new, |s| s.describe(CENSUS_SEGMENT))
    }
}

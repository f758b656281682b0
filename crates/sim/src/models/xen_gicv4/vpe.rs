//! The one delivery decision the timed model asks of the GIC: where does a vLPI for a vPE go?
//!
//! This is the seam to the functional ITS/GICv4 model (branch `its`, `arch/arm/its` and
//! `arch/arm/gicv4`): once that redistributor model lands, [`route`] becomes a call into it (a
//! GITS_TRANSLATER write whose effect is "vLPI pending at a resident vPE" / "doorbell LPI" /
//! "VPT bit only"). Until then it codes the rules the functional model implements, and nothing
//! else (no tables, no command queue):
//!
//! - architecture.md B.4: vPE resident on the target redistributor → set the VPT bit and raise
//!   the virtual IRQ: the vCPU takes the vLPI with no hypervisor involvement.
//! - B.2 (GICv4.1 schedule-out): a vCPU about to block (trapped WFI) is descheduled with DB set
//!   and PendingLast clear → a vLPI arriving while it is out raises its doorbell; a vCPU
//!   descheduled while runnable (preempted) gets PendingLast set and no doorbell: the vLPI waits
//!   in the VPT until the vPE is made resident again.

/// Residency of a vPE as the hypervisor left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residency {
    /// VPENDBASER.Valid with this vPE on its pCPU's redistributor.
    Resident,
    /// Scheduled out with DB = 1 (blocked in WFI).
    OutDoorbell,
    /// Scheduled out with DB = 0 (preempted, runnable).
    OutNoDoorbell,
}

/// What the GIC does with a vLPI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VlpiRoute {
    /// Delivered straight to the running vPE.
    Direct,
    /// VPT bit set and the vPE's doorbell raised as a physical LPI at its redistributor.
    Doorbell,
    /// VPT bit set only; taken when the vPE is next made resident.
    PendingInVpt,
}

/// The delivery decision (GICv4.1, one doorbell per vPE).
pub fn route(r: Residency) -> VlpiRoute {
    match r {
        Residency::Resident => VlpiRoute::Direct,
        Residency::OutDoorbell => VlpiRoute::Doorbell,
        Residency::OutNoDoorbell => VlpiRoute::PendingInVpt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residency_decides_the_route() {
        assert_eq!(route(Residency::Resident), VlpiRoute::Direct);
        assert_eq!(route(Residency::OutDoorbell), VlpiRoute::Doorbell);
        assert_eq!(route(Residency::OutNoDoorbell), VlpiRoute::PendingInVpt);
    }
}

//! Arm generic timer (one EL1 physical or virtual timer of one CPU), as a pure state machine,
//! and the hypervisor's forwarding decision for it.
//!
//! A timer fires when `CNT{P,V}CT >= CVAL` (ISTATUS = 1); it asserts its PPI when ENABLE = 1 and
//! IMASK = 0. PPIs: EL1 physical timer 30, EL1 virtual timer 27, EL2 physical timer 26
//! [spec, not re-read]. The virtual counter is the physical one minus `CNTVOFF`.
//!
//! Forwarding (S3, the Xen Project blog 'Xen on ARM interrupt latency', March 2017, docs/sources.md C):
//! - **Physical timer (the S3 setup)**: Xen traps the guest's CNTP_* accesses and emulates the
//!   timer with a hypervisor software timer; on expiry Xen's handler injects vPPI 30 with HW = 0
//!   (a purely virtual interrupt).
//! - **Virtual timer**: the guest owns CNTV_* directly (no trap to program it); the hardware PPI 27
//!   arrives at EL2 and the hypervisor injects it HW-mapped (HW = 1, pINTID 27), so the guest's
//!   deactivation deactivates the physical PPI without an exit. When the vCPU is not running the
//!   hypervisor must arm a software timer with the guest's CVAL to wake it.
use super::list_registers::LrFile;

pub const PPI_HYP_PHYS_TIMER: u32 = 26;
pub const PPI_VIRT_TIMER: u32 = 27;
pub const PPI_PHYS_TIMER: u32 = 30;

/// Which EL1 timer a guest uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerKind {
    Physical,
    Virtual,
}

/// `CNT{P,V}_CTL` + `CNT{P,V}_CVAL` of one timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GenericTimer {
    pub enable: bool,
    pub imask: bool,
    pub cval: u64,
    /// `CNTVOFF_EL2` (virtual timer only): virtual count = physical count − offset.
    pub offset: u64,
}

impl GenericTimer {
    /// Program a deadline (`CVAL`) and enable, unmasked — what tbm does every round.
    pub fn arm(&mut self, cval: u64) {
        self.cval = cval;
        self.enable = true;
        self.imask = false;
    }

    /// The counter as this timer sees it, from the physical count.
    pub fn count(&self, phys_count: u64) -> u64 {
        phys_count.wrapping_sub(self.offset)
    }

    /// ISTATUS: the compare condition holds (regardless of IMASK).
    pub fn istatus(&self, phys_count: u64) -> bool {
        self.enable && self.count(phys_count) >= self.cval
    }

    /// The interrupt output: ENABLE, condition met and not masked.
    pub fn asserted(&self, phys_count: u64) -> bool {
        self.istatus(phys_count) && !self.imask
    }

    /// Physical count at which the timer will fire (None when disabled or masked).
    pub fn fires_at(&self, phys_count_now: u64) -> Option<u64> {
        if !self.enable || self.imask {
            return None;
        }
        Some(self.cval.wrapping_add(self.offset).max(phys_count_now))
    }
}

/// How the hypervisor gets this timer's interrupt to the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forwarding {
    /// Guest writes to CVAL/CTL trap to the hypervisor (emulated physical timer).
    pub programming_traps: bool,
    /// The virtual INTID the guest sees.
    pub vintid: u32,
    /// Injected with HW = 1 and this pINTID (deactivation without exit).
    pub hw: Option<u32>,
}

/// The forwarding decision for `kind` (see the module comment).
pub fn forwarding(kind: TimerKind) -> Forwarding {
    match kind {
        TimerKind::Physical => Forwarding { programming_traps: true, vintid: PPI_PHYS_TIMER, hw: None },
        TimerKind::Virtual => Forwarding { programming_traps: false, vintid: PPI_VIRT_TIMER, hw: Some(PPI_VIRT_TIMER) },
    }
}

/// Inject the timer interrupt per its forwarding into a vCPU's list registers.
pub fn inject_timer(kind: TimerKind, lrs: &mut LrFile, priority: u8) -> super::list_registers::InjectOutcome {
    let f = forwarding(kind);
    lrs.inject(f.vintid, priority, f.hw, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::arm::list_registers::EoiEffect;
    use results::vocab::Gic;

    #[test]
    fn compare_istatus_imask() {
        let mut t = GenericTimer::default();
        assert!(!t.istatus(100), "disabled");
        t.arm(1000);
        assert!(!t.istatus(999));
        assert!(t.istatus(1000) && t.asserted(1000));
        t.imask = true;
        assert!(t.istatus(1000) && !t.asserted(1000));
        assert_eq!(t.fires_at(0), None);
        t.imask = false;
        assert_eq!(t.fires_at(10), Some(1000));
        assert_eq!(t.fires_at(2000), Some(2000), "already expired: fires at once");
    }

    #[test]
    fn virtual_timer_uses_offset() {
        let mut t = GenericTimer { offset: 500, ..Default::default() };
        t.arm(1000);
        assert!(!t.istatus(1499));
        assert!(t.istatus(1500));
        assert_eq!(t.fires_at(0), Some(1500));
    }

    #[test]
    fn physical_timer_is_emulated_virtual_is_hw_mapped() {
        let p = forwarding(TimerKind::Physical);
        assert!(p.programming_traps && p.hw.is_none() && p.vintid == 30);
        let v = forwarding(TimerKind::Virtual);
        assert!(!v.programming_traps && v.hw == Some(27));
        let mut lrs = LrFile::new(Gic::V2, 4);
        inject_timer(TimerKind::Virtual, &mut lrs, 0xa0);
        assert_eq!(lrs.guest_ack(), Some(27));
        assert_eq!(lrs.guest_eoi(27).unwrap(), vec![EoiEffect::DeactivatePhysical(27)]);
        inject_timer(TimerKind::Physical, &mut lrs, 0xa0);
        assert_eq!(lrs.guest_ack(), Some(30));
        assert_eq!(lrs.guest_eoi(30).unwrap(), vec![]);
    }
}

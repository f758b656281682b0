//! WFI/WFE handling policy (Xen's `vwfi=` option, plus the adaptive policy proposed in the
//! GICv4 discussion, S1, the GICv4 direct-LPI RFC for Xen on Arm, xen-devel, Feb 2026).
//!
//! - `trap` (Xen default): HCR_EL2.TWI/TWE = 1. A guest WFI traps; Xen blocks the vCPU and runs
//!   another one or idles the pCPU. An interrupt for the blocked vCPU must wake it: unblock,
//!   schedule, restore its context (the 4.85 µs row of S3).
//! - `native`: TWI/TWE = 0. The pCPU sleeps inside the guest's WFI and an interrupt wakes it
//!   directly (the 1.85 µs row of S3) — but the pCPU stays occupied by an idle vCPU while other
//!   vCPUs may be waiting for it (S1: slow boot with all vCPUs on one pCPU).
//! - `adaptive`: trap iff the pCPU has another runnable vCPU; re-evaluated whenever the pCPU's
//!   runqueue changes (enqueue on wake-up, dequeue on block or dispatch). When trapping turns on
//!   while the running vCPU sleeps natively in WFI, the hypervisor must kick it out of WFI (it is
//!   already executing on that pCPU to process the runqueue change, so the guest returns to its
//!   idle loop, re-executes WFI, which now traps, and blocks).
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vwfi {
    Trap,
    Native,
    Adaptive,
}

impl Vwfi {
    /// The switching rule: should WFI/WFE trap on a pCPU whose runqueue holds
    /// `other_runnable` runnable vCPUs besides the one running?
    pub fn traps(self, other_runnable: usize) -> bool {
        match self {
            Vwfi::Trap => true,
            Vwfi::Native => false,
            Vwfi::Adaptive => other_runnable > 0,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Vwfi::Trap => "trap",
            Vwfi::Native => "native",
            Vwfi::Adaptive => "adaptive",
        }
    }
}

/// What a re-evaluation asks the hypervisor to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TwiChange {
    /// Nothing changes.
    None,
    /// Write HCR_EL2.TWI/TWE (set = trap) for the running vCPU.
    Set(bool),
    /// Set TWI and kick the running vCPU out of its native WFI so it traps and blocks.
    SetAndKick,
}

/// Per-pCPU trap state under a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WfiTrapControl {
    pub policy: Vwfi,
    /// Current HCR_EL2.TWI for the running vCPU.
    pub trapping: bool,
    /// Number of TWI flips so far.
    pub switches: u64,
}

impl WfiTrapControl {
    pub fn new(policy: Vwfi) -> Self {
        // Adaptive starts untrapped: a pCPU with nothing else to run.
        WfiTrapControl { policy, trapping: policy.traps(0), switches: 0 }
    }

    /// Re-evaluate after the pCPU's runqueue changed. `current_in_native_wfi`: the running vCPU is
    /// sleeping in WFI inside the guest.
    pub fn reevaluate(&mut self, other_runnable: usize, current_in_native_wfi: bool) -> TwiChange {
        let want = self.policy.traps(other_runnable);
        if want == self.trapping {
            return TwiChange::None;
        }
        self.trapping = want;
        self.switches += 1;
        if want && current_in_native_wfi {
            TwiChange::SetAndKick
        } else {
            TwiChange::Set(want)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_policies_never_switch() {
        let mut t = WfiTrapControl::new(Vwfi::Trap);
        assert!(t.trapping);
        assert_eq!(t.reevaluate(0, false), TwiChange::None);
        assert_eq!(t.reevaluate(3, true), TwiChange::None);
        let mut n = WfiTrapControl::new(Vwfi::Native);
        assert!(!n.trapping);
        assert_eq!(n.reevaluate(5, true), TwiChange::None);
        assert_eq!(n.switches + t.switches, 0);
    }

    #[test]
    fn adaptive_traps_iff_other_runnable() {
        assert!(!Vwfi::Adaptive.traps(0));
        assert!(Vwfi::Adaptive.traps(1));
        assert!(Vwfi::Adaptive.traps(3));
        let mut a = WfiTrapControl::new(Vwfi::Adaptive);
        assert!(!a.trapping, "alone: native");
        // Another vCPU becomes runnable while the current one computes: just set TWI.
        assert_eq!(a.reevaluate(1, false), TwiChange::Set(true));
        assert_eq!(a.reevaluate(2, false), TwiChange::None, "still others: no flip");
        // The others block or get dispatched elsewhere: back to native.
        assert_eq!(a.reevaluate(0, false), TwiChange::Set(false));
        // A vCPU becomes runnable while the current one sleeps natively in WFI: kick it.
        assert_eq!(a.reevaluate(1, true), TwiChange::SetAndKick);
        assert_eq!(a.switches, 3);
    }
}

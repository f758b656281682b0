//! The local APIC timer in TSC-deadline mode, and the rule by which KVM serves an armed timer:
//! APIC-timer virtualization, the VMX-preemption timer, or a software hrtimer.
//!
//! Two parts, both without time:
//! - [`ApicTimer`]: the LVT timer register (LVTT) and IA32_TSC_DEADLINE as the guest sees them
//!   (Intel SDM vol. 3 §11.5.4.1 [spec, not re-read]): writes to the deadline MSR are ignored
//!   outside TSC-deadline mode, writing 0 disarms, the timer disarms itself when it fires, a
//!   masked LVTT fires without delivering, and changing the mode disarms.
//! - [`serve`]: which mechanism delivers the timer, with every fallback of docs/sources.md D.6
//!   (Intel ISE 319433-059 ch. 8; KVM RFC "VMX APIC timer virtualization", Feb 2026): the
//!   hardware handles only TSC-deadline mode, not a masked LVTT, not a blocked vCPU (KVM arms a
//!   software timer with the latest deadline to wake it), and not L1's timer while L2 runs.
//!   Halting always switches to the software timer (KVM `vcpu_block()` switches from the
//!   hypervisor timer before halt-polling: the preemption timer only counts in guest mode).

use serde::Deserialize;

/// LVTT timer mode, bits 18:17 (SDM Table 11-2 [spec, not re-read]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimerMode {
    OneShot,
    Periodic,
    TscDeadline,
}

/// A bad LVTT value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApicTimerError {
    /// LVTT mode 11b is reserved.
    #[error("LVT timer value {0:#x}: mode bits 18:17 = 11b are reserved")]
    ReservedMode(u32),
    /// Vectors 0–15 are illegal for the timer.
    #[error("LVT timer vector {0} is illegal (0-15 are reserved)")]
    IllegalVector(u8),
}

/// The LVT timer register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lvtt {
    pub vector: u8,
    /// Bit 16.
    pub masked: bool,
    pub mode: TimerMode,
}

impl Lvtt {
    pub fn deadline(vector: u8) -> Lvtt {
        Lvtt { vector, masked: false, mode: TimerMode::TscDeadline }
    }

    /// Decode a register value (x2APIC MSR 0x832 / xAPIC offset 0x320).
    pub fn decode(raw: u32) -> Result<Lvtt, ApicTimerError> {
        let mode = match (raw >> 17) & 3 {
            0 => TimerMode::OneShot,
            1 => TimerMode::Periodic,
            2 => TimerMode::TscDeadline,
            _ => return Err(ApicTimerError::ReservedMode(raw)),
        };
        let vector = raw as u8;
        if vector < 16 {
            return Err(ApicTimerError::IllegalVector(vector));
        }
        Ok(Lvtt { vector, masked: raw >> 16 & 1 == 1, mode })
    }

    pub fn encode(&self) -> u32 {
        let mode = match self.mode {
            TimerMode::OneShot => 0,
            TimerMode::Periodic => 1,
            TimerMode::TscDeadline => 2,
        };
        self.vector as u32 | (self.masked as u32) << 16 | mode << 17
    }
}

/// What a guest write to IA32_TSC_DEADLINE did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadlineWrite {
    Armed,
    /// Writing 0 disarms.
    Disarmed,
    /// Not in TSC-deadline mode: the write is ignored.
    Ignored,
}

/// A timer expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expiry {
    /// The vector delivered, or `None` when LVTT is masked (the timer still fires and disarms).
    pub vector: Option<u8>,
}

/// LVTT + IA32_TSC_DEADLINE of one vCPU. `deadline == 0` is disarmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApicTimer {
    pub lvtt: Lvtt,
    pub deadline: u64,
}

impl ApicTimer {
    pub fn new(lvtt: Lvtt) -> Self {
        ApicTimer { lvtt, deadline: 0 }
    }

    /// Guest writes LVTT; a mode change disarms the timer.
    pub fn write_lvtt(&mut self, raw: u32) -> Result<(), ApicTimerError> {
        let new = Lvtt::decode(raw)?;
        if new.mode != self.lvtt.mode {
            self.deadline = 0;
        }
        self.lvtt = new;
        Ok(())
    }

    /// Guest writes IA32_TSC_DEADLINE.
    pub fn write_deadline(&mut self, tsc: u64) -> DeadlineWrite {
        if self.lvtt.mode != TimerMode::TscDeadline {
            return DeadlineWrite::Ignored;
        }
        self.deadline = tsc;
        if tsc == 0 {
            DeadlineWrite::Disarmed
        } else {
            DeadlineWrite::Armed
        }
    }

    pub fn armed(&self) -> bool {
        self.deadline != 0
    }

    /// Advance to `now` (guest TSC): fires once when the deadline has passed, then disarms.
    pub fn poll(&mut self, now: u64) -> Option<Expiry> {
        if self.deadline == 0 || now < self.deadline {
            return None;
        }
        self.deadline = 0;
        Some(Expiry { vector: (!self.lvtt.masked).then_some(self.lvtt.vector) })
    }
}

/// APIC-timer virtualization on the host: off, exposed to L1 only, or also emulated by L0 for
/// L1 so that L1's KVM uses it for L2 ("nested").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimerVirt {
    Off,
    L1Only,
    Nested,
}

/// Guest level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    L1,
    L2,
}

/// Which mechanism serves an armed timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// APIC-timer virtualization: no exit to arm, no exit on expiry while the vCPU runs.
    TimerVirt,
    /// VMX-preemption timer: an exit on expiry, handled on KVM's fastpath.
    PreemptionTimer,
    /// Host hrtimer: expiry interrupts the host; KVM kicks or wakes the vCPU.
    Hrtimer,
}

/// Why the hardware feature does not serve this timer (docs/sources.md D.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// The feature is not available to this timer's owner (off, or `l1-only` for an L2 timer).
    FeatureUnavailable,
    /// LVTT in one-shot or periodic mode: the hardware handles only TSC-deadline.
    NotDeadlineMode,
    /// LVTT masked.
    Masked,
    /// The vCPU is blocked (HLT): a software timer armed with the latest deadline wakes it.
    VcpuBlocked,
    /// L1's timer is armed while its L2 runs: the VMCS fields belong to L2.
    L2Running,
}

/// Where the timer's owner is when the timer must be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The timer of the guest at this level, which is running (in guest mode).
    Running(Level),
    /// The timer of the guest at this level, whose vCPU is halted/blocked.
    Blocked(Level),
    /// L1's own timer while L1 runs its L2.
    L1UnderL2,
}

/// The host's capabilities relevant to the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostTimer {
    pub timer_virt: TimerVirt,
    /// kvm_intel `preemption_timer` usable.
    pub preemption_timer: bool,
}

/// How the timer is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Serve {
    pub backend: Backend,
    pub fallback: Option<Fallback>,
}

impl Serve {
    /// Does the owner's WRMSR(IA32_TSC_DEADLINE) exit? Only the hardware feature avoids it.
    pub fn arm_exits(&self) -> bool {
        self.backend != Backend::TimerVirt
    }
}

/// Whether the feature can serve a timer owned by `level` at all.
pub fn feature_for(level: Level, tv: TimerVirt) -> bool {
    match (level, tv) {
        (_, TimerVirt::Off) => false,
        (Level::L1, _) => true,
        (Level::L2, TimerVirt::L1Only) => false,
        (Level::L2, TimerVirt::Nested) => true,
    }
}

/// Decide the backend for `timer` owned as `owner` (rules in D.6 order; the first that applies
/// names the fallback). Without the feature, KVM uses the preemption timer when it can and the
/// vCPU is in guest mode, else the hrtimer; a blocked vCPU always gets the hrtimer.
pub fn serve(timer: &ApicTimer, owner: Owner, host: HostTimer) -> Serve {
    let level = match owner {
        Owner::Running(l) | Owner::Blocked(l) => l,
        Owner::L1UnderL2 => Level::L1,
    };
    let blocked = matches!(owner, Owner::Blocked(_));
    let fallback = if !feature_for(level, host.timer_virt) {
        Some(Fallback::FeatureUnavailable)
    } else if timer.lvtt.mode != TimerMode::TscDeadline {
        Some(Fallback::NotDeadlineMode)
    } else if timer.lvtt.masked {
        Some(Fallback::Masked)
    } else if blocked {
        Some(Fallback::VcpuBlocked)
    } else if owner == Owner::L1UnderL2 {
        Some(Fallback::L2Running)
    } else {
        None
    };
    let backend = match fallback {
        None => Backend::TimerVirt,
        Some(_) if blocked => Backend::Hrtimer,
        Some(_) if host.preemption_timer => Backend::PreemptionTimer,
        Some(_) => Backend::Hrtimer,
    };
    Serve { backend, fallback }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ON: HostTimer = HostTimer { timer_virt: TimerVirt::Nested, preemption_timer: true };

    fn deadline_timer() -> ApicTimer {
        let mut t = ApicTimer::new(Lvtt::deadline(0xEC));
        t.write_deadline(1000);
        t
    }

    #[test]
    fn lvtt_round_trip_and_reserved_mode() {
        let l = Lvtt { vector: 0xEC, masked: true, mode: TimerMode::TscDeadline };
        assert_eq!(l.encode(), 0xEC | 1 << 16 | 2 << 17);
        assert_eq!(Lvtt::decode(l.encode()), Ok(l));
        assert_eq!(Lvtt::decode(0xEC | 3 << 17), Err(ApicTimerError::ReservedMode(0xEC | 3 << 17)));
        assert_eq!(Lvtt::decode(0x05), Err(ApicTimerError::IllegalVector(5)));
        assert_eq!(Lvtt::decode(0x40 | 1 << 17).unwrap().mode, TimerMode::Periodic);
    }

    #[test]
    fn deadline_msr_semantics() {
        let mut t = ApicTimer::new(Lvtt::decode(0xEC).unwrap()); // one-shot
        assert_eq!(t.write_deadline(500), DeadlineWrite::Ignored);
        assert!(!t.armed());
        t.write_lvtt(0xEC | 2 << 17).unwrap();
        assert_eq!(t.write_deadline(500), DeadlineWrite::Armed);
        assert_eq!(t.poll(499), None);
        assert_eq!(t.poll(500), Some(Expiry { vector: Some(0xEC) }));
        assert_eq!(t.poll(600), None, "fires once, then disarmed");
        t.write_deadline(700);
        assert_eq!(t.write_deadline(0), DeadlineWrite::Disarmed);
        assert_eq!(t.poll(800), None);
        // Masked: fires (and disarms) without a vector.
        t.write_lvtt(0xEC | 1 << 16 | 2 << 17).unwrap();
        t.write_deadline(900);
        assert_eq!(t.poll(900), Some(Expiry { vector: None }));
        // A mode change disarms.
        t.write_deadline(1000);
        t.write_lvtt(0xEC | 1 << 17).unwrap();
        assert!(!t.armed());
    }

    #[test]
    fn feature_serves_a_running_deadline_timer_without_exits() {
        let s = serve(&deadline_timer(), Owner::Running(Level::L1), ON);
        assert_eq!(s, Serve { backend: Backend::TimerVirt, fallback: None });
        assert!(!s.arm_exits());
        let s = serve(&deadline_timer(), Owner::Running(Level::L2), ON);
        assert_eq!(s.backend, Backend::TimerVirt, "nested: L0 emulates the feature so L2's timer is in hardware");
    }

    #[test]
    fn fallback_feature_off_and_l1_only_for_l2() {
        let s = serve(&deadline_timer(), Owner::Running(Level::L1), HostTimer { timer_virt: TimerVirt::Off, preemption_timer: true });
        assert_eq!((s.backend, s.fallback), (Backend::PreemptionTimer, Some(Fallback::FeatureUnavailable)));
        assert!(s.arm_exits());
        let l1only = HostTimer { timer_virt: TimerVirt::L1Only, preemption_timer: true };
        assert_eq!(serve(&deadline_timer(), Owner::Running(Level::L1), l1only).backend, Backend::TimerVirt);
        let s = serve(&deadline_timer(), Owner::Running(Level::L2), l1only);
        assert_eq!(s.fallback, Some(Fallback::FeatureUnavailable));
        let no_pt = HostTimer { timer_virt: TimerVirt::Off, preemption_timer: false };
        assert_eq!(serve(&deadline_timer(), Owner::Running(Level::L1), no_pt).backend, Backend::Hrtimer);
    }

    #[test]
    fn fallback_one_shot_and_periodic_modes() {
        for raw in [0xECu32, 0xEC | 1 << 17] {
            let t = ApicTimer::new(Lvtt::decode(raw).unwrap());
            let s = serve(&t, Owner::Running(Level::L1), ON);
            assert_eq!((s.backend, s.fallback), (Backend::PreemptionTimer, Some(Fallback::NotDeadlineMode)));
        }
    }

    #[test]
    fn fallback_masked_lvtt() {
        let mut t = deadline_timer();
        t.lvtt.masked = true;
        let s = serve(&t, Owner::Running(Level::L1), ON);
        assert_eq!((s.backend, s.fallback), (Backend::PreemptionTimer, Some(Fallback::Masked)));
    }

    #[test]
    fn fallback_blocked_vcpu_gets_the_software_timer() {
        for host in [ON, HostTimer { timer_virt: TimerVirt::Off, preemption_timer: true }] {
            for level in [Level::L1, Level::L2] {
                let s = serve(&deadline_timer(), Owner::Blocked(level), host);
                assert_eq!(s.backend, Backend::Hrtimer, "{host:?} {level:?}");
            }
        }
        assert_eq!(serve(&deadline_timer(), Owner::Blocked(Level::L1), ON).fallback, Some(Fallback::VcpuBlocked));
    }

    #[test]
    fn fallback_l1_timer_while_l2_runs() {
        let s = serve(&deadline_timer(), Owner::L1UnderL2, ON);
        assert_eq!((s.backend, s.fallback), (Backend::PreemptionTimer, Some(Fallback::L2Running)));
        let s = serve(&deadline_timer(), Owner::L1UnderL2, HostTimer { timer_virt: TimerVirt::L1Only, preemption_timer: false });
        assert_eq!((s.backend, s.fallback), (Backend::Hrtimer, Some(Fallback::L2Running)));
    }
}

//! VMX posted-interrupt descriptor and the sender protocol (docs/sources.md D.2; Linux
//! `arch/x86/include/asm/posted_intr.h`, `arch/x86/kvm/vmx/posted_intr.c`).

use super::lapic::{Lapic, VecSet};

/// Where the target vCPU is when an interrupt is posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VcpuState {
    /// In guest mode on its pCPU.
    InGuest,
    /// Runnable or in the host (not in guest mode, not blocked).
    InHost,
    /// Preempted: SN set, no notification.
    Preempted,
    /// Halted and blocked: NV = wake-up vector, NDST = the pCPU it blocked on.
    Blocked,
}

/// What the sender must do after posting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostEffect {
    /// The vector was already in PIR: nothing to do.
    AlreadyPending,
    /// ON was already set: a notification is in flight.
    NotificationPending,
    /// Send the notification vector to the pCPU: the CPU merges PIR into vIRR, no VM exit.
    NotifyInGuest,
    /// Kick the vCPU; the next VM entry syncs PIR → IRR.
    KickToEntry,
    /// Suppressed (SN): recorded only; synced when the vCPU is scheduled.
    Suppressed,
    /// The wake-up vector fires on NDST; its handler wakes the blocked vCPU.
    WakeupVector,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PiDesc {
    pub pir: VecSet,
    /// Outstanding notification.
    pub on: bool,
    /// Suppress notification.
    pub sn: bool,
}

impl PiDesc {
    /// The sender side: test-and-set the PIR bit, then ON, then notify according to state.
    pub fn post(&mut self, vector: u8, state: VcpuState) -> PostEffect {
        if !self.pir.set(vector) {
            return PostEffect::AlreadyPending;
        }
        self.sn = state == VcpuState::Preempted;
        if self.sn {
            return PostEffect::Suppressed;
        }
        if self.on {
            return PostEffect::NotificationPending;
        }
        self.on = true;
        match state {
            VcpuState::InGuest => PostEffect::NotifyInGuest,
            VcpuState::InHost => PostEffect::KickToEntry,
            VcpuState::Blocked => PostEffect::WakeupVector,
            VcpuState::Preempted => unreachable!(),
        }
    }

    /// Merge PIR into the APIC's IRR and clear ON (hardware on notification, KVM on entry).
    pub fn sync(&mut self, apic: &mut Lapic) {
        apic.irr.drain_into(&mut self.pir);
        self.on = false;
    }

    /// Before blocking: a vCPU with ON set must not block (an interrupt is already posted).
    pub fn may_block(&self) -> bool {
        !self.on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sender_protocol() {
        let mut d = PiDesc::default();
        assert_eq!(d.post(0x40, VcpuState::InGuest), PostEffect::NotifyInGuest);
        assert_eq!(d.post(0x40, VcpuState::InGuest), PostEffect::AlreadyPending);
        assert_eq!(d.post(0x41, VcpuState::InGuest), PostEffect::NotificationPending);
        assert!(!d.may_block());
        let mut apic = Lapic::default();
        d.sync(&mut apic);
        assert!(apic.irr.contains(0x40) && apic.irr.contains(0x41) && d.pir.is_empty() && !d.on);
        assert_eq!(d.post(0x42, VcpuState::Blocked), PostEffect::WakeupVector);
        d.sync(&mut apic);
        assert_eq!(d.post(0x43, VcpuState::Preempted), PostEffect::Suppressed);
        assert!(d.sn && !d.on, "suppressed: recorded, no notification");
        assert_eq!(d.post(0x44, VcpuState::InHost), PostEffect::KickToEntry);
    }
}

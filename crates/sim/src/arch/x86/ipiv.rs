//! VMX IPI virtualization (IPIv), a pure decision with no time inside: is a guest's ICR write
//! delivered by the CPU, or does it exit to the hypervisor?
//!
//! Intel SDM Vol. 3C, chapter "APIC Virtualization and Virtual Interrupts", IPI virtualization:
//! with the tertiary control "IPI virtualization" set, a guest write to the ICR (x2APIC: WRMSR
//! 830H; xAPIC: a write to the virtual-APIC page at offset 300H, the low half, with the
//! destination from offset 310H) is virtualized when the ICR names a **fixed** delivery mode,
//! **physical** destination mode and **no shorthand**, and the destination ID is at most the
//! PID-pointer table's last index with a valid entry: the CPU then posts the vector into the
//! target's posted-interrupt descriptor and sends its notification vector (the usual
//! posted-interrupt sender protocol, [`super::posted_interrupt`]). Any other ICR write
//! (logical destination, a shorthand, a non-fixed mode, an ID past the table) causes an
//! APIC-write VM exit (xAPIC) or a WRMSR exit (x2APIC) as without IPIv.
//! KVM (`arch/x86/kvm/vmx/vmx.c`, `enable_ipiv`; `vmx/posted_intr.c`) fills one PID-pointer entry
//! per vCPU at creation and never invalidates it: a halted vCPU keeps its entry, its descriptor's
//! NV is the wake-up vector while it is blocked (`pi_enable_wakeup_handler`), so an IPI to it
//! still exits nothing on the sender's side — it goes through KVM on the target's side, in the
//! wake-up handler.
use super::destination::Shorthand;
use super::posted_interrupt::{PiDesc, PostEffect, VcpuState};

/// The ICR fields that decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IcrWrite {
    pub vector: u8,
    /// Delivery mode is fixed (000b).
    pub fixed: bool,
    /// Destination mode is logical (bit 11 set).
    pub logical: bool,
    pub shorthand: Shorthand,
    /// Destination APIC ID (x2APIC: 32 bits; xAPIC: the 8 bits of ICR[63:56]).
    pub dest: u32,
}

/// What happens to the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpivOutcome {
    /// The CPU posted it: this is the sender-protocol effect on the target's descriptor.
    Posted(PostEffect),
    /// A VM exit: the hypervisor emulates the write.
    Exit,
}

/// Whether the CPU virtualizes `icr` (no VM exit) with IPIv `enabled` and last valid
/// PID-pointer index `last_index`.
pub fn virtualizes(enabled: bool, icr: IcrWrite, last_index: u32) -> bool {
    enabled && icr.fixed && !icr.logical && icr.shorthand == Shorthand::None && icr.dest <= last_index && icr.vector >= 16
}

/// Whether `icr` is virtualized with IPIv `enabled` and a PID-pointer table whose last valid
/// index is `last_index`; when it is, post into `pid` (the destination's descriptor) for a
/// target in `state`.
pub fn icr_write(enabled: bool, icr: IcrWrite, last_index: u32, pid: &mut PiDesc, state: VcpuState) -> IpivOutcome {
    if !virtualizes(enabled, icr, last_index) {
        return IpivOutcome::Exit;
    }
    IpivOutcome::Posted(pid.post(icr.vector, state))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unicast(dest: u32) -> IcrWrite {
        IcrWrite { vector: 0xFB, fixed: true, logical: false, shorthand: Shorthand::None, dest }
    }

    #[test]
    fn physical_fixed_unicast_is_posted_without_exit_whatever_the_target_state() {
        for (state, effect) in [(VcpuState::InGuest, PostEffect::NotifyInGuest), (VcpuState::InHost, PostEffect::KickToEntry), (VcpuState::Blocked, PostEffect::WakeupVector)] {
            let mut pid = PiDesc::default();
            assert_eq!(icr_write(true, unicast(3), 7, &mut pid, state), IpivOutcome::Posted(effect));
        }
    }

    #[test]
    fn off_logical_shorthand_or_out_of_table_exit() {
        let mut pid = PiDesc::default();
        assert_eq!(icr_write(false, unicast(3), 7, &mut pid, VcpuState::InGuest), IpivOutcome::Exit);
        assert_eq!(icr_write(true, IcrWrite { logical: true, ..unicast(3) }, 7, &mut pid, VcpuState::InGuest), IpivOutcome::Exit);
        assert_eq!(icr_write(true, IcrWrite { shorthand: Shorthand::AllExcludingSelf, ..unicast(3) }, 7, &mut pid, VcpuState::InGuest), IpivOutcome::Exit);
        assert_eq!(icr_write(true, IcrWrite { fixed: false, ..unicast(3) }, 7, &mut pid, VcpuState::InGuest), IpivOutcome::Exit);
        assert_eq!(icr_write(true, unicast(8), 7, &mut pid, VcpuState::InGuest), IpivOutcome::Exit);
        assert!(pid.pir.is_empty(), "an exit posts nothing");
    }
}

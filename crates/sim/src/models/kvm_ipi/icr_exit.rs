//! The sender's VM exit for an ICR write, per APIC access kind (issue 43, item 4).
//!
//! `hypervisor.icr_exit` chooses how it is costed:
//! - `"fitted"` (default): one lumped cost, `icr_write_exit` (+ `xapic_icr_exit_extra` in xAPIC
//!   mode) — S2's 2018 calibration on Skylake-SP, right for the kernel S2 ran (no exit fastpath)
//!   and for nothing else;
//! - `"kvm-fastpath"`: composed from what KVM's code does for each access kind (Linux ≥ 5.8,
//!   `arch/x86/kvm/vmx/vmx.c`, `arch/x86/kvm/x86.c`, `arch/x86/kvm/lapic.c`):
//!
//! | guest access | KVM's path | cost |
//! |---|---|---|
//! | x2APIC WRMSR 0x830 | `EXIT_REASON_MSR_WRITE` → `vmx_exit_handlers_fastpath` → `handle_fastpath_set_msr_irqoff` → `handle_fastpath_set_x2apic_icr_irqoff` → `kvm_x2apic_icr_write` → `kvm_apic_send_ipi`; skip the instruction, `EXIT_FASTPATH_REENTER_GUEST`: back into the guest from inside `vcpu_enter_guest` with interrupts still off, no `handle_exit` | `vmexit_roundtrip − fastpath_skip + icr_emulate` |
//! | xAPIC MOV to ICR low, APICv (APIC-register virtualization) | the CPU writes the virtual-APIC page, then a trap-like `EXIT_REASON_APIC_WRITE` → `handle_apic_write` → `kvm_apic_write_nodecode` (read the page, `kvm_lapic_reg_write(APIC_ICR)`) → `kvm_apic_send_ipi`; the full exit path, no decode. The ICR-high write is virtualized, no exit | `vmexit_roundtrip + apic_write_nodecode + icr_emulate` |
//! | xAPIC MOV to ICR high, then low, no APICv | two APIC-access exits (`handle_apic_access` → `kvm_emulate_instruction`: fetch and decode the guest's instruction, `emulator_write_emulated` → `apic_mmio_write` → `kvm_lapic_reg_write`); the second sends | `2 × (vmexit_roundtrip + insn_decode_emulate) + icr_emulate` |
//!
//! `vmexit_roundtrip` is a full exit round trip through `handle_exit` (the published CPUID exit
//! figure of docs/sources.md E); the other terms are the profile's, each with its source.
//! `kvm_apic_send_ipi`'s delivery to the target is not here: it stays in `deliver_to_*`.
use serde::Deserialize;

use crate::engine::{CostDist, SimRng, SimTime};

/// `hypervisor.icr_exit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IcrExitCosting {
    Fitted,
    KvmFastpath,
}

/// The guest's kind of ICR access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    X2apic,
    /// xAPIC with APIC-register virtualization (APICv).
    XapicApicv,
    /// xAPIC without APICv: the APIC page is emulated.
    XapicEmulated,
}

/// The sender's exit, costed one way or the other.
#[derive(Debug, Clone)]
pub enum IcrExit {
    Fitted { exit: CostDist, xapic_extra: Option<CostDist> },
    Mechanism { access: Access, roundtrip: CostDist, fastpath_skip: CostDist, apic_write_nodecode: CostDist, insn_decode_emulate: CostDist, icr_emulate: CostDist },
}

impl IcrExit {
    /// One ICR-write exit round trip as the sender sees it.
    pub fn sample(&self, rng: &mut SimRng) -> SimTime {
        match self {
            IcrExit::Fitted { exit, xapic_extra } => exit.sample(rng) + xapic_extra.as_ref().map_or(SimTime::ZERO, |d| d.sample(rng)),
            IcrExit::Mechanism { access, roundtrip, fastpath_skip, apic_write_nodecode, insn_decode_emulate, icr_emulate } => {
                let ns = match access {
                    Access::X2apic => (roundtrip.sample_ns(rng) - fastpath_skip.sample_ns(rng)).max(0.0) + icr_emulate.sample_ns(rng),
                    Access::XapicApicv => roundtrip.sample_ns(rng) + apic_write_nodecode.sample_ns(rng) + icr_emulate.sample_ns(rng),
                    Access::XapicEmulated => {
                        let one = |rng: &mut SimRng| roundtrip.sample_ns(rng) + insn_decode_emulate.sample_ns(rng);
                        one(rng) + one(rng) + icr_emulate.sample_ns(rng)
                    }
                };
                SimTime::from_ns_f64(ns)
            }
        }
    }
}

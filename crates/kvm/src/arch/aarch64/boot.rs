//! Guest-physical layout of the arm64 benchmark VM and the register ids its boot state needs.
//! Pure data: tested without /dev/kvm.
//!
//! The layout follows QEMU's `virt` board where it can (RAM at 1 GiB, the GICv3 distributor at
//! 0x0800_0000, the ITS at 0x0808_0000, redistributors from 0x080A_0000), so a guest written for
//! `virt` finds things where it expects; the exit page is unbacked, so writes to it exit to us.
use crate::abi::{RING, SAMPLE_BYTES};

/// Guest RAM: base and size.
pub const RAM: u64 = 0x4000_0000;
pub const RAM_SIZE: u64 = 64 << 20;
/// Where the guest image is loaded (RAM + the Linux arm64 Image header's usual text_offset).
pub const IMAGE: u64 = RAM + 0x8_0000;
/// Most bytes the image may take before the shared page.
pub const IMAGE_MAX: u64 = 0x7_0000;
/// Shared data page (slots: `crate::abi::slot`).
pub const DATA: u64 = RAM + 0x10_0000;
/// The sample ring.
pub const SAMPLES: u64 = RAM + 0x20_0000;
/// GICv3 distributor (64 KiB), ITS (128 KiB), redistributors (128 KiB per vCPU).
pub const GICD: u64 = 0x0800_0000;
pub const GITS: u64 = 0x0808_0000;
pub const GICR: u64 = 0x080A_0000;
pub const GICR_STRIDE: u64 = 0x2_0000;
/// Unbacked page: a write at offset `abi::done::*` signals completion.
pub const EXIT_MMIO: u64 = 0x0900_0000;
/// SPIs the vGIC offers (32 private + 64 shared), the SPIs the device bench uses, and the
/// GSI of the MSI route.
pub const NR_IRQS: u32 = 96;
pub const EDGE_SPI: u32 = 40;
pub const LEVEL_SPI: u32 = 41;
pub const MSI_GSI: u32 = 64;
/// The event id and device id the guest maps in its ITS (MAPD/MAPTI) for the MSI bench, and the
/// LPI it maps them to.
pub const ITS_DEVICE_ID: u32 = 0;
pub const ITS_EVENT_ID: u32 = 0;
pub const ITS_LPI: u32 = 8192;
/// 1 MiB of guest RAM, 64 KiB-aligned, for the tables the guest gives its ITS (device, collection,
/// ITT, command queue, LPI configuration and pending tables): KVM's vITS reads them there.
pub const ITS_TABLES: u64 = RAM + 0x100_0000;
pub const ITS_TABLES_SIZE: u64 = 1 << 20;
/// GITS_TRANSLATER: the doorbell an MSI writes (ITS base + 0x1_0040).
pub const GITS_TRANSLATER: u64 = GITS + 0x1_0040;
/// An assigned device's BAR0 (`--via vfio-*`), a KVM memory slot over the VFIO region's mmap, at
/// most `DEVICE_BAR_MAX` bytes; its slot number; and the registers of QEMU's edu device the guest
/// uses (hw/misc/edu.c `edu_mmio_write`: 0x60 raises the interrupt with the value's bits in
/// the status, 0x64 clears them — and drops INTx when none is left).
pub const DEVICE_BAR: u64 = 0x1000_0000;
pub const DEVICE_BAR_MAX: u64 = 0x1000_0000;
pub const DEVICE_BAR_SLOT: u32 = 1;
pub const EDU_RAISE: u64 = 0x60;
pub const EDU_ACK: u64 = 0x64;
/// edu's DMA registers (source, destination, count: u64 at 0x80/0x88/0x90; command at 0x98:
/// RUN 0x1 | IRQ 0x4, direction 0 = from PCI), its DMA buffer's device address (0x40000) and
/// the interrupt-status bit a DMA completion raises (DMA_IRQ 0x100).
pub const EDU_DMA_SRC: u64 = 0x80;
pub const EDU_DMA_DST: u64 = 0x88;
pub const EDU_DMA_CNT: u64 = 0x90;
pub const EDU_DMA_CMD: u64 = 0x98;
pub const EDU_DMA_RUN_IRQ: u32 = 0x1 | 0x4;
pub const EDU_DMA_BUFFER: u64 = 0x4_0000;
pub const EDU_DMA_IRQ: u32 = 0x100;
/// The guest waits for this u64 (in its data page) to turn non-zero before its first device
/// write: the host connects the device's interrupt once the guest's ITS mapping exists.
pub const DEVICE_GO: u64 = DATA + 0x800;

/// Guest address of sample `k`'s record.
pub fn record(k: u64) -> u64 {
    SAMPLES + (k % RING) * SAMPLE_BYTES
}

/// Redistributor region size for `vcpus`.
pub fn gicr_size(vcpus: u32) -> u64 {
    GICR_STRIDE * vcpus as u64
}

/// KVM register id of core register at byte `offset` of `struct kvm_regs` (arm64 `KVM_REG_ARM_CORE`).
pub fn core_reg(offset: u64) -> u64 {
    kvm_bindings::KVM_REG_ARM64 | kvm_bindings::KVM_REG_SIZE_U64 | kvm_bindings::KVM_REG_ARM_CORE as u64 | (offset / 4)
}

/// `struct user_pt_regs { u64 regs[31]; u64 sp; u64 pc; u64 pstate; }`: x`n`, pc, pstate.
pub fn reg_x(n: u64) -> u64 {
    core_reg(8 * n)
}
pub fn reg_pc() -> u64 {
    core_reg(8 * 32)
}
pub fn reg_pstate() -> u64 {
    core_reg(8 * 33)
}
/// The guest's virtual counter as a vCPU register (`KVM_REG_ARM_TIMER_CNT`, CNTVCT_EL0:
/// `ARM64_SYS_REG(3, 3, 14, 3, 2)` in the kernel's uapi).
pub fn reg_timer_cnt() -> u64 {
    sys_reg(3, 3, 14, 3, 2)
}

/// `ARM64_SYS_REG(op0, op1, crn, crm, op2)` (arch/arm64/include/uapi/asm/kvm.h).
pub fn sys_reg(op0: u64, op1: u64, crn: u64, crm: u64, op2: u64) -> u64 {
    kvm_bindings::KVM_REG_ARM64 | kvm_bindings::KVM_REG_SIZE_U64 | 0x0013_0000 | op0 << 14 | op1 << 11 | crn << 7 | crm << 3 | op2
}

/// EL1h with D, A, I, F masked: how a kernel is entered.
pub const PSTATE_EL1H_MASKED: u64 = 0x3c5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::MAX_VCPUS;

    #[test]
    fn register_ids_match_the_kernel_abi() {
        // KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | 0x40 is regs.pc (Documentation/virt/kvm/api.rst, arm64 core registers).
        assert_eq!(reg_pc(), 0x6030_0000_0010_0040);
        assert_eq!(reg_x(0), 0x6030_0000_0010_0000);
        assert_eq!(reg_x(1), 0x6030_0000_0010_0002);
        assert_eq!(reg_pstate(), 0x6030_0000_0010_0042);
        // KVM_REG_ARM_TIMER_CNT in arch/arm64/include/uapi/asm/kvm.h.
        assert_eq!(reg_timer_cnt(), 0x6030_0000_0013_df1a);
    }

    #[test]
    fn regions_do_not_overlap_and_fit() {
        // The constant layout is checked at compile time (a failure stops the build of the tests).
        const { assert!(IMAGE + IMAGE_MAX <= DATA) };
        const { assert!(DATA + 0x1000 <= SAMPLES) };
        const { assert!(SAMPLES + RING * SAMPLE_BYTES <= RAM + RAM_SIZE, "the ring fits in guest RAM") };
        const { assert!(SAMPLES + RING * 16 + 16 <= ITS_TABLES, "the guest's ring (16-byte records) ends before the ITS tables") };
        const { assert!(ITS_TABLES % 0x1_0000 == 0 && ITS_TABLES + ITS_TABLES_SIZE <= RAM + RAM_SIZE) };
        const { assert!(GICD + 0x1_0000 <= GITS && GITS + 0x2_0000 <= GICR) };
        assert!(GICR + gicr_size(MAX_VCPUS) <= EXIT_MMIO);
        const { assert!(EXIT_MMIO + 0x1000 <= RAM) };
        const { assert!(EDGE_SPI >= 32 && LEVEL_SPI < NR_IRQS) };
        const { assert!(EXIT_MMIO + 0x1000 <= DEVICE_BAR && DEVICE_BAR + DEVICE_BAR_MAX <= RAM, "the BAR slot sits between the exit page and RAM") };
        const { assert!(DEVICE_GO >= DATA + 0x100 && DEVICE_GO + 8 <= DATA + 0x1000 && DEVICE_GO % 8 == 0, "the go word is in the data page, clear of the slots") };
        assert_eq!(record(RING + 2), record(2));
    }
}

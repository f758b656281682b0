//! Guest physical memory layout and the boot structures the VMM writes there (GDT, IDT, TSS,
//! identity page tables). Pure data: tested without /dev/kvm.
use crate::abi::{RING, SAMPLE_BYTES};

/// Guest memory size.
pub const MEM_SIZE: u64 = 32 << 20;
pub const GDT: u64 = 0x1000;
pub const IDT: u64 = 0x2000;
pub const TSS: u64 = 0x3000;
pub const PML4: u64 = 0x4000;
pub const PDPT: u64 = 0x5000;
pub const PD: u64 = 0x6000;
/// Shared data page: parameters from the host, counters from the guest (slots: `crate::abi::slot`).
pub const DATA: u64 = crate::abi::DATA;
pub const CODE: u64 = 0x10000;
/// Kernel stacks: vCPU i's stack top.
pub fn stack_top(vcpu: u32) -> u64 {
    0x40000 + (vcpu as u64 + 1) * 0x4000
}
/// Ring-3 stack (busy-wait mode); the guest pushes it in `to_user`.
pub const USER_STACK: u64 = crate::abi::x86::USER_STACK;
/// Kernel stack used on ring 3 → ring 0 transitions (TSS.rsp0).
pub const RSP0: u64 = 0x3f000;
/// Sample records (layout in `crate::abi`): a ring at this guest address.
pub const SAMPLES: u64 = crate::abi::x86::SAMPLES;

/// Guest address of sample `k`'s record.
pub fn record(k: u64) -> u64 {
    SAMPLES + (k % RING) * SAMPLE_BYTES
}

/// Selectors.
pub const KERNEL_CS: u16 = 0x08;
pub const KERNEL_DS: u16 = 0x10;
pub const TSS_SEL: u16 = 0x28;

/// GDT: null, kernel code (L), kernel data, user data (DPL 3), user code (L, DPL 3), 64-bit TSS.
pub fn gdt() -> [u64; 7] {
    let tss_limit = 0x67u64;
    let tss_low = tss_limit | ((TSS & 0xff_ffff) << 16) | (0x89u64 << 40) | (((TSS >> 24) & 0xff) << 56);
    [0, 0x00af_9b00_0000_ffff, 0x00cf_9300_0000_ffff, 0x00cf_f300_0000_ffff, 0x00af_fb00_0000_ffff, tss_low, TSS >> 32]
}

/// A 64-bit interrupt gate to `handler` (type 0xE, present, DPL 0).
pub fn idt_gate(handler: u64) -> [u64; 2] {
    let low = (handler & 0xffff) | ((KERNEL_CS as u64) << 16) | (0x8eu64 << 40) | (((handler >> 16) & 0xffff) << 48);
    [low, handler >> 32]
}

/// 64-bit TSS with rsp0 set (104 bytes; I/O map base beyond the limit).
pub fn tss() -> [u8; 104] {
    let mut t = [0u8; 104];
    t[4..12].copy_from_slice(&RSP0.to_le_bytes());
    t[102..104].copy_from_slice(&104u16.to_le_bytes());
    t
}

/// Identity map of the first 1 GiB slot's first MEM_SIZE with 2 MiB pages, user-accessible
/// (the busy-wait loop runs in ring 3). Returns (address, entry) pairs to write.
pub fn page_tables() -> Vec<(u64, u64)> {
    const P_RW_U: u64 = 0x7;
    let mut v = vec![(PML4, PDPT | P_RW_U), (PDPT, PD | P_RW_U)];
    for i in 0..(MEM_SIZE >> 21) {
        v.push((PD + i * 8, (i << 21) | P_RW_U | 0x80));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::x86::MAX_VCPUS;

    #[test]
    fn gdt_entries() {
        let g = gdt();
        assert_eq!(g[1] >> 40 & 0xff, 0x9b, "kernel code present, DPL 0");
        assert_eq!(g[1] >> 53 & 1, 1, "long mode");
        assert_eq!(g[3] >> 45 & 3, 3, "user data DPL 3");
        assert_eq!(g[4] >> 45 & 3, 3, "user code DPL 3");
        assert_eq!(g[5] >> 40 & 0xf, 0x9, "available 64-bit TSS");
        assert_eq!((g[5] >> 16) & 0xff_ffff, TSS);
    }

    #[test]
    fn idt_gate_splits_the_address() {
        let [lo, hi] = idt_gate(0x1234_5678_9abc);
        assert_eq!(lo & 0xffff, 0x9abc);
        assert_eq!(lo >> 48, 0x5678);
        assert_eq!(hi, 0x1234);
        assert_eq!((lo >> 16) & 0xffff, KERNEL_CS as u64);
        assert_eq!((lo >> 40) & 0xff, 0x8e);
    }

    #[test]
    fn page_tables_cover_memory_with_large_pages() {
        let pt = page_tables();
        assert_eq!(pt.len(), 2 + 16);
        let last = pt.last().unwrap();
        assert_eq!(last.1 & !0xfff, MEM_SIZE - (2 << 20));
        assert!(pt.iter().skip(2).all(|e| e.1 & 0x87 == 0x87), "present, writable, user, 2 MiB");
    }

    #[test]
    fn the_guest_assembly_takes_its_constants_from_the_abi() {
        // build.rs generates abi.inc from crate::abi; the guest must include it and define none
        // of those names itself.
        let src = include_str!("../../../guest/x86_64/bench.S");
        assert!(src.contains(".include \"abi.inc\""), "bench.S includes the generated abi.inc");
        for name in ["RING_MASK", "NSAMP", "COUNT", "ENTRY_TSC", "DATA", "SAMPLES", "USER_STACK"] {
            assert!(!src.lines().any(|l| l.trim_start().starts_with(&format!(".set {name},"))), "bench.S defines {name} itself");
        }
        let inc = include_str!(concat!(env!("OUT_DIR"), "/abi.inc"));
        assert!(inc.contains(&format!(".set RING_MASK, {:#x}", RING - 1)), "{inc}");
        assert!(inc.contains(&format!(".set COUNT, {:#x}", crate::abi::DATA + crate::abi::slot::COUNT)), "{inc}");
    }

    #[test]
    fn regions_do_not_overlap() {
        assert!(stack_top(MAX_VCPUS - 1) <= USER_STACK - 0x1000);
        assert!(RSP0 < stack_top(0) - 0x4000 + 1);
        const { assert!(CODE + 0x1000 < RSP0 - 0x4000) };
        const { assert!(SAMPLES + RING * SAMPLE_BYTES <= MEM_SIZE, "the ring fits in guest memory") };
        assert_eq!(record(RING + 3), record(3));
        assert_eq!(record(1), SAMPLES + SAMPLE_BYTES);
    }
}

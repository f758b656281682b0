//! Creating the VM: memory, in-kernel irqchip, interrupt routing, capabilities, boot structures,
//! and vCPUs in 64-bit mode with x2APIC set up from the host (so the guest runs almost no
//! ring-0 instructions before its benchmark loop).
use std::collections::BTreeMap;

use kvm_bindings::{
    kvm_enable_cap, kvm_irq_routing_entry, kvm_mp_state, kvm_msr_entry, kvm_segment, kvm_userspace_memory_region, KvmIrqRouting, Msrs, KVM_CAP_X86_DISABLE_EXITS,
    KVM_IRQCHIP_IOAPIC, KVM_IRQ_ROUTING_IRQCHIP, KVM_IRQ_ROUTING_MSI, KVM_MAX_CPUID_ENTRIES, KVM_MP_STATE_RUNNABLE, KVM_X86_DISABLE_EXITS_HLT,
};
use kvm_ioctls::{Kvm, VcpuFd, VmFd};
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend, GuestMemoryMmap};

use super::boot as layout;
use crate::abi::{slot, vector};
use crate::abi::{SharedPage, SlotError};
use crate::arch::GuestVm;
use crate::arch::VmError;
use crate::config::BenchConfig;

mod guest_symbols {
    include!(concat!(env!("OUT_DIR"), "/guest_symbols.rs"));
}
const PAYLOAD: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bench.bin"));

/// GSI of the MSI route used by irqfd; IOAPIC pins used by KVM_IRQ_LINE and the level test.
pub const MSI_GSI: u32 = 24;
/// GSI of an MSI route to an APIC ID no vCPU has (`abi::NO_APIC_ID`): the primitives bench times
/// an irqfd write through it (eventfd → irqfd_wakeup → MSI delivery that finds no target).
pub const NO_DEST_GSI: u32 = 25;
/// An IOAPIC pin left masked (KVM resets every redirection entry masked): KVM_IRQ_LINE on it goes
/// through kvm_set_irq → kvm_ioapic_set_irq and delivers nothing.
pub const MASKED_PIN: u32 = 22;
pub const EDGE_PIN: u32 = 20;
pub const LEVEL_PIN: u32 = 21;

pub struct Vm {
    pub kvm: Kvm,
    pub fd: VmFd,
    pub mem: GuestMemoryMmap,
    /// What KVM said to the capability requests (for the result's notes).
    pub caps: BTreeMap<String, String>,
    /// Settings whose effect differs from the request (see `GuestVm::in_force`).
    pub in_force: Vec<(String, String)>,
}

fn setup(step: &'static str) -> impl FnOnce(vmm_sys_util::errno::Error) -> VmError {
    VmError::setup(step)
}

impl Vm {
    pub fn create(cfg: &BenchConfig, kind_code: u64, delta_cycles: u64) -> Result<Vm, VmError> {
        let kvm = Kvm::new().map_err(VmError::Unavailable)?;
        let fd = kvm.create_vm().map_err(setup("KVM_CREATE_VM"))?;
        let mut caps = BTreeMap::new();
        let mut in_force = Vec::new();
        crate::arch::common::request_halt_poll(&fd, cfg.halt_poll_ns, &mut caps, &mut in_force);
        if cfg.disable_hlt_exits {
            let mut cap = kvm_enable_cap { cap: KVM_CAP_X86_DISABLE_EXITS, ..Default::default() };
            cap.args[0] = KVM_X86_DISABLE_EXITS_HLT as u64;
            caps.insert(
                "disable_hlt_exits".into(),
                match fd.enable_cap(&cap) {
                    Ok(()) => "accepted".into(),
                    Err(e) => format!("rejected: {e}"),
                },
            );
        }
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), layout::MEM_SIZE as usize)]).map_err(VmError::MemoryMap)?;
        let host = mem.get_host_address(GuestAddress(0)).map_err(VmError::Memory)?;
        let region = kvm_userspace_memory_region { slot: 0, flags: 0, guest_phys_addr: 0, memory_size: layout::MEM_SIZE, userspace_addr: host as u64 };
        // SAFETY: the region is backed by `mem`, which lives as long as the VM (both in `Vm`).
        unsafe { fd.set_user_memory_region(region) }.map_err(setup("KVM_SET_USER_MEMORY_REGION"))?;
        fd.create_irq_chip().map_err(setup("KVM_CREATE_IRQCHIP"))?;
        let vm = Vm { kvm, fd, mem, caps, in_force };
        vm.write_boot_structures(kind_code, delta_cycles, cfg)?;
        vm.set_routing()?;
        Ok(vm)
    }

    fn w64(&self, addr: u64, v: u64) -> Result<(), VmError> {
        self.mem.write_obj(v, GuestAddress(addr)).map_err(VmError::Memory)
    }

    pub fn r64(&self, addr: u64) -> u64 {
        self.mem.read_obj::<u64>(GuestAddress(addr)).unwrap_or(0)
    }

    fn put_slot(&self, s: u64, v: u64) -> Result<(), VmError> {
        self.w64(layout::DATA + s, v)
    }

    fn write_boot_structures(&self, kind: u64, delta: u64, cfg: &BenchConfig) -> Result<(), VmError> {
        for (i, e) in layout::gdt().iter().enumerate() {
            self.w64(layout::GDT + 8 * i as u64, *e)?;
        }
        let mut vectors = vec![(vector::TIMER, if kind == crate::abi::bench::IPI { guest_symbols::PERIOD_ISR } else { guest_symbols::TIMER_ISR })];
        vectors.push((vector::DEVICE, guest_symbols::DEVICE_ISR));
        vectors.push((vector::DEVICE_LEVEL, guest_symbols::DEVICE_ISR));
        vectors.push((vector::IPI, guest_symbols::IPI_TARGET_ISR));
        vectors.push((vector::IPI_REPLY, guest_symbols::IPI_REPLY_ISR));
        for v in 0..=255u8 {
            let h = vectors.iter().find(|x| x.0 == v).map(|x| x.1).unwrap_or(guest_symbols::SPURIOUS_ISR);
            let [lo, hi] = layout::idt_gate(h);
            self.w64(layout::IDT + 16 * v as u64, lo)?;
            self.w64(layout::IDT + 16 * v as u64 + 8, hi)?;
        }
        self.mem.write_slice(&layout::tss(), GuestAddress(layout::TSS)).map_err(VmError::Memory)?;
        for (a, e) in layout::page_tables() {
            self.w64(a, e)?;
        }
        self.mem.write_slice(PAYLOAD, GuestAddress(layout::CODE)).map_err(VmError::Memory)?;
        self.put_slot(slot::KIND, kind)?;
        self.put_slot(slot::DELTA, delta)?;
        self.put_slot(slot::NSAMP, cfg.samples + crate::config::DISCARDED_FIRST)?;
        self.put_slot(slot::COUNT, 0)?;
        self.put_slot(slot::WAIT, if cfg.wait == crate::config::Wait::Busy { 1 } else { 0 })?;
        Ok(())
    }

    /// KVM_SET_GSI_ROUTING replaces the whole table: IOAPIC pins 0–23 plus our MSI route.
    fn set_routing(&self) -> Result<(), VmError> {
        let mut entries = Vec::new();
        for pin in 0..24u32 {
            let mut e = kvm_irq_routing_entry { gsi: pin, type_: KVM_IRQ_ROUTING_IRQCHIP, ..Default::default() };
            e.u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
            e.u.irqchip.pin = pin;
            entries.push(e);
        }
        let mut msi = kvm_irq_routing_entry { gsi: MSI_GSI, type_: KVM_IRQ_ROUTING_MSI, ..Default::default() };
        msi.u.msi.address_lo = 0xfee0_0000; // destination APIC ID 0, physical
        msi.u.msi.data = vector::DEVICE as u32; // fixed, edge
        entries.push(msi);
        let mut nowhere = msi;
        nowhere.gsi = NO_DEST_GSI;
        nowhere.u.msi.address_lo = 0xfee0_0000 | (crate::abi::NO_APIC_ID as u32) << 12;
        entries.push(nowhere);
        let routing = KvmIrqRouting::from_entries(&entries).map_err(VmError::table("routing table"))?;
        self.fd.set_gsi_routing(&routing).map_err(setup("KVM_SET_GSI_ROUTING"))?;
        // IOAPIC redirection: edge pin → DEVICE, level pin → DEVICE_LEVEL (bit 15), both to APIC 0.
        let mut chip = kvm_bindings::kvm_irqchip { chip_id: 2, ..Default::default() };
        self.fd.get_irqchip(&mut chip).map_err(setup("KVM_GET_IRQCHIP"))?;
        // SAFETY: chip_id 2 selects the IOAPIC member of the union.
        unsafe {
            chip.chip.ioapic.redirtbl[EDGE_PIN as usize].bits = vector::DEVICE as u64;
            chip.chip.ioapic.redirtbl[LEVEL_PIN as usize].bits = vector::DEVICE_LEVEL as u64 | 1 << 15;
        }
        self.fd.set_irqchip(&chip).map_err(setup("KVM_SET_IRQCHIP"))?;
        Ok(())
    }

    /// Create vCPU `id` in 64-bit mode with x2APIC enabled and the LAPIC programmed.
    pub fn create_vcpu(&self, id: u32) -> Result<VcpuFd, VmError> {
        let vcpu = self.fd.create_vcpu(id as u64).map_err(setup("KVM_CREATE_VCPU"))?;
        let mut cpuid = self.kvm.get_supported_cpuid(KVM_MAX_CPUID_ENTRIES).map_err(setup("KVM_GET_SUPPORTED_CPUID"))?;
        for e in cpuid.as_mut_slice() {
            match e.function {
                1 => e.ebx = (e.ebx & 0x00ff_ffff) | (id << 24),
                0xb | 0x1f => e.edx = id,
                _ => {}
            }
        }
        vcpu.set_cpuid2(&cpuid).map_err(setup("KVM_SET_CPUID2"))?;
        let mut s = vcpu.get_sregs().map_err(setup("KVM_GET_SREGS"))?;
        let code = kvm_segment { base: 0, limit: 0xffff_ffff, selector: layout::KERNEL_CS, type_: 0xb, present: 1, dpl: 0, db: 0, s: 1, l: 1, g: 1, ..Default::default() };
        let data = kvm_segment { selector: layout::KERNEL_DS, type_: 0x3, l: 0, db: 1, ..code };
        s.cs = code;
        (s.ds, s.es, s.fs, s.gs, s.ss) = (data, data, data, data, data);
        s.tr = kvm_segment { base: layout::TSS, limit: 0x67, selector: layout::TSS_SEL, type_: 0xb, present: 1, s: 0, l: 0, db: 0, g: 0, dpl: 0, ..Default::default() };
        s.ldt.unusable = 1;
        s.gdt.base = layout::GDT;
        s.gdt.limit = 7 * 8 - 1;
        s.idt.base = layout::IDT;
        s.idt.limit = 256 * 16 - 1;
        s.cr0 = 0x8005_0033; // PG | WP | NE | ET | MP | PE
        s.cr3 = layout::PML4;
        s.cr4 = 0x620; // PAE | OSFXSR | OSXMMEXCPT
        s.efer = 0x500; // LME | LMA
        vcpu.set_sregs(&s).map_err(setup("KVM_SET_SREGS"))?;
        let mut r = vcpu.get_regs().map_err(setup("KVM_GET_REGS"))?;
        r.rip = layout::CODE;
        r.rsp = layout::stack_top(id);
        r.rdi = id as u64;
        r.rflags = 2;
        vcpu.set_regs(&r).map_err(setup("KVM_SET_REGS"))?;
        let apic_base = 0xfee0_0000u64 | 0x800 | 0x400 | if id == 0 { 0x100 } else { 0 };
        let msrs = [
            (0x1b, apic_base),                        // IA32_APIC_BASE: enabled, x2APIC
            (0x80f, 0x100 | vector::SPURIOUS as u64), // SVR: software enable
            (0x808, 0),                               // TPR
            (0x835, 1 << 16),                         // LVT LINT0 masked (KVM resets it to ExtINT)
            (0x836, 1 << 16),                         // LVT LINT1 masked
            (0x832, vector::TIMER as u64 | 2 << 17),  // LVT timer: TSC-deadline mode
        ];
        let entries: Vec<kvm_msr_entry> = msrs.iter().map(|(i, d)| kvm_msr_entry { index: *i, data: *d, ..Default::default() }).collect();
        let m = Msrs::from_entries(&entries).map_err(VmError::table("MSR list"))?;
        let n = vcpu.set_msrs(&m).map_err(setup("KVM_SET_MSRS"))?;
        if n != entries.len() {
            return Err(VmError::Setup {
                step: "KVM_SET_MSRS (APIC setup)",
                source: std::io::Error::other(format!("only {n} of {} MSRs accepted (MSR {:#x} refused)", entries.len(), entries[n].index)),
            });
        }
        if id != 0 {
            vcpu.set_mp_state(kvm_mp_state { mp_state: KVM_MP_STATE_RUNNABLE }).map_err(setup("KVM_SET_MP_STATE"))?;
        }
        Ok(vcpu)
    }
}

impl SharedPage for Vm {
    fn slot(&self, s: u64) -> u64 {
        self.r64(layout::DATA + s)
    }

    fn set_slot(&self, s: u64, v: u64) -> Result<(), SlotError> {
        self.put_slot(s, v).map_err(|e| SlotError::Memory(e.to_string()))
    }

    fn record(&self, k: u64) -> [u64; 3] {
        let a = layout::record(k);
        [self.r64(a), self.r64(a + 8), self.r64(a + 16)]
    }
}

impl GuestVm for Vm {
    fn record_word3(&self, k: u64) -> Option<u64> {
        Some(self.r64(layout::record(k) + 24))
    }

    fn vm_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }

    fn notes(&self) -> Vec<String> {
        self.caps.iter().map(|(k, v)| format!("{k}: {v}")).collect()
    }

    fn in_force(&self) -> Vec<(String, String)> {
        self.in_force.clone()
    }
}

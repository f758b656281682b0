//! Creating the arm64 benchmark VM: RAM with the guest image and its parameter block, the vGICv3
//! (distributor, one redistributor per vCPU) and the vITS, and vCPUs entered at the image with
//! PSCI 0.2 (secondaries powered off until the guest starts them with CPU_ON), following
//! KVM's `Documentation/virt/kvm/devices/arm-vgic-v3.rst` and `arm-vgic-its.rst` set-up order:
//! create the vCPUs, then the devices with their addresses, then `KVM_DEV_ARM_VGIC_CTRL_INIT`.
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, RawFd};

use kvm_bindings::{
    kvm_create_device, kvm_device_attr, kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_ITS, kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_V3, kvm_userspace_memory_region, kvm_vcpu_init,
    KVM_ARM_VCPU_POWER_OFF, KVM_ARM_VCPU_PSCI_0_2, KVM_DEV_ARM_VGIC_CTRL_INIT, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_GRP_NR_IRQS,
    KVM_VGIC_ITS_ADDR_TYPE, KVM_VGIC_V3_ADDR_TYPE_DIST, KVM_VGIC_V3_ADDR_TYPE_REDIST,
};
use kvm_ioctls::{DeviceFd, Kvm, VcpuFd, VmFd};
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend, GuestMemoryMmap};

use super::boot::{self, DATA, RAM, RAM_SIZE};
use super::guest;
use crate::abi::slot;
use crate::abi::{SharedPage, SlotError};
use crate::arch::VmError;
use crate::arch::{GuestVm, Trigger};
use crate::config::BenchConfig;

pub struct Vm {
    pub kvm: Kvm,
    pub fd: VmFd,
    pub mem: GuestMemoryMmap,
    pub gic: DeviceFd,
    /// The vITS (absent where the host's KVM cannot create one).
    pub its: Option<DeviceFd>,
    pub caps: BTreeMap<String, String>,
    pub in_force: Vec<(String, String)>,
    kind: crate::config::Bench,
    /// `--via vfio-*`: the assigned device, its BAR0 a memory slot at `boot::DEVICE_BAR`.
    pub assigned: Option<crate::vfio::device::Assigned>,
    /// Guest − host counter, read through KVM_REG_ARM_TIMER_CNT between two host readings.
    offset: Option<(i64, String)>,
}

/// Set one device attribute whose value is the u64 at `value`.
fn set_attr(dev: &DeviceFd, group: u32, attr: u64, value: Option<&u64>, step: &'static str) -> Result<(), VmError> {
    let a = kvm_device_attr { flags: 0, group, attr, addr: value.map(|v| v as *const u64 as u64).unwrap_or(0) };
    dev.set_device_attr(&a).map_err(VmError::setup(step))
}

/// The counter frequency the guest sees (CNTFRQ_EL0, Hz): the host's own.
fn cntfrq() -> u64 {
    let v: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 under Linux and has no side effects.
    unsafe { core::arch::asm!("mrs {v}, cntfrq_el0", v = out(reg) v, options(nomem, nostack)) };
    v
}

impl Vm {
    /// The VM with guest, vGIC, vITS and vCPUs; and the counter frequency in kHz.
    pub fn create(cfg: &BenchConfig) -> Result<(Vm, Vec<VcpuFd>, u64), VmError> {
        let counter_khz = cntfrq() / 1000;
        let image = guest::prepared_image(cfg, counter_khz)?;
        let kvm = Kvm::new().map_err(VmError::Unavailable)?;
        let fd = kvm.create_vm().map_err(VmError::setup("KVM_CREATE_VM"))?;
        let mut caps = BTreeMap::new();
        let mut in_force = Vec::new();
        crate::arch::common::request_halt_poll(&fd, cfg.halt_poll_ns, &mut caps, &mut in_force);
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(RAM), RAM_SIZE as usize)]).map_err(VmError::MemoryMap)?;
        let host = mem.get_host_address(GuestAddress(RAM)).map_err(VmError::Memory)?;
        let region = kvm_userspace_memory_region { slot: 0, flags: 0, guest_phys_addr: RAM, memory_size: RAM_SIZE, userspace_addr: host as u64 };
        // SAFETY: the region is backed by `mem`, which lives as long as the VM (both in `Vm`).
        unsafe { fd.set_user_memory_region(region) }.map_err(VmError::setup("KVM_SET_USER_MEMORY_REGION"))?;
        mem.write_slice(&image, GuestAddress(boot::IMAGE)).map_err(VmError::Memory)?;
        let vfio = cfg.kind == crate::config::Bench::Device && cfg.via.is_vfio();
        let assigned = if vfio { Some(assign(&fd, cfg, &mut caps)?) } else { None };
        let gicv4 = crate::vfio::gicv4::State::from_log(&crate::vfio::gicv4::kernel_log());
        in_force.push(("gicv4".into(), gicv4.name().into()));

        // vCPUs first: the vGIC's redistributors are sized and initialised for them.
        let mut kvi = kvm_vcpu_init::default();
        fd.get_preferred_target(&mut kvi).map_err(VmError::setup("KVM_ARM_PREFERRED_TARGET"))?;
        kvi.features[0] |= 1 << KVM_ARM_VCPU_PSCI_0_2;
        let mut vcpus = Vec::new();
        for id in 0..cfg.vcpus {
            let v = fd.create_vcpu(id as u64).map_err(VmError::setup("KVM_CREATE_VCPU"))?;
            let mut init = kvi;
            if id != 0 {
                init.features[0] |= 1 << KVM_ARM_VCPU_POWER_OFF;
            }
            v.vcpu_init(&init).map_err(VmError::setup("KVM_ARM_VCPU_INIT"))?;
            if id == 0 {
                v.set_one_reg(boot::reg_pstate(), &boot::PSTATE_EL1H_MASKED.to_le_bytes()).map_err(VmError::setup("KVM_SET_ONE_REG pstate"))?;
                v.set_one_reg(boot::reg_pc(), &boot::IMAGE.to_le_bytes()).map_err(VmError::setup("KVM_SET_ONE_REG pc"))?;
                v.set_one_reg(boot::reg_x(0), &0u64.to_le_bytes()).map_err(VmError::setup("KVM_SET_ONE_REG x0"))?;
            }
            vcpus.push(v);
        }

        let mut dev = kvm_create_device { type_: kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_V3, fd: 0, flags: 0 };
        let gic = fd.create_device(&mut dev).map_err(VmError::setup("KVM_CREATE_DEVICE (vGICv3)"))?;
        set_attr(&gic, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_DIST as u64, Some(&boot::GICD), "vGICv3 distributor address")?;
        set_attr(&gic, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_REDIST as u64, Some(&boot::GICR), "vGICv3 redistributor address")?;
        let nr = boot::NR_IRQS as u64;
        set_attr(&gic, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, Some(&nr), "vGICv3 number of IRQs")?;
        set_attr(&gic, KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT as u64, None, "vGICv3 init")?;

        let mut dev = kvm_create_device { type_: kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_ITS, fd: 0, flags: 0 };
        let its = match fd.create_device(&mut dev) {
            Ok(its) => {
                set_attr(&its, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_ITS_ADDR_TYPE as u64, Some(&boot::GITS), "vITS address")?;
                set_attr(&its, KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT as u64, None, "vITS init")?;
                caps.insert("vits".into(), format!("created at {:#x}", boot::GITS));
                Some(its)
            }
            Err(e) => {
                caps.insert("vits".into(), format!("not available: {e}"));
                None
            }
        };
        // The guest's virtual counter runs at the host's minus KVM's CNTVOFF for this VM: read it
        // through the vCPU register between two host readings. The host-triggered device bench
        // compares a host stamp with a guest one; the timer, IPI and assigned-device latencies
        // are guest-only differences, and the offset only places their samples on the host's
        // time line (`--breakdown`, `guest::as_record`).
        // KVM's offset is constant (CNTVOFF), so the tightest of a few bracketed reads is kept.
        let offset = {
            let mut best: Option<(u64, i64)> = None;
            for _ in 0..16 {
                let mut buf = [0u8; 8];
                let before = super::Aarch64::counter_now();
                vcpus[0].get_one_reg(boot::reg_timer_cnt(), &mut buf).map_err(VmError::setup("KVM_GET_ONE_REG timer count"))?;
                let after = super::Aarch64::counter_now();
                let off = u64::from_le_bytes(buf) as i64 - (before / 2 + after / 2) as i64;
                if best.is_none_or(|(spread, _)| after - before < spread) {
                    best = Some((after - before, off));
                }
            }
            let (spread, off) = best.expect("16 reads");
            Some((off, format!("guest counter − host counter = {off} ticks (KVM_REG_ARM_TIMER_CNT between host readings {spread} ticks apart, the tightest of 16)")))
        };
        let vm = Vm { kvm, fd, mem, gic, its, caps, in_force, kind: cfg.kind, assigned, offset };
        Ok((vm, vcpus, counter_khz))
    }

    fn r64(&self, addr: u64) -> u64 {
        self.mem.read_obj::<u64>(GuestAddress(addr)).unwrap_or(0)
    }

    /// The device benchmark's trigger for `cfg.via`.
    pub fn trigger<'a>(&'a self, cfg: &BenchConfig) -> Result<Box<dyn Trigger + 'a>, VmError> {
        if cfg.via.is_vfio() {
            return Ok(Box::new(super::assigned::create(self, cfg.via, cfg.vfio_trigger)?));
        }
        Ok(Box::new(super::trigger::create(self, cfg.via)?))
    }
}

/// Open the device `--vfio-device` names (or the only one bound to vfio-pci) and map its BAR0 at
/// `boot::DEVICE_BAR` (a VM_PFNMAP mapping: KVM/arm64 maps it as device memory at stage 2).
fn assign(fd: &VmFd, cfg: &BenchConfig, caps: &mut BTreeMap<String, String>) -> Result<crate::vfio::device::Assigned, VmError> {
    let flag = crate::vfio::locate::flag(cfg.vfio_device.as_deref(), cfg.via.name());
    let path = crate::vfio::locate::locate(std::path::Path::new("/sys"), cfg.vfio_device.as_deref()).map_err(|source| VmError::Vfio { flag: flag.to_string(), source })?;
    let mut dev = crate::vfio::device::Assigned::open(&path).map_err(|source| VmError::Vfio { flag: flag.to_string(), source })?;
    if cfg.vfio_trigger == crate::config::VfioTrigger::Dma {
        dev.map_dma_page().map_err(|source| VmError::Vfio { flag: "--vfio-trigger dma".into(), source })?;
    }
    if dev.bar_size > boot::DEVICE_BAR_MAX {
        return Err(VmError::Unsupported(format!("{}: BAR0 is {} bytes, more than the {} this VMM's layout leaves", dev.bdf, dev.bar_size, boot::DEVICE_BAR_MAX)));
    }
    let region =
        kvm_userspace_memory_region { slot: boot::DEVICE_BAR_SLOT, flags: 0, guest_phys_addr: boot::DEVICE_BAR, memory_size: dev.bar_size, userspace_addr: dev.bar_host_addr() };
    // SAFETY: the mapping lives in `dev`, which the Vm keeps for as long as the VM exists.
    unsafe { fd.set_user_memory_region(region) }.map_err(VmError::setup("KVM_SET_USER_MEMORY_REGION (device BAR0)"))?;
    let (v, d) = dev.vendor_device;
    caps.insert("vfio".into(), format!("{} ({v:04x}:{d:04x}) assigned: BAR0 {} bytes at {:#x}", dev.bdf, dev.bar_size, boot::DEVICE_BAR));
    Ok(dev)
}

impl SharedPage for Vm {
    fn slot(&self, s: u64) -> u64 {
        // The guest's ring header holds the one slot it writes: the records completed.
        if s == slot::COUNT {
            return self.r64(guest::RING_COUNT);
        }
        self.r64(DATA + s)
    }

    fn set_slot(&self, s: u64, v: u64) -> Result<(), SlotError> {
        // The guest's sample count lives in its parameter block, which every bench (timer, IPI,
        // device) re-reads before each sample: lowering it ends the run at the next one
        // (armguest::abi::Field::Samples).
        let at = if s == slot::NSAMP { boot::IMAGE + armguest::abi::Field::Samples.offset() as u64 } else { DATA + s };
        self.mem.write_obj(v, GuestAddress(at)).map_err(|e| SlotError::Memory(e.to_string()))
    }

    fn record(&self, k: u64) -> [u64; 3] {
        let a = guest::record_addr(k);
        let guest_offset = self.assigned.as_ref().and(self.offset.as_ref()).map(|(off, _)| *off);
        guest::as_record(self.kind, guest_offset, [self.r64(a), self.r64(a + 8)])
    }
}

impl GuestVm for Vm {
    fn vm_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn notes(&self) -> Vec<String> {
        self.caps.iter().map(|(k, v)| format!("{k}: {v}")).collect()
    }

    fn counter_offset(&self) -> Option<(i64, String)> {
        self.offset.clone()
    }

    fn in_force(&self) -> Vec<(String, String)> {
        self.in_force.clone()
    }
}

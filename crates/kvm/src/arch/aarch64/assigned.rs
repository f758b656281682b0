//! `--via vfio-msi|vfio-intx` on arm64: the assigned device's interrupt wired into the VM once
//! the guest is ready, and how each interrupt was delivered.
//!
//! - `vfio-msi`: the GSI routing table of `trigger.rs` (`MSI_GSI` → the vITS's GITS_TRANSLATER
//!   with DeviceID `ITS_DEVICE_ID`, EventID `ITS_EVENT_ID`, `KVM_MSI_VALID_DEVID`), an irqfd on
//!   that GSI and VFIO's MSI vector 0 signalled to the same eventfd. Registering both makes the
//!   irq-bypass manager call `kvm_arch_irq_bypass_add_producer` → `kvm_vgic_v4_set_forwarding`
//!   (arch/arm64/kvm/vgic/vgic-v4.c, Linux 6.1), which resolves DeviceID/EventID through the
//!   guest's vITS tables — so the guest must have mapped them (MAPD/MAPTI) first: hence the
//!   connect after READY — and, with GICv4, issues VMAPTI so the device's MSI becomes a vLPI of
//!   vCPU 0's vPE. Without GICv4 the host's VFIO handler signals the eventfd and the irqfd
//!   injects in software (`vgic_its_inject_cached_translation`).
//! - `vfio-intx`: VFIO's INTx eventfd as an irqfd with a resamplefd on the level SPI
//!   `LEVEL_SPI` (GSI `LEVEL_SPI − 32`), the resamplefd being VFIO's unmask eventfd: the S4
//!   "irqfd + resample" path with a real level source. INTx is never forwarded as a vLPI.
//!
//! The go word (`boot::DEVICE_GO`) releases the guest's first write.
use std::collections::BTreeMap;

use kvm_bindings::KvmIrqRouting;
use vm_memory::{Bytes, GuestAddress};
use vmm_sys_util::eventfd::EventFd;

use super::boot::{self, DEVICE_GO, LEVEL_SPI, MSI_GSI};
use super::vm::Vm;
use crate::arch::common::eventfd;
use crate::arch::Trigger;
use crate::arch::VmError;
use crate::config::Via;
use crate::vfio::delivery::{self, Snapshot};

pub struct AssignedTrigger<'a> {
    vm: &'a Vm,
    how: crate::config::VfioTrigger,
    msi: bool,
    efd: EventFd,
    resample: EventFd,
    handler: String,
    before: Option<Snapshot>,
}

fn interrupts() -> String {
    std::fs::read_to_string("/proc/interrupts").unwrap_or_default()
}

pub fn create(vm: &Vm, via: Via, how: crate::config::VfioTrigger) -> Result<AssignedTrigger<'_>, VmError> {
    let dev = vm.assigned.as_ref().ok_or_else(|| VmError::Unsupported(format!("--via {}: no device was assigned to this VM", via.name())))?;
    if via == Via::VfioMsi && vm.its.is_none() {
        return Err(VmError::Unsupported("--via vfio-msi: this host's KVM has no vITS (KVM_DEV_TYPE_ARM_VGIC_ITS) to translate the device's MSI".into()));
    }
    let msi = via == Via::VfioMsi;
    Ok(AssignedTrigger {
        vm,
        how,
        msi,
        efd: eventfd("VFIO eventfd")?,
        resample: eventfd("VFIO unmask eventfd")?,
        handler: delivery::host_handler_name(msi, &dev.bdf),
        before: None,
    })
}

impl Trigger for AssignedTrigger<'_> {
    fn fire(&mut self) -> Result<(), VmError> {
        Err(VmError::Unsupported("the guest raises the assigned device's interrupt itself".into()))
    }

    fn resampled(&mut self) -> bool {
        true
    }

    fn guest_paced(&self) -> bool {
        true
    }

    fn connect(&mut self) -> Result<(), VmError> {
        let dev = self.vm.assigned.as_ref().expect("checked in create");
        let vfio = |e: crate::vfio::VfioError| VmError::Unsupported(e.to_string());
        if self.msi {
            let routing = KvmIrqRouting::from_entries(&super::trigger::routing_entries()).map_err(VmError::table("routing table"))?;
            self.vm.fd.set_gsi_routing(&routing).map_err(VmError::setup("KVM_SET_GSI_ROUTING"))?;
            self.vm.fd.register_irqfd(&self.efd, MSI_GSI).map_err(VmError::setup("KVM_IRQFD (VFIO MSI)"))?;
            dev.enable_msi(&self.efd).map_err(vfio)?;
        } else {
            self.vm.fd.register_irqfd_with_resample(&self.efd, &self.resample, LEVEL_SPI - 32).map_err(VmError::setup("KVM_IRQFD (VFIO INTx, resample)"))?;
            dev.enable_intx(&self.efd, &self.resample).map_err(vfio)?;
        }
        if self.how == crate::config::VfioTrigger::Dma {
            // A 4-byte transfer from the page mapped at DMA_IOVA into edu's buffer (QEMU 7.2 aborts
            // on a zero-length one: `edu_check_range`); the command the guest writes starts it,
            // and edu's timer raises DMA_IRQ 100 ms of QEMU virtual time later (hw/misc/edu.c
            // `dma_rw`, `edu_dma_timer`).
            for (reg, v) in [(boot::EDU_DMA_SRC, crate::vfio::device::DMA_IOVA), (boot::EDU_DMA_DST, boot::EDU_DMA_BUFFER), (boot::EDU_DMA_CNT, 4)] {
                dev.bar_write_u64(reg, v).map_err(vfio)?;
            }
        }
        // After the host handler exists (it is named in /proc/interrupts from SET_IRQS on).
        self.before = Some(Snapshot::read(&interrupts(), &self.handler));
        self.vm.mem.write_obj(1u64, GuestAddress(DEVICE_GO)).map_err(VmError::Memory)
    }

    fn finish(&mut self, delivered: u64) -> (BTreeMap<String, u64>, Vec<String>) {
        let Some(before) = self.before else { return Default::default() };
        let after = Snapshot::read(&interrupts(), &self.handler);
        let (m, note) = delivery::counters(delivered, before, after);
        let path = if self.msi {
            "vfio-msi: device MSI → (GICv4: vLPI via irq bypass | else: host VFIO handler → irqfd → vITS)"
        } else {
            "vfio-intx: device INTx → host VFIO handler (masked) → irqfd → level SPI; guest ack + EOI → resamplefd → VFIO unmask"
        };
        (m, vec![note, path.into()])
    }
}

//! The device benchmark's triggers on arm64, the same four paths as on x86 with the arm64
//! mechanism under each:
//! - `irqfd`: an eventfd registered as irqfd on a GSI routed to an MSI through the vITS (what
//!   vhost and VFIO without IRQ bypass do): KVM translates device id / event id to the guest's LPI;
//! - `msi`: KVM_SIGNAL_MSI with the device id, written to the vITS's GITS_TRANSLATER;
//! - `line`: KVM_IRQ_LINE raising and lowering an edge SPI (`KVM_ARM_IRQ_TYPE_SPI << 24 | intid`);
//! - `level`: irqfd with a resamplefd on a level SPI: KVM keeps the line up until the guest's
//!   EOI, then signals the resamplefd (the S4 "irqfd + resample" path).
//!
//! KVM's default arm64 routing maps GSI `g` to SPI `32 + g` (virt/kvm/arm/vgic/vgic-irqfd.c,
//! `kvm_vgic_setup_default_irq_routing`); KVM_SET_GSI_ROUTING replaces the whole table, so the
//! table written here repeats those SPI entries and adds the MSI route.
use kvm_bindings::{
    kvm_irq_routing_entry, kvm_msi, KvmIrqRouting, KVM_ARM_IRQ_TYPE_SHIFT, KVM_ARM_IRQ_TYPE_SPI, KVM_IRQ_ROUTING_IRQCHIP, KVM_IRQ_ROUTING_MSI, KVM_MSI_VALID_DEVID,
};
use vmm_sys_util::eventfd::EventFd;

use crate::arch::common::eventfd;

use super::boot::{self, EDGE_SPI, GITS_TRANSLATER, ITS_DEVICE_ID, ITS_EVENT_ID, LEVEL_SPI, MSI_GSI, NR_IRQS};
use super::vm::Vm;
use crate::arch::Trigger;
use crate::arch::VmError;
use crate::config::Via;

/// The INTID the guest waits for on each path.
pub fn intid_for(via: Via) -> u32 {
    match via {
        Via::Irqfd | Via::Msi | Via::VfioMsi => boot::ITS_LPI,
        Via::Line => EDGE_SPI,
        Via::Level | Via::VfioIntx => LEVEL_SPI,
    }
}

/// KVM_IRQ_LINE's `irq` field for SPI `intid` on arm64 (Documentation/virt/kvm/api.rst, 4.25).
pub fn irq_line_spi(intid: u32) -> u32 {
    (KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT) | intid
}

/// The MSI the device sends: to the vITS's doorbell, carrying the event id, with the device id.
pub fn its_msi() -> kvm_msi {
    kvm_msi {
        address_lo: GITS_TRANSLATER as u32,
        address_hi: (GITS_TRANSLATER >> 32) as u32,
        data: ITS_EVENT_ID,
        flags: KVM_MSI_VALID_DEVID,
        devid: ITS_DEVICE_ID,
        ..Default::default()
    }
}

/// The routing table: every SPI GSI as KVM's default has it, plus `MSI_GSI` → the vITS.
pub fn routing_entries() -> Vec<kvm_irq_routing_entry> {
    let mut v: Vec<kvm_irq_routing_entry> = (0..NR_IRQS - 32)
        .map(|gsi| {
            let mut e = kvm_irq_routing_entry { gsi, type_: KVM_IRQ_ROUTING_IRQCHIP, ..Default::default() };
            e.u.irqchip.irqchip = 0;
            e.u.irqchip.pin = gsi;
            e
        })
        .filter(|e| e.gsi != MSI_GSI)
        .collect();
    let mut msi = kvm_irq_routing_entry { gsi: MSI_GSI, type_: KVM_IRQ_ROUTING_MSI, flags: KVM_MSI_VALID_DEVID, ..Default::default() };
    msi.u.msi.address_lo = GITS_TRANSLATER as u32;
    msi.u.msi.address_hi = (GITS_TRANSLATER >> 32) as u32;
    msi.u.msi.data = ITS_EVENT_ID;
    msi.u.msi.__bindgen_anon_1.devid = ITS_DEVICE_ID;
    v.push(msi);
    v
}

pub struct ArmTrigger<'a> {
    vm: &'a Vm,
    via: Via,
    irqfd: EventFd,
    resample: EventFd,
}

pub fn create(vm: &Vm, via: Via) -> Result<ArmTrigger<'_>, VmError> {
    let irqfd = eventfd("irqfd eventfd")?;
    let resample = eventfd("resamplefd eventfd")?;
    if matches!(via, Via::Irqfd | Via::Msi) && vm.its.is_none() {
        return Err(VmError::Unsupported(format!("--via {}: this host's KVM has no vITS (KVM_DEV_TYPE_ARM_VGIC_ITS), so there is no MSI to send", via.name())));
    }
    match via {
        Via::Irqfd => {
            let routing = KvmIrqRouting::from_entries(&routing_entries()).map_err(VmError::table("routing table"))?;
            vm.fd.set_gsi_routing(&routing).map_err(VmError::setup("KVM_SET_GSI_ROUTING"))?;
            vm.fd.register_irqfd(&irqfd, MSI_GSI).map_err(VmError::setup("KVM_IRQFD"))?;
        }
        Via::Level => vm.fd.register_irqfd_with_resample(&irqfd, &resample, LEVEL_SPI - 32).map_err(VmError::setup("KVM_IRQFD (resample)"))?,
        Via::Msi | Via::Line => {}
        Via::VfioMsi | Via::VfioIntx => return Err(VmError::Unsupported("the VFIO paths have their own trigger (assigned.rs)".into())),
    }
    Ok(ArmTrigger { vm, via, irqfd, resample })
}

impl Trigger for ArmTrigger<'_> {
    fn fire(&mut self) -> Result<(), VmError> {
        match self.via {
            Via::Irqfd | Via::Level => self.irqfd.write(1).map_err(|e| VmError::Setup { step: "irqfd write", source: e }),
            Via::Msi => self.vm.fd.signal_msi(its_msi()).map(|_| ()).map_err(VmError::setup("KVM_SIGNAL_MSI")),
            Via::Line => {
                let irq = irq_line_spi(EDGE_SPI);
                self.vm.fd.set_irq_line(irq, true).and_then(|_| self.vm.fd.set_irq_line(irq, false)).map_err(VmError::setup("KVM_IRQ_LINE"))
            }
            Via::VfioMsi | Via::VfioIntx => Err(VmError::Unsupported("the guest triggers the assigned device".into())),
        }
    }

    fn resampled(&mut self) -> bool {
        !self.via.is_level() || self.resample.read().is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_has_its_interrupt_and_encoding() {
        assert_eq!(irq_line_spi(40), 0x0100_0028, "type SPI (1) in bits 24-27, INTID 40");
        assert_eq!(intid_for(Via::Msi), boot::ITS_LPI);
        assert_eq!(intid_for(Via::Level), LEVEL_SPI);
        let m = its_msi();
        assert_eq!((m.address_lo as u64, m.flags, m.devid), (GITS_TRANSLATER, KVM_MSI_VALID_DEVID, ITS_DEVICE_ID));
        let r = routing_entries();
        assert_eq!(r.len() as u32, NR_IRQS - 32 + 1, "every SPI GSI as KVM's default, plus the MSI route");
        let msi = r.iter().find(|e| e.gsi == MSI_GSI).unwrap();
        assert_eq!(msi.type_, KVM_IRQ_ROUTING_MSI);
        // SAFETY: reading the union members these entries were written through (MSI, irqchip).
        let (devid, pin) = unsafe { (msi.u.msi.__bindgen_anon_1.devid, r.iter().find(|e| e.gsi == LEVEL_SPI - 32).unwrap().u.irqchip.pin) };
        assert_eq!((devid, pin), (ITS_DEVICE_ID, LEVEL_SPI - 32));
    }
}

//! The device benchmark's triggers on x86_64: an irqfd on a GSI routed to an MSI, KVM_SIGNAL_MSI,
//! KVM_IRQ_LINE on an edge IOAPIC pin, and an irqfd with a resamplefd on a level IOAPIC pin.
use vmm_sys_util::eventfd::EventFd;

use crate::arch::common::eventfd;

use super::vm::{Vm, EDGE_PIN, LEVEL_PIN, MSI_GSI};
use crate::abi::vector;
use crate::arch::Trigger;
use crate::config::DeviceVia;
use crate::error::KvmError;

pub struct X86Trigger<'a> {
    vm: &'a Vm,
    via: DeviceVia,
    irqfd: EventFd,
    resample: EventFd,
}

pub fn create(vm: &Vm, via: DeviceVia) -> Result<X86Trigger<'_>, KvmError> {
    let irqfd = eventfd("irqfd eventfd")?;
    let resample = eventfd("resamplefd eventfd")?;
    match via {
        DeviceVia::Irqfd => vm.fd.register_irqfd(&irqfd, MSI_GSI).map_err(KvmError::setup("KVM_IRQFD"))?,
        DeviceVia::Level => vm.fd.register_irqfd_with_resample(&irqfd, &resample, LEVEL_PIN).map_err(KvmError::setup("KVM_IRQFD (resample)"))?,
        DeviceVia::Msi | DeviceVia::Line => {}
        DeviceVia::VfioMsi | DeviceVia::VfioIntx => return Err(KvmError::Unsupported(format!("--via {}: VFIO device assignment is wired on arm64 only", via.name()))),
    }
    Ok(X86Trigger { vm, via, irqfd, resample })
}

impl Trigger for X86Trigger<'_> {
    fn fire(&mut self) -> Result<(), KvmError> {
        match self.via {
            DeviceVia::Irqfd | DeviceVia::Level => self.irqfd.write(1).map_err(|e| KvmError::Setup { step: "irqfd write", source: e }),
            DeviceVia::Msi => {
                let msi = kvm_bindings::kvm_msi { address_lo: 0xfee0_0000, data: vector::DEVICE as u32, ..Default::default() };
                self.vm.fd.signal_msi(msi).map(|_| ()).map_err(KvmError::setup("KVM_SIGNAL_MSI"))
            }
            DeviceVia::Line => self
                .vm
                .fd
                .set_irq_line(EDGE_PIN, true)
                .and_then(|_| self.vm.fd.set_irq_line(EDGE_PIN, false))
                .map_err(KvmError::setup("KVM_IRQ_LINE")),
            DeviceVia::VfioMsi | DeviceVia::VfioIntx => Err(KvmError::Unsupported("the VFIO paths are refused when the trigger is created".into())),
        }
    }

    fn resampled(&mut self) -> bool {
        !self.via.is_level() || self.resample.read().is_ok()
    }
}

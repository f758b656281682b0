//! The device benchmark's triggers on x86_64: an irqfd on a GSI routed to an MSI, KVM_SIGNAL_MSI,
//! KVM_IRQ_LINE on an edge IOAPIC pin, and an irqfd with a resamplefd on a level IOAPIC pin; and
//! the primitives bench's calls of the same kinds that deliver to no one ([`NoTarget`]).
use vmm_sys_util::eventfd::EventFd;

use crate::arch::common::eventfd;

use super::vm::{Vm, EDGE_PIN, LEVEL_PIN, MASKED_PIN, MSI_GSI, NO_DEST_GSI};
use crate::abi::vector;
use crate::arch::Trigger;
use crate::arch::VmError;
use crate::config::Via;

pub struct X86Trigger<'a> {
    vm: &'a Vm,
    via: Via,
    irqfd: EventFd,
    resample: EventFd,
}

pub fn create(vm: &Vm, via: Via) -> Result<X86Trigger<'_>, VmError> {
    let irqfd = eventfd("irqfd eventfd")?;
    let resample = eventfd("resamplefd eventfd")?;
    match via {
        Via::Irqfd => vm.fd.register_irqfd(&irqfd, MSI_GSI).map_err(VmError::setup("KVM_IRQFD"))?,
        Via::Level => vm.fd.register_irqfd_with_resample(&irqfd, &resample, LEVEL_PIN).map_err(VmError::setup("KVM_IRQFD (resample)"))?,
        Via::Msi | Via::Line => {}
        Via::VfioMsi | Via::VfioIntx => return Err(VmError::Unsupported(format!("--via {}: VFIO device assignment is wired on arm64 only", via.name()))),
    }
    Ok(X86Trigger { vm, via, irqfd, resample })
}

impl Trigger for X86Trigger<'_> {
    fn fire(&mut self) -> Result<(), VmError> {
        match self.via {
            Via::Irqfd | Via::Level => self.irqfd.write(1).map_err(|e| VmError::Setup { step: "irqfd write", source: e }),
            Via::Msi => {
                let msi = kvm_bindings::kvm_msi { address_lo: 0xfee0_0000, data: vector::DEVICE as u32, ..Default::default() };
                self.vm.fd.signal_msi(msi).map(|_| ()).map_err(VmError::setup("KVM_SIGNAL_MSI"))
            }
            Via::Line => self.vm.fd.set_irq_line(EDGE_PIN, true).and_then(|_| self.vm.fd.set_irq_line(EDGE_PIN, false)).map_err(VmError::setup("KVM_IRQ_LINE")),
            Via::VfioMsi | Via::VfioIntx => Err(VmError::Unsupported("the VFIO paths are refused when the trigger is created".into())),
        }
    }

    fn resampled(&mut self) -> bool {
        !self.via.is_level() || self.resample.read().is_ok()
    }
}

/// The primitives bench's host-timed KVM calls (`crate::primitives`), each the trigger side of a
/// device path with the delivery left out: the work the host thread does before the vCPU is
/// kicked. `fire` is the timed call; what resets the state for the next one is not timed.
pub enum NoTarget<'a> {
    /// KVM_SIGNAL_MSI to `abi::NO_APIC_ID`: kvm_send_userspace_msi → kvm_set_msi →
    /// kvm_irq_delivery_to_apic, which finds no destination (Linux 6.x virt/kvm/irqchip.c,
    /// arch/x86/kvm/irq_comm.c).
    SignalMsi(&'a Vm),
    /// KVM_IRQ_LINE raising a masked IOAPIC pin: kvm_vm_ioctl_irq_line → kvm_set_irq →
    /// kvm_ioapic_set_irq, which stops at the mask (arch/x86/kvm/ioapic.c ioapic_service); the
    /// line is lowered again untimed.
    IrqLineMasked(&'a Vm),
    /// An eventfd write to an irqfd whose MSI route has no destination: eventfd_write →
    /// irqfd_wakeup → kvm_arch_set_irq_inatomic (virt/kvm/eventfd.c), all in the writer's
    /// syscall.
    Irqfd(EventFd),
}

/// The primitives' calls, by class name.
pub fn no_target_calls(vm: &Vm) -> Result<Vec<(&'static str, Box<dyn Trigger + '_>)>, VmError> {
    let fd = eventfd("irqfd eventfd (no destination)")?;
    vm.fd.register_irqfd(&fd, NO_DEST_GSI).map_err(VmError::setup("KVM_IRQFD (no destination)"))?;
    Ok(vec![
        ("ioctl_signal_msi", Box::new(NoTarget::SignalMsi(vm)) as Box<dyn Trigger>),
        ("ioctl_irq_line", Box::new(NoTarget::IrqLineMasked(vm))),
        ("irqfd_signal", Box::new(NoTarget::Irqfd(fd))),
    ])
}

impl Trigger for NoTarget<'_> {
    fn fire(&mut self) -> Result<(), VmError> {
        match self {
            NoTarget::SignalMsi(vm) => {
                let msi = kvm_bindings::kvm_msi { address_lo: 0xfee0_0000 | (crate::abi::NO_APIC_ID as u32) << 12, data: vector::DEVICE as u32, ..Default::default() };
                // No destination: KVM answers 0 (delivered to none) or an error; both are the call.
                let _ = vm.fd.signal_msi(msi);
                Ok(())
            }
            NoTarget::IrqLineMasked(vm) => vm.fd.set_irq_line(MASKED_PIN, true).map_err(VmError::setup("KVM_IRQ_LINE (masked pin)")),
            NoTarget::Irqfd(fd) => fd.write(1).map_err(|e| VmError::Setup { step: "irqfd write (no destination)", source: e }),
        }
    }

    /// Untimed: lower the masked line again (and drain nothing else).
    fn resampled(&mut self) -> bool {
        if let NoTarget::IrqLineMasked(vm) = self {
            let _ = vm.fd.set_irq_line(MASKED_PIN, false);
        }
        true
    }
}

//! A PCI device assigned to the benchmark guest with VFIO, so that the device's MSI reaches the
//! guest through KVM's irq bypass (GICv4 direct vLPI injection on arm64) — the one path a host
//! thread's irqfd can never take: KVM maps an MSI to a vLPI only when VFIO registered the
//! eventfd as an irq-bypass producer (virt/lib/irqbypass.c; `kvm_arch_irq_bypass_add_producer`
//! → `kvm_vgic_v4_set_forwarding`, arch/arm64/kvm/vgic/vgic-v4.c, Linux 6.1).
//!
//! - [`locate`]: which device (`--vfio-device` or the only one bound to vfio-pci), pure over a
//!   sysfs root so it is tested without one.
//! - [`device`]: the device opened through rust-vmm's `vfio-ioctls` 0.10 (its kvm-ioctls 0.25 /
//!   kvm-bindings 0.14 / vm-memory 0.18 / vmm-sys-util 0.15 are exactly this workspace's, so no
//!   wrapper of our own is needed): container + group + device fd, memory and bus-master
//!   enabled in the command register, BAR0 mmap'ed (to become a KVM memory slot), MSI or INTx
//!   signalled to eventfds.
//! - [`delivery`]: how each interrupt was delivered, from the host's /proc/interrupts (vPE
//!   doorbells, the host's own VFIO handler) — with direct injection KVM never sees it.
//! - [`gicv4`]: whether this host's KVM uses GICv4 (a boot option in Linux 6.1, no per-VM switch).
pub mod delivery;
pub mod device;
pub mod gicv4;
pub mod locate;

/// Why an assigned device could not be found, opened or wired.
#[derive(Debug, thiserror::Error)]
pub enum VfioError {
    /// No usable device: the message says what to bind and how.
    #[error("{0}")]
    NoDevice(String),
    /// A VFIO ioctl (through vfio-ioctls) failed.
    #[error("VFIO {step}: {source}")]
    Vfio { step: &'static str, source: vfio_ioctls::VfioError },
    /// The device does not offer what the benchmark needs (an mmap-able BAR0, an MSI vector…).
    #[error("{0}")]
    Unsuitable(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

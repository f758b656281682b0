//! The benchmark vocabulary every part of irqlab speaks — which benchmark, how the guest waits,
//! how a device interrupt is raised — defined once: `irqlab run`'s flags and matrix files (clap
//! and serde), the micro-VMM's configuration (`kvm`), the host model's workloads and `calibrate`
//! (`sim`) and the result parameters all use these types and their names, so a name cannot mean
//! one thing to the VMM and another to the model. (The host model's workload adds shorthands of
//! its own on top of [`Bench`]: `timer-hlt`, `timer-busy`, `cyclictest`.) The regression gate's
//! question, `--fail-on slower[:STAT]` ([`FailOn`]), is here too (`fail_on.rs`), for `irqlab
//! compare` and `irqlab-lab ab` alike.
//!
//! The statistic names live in [`stat`] (one enum for every crate, issue 44 item 2), the GIC
//! generation in [`Gic`] (`gic.rs`: v2, v3, v4.0, v4.1 and what each implies).
//!
//! The clap derive is behind the `clap` feature, so the crates that only read results do not
//! pull in clap.
use serde::{Deserialize, Serialize};

mod fail_on;
mod gic;
pub mod stat;
pub mod sweep;

pub use fail_on::{parse_fail_on, FailOn, FailOnError, GateOutputs};
pub use gic::{Gic, GicError};
pub use sweep::did_you_mean;

/// Which benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Bench {
    /// The guest's timer `period` ahead; latency = arrival − deadline.
    Timer,
    /// vCPU 0 → vCPU 1 (x86 x2APIC ICR, arm64 SGI); one-way and round trip.
    Ipi,
    /// A host thread raises a device interrupt; latency = guest handler − host trigger.
    Device,
}

/// How the guest waits for the interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Wait {
    /// The guest waits in HLT (x86) or WFI (arm64; `wfi` names the same setting): the vCPU
    /// thread sleeps in the host and halt polling applies.
    #[cfg_attr(feature = "clap", value(alias = "wfi"))]
    #[serde(alias = "wfi")]
    Hlt,
    /// The guest spins (x86: in ring 3): the vCPU is running when the interrupt comes.
    Busy,
}

/// How the device benchmark raises its interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// An eventfd registered as irqfd on a GSI routed to an MSI (what vhost and VFIO use).
    Irqfd,
    /// KVM_SIGNAL_MSI from the VMM thread.
    Msi,
    /// KVM_IRQ_LINE on an edge-triggered line (x86 IOAPIC pin, arm64 SPI).
    Line,
    /// irqfd with a resamplefd on a level-triggered line.
    Level,
    /// arm64: a PCI device assigned with VFIO raises an MSI (VFIO_DEVICE_SET_IRQS → eventfd →
    /// irqfd on an MSI route to the vITS); with GICv4 KVM's irq bypass maps it to a vLPI for
    /// direct injection. The guest triggers the device itself.
    #[cfg_attr(feature = "clap", value(name = "vfio-msi"))]
    #[serde(rename = "vfio-msi")]
    VfioMsi,
    /// arm64: the assigned device's INTx (VFIO INTx eventfd + unmask eventfd → irqfd with a
    /// resamplefd on a level SPI, the S4 path). The guest triggers and acknowledges the device.
    #[cfg_attr(feature = "clap", value(name = "vfio-intx"))]
    #[serde(rename = "vfio-intx")]
    VfioIntx,
}

/// `on` / `off` (a run's GICv4 direct injection setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum OnOff {
    On,
    Off,
}

/// How the guest makes an assigned device (QEMU's `edu`, hw/misc/edu.c) raise its interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum VfioTrigger {
    /// Write 1 to the raise register (BAR0 + 0x60): the interrupt comes with the write, while
    /// the guest's vCPU is running.
    #[default]
    Raise,
    /// Start a 4-byte DMA with its completion interrupt (BAR0 + 0x98): edu raises it
    /// 100 ms of QEMU virtual time later, when the guest is already waiting — what exercises
    /// a non-resident vPE (GICv4 doorbells) when KVM traps the guest's WFI.
    Dma,
}

impl VfioTrigger {
    pub fn name(self) -> &'static str {
        match self {
            VfioTrigger::Raise => "raise",
            VfioTrigger::Dma => "dma",
        }
    }
}

impl Bench {
    pub const ALL: [Bench; 3] = [Bench::Timer, Bench::Ipi, Bench::Device];

    pub fn name(self) -> &'static str {
        match self {
            Bench::Timer => "timer",
            Bench::Ipi => "ipi",
            Bench::Device => "device",
        }
    }
}

impl Wait {
    /// The name results record (`hlt`, `busy`).
    pub fn name(self) -> &'static str {
        match self {
            Wait::Hlt => "hlt",
            Wait::Busy => "busy",
        }
    }
}

impl Via {
    /// The paths a host thread drives (every host with KVM has them).
    pub const ALL: [Via; 4] = [Via::Irqfd, Via::Msi, Via::Line, Via::Level];
    /// The paths through an assigned device (arm64, a device bound to vfio-pci).
    pub const VFIO: [Via; 2] = [Via::VfioMsi, Via::VfioIntx];

    /// The name the CLI, the matrix files and the class names use (`device_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Via::Irqfd => "irqfd",
            Via::Msi => "msi",
            Via::Line => "line",
            Via::Level => "level",
            Via::VfioMsi => "vfio-msi",
            Via::VfioIntx => "vfio-intx",
        }
    }

    /// Through a VFIO-assigned device: the guest raises the interrupt, not a host thread.
    pub fn is_vfio(self) -> bool {
        matches!(self, Via::VfioMsi | Via::VfioIntx)
    }

    /// Any path by its name.
    pub fn from_name(s: &str) -> Option<Via> {
        Via::ALL.into_iter().chain(Via::VFIO).find(|v| v.name() == s)
    }

    /// Level-triggered: the host waits for the guest's EOI (resamplefd) before the next trigger.
    pub fn is_level(self) -> bool {
        self == Via::Level
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_are_the_names() {
        for v in Via::ALL.into_iter().chain(Via::VFIO) {
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{}\"", v.name()));
            assert_eq!(Via::from_name(v.name()), Some(v));
        }
        assert_eq!(serde_json::from_str::<Via>("\"vfio-msi\"").unwrap(), Via::VfioMsi);
        assert!(Via::VfioIntx.is_vfio() && !Via::Level.is_vfio());
        for b in Bench::ALL {
            assert_eq!(serde_json::from_str::<Bench>(&format!("\"{}\"", b.name())).unwrap(), b);
        }
        assert_eq!(serde_json::from_str::<Wait>("\"wfi\"").unwrap(), Wait::Hlt, "wfi is arm64's name for the halt wait");
        assert_eq!(serde_json::to_string(&Wait::Busy).unwrap(), "\"busy\"");
        assert!(serde_json::from_str::<Via>("\"bogus\"").is_err());
    }
}

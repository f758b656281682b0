//! The one place that knows which architecture this build is for. Everything else in the crate
//! is written against [`Arch`] and [`GuestVm`] and builds on every target (`cargo check --target
//! aarch64-unknown-linux-gnu` in `.ci/run` keeps it so), as Firecracker keeps
//! `src/vmm/src/arch/{x86_64,aarch64}/` behind one interface.
//!
//! Each architecture module has the same files: `boot.rs` (guest memory layout and boot state),
//! `vm.rs` (VM, irqchip, vCPUs), `trigger.rs` (device-interrupt injection), and `exits.rs`
//! (KVM exits decoded into the neutral [`crate::exit::Exit`]).
use std::os::fd::RawFd;

use kvm_ioctls::VcpuFd;

use crate::config::{BenchConfig, ConfigError};
pub mod error;
use crate::abi::SharedPage;
use crate::exit::Exit;
pub use error::VmError;

pub mod common;

#[cfg(target_arch = "x86_64")]
pub mod x86_64;
#[cfg(target_arch = "x86_64")]
pub use self::x86_64::X86_64 as Imp;

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "aarch64")]
pub use self::aarch64::Aarch64 as Imp;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("irqlab's micro-VMM supports Linux on x86_64 and aarch64 only");

/// A benchmark VM of this architecture, as the run loop uses it.
pub trait GuestVm: SharedPage + Sync {
    /// The VM fd (for KVM's binary stats).
    fn vm_fd(&self) -> RawFd;
    /// What KVM answered to the capability requests, and other set-up facts, for the result.
    fn notes(&self) -> Vec<String>;
    /// Guest counter − host counter and how it was found, for architectures whose guest does not
    /// stamp its entry (`Arch::ENTRY_STAMP` false); `None` where no offset is needed or known.
    fn counter_offset(&self) -> Option<(i64, String)> {
        None
    }
    /// Settings that were asked for and what is actually in force (`halt_poll_ns` → `200000`).
    fn in_force(&self) -> Vec<(String, String)>;
    /// The fourth word of sample record `k` (the primitives bench fills all four); `None` on an
    /// architecture whose guest has no primitives bench.
    fn record_word3(&self, _k: u64) -> Option<u64> {
        None
    }
}

/// Raises the device benchmark's interrupt from a host thread.
pub trait Trigger {
    /// Raise one interrupt.
    fn fire(&mut self) -> Result<(), VmError>;
    /// Level-triggered paths: whether the guest's EOI has come back (resamplefd); edge paths
    /// answer `true` at once.
    fn resampled(&mut self) -> bool;
    /// An assigned device the guest raises itself: the host connects its interrupt once the
    /// guest is ready ([`Trigger::connect`]) and then only collects the guest's samples.
    fn guest_paced(&self) -> bool {
        false
    }
    /// Called once the guest has signalled READY, before the first sample.
    fn connect(&mut self) -> Result<(), VmError> {
        Ok(())
    }
    /// Counters and notes this path adds once `delivered` interrupts were taken.
    fn finish(&mut self, _delivered: u64) -> (std::collections::BTreeMap<String, u64>, Vec<String>) {
        Default::default()
    }
}

/// One architecture's micro-VMM: creating its VM and vCPUs, its counter, decoding exits and
/// triggering interrupts. Describing the host ([`DescribeHost`]) and the trace dialect
/// ([`TraceDialect`]) are traits of their own.
pub trait Arch {
    type Vm: GuestVm;
    /// `x86_64` / `aarch64`, as results record it.
    const NAME: &'static str;
    /// Whether the guest stamps its entry (`abi::slot::ENTRY_TSC`) so the host can find the
    /// counter offset; a guest that keeps only differences of its own counter needs none.
    const ENTRY_STAMP: bool;
    /// The guest's timer records carry each sample's deadline (otherwise the run recovers the
    /// deadlines from the last one armed, `runner::collect`).
    const TIMER_RECORDS_DEADLINE: bool;
    /// Whether the guest's device bench can spin instead of halting (`wait = busy`): a device
    /// interrupt to a running vCPU (the primitives bench's `irq_running`).
    const DEVICE_BUSY: bool = false;
    /// Refuse flags this architecture does not have (exit 2 naming the flag and the architecture),
    /// and a spinning device bench where it cannot spin ([`BenchConfig::check_device_spin`]).
    fn check_flags(cfg: &BenchConfig) -> Result<(), ConfigError>;
    /// Create the VM with the guest loaded and its vCPUs ready to run; also returns the counter
    /// frequency in kHz (x86: TSC; arm64: the generic timer's CNTFRQ).
    fn create(cfg: &BenchConfig) -> Result<(Self::Vm, Vec<VcpuFd>, u64), VmError>;
    /// The host's reading of the counter the guest stamps samples with.
    fn counter() -> u64;
    /// Decode one KVM_RUN outcome.
    fn decode_exit(r: Result<kvm_ioctls::VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit;
    /// The device benchmark's trigger for `cfg.via`.
    fn trigger<'a>(vm: &'a Self::Vm, cfg: &BenchConfig) -> Result<Box<dyn Trigger + 'a>, VmError>;
    /// The primitives bench's host-timed KVM calls that deliver nothing (`crate::primitives`):
    /// (class, a trigger). Default: none (the architecture has no primitives bench).
    fn primitive_calls<'a>(_vm: &'a Self::Vm) -> Result<Vec<(&'static str, Box<dyn Trigger + 'a>)>, VmError> {
        Ok(Vec::new())
    }
    /// x86: the PV IPI hypercall probe's VM (guest bench `PV_IPI_PROBE`, two vCPUs for `cfg`), or
    /// `None` when the host does not advertise KVM_FEATURE_PV_SEND_IPI; other architectures say
    /// the hypercall does not exist there. The driver (`runner::pv_ipi`) runs it.
    fn pv_ipi_vm(cfg: &BenchConfig) -> Result<Option<(Self::Vm, Vec<VcpuFd>)>, VmError>;
}

/// What an architecture adds to describing the host and reading a finished run — apart from
/// running a VM ([`Arch`]), so that describing needs no VM.
pub trait DescribeHost {
    /// This architecture's part of the host description (CPU model, virtualization support,
    /// interrupt controller), from /proc/cpuinfo's text and the files it reads itself.
    fn describe_host(cpuinfo: &str, m: &mut std::collections::BTreeMap<String, String>);
    /// What this architecture reads off a finished run's counters (notes, policies in force).
    fn after_run(_m: &mut crate::measurement::Measurement) {}
}

/// How `--breakdown` reads this architecture's trace: its clock and the measured interrupt's
/// target in the trace's terms (the dialect `tracefs::path` speaks for it).
pub trait TraceDialect {
    /// The trace clock `--breakdown` uses: `x86-tsc` counts in the counter's own ticks; a ns
    /// clock (`mono_raw`) is mapped onto the counter (`tracefs::clock`).
    fn trace_clock() -> &'static str;
    /// The measured interrupt's target and number in the trace's terms (x86: APIC id and vector;
    /// arm64: vCPU index and INTID), or why this path cannot be broken down on this architecture.
    fn trace_target(cfg: &BenchConfig) -> Result<(u32, u32), crate::tracefs::TraceError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Bench, Wait};

    /// The spin rule moved out of `BenchConfig::validate`: each architecture's `check_flags`
    /// applies it with its own `DEVICE_BUSY`.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn x86_keeps_eight_vcpus_and_has_no_ipi_target() {
        let nine = BenchConfig { kind: Bench::Ipi, vcpus: 9, ..Default::default() };
        assert_eq!(Imp::check_flags(&nine).unwrap_err().to_string(), "--vcpus: expected 1 to 8 on x86_64, got 9");
        let t = BenchConfig { kind: Bench::Ipi, vcpus: 2, ipi_target: Some(1), ..Default::default() };
        assert!(Imp::check_flags(&t).unwrap_err().to_string().starts_with("--ipi-target does not exist on"));
    }

    #[test]
    fn check_flags_applies_the_spin_rule_of_this_architecture() {
        let busy_device = BenchConfig { kind: Bench::Device, wait: Wait::Busy, ..Default::default() };
        let r = Imp::check_flags(&busy_device);
        assert_eq!(r.is_ok(), Imp::DEVICE_BUSY, "{r:?}");
        if let Err(e) = r {
            assert!(e.to_string().starts_with("--wait busy (the device bench spins only"), "{e}");
        }
    }
}

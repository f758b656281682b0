//! # kvm — irqlab's micro-VMM: real interrupt latency on this host's KVM
//!
//! Boots a tiny 64-bit guest (assembled from `guest/bench.S` at build time, loaded at 0x10000)
//! with identity page tables, GDT/IDT/TSS, the in-kernel irqchip and x2APIC programmed from the
//! host, on the rust-vmm crates (kvm-ioctls, kvm-bindings, vm-memory, vmm-sys-util), and measures:
//! - `timer`: TSC-deadline interrupt `period` ahead, latency = arrival − deadline (the guest waits
//!   in HLT, or spins in ring 3);
//! - `ipi`: vCPU 0 → vCPU 1 through the x2APIC ICR, one-way and round trip; the PV IPI hypercall
//!   is probed separately with a bounded timeout;
//! - `device`: a host thread triggers through irqfd (MSI route), KVM_SIGNAL_MSI, KVM_IRQ_LINE (edge
//!   IOAPIC pin) or a level-triggered irqfd with resamplefd; latency = guest handler TSC − host TSC
//!   after checking the guest's TSC offset.
//!
//! Every run records KVM's binary stats (exits, halt exits, halt-poll outcomes, emulated
//! instructions…) and a host description; a watchdog ends a run that stops making progress,
//! keeping the samples taken. Guest hot loops stay in HLT or ring 3 and handlers are a few dozen
//! instructions, because on nested PVM hosts guest ring 0 is emulated instruction by instruction.

pub mod config;
pub mod error;
pub mod exit;
pub mod host;
pub mod layout;
pub mod measurement;
pub mod stats;
pub mod tracefs;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod bench;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub use bench::Threads;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub mod threads;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod vm;

pub use config::{BenchConfig, BenchKind, ConfigError, DeviceVia, WaitMode};
pub use error::KvmError;
pub use host::host_description;
pub use measurement::Measurement;

/// Whether /dev/kvm can be used here; the error says why not (for skipping tests).
pub fn kvm_available() -> Result<(), String> {
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").map(|_| ()).map_err(|e| format!("/dev/kvm: {e}"))
}

/// Run one measurement (see [`BenchConfig`]); `progress` receives increments of samples taken.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn run_bench(cfg: &BenchConfig, progress: &dyn Fn(u64)) -> Result<Measurement, KvmError> {
    bench::run_bench(cfg, progress)
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub fn run_bench(_cfg: &BenchConfig, _progress: &dyn Fn(u64)) -> Result<Measurement, KvmError> {
    Err(KvmError::Unsupported)
}

/// Probe KVM_HC_SEND_IPI: "supported: …" or "unsupported on this host: …", within `timeout`.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn probe_pv_ipi(timeout: std::time::Duration) -> Result<String, KvmError> {
    bench::probe_pv_ipi(timeout)
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub fn probe_pv_ipi(_timeout: std::time::Duration) -> Result<String, KvmError> {
    Err(KvmError::Unsupported)
}

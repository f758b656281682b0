//! # kvm — irqlab's micro-VMM: real interrupt latency on this host's KVM
//!
//! Boots a tiny benchmark guest on the rust-vmm crates (kvm-ioctls, kvm-bindings, vm-memory,
//! vmm-sys-util) and measures:
//! - `timer`: the guest's timer (x86 TSC deadline; arm64 virtual timer CNTV_CVAL) armed `period`
//!   ahead, latency = arrival − deadline (the guest waits in HLT/WFI, or spins);
//! - `ipi`: vCPU 0 → vCPU 1 (x86 x2APIC ICR; arm64 SGI through ICC_SGI1R_EL1), one-way and round
//!   trip; on x86 the PV IPI hypercall is probed separately with a bounded timeout;
//! - `device`: a host thread triggers through irqfd, an MSI, KVM_IRQ_LINE or a level irqfd with
//!   resamplefd; latency = guest handler stamp − host stamp after checking the counter offset.
//!
//! Every run records KVM's binary stats and a host description; a watchdog ends a run that stops
//! making progress, keeping the samples taken.
//!
//! Layout (Firecracker's `arch/` split): the architecture-neutral parts — [`config`] (the one
//! bench/wait/via vocabulary), [`error`], [`abi`] (the guest contract; `build.rs` generates the
//! guest assembly's constants from it), [`exit`] (neutral exits), [`runner`] (the run loop and
//! its watchdog), [`host`], [`tracefs`], [`measurement`] — build on every target; everything
//! architecture-specific sits behind [`arch::Arch`] in `arch/x86_64/` and `arch/aarch64/`, and
//! `#[cfg(target_arch)]` appears only in `arch/mod.rs` and `build.rs`.

/// The guest contract: shared-page slots, sample ring, benchmark and completion codes.
pub mod abi;
pub mod arch;
pub mod config;
pub mod error;
pub mod exit;
pub mod host;
pub mod measurement;
pub mod primitives;
pub mod runner;
pub mod tracefs;
pub mod vfio;

use arch::Arch;

pub use config::{BenchConfig, BenchKind, ConfigError, DeviceVia, WaitMode};
pub use error::KvmError;
pub use host::describe::host_description;
pub use measurement::{Measurement, Threads};
pub use primitives::run_primitives;
pub use runner::{run_bench, RunError};

/// The architecture this build measures on (`x86_64`, `aarch64`).
pub const ARCH: &str = arch::Imp::NAME;

/// Whether /dev/kvm can be used here; the error says why not (for skipping tests).
pub fn kvm_available() -> Result<(), String> {
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").map(|_| ()).map_err(|e| format!("/dev/kvm: {e}"))
}

/// Refuse flags this architecture does not have, before anything runs.
pub fn check_flags(cfg: &BenchConfig) -> Result<(), ConfigError> {
    arch::Imp::check_flags(cfg)
}

/// Probe the PV IPI hypercall: "supported: …" or "unsupported on this host: …", within `timeout`.
pub fn probe_pv_ipi(timeout: std::time::Duration) -> Result<String, KvmError> {
    arch::Imp::probe_pv_ipi(timeout)
}

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
//! Layout: five layers, each importing only from the layers above it in this list (the test
//! `tests/layers.rs` reads the crate's sources and fails on an upward import):
//! 1. contracts and data — [`abi`] (the guest contract and [`abi::SharedPage`]; `build.rs`
//!    generates the guest assembly's constants from it), [`config`] (the one bench/wait/via
//!    vocabulary; a leaf), [`exit`] (neutral exits), [`measurement`] (with the breakdown's data), [`plan`] (a run's points, from flags or a matrix file);
//! 2. host services — [`host`], [`tracefs`], [`vfio`];
//! 3. architectures — [`arch`]: [`arch::Arch`] runs a VM, [`arch::DescribeHost`] and
//!    [`arch::TraceDialect`] describe the host and the trace; `arch/x86_64/` and `arch/aarch64/`
//!    (Firecracker's split), `#[cfg(target_arch)]` only in `arch/mod.rs` and `build.rs`;
//! 4. drivers — [`runner`] (the run loop, its watchdog, the traced run), [`primitives`],
//!    [`session`] (a run's points measured, repeated in rounds and pooled: `irqlab run`'s work);
//! 5. facade — this file. The crate's error is the drivers' [`DriverError`], built with `#[from]`
//!    from each layer's own error (config, threads, trace, VM, run loop), each kept as its source.
//!
//! The layers below the architectures build and unit-test on every target.

/// The guest contract: shared-page slots, sample ring, benchmark and completion codes.
pub mod abi;
pub mod arch;
pub mod config;
pub mod exit;
pub mod host;
pub mod measurement;
pub mod plan;
pub mod primitives;
pub mod runner;
pub mod session;
pub mod tracefs;
pub mod vfio;

use arch::Arch;

pub use config::{Bench, BenchConfig, ConfigError, Via, Wait};
pub use measurement::{Measurement, Threads};
pub use runner::traced::{preflight, TraceOptions};
pub use runner::{DriverError, RunError};

/// Run one measurement (see [`runner::run_bench`]).
pub fn run_bench(cfg: &BenchConfig, progress: &dyn Fn(u64)) -> Result<Measurement, DriverError> {
    runner::run_bench(cfg, progress)
}

/// Run one measurement under `--breakdown`'s trace (see [`runner::traced::run_traced`]).
pub fn run_traced(cfg: &BenchConfig, progress: &dyn Fn(u64), opts: &TraceOptions) -> Result<Measurement, DriverError> {
    runner::traced::run_traced(cfg, progress, opts)
}

/// Run the primitives bench (see [`primitives::run_primitives`]).
pub fn run_primitives(cfg: &BenchConfig, progress: &dyn Fn(u64)) -> Result<Measurement, DriverError> {
    primitives::run_primitives(cfg, progress)
}

/// CPU model, kernel, KVM module and parameters, and this architecture's part (see
/// [`host::describe::host_description_with`]).
pub fn host_description() -> std::collections::BTreeMap<String, String> {
    host::describe::host_description_with(<arch::Imp as arch::DescribeHost>::describe_host)
}

/// The architecture this build measures on (`x86_64`, `aarch64`).
pub const ARCH: &str = arch::Imp::NAME;

/// Whether /dev/kvm can be used here; the error says why not (for skipping tests).
pub fn kvm_available() -> Result<(), host::KvmUnavailable> {
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").map(|_| ()).map_err(host::KvmUnavailable)
}

/// Refuse flags this architecture does not have, before anything runs.
pub fn check_flags(cfg: &BenchConfig) -> Result<(), ConfigError> {
    arch::Imp::check_flags(cfg)
}

/// Probe the PV IPI hypercall: "supported: …" or "unsupported on this host: …", within `timeout`.
pub fn probe_pv_ipi(timeout: std::time::Duration) -> Result<String, DriverError> {
    runner::pv_ipi::probe_pv_ipi(timeout)
}

//! What to measure: a benchmark and its knobs, validated before any VM is created.
use std::time::Duration;

use crate::layout::{MAX_SAMPLES, MAX_VCPUS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchKind {
    /// TSC-deadline timer `period` ahead; latency = arrival − deadline.
    Timer,
    /// vCPU 0 → vCPU 1 through the x2APIC ICR; one-way and round trip.
    Ipi,
    /// A host thread triggers a device interrupt; latency = guest handler − host trigger.
    Device,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// The guest waits in HLT.
    Hlt,
    /// The guest spins in a ring-3 loop (ring 3 runs natively on nested PVM hosts).
    Busy,
}

/// How the device benchmark raises its interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceVia {
    /// An eventfd registered as irqfd on a GSI routed to an MSI.
    Irqfd,
    /// KVM_SIGNAL_MSI.
    Msi,
    /// KVM_IRQ_LINE on an edge-triggered IOAPIC pin.
    Line,
    /// irqfd with a resamplefd on a level-triggered IOAPIC pin.
    Level,
}

/// A measurement to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    pub kind: BenchKind,
    pub samples: u64,
    /// Samples excluded from warm max (and reported).
    pub warmup: u64,
    /// Time between samples (timer: how far ahead the deadline is), microseconds.
    pub period_us: f64,
    /// The period in TSC cycles instead of µs (as kvm-unit-tests' tscdeadline_latency takes it).
    pub period_cycles: Option<u64>,
    pub wait: WaitMode,
    pub via: DeviceVia,
    /// IPI: also probe the KVM PV IPI hypercall.
    pub pv_ipi: bool,
    /// KVM_CAP_HALT_POLL (per VM), nanoseconds; `None` keeps the host default.
    pub halt_poll_ns: Option<u64>,
    /// Ask KVM_CAP_X86_DISABLE_EXITS for HLT.
    pub disable_hlt_exits: bool,
    pub vcpus: u32,
    /// Host CPU for each vCPU thread (empty: not pinned).
    pub pin: Vec<usize>,
    /// The watchdog: a run that makes no progress for this long is stopped.
    pub stall_timeout: Duration,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            kind: BenchKind::Timer,
            samples: 1000,
            warmup: 1,
            period_us: 77.0,
            period_cycles: None,
            wait: WaitMode::Hlt,
            via: DeviceVia::Irqfd,
            pv_ipi: false,
            halt_poll_ns: None,
            disable_hlt_exits: false,
            vcpus: 1,
            pin: Vec::new(),
            stall_timeout: Duration::from_secs(5),
        }
    }
}

/// An impossible configuration; the message names the flag.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// --samples must be between 1 and the sample area's capacity.
    #[error("--samples: expected 1 to {max}, got {got}")]
    Samples { got: u64, max: u64 },
    /// --warmup must leave samples to measure.
    #[error("--warmup: expected fewer than --samples ({samples}), got {got}")]
    Warmup { got: u64, samples: u64 },
    /// --period-us must be positive and not absurd.
    #[error("--period-us: expected 10 to 10,000,000 µs, got {0}")]
    Period(f64),
    /// --period-cycles must be positive and not absurd.
    #[error("--period-cycles: expected 10,000 to 100,000,000,000 TSC cycles, got {0}")]
    PeriodCycles(u64),
    /// --vcpus out of range.
    #[error("--vcpus: expected 1 to {max}{why}, got {got}")]
    Vcpus { got: u32, max: u32, why: &'static str },
    /// --pin does not match the vCPU count or names a CPU this host does not have.
    #[error("--pin: {0}")]
    Pin(String),
    /// A flag that does not apply to this benchmark.
    #[error("{flag} does not apply to `{bench}`")]
    NotApplicable { flag: &'static str, bench: &'static str },
}

impl BenchKind {
    pub fn name(self) -> &'static str {
        match self {
            BenchKind::Timer => "timer",
            BenchKind::Ipi => "ipi",
            BenchKind::Device => "device",
        }
    }
}

impl BenchConfig {
    /// Reject impossible combinations. `host_cpus` is the number of CPUs threads can be pinned to.
    pub fn validate(&self, host_cpus: usize) -> Result<(), ConfigError> {
        if self.samples == 0 || self.samples > MAX_SAMPLES {
            return Err(ConfigError::Samples { got: self.samples, max: MAX_SAMPLES });
        }
        if self.warmup >= self.samples {
            return Err(ConfigError::Warmup { got: self.warmup, samples: self.samples });
        }
        if let Some(c) = self.period_cycles {
            if !(10_000..=100_000_000_000).contains(&c) {
                return Err(ConfigError::PeriodCycles(c));
            }
        } else if !(10.0..=10_000_000.0).contains(&self.period_us) {
            return Err(ConfigError::Period(self.period_us));
        }
        let min_vcpus = if self.kind == BenchKind::Ipi { 2 } else { 1 };
        if self.vcpus < min_vcpus || self.vcpus > MAX_VCPUS {
            return Err(ConfigError::Vcpus {
                got: self.vcpus,
                max: MAX_VCPUS,
                why: if self.kind == BenchKind::Ipi { " (at least 2 for ipi)" } else { "" },
            });
        }
        if !self.pin.is_empty() {
            if self.pin.len() != self.vcpus as usize {
                return Err(ConfigError::Pin(format!("one host CPU per vCPU ({}), got {}", self.vcpus, self.pin.len())));
            }
            if let Some(c) = self.pin.iter().find(|c| **c >= host_cpus) {
                return Err(ConfigError::Pin(format!("host CPU {c} does not exist (this host has {host_cpus})")));
            }
        }
        if self.pv_ipi && self.kind != BenchKind::Ipi {
            return Err(ConfigError::NotApplicable { flag: "--pv-ipi", bench: self.kind.name() });
        }
        if self.wait == WaitMode::Busy && self.kind != BenchKind::Timer {
            return Err(ConfigError::NotApplicable { flag: "--wait busy", bench: self.kind.name() });
        }
        Ok(())
    }

    /// The period in TSC cycles at `tsc_khz`.
    pub fn period_cycles(&self, tsc_khz: u64) -> u64 {
        self.period_cycles.unwrap_or_else(|| (self.period_us * tsc_khz as f64 / 1000.0).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_combinations_are_named() {
        let ok = BenchConfig::default();
        assert!(ok.validate(2).is_ok());
        let e = |c: BenchConfig| c.validate(2).unwrap_err().to_string();
        assert!(e(BenchConfig { samples: 0, ..ok.clone() }).starts_with("--samples"));
        assert!(e(BenchConfig { warmup: 1000, ..ok.clone() }).starts_with("--warmup"));
        assert!(e(BenchConfig { period_us: 0.0, ..ok.clone() }).starts_with("--period-us"));
        assert!(e(BenchConfig { kind: BenchKind::Ipi, ..ok.clone() }).contains("at least 2 for ipi"));
        assert!(e(BenchConfig { pin: vec![0, 1], ..ok.clone() }).contains("one host CPU per vCPU"));
        assert!(e(BenchConfig { pin: vec![5], ..ok.clone() }).contains("host CPU 5 does not exist"));
        assert_eq!(e(BenchConfig { pv_ipi: true, ..ok.clone() }), "--pv-ipi does not apply to `timer`");
        assert!(e(BenchConfig { kind: BenchKind::Device, wait: WaitMode::Busy, ..ok.clone() }).contains("--wait busy"));
    }

    #[test]
    fn period_in_cycles() {
        let c = BenchConfig { period_us: 77.0, ..Default::default() };
        assert_eq!(c.period_cycles(2_596_138), 199_903);
        let c = BenchConfig { period_cycles: Some(200_000), ..Default::default() };
        assert_eq!(c.period_cycles(2_596_138), 200_000);
        assert!(BenchConfig { period_cycles: Some(5), ..Default::default() }.validate(2).is_err());
    }
}

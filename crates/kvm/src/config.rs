//! What to measure: a benchmark and its knobs, validated before any VM is created.
use std::time::Duration;

use crate::abi::{MAX_SAMPLES, MAX_VCPUS};

/// The benchmark vocabulary is defined once, in `results::vocab` (serde and clap derived there),
/// and shared with the CLI and the host model; these are its names in this crate.
pub use results::vocab::{Bench, VfioTrigger, Via, Wait};

/// A measurement to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    pub kind: Bench,
    pub samples: u64,
    /// Samples excluded from warm max (and reported).
    pub warmup: u64,
    /// Time between samples (timer: how far ahead the deadline is), microseconds.
    pub period_us: f64,
    /// The period in TSC cycles instead of µs (as kvm-unit-tests' tscdeadline_latency takes it).
    pub period_cycles: Option<u64>,
    pub wait: Wait,
    pub via: Via,
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
    /// Run for this long instead of until `samples` are taken (`samples` stays the cap).
    pub duration: Option<Duration>,
    /// Stop at the first sample of the main class above this many ns (cyclictest `-b`); the
    /// sample that crossed is kept and named in the result.
    pub stop_above_ns: Option<u64>,
    /// SCHED_FIFO priority for the vCPU threads (`None`: the default policy).
    pub priority: Option<i32>,
    /// mlockall(MCL_CURRENT | MCL_FUTURE) before the VM is created.
    pub mlock: bool,
    /// arm64: GICv4 direct vLPI injection on or off (`None`: whatever the host does).
    pub gicv4: Option<bool>,
    /// `--via vfio-*`: the vfio-pci-bound PCI device (address or sysfs path); `None`: the only
    /// device bound to vfio-pci.
    pub vfio_device: Option<String>,
    /// `--via vfio-*`: how the guest makes the device raise its interrupt.
    pub vfio_trigger: VfioTrigger,
    /// IPI: the vCPU index the pings go to (`None`: 1). arm64 only: KVM finds an SGI's target
    /// by walking the VM's vCPUs (`vgic_v3_dispatch_sgi`), so its index is what the walk costs.
    pub ipi_target: Option<u32>,
}

/// Samples taken before the ones kept: the first interrupt of a run (armed while the VM starts,
/// caches cold) is discarded, as kvm-unit-tests' tscdeadline_latency skips it.
pub const DISCARDED_FIRST: u64 = 1;
/// Longest `--duration`.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            kind: Bench::Timer,
            samples: 1000,
            warmup: 1,
            period_us: 77.0,
            period_cycles: None,
            wait: Wait::Hlt,
            via: Via::Irqfd,
            pv_ipi: false,
            halt_poll_ns: None,
            disable_hlt_exits: false,
            vcpus: 1,
            pin: Vec::new(),
            stall_timeout: Duration::from_secs(5),
            duration: None,
            stop_above_ns: None,
            priority: None,
            mlock: false,
            gicv4: None,
            vfio_device: None,
            vfio_trigger: VfioTrigger::Raise,
            ipi_target: None,
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
    /// --ipi-target must name another vCPU of the VM.
    #[error("--ipi-target: expected a vCPU index from 1 to {last} (--vcpus {vcpus}), got {got}")]
    IpiTarget { got: u32, last: u32, vcpus: u32 },
    /// --stall-timeout-s must be a finite, positive number of seconds (NaN, infinity, zero and
    /// negative values are refused, not clamped).
    #[error("--stall-timeout-s: expected 0.1 to 3600 s, got {0}")]
    StallTimeout(f64),
    /// --pin does not match the vCPU count or names a CPU this process may not run on.
    #[error("--pin: {0}")]
    Pin(String),
    /// --duration out of range.
    #[error("--duration: expected 100ms to 24h, got {0:?}")]
    Duration(Duration),
    /// --priority out of SCHED_FIFO's range.
    #[error("--priority: expected a SCHED_FIFO priority 1 to 99, got {0}")]
    Priority(i32),
    /// A flag that does not apply to this benchmark.
    #[error("{flag} does not apply to `{bench}`")]
    NotApplicable { flag: &'static str, bench: &'static str },
    /// A flag of another architecture (`--pv-ipi` on arm64, `--gicv4` on x86_64).
    #[error("{flag} does not exist on {arch}: it is a flag of another architecture's KVM")]
    WrongArch { flag: String, arch: &'static str },
    /// A setting this host cannot give (the message says why).
    #[error("{flag}: {why}")]
    HostCannot { flag: String, why: String },
}

/// The watchdog's stall timeout from `--stall-timeout-s`.
pub fn stall_timeout_from_secs(s: f64) -> Result<Duration, ConfigError> {
    if (0.1..=3600.0).contains(&s) {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(ConfigError::StallTimeout(s))
    }
}

/// The host CPU ids this process may run on: the affinity mask, which is what `taskset` or a
/// container allow, which is not `0..count` (under `taskset -c 1` the only CPU is 1). Read once,
/// at the first call: the affinity is per thread, and a thread irqlab has pinned (the primitives
/// bench pins its measuring thread) must not shrink what later runs may use. It lives with the
/// configuration because `--pin` is checked against it.
pub fn allowed_cpus() -> Vec<usize> {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ALLOWED.get_or_init(read_allowed_cpus).clone()
}

fn read_allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t filled by the kernel for this thread; read with CPU_ISSET.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            return (0..libc::CPU_SETSIZE as usize).filter(|c| libc::CPU_ISSET(*c, &set)).collect();
        }
    }
    (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect()
}

/// `0-3,6` for a sorted list of CPU ids.
fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

impl BenchConfig {
    /// Reject impossible combinations. `allowed_cpus`: the host CPU ids vCPU threads may be pinned
    /// to (see [`allowed_cpus`]).
    pub fn validate(&self, allowed_cpus: &[usize]) -> Result<(), ConfigError> {
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
        if let Some(d) = self.duration {
            if d < Duration::from_millis(100) || d > MAX_DURATION {
                return Err(ConfigError::Duration(d));
            }
        }
        if let Some(p) = self.priority {
            if !(1..=99).contains(&p) {
                return Err(ConfigError::Priority(p));
            }
        }
        let min_vcpus = if self.kind == Bench::Ipi { 2 } else { 1 };
        if self.vcpus < min_vcpus || self.vcpus > MAX_VCPUS {
            return Err(ConfigError::Vcpus { got: self.vcpus, max: MAX_VCPUS, why: if self.kind == Bench::Ipi { " (at least 2 for ipi)" } else { "" } });
        }
        if !self.pin.is_empty() {
            if self.pin.len() != self.vcpus as usize {
                return Err(ConfigError::Pin(format!("one host CPU per vCPU ({}), got {}", self.vcpus, self.pin.len())));
            }
            if let Some(c) = self.pin.iter().find(|c| !allowed_cpus.contains(c)) {
                return Err(ConfigError::Pin(format!("host CPU {c} is not one this process may run on (allowed: {})", cpu_list(allowed_cpus))));
            }
        }
        if let Some(t) = self.ipi_target {
            if self.kind != Bench::Ipi {
                return Err(ConfigError::NotApplicable { flag: "--ipi-target", bench: self.kind.name() });
            }
            if t == 0 || t >= self.vcpus {
                return Err(ConfigError::IpiTarget { got: t, last: self.vcpus - 1, vcpus: self.vcpus });
            }
        }
        if self.pv_ipi && self.kind != Bench::Ipi {
            return Err(ConfigError::NotApplicable { flag: "--pv-ipi", bench: self.kind.name() });
        }
        let vfio = self.kind == Bench::Device && self.via.is_vfio();
        if self.wait == Wait::Busy && self.kind == Bench::Ipi {
            return Err(ConfigError::NotApplicable { flag: "--wait busy", bench: self.kind.name() });
        }
        if self.vfio_trigger != VfioTrigger::Raise && !vfio {
            return Err(ConfigError::NotApplicable { flag: "--vfio-trigger (with --via vfio-msi or vfio-intx)", bench: self.kind.name() });
        }
        if self.vfio_device.is_some() && !vfio {
            return Err(ConfigError::NotApplicable { flag: "--vfio-device (with --via vfio-msi or vfio-intx)", bench: self.kind.name() });
        }
        Ok(())
    }

    /// The spin rule, which depends on the architecture (`Arch::check_flags` applies it with
    /// `Arch::DEVICE_BUSY`): a spinning guest is allowed for the timer bench always, and for the
    /// device bench where the host can trigger while the guest spins (`device_busy`; x86: a
    /// ring-3 loop) or where the guest raises the interrupt itself (an assigned device,
    /// `--via vfio-*`).
    pub fn check_device_spin(&self, device_busy: bool) -> Result<(), ConfigError> {
        let vfio = self.kind == Bench::Device && self.via.is_vfio();
        if self.wait == Wait::Busy && self.kind == Bench::Device && !(device_busy || vfio) {
            return Err(ConfigError::NotApplicable {
                flag: "--wait busy (the device bench spins only with --via vfio-msi or vfio-intx here, where the guest raises the interrupt)",
                bench: self.kind.name(),
            });
        }
        Ok(())
    }

    /// How long the watchdog waits for the next sample: the stall timeout on top of one period,
    /// so that a long period (`--period-us 6000000`) is not taken for a stall.
    pub fn watchdog(&self, tsc_khz: u64) -> Duration {
        let period = Duration::from_nanos(self.period_cycles(tsc_khz).saturating_mul(1_000_000) / tsc_khz.max(1));
        self.stall_timeout + period
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
        assert!(ok.validate(&[0, 1]).is_ok());
        let e = |c: BenchConfig| c.validate(&[0, 1]).unwrap_err().to_string();
        assert!(e(BenchConfig { samples: 0, ..ok.clone() }).starts_with("--samples"));
        assert!(e(BenchConfig { warmup: 1000, ..ok.clone() }).starts_with("--warmup"));
        assert!(e(BenchConfig { period_us: 0.0, ..ok.clone() }).starts_with("--period-us"));
        assert!(e(BenchConfig { kind: Bench::Ipi, ..ok.clone() }).contains("at least 2 for ipi"));
        assert!(e(BenchConfig { pin: vec![0, 1], ..ok.clone() }).contains("one host CPU per vCPU"));
        assert!(e(BenchConfig { pin: vec![5], ..ok.clone() }).contains("host CPU 5 is not one this process may run on (allowed: 0-1)"));
        assert_eq!(e(BenchConfig { pv_ipi: true, ..ok.clone() }), "--pv-ipi does not apply to `timer`");
        let device_busy = BenchConfig { kind: Bench::Device, wait: Wait::Busy, ..ok.clone() };
        assert!(device_busy.validate(&[0, 1]).is_ok(), "the spin rule is the architecture's (check_device_spin)");
        assert!(device_busy.check_device_spin(true).is_ok());
        assert!(device_busy.check_device_spin(false).unwrap_err().to_string().starts_with("--wait busy (the device bench spins only"));
        let vfio = BenchConfig { kind: Bench::Device, via: Via::VfioMsi, wait: Wait::Busy, vfio_device: Some("0000:00:02.0".into()), ..ok.clone() };
        assert!(vfio.validate(&[0, 1]).is_ok() && vfio.check_device_spin(false).is_ok(), "an assigned device's guest may spin");
        assert!(e(BenchConfig { via: Via::Irqfd, wait: Wait::Hlt, ..vfio.clone() }).starts_with("--vfio-device (with --via vfio-msi or vfio-intx) does not apply"));
        assert!(e(BenchConfig { kind: Bench::Ipi, vcpus: 2, ..vfio }).contains("--wait busy does not apply to `ipi`"));
        assert_eq!(e(BenchConfig { priority: Some(0), ..ok.clone() }), "--priority: expected a SCHED_FIFO priority 1 to 99, got 0");
        assert!(e(BenchConfig { priority: Some(100), ..ok.clone() }).starts_with("--priority"));
        assert!(e(BenchConfig { duration: Some(Duration::from_millis(10)), ..ok.clone() }).starts_with("--duration: expected 100ms to 24h"));
        assert!(e(BenchConfig { duration: Some(MAX_DURATION + Duration::from_secs(1)), ..ok.clone() }).starts_with("--duration"));
        assert!(BenchConfig { duration: Some(Duration::from_secs(30)), priority: Some(99), ..ok.clone() }.validate(&[0]).is_ok());
        assert!(e(BenchConfig { samples: MAX_SAMPLES + 1, ..ok.clone() }).starts_with("--samples: expected 1 to 10000000"));
        let ipi = BenchConfig { kind: Bench::Ipi, vcpus: 64, ipi_target: Some(63), ..ok.clone() };
        assert!(ipi.validate(&[0, 1]).is_ok(), "the last of 64 vCPUs");
        assert_eq!(e(BenchConfig { ipi_target: Some(64), ..ipi.clone() }), "--ipi-target: expected a vCPU index from 1 to 63 (--vcpus 64), got 64");
        assert!(e(BenchConfig { ipi_target: Some(0), ..ipi.clone() }).contains("got 0"), "vCPU 0 is the sender");
        assert_eq!(e(BenchConfig { ipi_target: Some(1), ..ok.clone() }), "--ipi-target does not apply to `timer`");
        assert!(e(BenchConfig { vcpus: 65, ..ipi }).starts_with("--vcpus: expected 1 to 64"));
    }

    #[test]
    fn period_in_cycles() {
        let c = BenchConfig { period_us: 77.0, ..Default::default() };
        assert_eq!(c.period_cycles(2_596_138), 199_903);
        let c = BenchConfig { period_cycles: Some(200_000), ..Default::default() };
        assert_eq!(c.period_cycles(2_596_138), 200_000);
        assert!(BenchConfig { period_cycles: Some(5), ..Default::default() }.validate(&[0, 1]).is_err());
    }

    #[test]
    fn pins_are_checked_against_cpu_ids_not_the_count() {
        let c = BenchConfig { pin: vec![1], ..Default::default() };
        assert!(c.validate(&[1]).is_ok(), "taskset -c 1: CPU 1 is the one allowed CPU");
        assert!(c.validate(&[0]).unwrap_err().to_string().contains("allowed: 0"));
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert!(!allowed_cpus().is_empty());
    }

    #[test]
    fn stall_timeout_is_refused_not_clamped() {
        for bad in [f64::NAN, f64::INFINITY, -5.0, 0.0, 0.05, 3601.0] {
            let e = stall_timeout_from_secs(bad).unwrap_err().to_string();
            assert!(e.starts_with("--stall-timeout-s: expected 0.1 to 3600 s"), "{bad}: {e}");
        }
        assert_eq!(stall_timeout_from_secs(5.0), Ok(Duration::from_secs(5)));
    }

    #[test]
    fn watchdog_covers_one_period() {
        let c = BenchConfig { period_us: 6_000_000.0, stall_timeout: Duration::from_secs(5), ..Default::default() };
        assert_eq!(c.watchdog(1_000_000), Duration::from_secs(11));
        let c = BenchConfig { period_cycles: Some(3_000_000_000), ..c };
        assert_eq!(c.watchdog(1_000_000), Duration::from_secs(8));
    }
}

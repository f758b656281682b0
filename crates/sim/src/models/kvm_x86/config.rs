//! Scenario sections of `kvm-x86` and their validation. The workload keys mirror what a
//! measured `irqlab run` result records (`bench`, `wait`, `via`, `period_us`, `samples`,
//! `vcpus`, `halt_poll_ns`), so a model configuration and a measurement pair by parameters.
use serde::Deserialize;

use crate::arch::x86::apic_timer::{Level, TimerMode, TimerVirt};
use crate::engine::CostDist;
use crate::hyp::halt_poll::{HaltPollParams, KernelDefaults};
use crate::model::PointCtx;
use crate::scenario::ScenarioError;

/// `halt_poll_ns`: a number, or "host default" (the profile's `host_halt_poll_ns` parameter),
/// as `irqlab run` records it.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum HaltPollSetting {
    Ns(u64),
    Named(String),
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum HaltPollKernel {
    Linux4_3,
    Linux5_1,
    ShrinkTwo,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Hypervisor {
    #[serde(default = "off")]
    pub timer_virt: TimerVirt,
    /// kvm_intel.preemption_timer.
    #[serde(default = "yes")]
    pub preemption_timer: bool,
    /// APICv virtual-interrupt delivery: without it every guest EOI exits.
    #[serde(default = "yes")]
    pub apicv: bool,
    /// Posted interrupts for device interrupts and IPIs.
    #[serde(default = "yes")]
    pub posted_interrupts: bool,
    #[serde(default = "host_default")]
    pub halt_poll_ns: HaltPollSetting,
    /// Which kernel's grow/shrink defaults (grow 2, grow_start 10 µs, shrink 0 or 2).
    #[serde(default = "linux5_1")]
    pub halt_poll_kernel: HaltPollKernel,
    /// kvm.lapic_timer_advance (KVM's default is true; hyp::lapic_timer_advance). Off unless
    /// set, so scenarios written before it keep their paths.
    #[serde(default)]
    pub lapic_timer_advance: bool,
}

fn off() -> TimerVirt {
    TimerVirt::Off
}
fn yes() -> bool {
    true
}
fn host_default() -> HaltPollSetting {
    HaltPollSetting::Named("host default".into())
}
fn linux5_1() -> HaltPollKernel {
    HaltPollKernel::Linux5_1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Vm {
    /// l1: a guest of the host's KVM; l2: a guest of a KVM running in an L1 guest.
    #[serde(default = "l1")]
    pub level: Level,
    #[serde(default = "one")]
    pub vcpus: u32,
}

fn l1() -> Level {
    Level::L1
}
fn one() -> u32 {
    1
}

/// What the host model's workload runs (`workload.bench`): `irqlab run`'s benchmarks
/// (`results::vocab::Bench`, the one bench-kind concept) plus S5's shorthands and cyclictest,
/// which only the model has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    Timer,
    TimerHlt,
    TimerBusy,
    Ipi,
    Device,
    Cyclictest,
}

/// How the guest waits and how a device interrupt is raised: the one vocabulary `irqlab run`
/// and the micro-VMM use (`results::vocab`), so a host-model workload names a path exactly as a
/// measurement does.
pub use results::vocab::{Via, Wait};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Workload {
    pub bench: WorkloadKind,
    #[serde(default = "hlt")]
    pub wait: Wait,
    #[serde(default = "irqfd")]
    pub via: Via,
    /// Samples (per cyclictest thread).
    #[serde(default = "samples")]
    pub samples: u64,
    #[serde(default = "warmup")]
    pub warmup: u64,
    /// Timer: how far ahead the deadline is; device/ipi: time between samples (µs).
    #[serde(default = "period")]
    pub period_us: f64,
    /// The guest's LVT timer mode (the microbenchmark uses TSC-deadline).
    #[serde(default = "deadline")]
    pub lvtt_mode: TimerMode,
    /// cyclictest `-i` (µs) and `-d` (µs, added per thread); threads = vCPUs with `--smp`.
    #[serde(default = "interval")]
    pub interval_us: f64,
    #[serde(default = "distance")]
    pub distance_us: f64,
    /// cyclictest `--priority` and `--policy` (recorded; a FIFO thread at 95 on an otherwise idle
    /// vCPU preempts nothing and waits for nothing in this model).
    #[serde(default = "prio")]
    pub priority: u32,
    #[serde(default = "fifo")]
    pub policy: String,
    /// cyclictest in a NOHZ guest: the idle loop restarts the stopped tick on its way out
    /// (Linux kernel/sched/idle.c `do_idle`: `tick_nohz_idle_exit()` before `schedule_idle()`;
    /// kernel/time/tick-sched.c `tick_nohz_restart_sched_tick` reprograms the clockevent, a
    /// TSC-deadline write), on the path to the woken thread. Off unless set.
    #[serde(default)]
    pub nohz_idle: bool,
}

fn hlt() -> Wait {
    Wait::Hlt
}
fn irqfd() -> Via {
    Via::Irqfd
}
fn samples() -> u64 {
    10_000
}
fn warmup() -> u64 {
    1
}
fn period() -> f64 {
    77.0
}
fn deadline() -> TimerMode {
    TimerMode::TscDeadline
}
fn interval() -> f64 {
    1000.0
}
fn distance() -> f64 {
    500.0
}
fn prio() -> u32 {
    95
}
fn fifo() -> String {
    "fifo".into()
}

/// Every cost the model charges (profile key = field name).
macro_rules! costs {
    ($($name:ident),* $(,)?) => {
        pub(super) struct Costs { $(pub $name: CostDist,)* }
        impl Costs {
            fn load(ctx: &PointCtx, model: &str) -> Result<Costs, ScenarioError> {
                Ok(Costs { $($name: ctx.platform.cost(stringify!($name), model).cloned().map_err(|e| ctx.platform_err(e))?,)* })
            }
        }
    };
}

costs!(
    guest_ring0_insn,
    guest_irq_entry,
    guest_timer_irq,
    guest_wakeup_switch,
    vmexit_roundtrip,
    forced_exit_running,
    nested_reflect,
    handle_msr_tsc_deadline,
    handle_eoi,
    handle_hlt,
    handle_icr_write,
    handle_preemption_timer,
    handle_host_timer_irq,
    hrtimer_expiry,
    poll_wake,
    block_wake,
    cross_cpu_wake,
    vm_entry_inject,
    timer_virt_delivery,
    eventfd_signal,
    irqfd_inject_work,
    ioctl_signal_msi,
    ioctl_irq_line,
    ioapic_route,
    ioapic_eoi_resample,
    resamplefd_to_user,
);

pub(super) struct Prepared {
    pub hyp: Hypervisor,
    pub level: Level,
    pub vcpus: u32,
    pub bench: WorkloadKind,
    pub wait: Wait,
    pub wl: Workload,
    pub poll: HaltPollParams,
    pub costs: Costs,
    pub seed: u64,
    /// The host's TSC frequency (the profile's `cpu_ghz`), for the timer advance's cycle limits.
    pub ghz: f64,
}

pub(super) fn prepare(ctx: &PointCtx, model: &str) -> Result<Prepared, ScenarioError> {
    let hyp: Hypervisor = ctx.section("hypervisor")?;
    let vm: Vm = ctx.section("vm")?;
    let wl: Workload = ctx.section("workload")?;
    if vm.level == Level::L1 && hyp.timer_virt == TimerVirt::Nested {
        return Err(ctx.invalid(
            "hypervisor.timer_virt",
            "`off` or `l1-only` for vm.level = \"l1\" (`nested` is L0 emulating the feature for L1's own KVM, which only an L2 guest sees; an L1 guest with the feature is `l1-only`)",
            "\"nested\"",
        ));
    }
    let (bench, wait) = match wl.bench {
        WorkloadKind::TimerHlt => (WorkloadKind::Timer, Wait::Hlt),
        WorkloadKind::TimerBusy => (WorkloadKind::Timer, Wait::Busy),
        b => (b, wl.wait),
    };
    if vm.level == Level::L2 && matches!(bench, WorkloadKind::Device | WorkloadKind::Ipi) {
        return Err(ctx.invalid("vm.level", "\"l1\" for the device and ipi benchmarks (their L2 paths are not modelled)", "\"l2\""));
    }
    if wl.via.is_vfio() {
        return Err(ctx.invalid("workload.via", "irqfd, msi, line or level (the kvm-x86 model has no VFIO-assigned device path)", format!("\"{}\"", wl.via.name())));
    }
    if wait == Wait::Busy && bench != WorkloadKind::Timer {
        return Err(ctx.invalid("workload.wait", "`hlt` (busy waiting applies to the timer benchmark only, as in `irqlab run`)", "\"busy\""));
    }
    if wl.samples == 0 || wl.samples > 1_000_000_000 {
        return Err(ctx.invalid("workload.samples", "1 to 1,000,000,000", wl.samples));
    }
    if wl.warmup >= wl.samples {
        return Err(ctx.invalid("workload.warmup", &format!("fewer than workload.samples ({})", wl.samples), wl.warmup));
    }
    for (k, v, lo, hi) in [("workload.period_us", wl.period_us, 1.0, 1e7), ("workload.interval_us", wl.interval_us, 1.0, 1e7), ("workload.distance_us", wl.distance_us, 0.0, 1e7)] {
        if !(v.is_finite() && (lo..=hi).contains(&v)) {
            return Err(ctx.invalid(k, &format!("a number of µs from {lo} to {hi}"), v));
        }
    }
    let min_vcpus = if bench == WorkloadKind::Ipi { 2 } else { 1 };
    if vm.vcpus < min_vcpus || vm.vcpus > 4096 {
        return Err(ctx.invalid("vm.vcpus", &format!("{min_vcpus} to 4096"), vm.vcpus));
    }
    if !(1..=99).contains(&wl.priority) || wl.policy != "fifo" {
        return Err(ctx.invalid("workload.priority/policy", "a FIFO priority from 1 to 99 (policy \"fifo\")", format!("{} {}", wl.priority, wl.policy)));
    }
    let mut poll = match hyp.halt_poll_kernel {
        HaltPollKernel::Linux4_3 => KernelDefaults::Linux4_3,
        HaltPollKernel::Linux5_1 => KernelDefaults::Linux5_1,
        HaltPollKernel::ShrinkTwo => KernelDefaults::ShrinkTwo,
    }
    .params();
    poll.max_ns = match &hyp.halt_poll_ns {
        HaltPollSetting::Ns(n) if *n <= 100_000_000 => *n,
        HaltPollSetting::Named(s) if s == "host default" => {
            let v = ctx.platform.param("host_halt_poll_ns", model).map_err(|e| ctx.platform_err(e))?;
            if !(0.0..=1e8).contains(&v) {
                return Err(ctx.invalid("params.host_halt_poll_ns", "0 to 100,000,000 ns", v));
            }
            v as u64
        }
        other => return Err(ctx.invalid("hypervisor.halt_poll_ns", "ns from 0 to 100,000,000, or \"host default\"", format!("{other:?}"))),
    };
    let costs = Costs::load(ctx, model)?;
    Ok(Prepared { level: vm.level, vcpus: vm.vcpus, bench, wait, wl, hyp, poll, costs, seed: ctx.seed, ghz: ctx.platform.cpu_ghz })
}

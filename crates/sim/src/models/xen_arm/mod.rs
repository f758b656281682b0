//! `xen-arm`: Xen on Arm delivering a timer interrupt to a tbm-style guest through the GIC list
//! registers, with vCPU pinning, a scheduler (null / credit2-like / RTDS-like), the WFI policy
//! (`vwfi = trap | native | adaptive`) and an optional second guest whose vCPUs are busy, idle or
//! bursty. Reproduces S3 (scenario `xen-arm-zynq-timer`) and evaluates the adaptive WFI
//! policy of S1 (scenario `xen-wfi-policy`).
//!
//! Layout: a pool of `hypervisor.pcpus` pCPUs starting at `hypervisor.first_pcpu`, with
//! `hypervisor.vcpus_per_pcpu` vCPUs pinned to each (`xl vcpu-pin`, round-robin). vCPU 0 is the
//! tbm guest's only vCPU (on the first pool pCPU); the other `pcpus × vcpus_per_pcpu − 1` vCPUs
//! belong to the second guest (`workload.other`).
//!
//! The tbm guest arms its timer `period_us` ahead after handling each interrupt (tbm style) and
//! idles in WFI. Latency = guest acknowledge − deadline, read with the generic counter's
//! resolution, class `timer`; `warm_max` excludes the first `warmup` rounds (tbm: 2). The paths:
//! see [`sim`].
use serde::Deserialize;

use crate::arch::arm::generic_timer::TimerKind;
use crate::engine::{CostDist, SimTime};
use crate::hyp::scheduler::SchedKind;
use crate::hyp::vwfi::Vwfi;
use crate::model::{Model, PointCtx, PreparedPoint};
use crate::models::xen_core::config::{self, us, SchedKnobs};
use crate::models::xen_core::timer_path::{timer_handler, TimerHandler};
use crate::models::xen_core::XenSetup;
use crate::scenario::ScenarioError;

mod sim;

/// The model (`scenario.model = "xen-arm"`).
pub struct XenArm;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Hypervisor {
    #[serde(default = "default_sched")]
    scheduler: SchedKind,
    vwfi: Vwfi,
    /// DEBUG build: multiplier on hypervisor-path costs (1 = release).
    #[serde(default = "one")]
    debug_multiplier: f64,
    #[serde(default = "one_u32")]
    pcpus: u32,
    #[serde(default)]
    first_pcpu: u32,
    #[serde(default = "one_u32")]
    vcpus_per_pcpu: u32,
    #[serde(default = "d_ratelimit")]
    ratelimit_us: f64,
    #[serde(default = "d_min_slice")]
    min_slice_us: f64,
    #[serde(default = "d_max_slice")]
    max_slice_us: f64,
    #[serde(default = "d_rtds_budget")]
    rtds_budget_us: f64,
    #[serde(default = "d_rtds_period")]
    rtds_period_us: f64,
    /// credit1 time slice (Xen `sched_credit_tslice_ms`).
    #[serde(default = "d_tslice")]
    tslice_us: f64,
}

fn default_sched() -> SchedKind {
    SchedKind::Credit2
}
fn one() -> f64 {
    1.0
}
fn one_u32() -> u32 {
    1
}
fn d_ratelimit() -> f64 {
    1000.0
}
fn d_min_slice() -> f64 {
    500.0
}
fn d_max_slice() -> f64 {
    10_000.0
}
fn d_rtds_budget() -> f64 {
    4000.0
}
fn d_rtds_period() -> f64 {
    10_000.0
}
fn d_tslice() -> f64 {
    30_000.0
}

/// What the second guest's vCPUs do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OtherKind {
    /// No second guest (all vCPUs beyond the tbm one would be an error).
    None,
    /// Always computing.
    Busy,
    /// WFI forever.
    Idle,
    /// On/off: compute for Exp(burst_on_us), then WFI for Exp(burst_off_us), woken by an interrupt.
    Bursty,
}

impl OtherKind {
    fn as_str(self) -> &'static str {
        match self {
            OtherKind::None => "none",
            OtherKind::Busy => "busy",
            OtherKind::Idle => "idle",
            OtherKind::Bursty => "bursty",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Workload {
    period_us: f64,
    samples: u64,
    #[serde(default = "two")]
    warmup: u64,
    /// Rounds paid with cold caches/TLBs (costs × `params.cold_factor`).
    #[serde(default = "one_u64")]
    cold_rounds: u64,
    #[serde(default = "phys")]
    timer: TimerKind,
    #[serde(default = "none_kind")]
    other: OtherKind,
    #[serde(default = "d_burst")]
    burst_on_us: f64,
    #[serde(default = "d_burst")]
    burst_off_us: f64,
    /// How tbm waits for its interrupt: `wfi` (S3) or `spin` (the "no WFI" rows of the
    /// xen-devel measurement of February 2017: the guest never executes WFI).
    #[serde(default = "d_tbm_idle")]
    tbm_idle: TbmIdle,
}

/// How the tbm guest waits between interrupts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TbmIdle {
    Wfi,
    Spin,
}

fn d_tbm_idle() -> TbmIdle {
    TbmIdle::Wfi
}

fn two() -> u64 {
    2
}
fn one_u64() -> u64 {
    1
}
fn phys() -> TimerKind {
    TimerKind::Physical
}
fn none_kind() -> OtherKind {
    OtherKind::None
}
fn d_burst() -> f64 {
    2000.0
}

/// Costs only the tbm model charges (profile keys in parentheses); the hypervisor paths' costs
/// are the shared core's ([`crate::models::xen_core::XenCosts`]).
#[derive(Debug, Clone)]
pub(crate) struct Costs {
    /// Comparator match to the GIC signalling the CPU (`timer_irq_raise`).
    pub raise: CostDist,
    /// tbm's handler: read counter, EOI (no exit), compute (`guest_handler`).
    pub guest_handler: CostDist,
    /// Trapped CNTP_* access emulated by Xen (`sysreg_trap`), physical timer only.
    pub sysreg_trap: CostDist,
    /// The tbm guest's timer handler (its timer kind) and the other guest's (virtual timer):
    /// one definition shared with the dom0less model (`xen_core::timer_path`).
    pub tbm_timer: TimerHandler,
    pub other_timer: TimerHandler,
}

pub(crate) struct Prepared {
    pub xen: XenSetup,
    pub costs: Costs,
    pub pcpus: usize,
    pub first_pcpu: usize,
    pub vcpus_per_pcpu: usize,
    pub period: SimTime,
    pub samples: u64,
    pub warmup: u64,
    pub cold_rounds: u64,
    pub cold_factor: f64,
    pub timer: TimerKind,
    pub other: OtherKind,
    pub burst_on_us: f64,
    pub burst_off_us: f64,
    pub tbm_idle: TbmIdle,
    /// Generic counter frequency (tbm reads latency in counter ticks).
    pub counter_mhz: f64,
    pub seed: u64,
}

impl Model for XenArm {
    fn name(&self) -> &'static str {
        "xen-arm"
    }
    fn summary(&self) -> &'static str {
        "Xen on Arm: timer to a tbm guest via list registers; pinning, null/credit2/RTDS, vwfi trap|native|adaptive, second guest busy/idle/bursty"
    }

    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError> {
        if ctx.doc.contains_key("vm") {
            return Err(ctx.invalid(
                "vm",
                "no [[vm]] tables: model `xen-arm` lays out its two guests from hypervisor.pcpus, hypervisor.vcpus_per_pcpu and workload.other",
                "[[vm]]",
            ));
        }
        let hyp: Hypervisor = ctx.section("hypervisor")?;
        let wl: Workload = ctx.section("workload")?;
        let plat = ctx.platform;
        if hyp.pcpus == 0 {
            return Err(ctx.invalid("hypervisor.pcpus", "at least 1 pCPU", 0));
        }
        if hyp.first_pcpu as u64 + hyp.pcpus as u64 > plat.cpus as u64 {
            return Err(ctx.invalid(
                "hypervisor.pcpus",
                &format!("first_pcpu + pcpus <= {} (platform `{}` has {} CPUs)", plat.cpus, plat.name, plat.cpus),
                format!("{} + {}", hyp.first_pcpu, hyp.pcpus),
            ));
        }
        if hyp.vcpus_per_pcpu == 0 || hyp.vcpus_per_pcpu > 16 {
            return Err(ctx.invalid("hypervisor.vcpus_per_pcpu", "1..=16 vCPUs per pCPU", hyp.vcpus_per_pcpu));
        }
        let others = hyp.pcpus * hyp.vcpus_per_pcpu - 1;
        if wl.other == OtherKind::None && others > 0 {
            return Err(ctx.invalid("workload.other", &format!("busy, idle or bursty: the layout has {others} vCPUs besides the tbm one"), "none"));
        }
        let dbg = config::debug_build(ctx, hyp.debug_multiplier)?;
        let knobs = SchedKnobs {
            ratelimit_us: hyp.ratelimit_us,
            min_slice_us: hyp.min_slice_us,
            max_slice_us: hyp.max_slice_us,
            rtds_budget_us: hyp.rtds_budget_us,
            rtds_period_us: hyp.rtds_period_us,
            tslice_us: hyp.tslice_us,
        };
        let sched_params = knobs.params(ctx)?;
        for (k, v) in [("workload.period_us", wl.period_us), ("workload.burst_on_us", wl.burst_on_us), ("workload.burst_off_us", wl.burst_off_us)] {
            ctx.check_range(k, v, 0.0, true, 1e12)?;
        }
        ctx.check_count("workload.samples", wl.samples, 1, crate::model::MAX_SAMPLES)?;
        ctx.check_horizon("workload.period_us", wl.period_us * 1000.0 * wl.samples as f64, "period_us × samples")?;
        let name = self.name();
        let c = |k: &str| plat.cost(k, name).cloned().map_err(|e| ctx.platform_err(e));
        let gic = config::gic_version(ctx)?;
        let xen_costs = config::load_costs(ctx, name, dbg, hyp.scheduler, gic)?;
        let tbm_timer = timer_handler(ctx, &xen_costs, dbg, wl.timer)?;
        // The other guest's vCPUs use the virtual timer; without any, its handler is never run.
        let other_timer = if hyp.pcpus as u64 * hyp.vcpus_per_pcpu as u64 > 1 { timer_handler(ctx, &xen_costs, dbg, TimerKind::Virtual)? } else { tbm_timer.clone() };
        let costs = Costs { raise: c("timer_irq_raise")?, guest_handler: c("guest_handler")?, sysreg_trap: c("sysreg_trap").map(|d| dbg.hyp(d))?, tbm_timer, other_timer };
        let p = |k: &str| plat.param(k, name).map_err(|e| ctx.platform_err(e));
        let list_registers = config::list_registers(ctx, name)?;
        let counter_mhz = p("counter_mhz")?;
        // Bounded by what the model computes in bounded time (issue 36): 1e-300 MHz made every
        // timer deadline round up to one astronomically long tick, and `sim` ran forever. Real
        // generic timers count at 1–1,000 MHz; 1 kHz … 1 THz leaves room for any experiment.
        ctx.check_range("platform.params.counter_mhz", counter_mhz, 1e-3, false, 1e6)?;
        // The 100-simulated-day bound on the period as the model runs it: rounded up to ticks.
        let tick_ns = 1e3 / counter_mhz;
        ctx.check_horizon(
            "platform.params.counter_mhz",
            (wl.period_us * 1000.0 / tick_ns).ceil() * tick_ns * wl.samples as f64,
            "period_us rounded up to counter ticks × samples",
        )?;
        let cold_factor = config::cold_factor(ctx, name)?;
        Ok(Box::new(Prepared {
            xen: XenSetup {
                sched: hyp.scheduler,
                sched_params,
                vwfi: hyp.vwfi,
                costs: xen_costs,
                list_registers,
                gic,
                vpe: None,
                cache: config::cache_share(ctx, name, cold_factor)?,
            },
            costs,
            pcpus: hyp.pcpus as usize,
            first_pcpu: hyp.first_pcpu as usize,
            vcpus_per_pcpu: hyp.vcpus_per_pcpu as usize,
            period: us(wl.period_us),
            samples: wl.samples,
            warmup: wl.warmup,
            cold_rounds: wl.cold_rounds,
            cold_factor,
            timer: wl.timer,
            other: wl.other,
            burst_on_us: wl.burst_on_us,
            burst_off_us: wl.burst_off_us,
            tbm_idle: wl.tbm_idle,
            counter_mhz,
            seed: ctx.seed,
        }))
    }
}

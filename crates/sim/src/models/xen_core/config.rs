//! Reading the parts of a Xen model's configuration every Xen model shares: the hypervisor-path
//! costs from the platform profile, the scheduler parameters (µs in scenario files), and the
//! GIC version from the profile's facts.
use crate::engine::SimTime;
use crate::hyp::debug_build::DebugBuild;
use crate::hyp::scheduler::{SchedKind, SchedParams};
use crate::model::PointCtx;
use crate::scenario::ScenarioError;
use results::vocab::Gic;

use super::XenCosts;

pub fn us(v: f64) -> SimTime {
    SimTime::from_ns_f64(v * 1000.0)
}

/// Scheduler timing knobs as written in `[hypervisor]` (µs).
#[derive(Debug, Clone, Copy)]
pub struct SchedKnobs {
    pub ratelimit_us: f64,
    pub min_slice_us: f64,
    pub max_slice_us: f64,
    pub rtds_budget_us: f64,
    pub rtds_period_us: f64,
    pub tslice_us: f64,
}

impl SchedKnobs {
    /// Validate (positive µs; ratelimit may be 0; min ≤ max; budget ≤ period) and convert.
    pub fn params(&self, ctx: &PointCtx) -> Result<SchedParams, ScenarioError> {
        for (k, v) in [
            ("hypervisor.ratelimit_us", self.ratelimit_us),
            ("hypervisor.min_slice_us", self.min_slice_us),
            ("hypervisor.max_slice_us", self.max_slice_us),
            ("hypervisor.rtds_budget_us", self.rtds_budget_us),
            ("hypervisor.rtds_period_us", self.rtds_period_us),
            ("hypervisor.tslice_us", self.tslice_us),
        ] {
            let ok = v.is_finite() && (v > 0.0 || (k == "hypervisor.ratelimit_us" && v == 0.0));
            if !ok {
                return Err(ctx.invalid(k, "a positive number of µs", v));
            }
        }
        // What Xen itself accepts (xen/include/public/sysctl.h, 4.17: XEN_SYSCTL_SCHED_RATELIMIT_MIN
        // / _MAX, XEN_SYSCTL_CSCHED_TSLICE_MIN / _MAX); outside them Xen refuses the sysctl or
        // falls back to its default at boot (sched/core.c scheduler_init), so no Xen runs there.
        if self.ratelimit_us != 0.0 && !(100.0..=500_000.0).contains(&self.ratelimit_us) {
            return Err(ctx.invalid("hypervisor.ratelimit_us", "0 (off) or 100..=500000 µs, the range Xen accepts (XEN_SYSCTL_SCHED_RATELIMIT_MIN/MAX)", self.ratelimit_us));
        }
        if !(1000.0..=1_000_000.0).contains(&self.tslice_us) {
            return Err(ctx.invalid("hypervisor.tslice_us", "1000..=1000000 µs (1..=1000 ms), the range Xen accepts (XEN_SYSCTL_CSCHED_TSLICE_MIN/MAX)", self.tslice_us));
        }
        if self.min_slice_us > self.max_slice_us {
            return Err(ctx.invalid("hypervisor.min_slice_us", &format!("at most max_slice_us ({})", self.max_slice_us), self.min_slice_us));
        }
        if self.rtds_budget_us > self.rtds_period_us {
            return Err(ctx.invalid("hypervisor.rtds_budget_us", &format!("at most rtds_period_us ({})", self.rtds_period_us), self.rtds_budget_us));
        }
        Ok(SchedParams {
            credit_init: us(self.max_slice_us),
            min_slice: us(self.min_slice_us),
            max_slice: us(self.max_slice_us),
            ratelimit: us(self.ratelimit_us),
            rtds_budget: us(self.rtds_budget_us),
            rtds_period: us(self.rtds_period_us),
            tslice: us(self.tslice_us),
        })
    }
}

/// Xen defaults (credit2: ratelimit 1 ms, CSCHED2_MIN_TIMER 500 µs, MAX_TIMER 10 ms; RTDS 4/10 ms;
/// credit1 tslice 30 ms).
pub const DEFAULT_KNOBS: SchedKnobs =
    SchedKnobs { ratelimit_us: 1000.0, min_slice_us: 500.0, max_slice_us: 10_000.0, rtds_budget_us: 4000.0, rtds_period_us: 10_000.0, tslice_us: 30_000.0 };

/// A DEBUG multiplier from `hypervisor.debug_multiplier`.
pub fn debug_build(ctx: &PointCtx, multiplier: f64) -> Result<DebugBuild, ScenarioError> {
    if !(1.0..=100.0).contains(&multiplier) {
        return Err(ctx.invalid("hypervisor.debug_multiplier", "a factor from 1 (release build) to 100", multiplier));
    }
    DebugBuild::new(multiplier).map_err(|e| ctx.invalid("hypervisor.debug_multiplier", e, multiplier))
}

/// The shared hypervisor-path costs, hypervisor code scaled by the DEBUG multiplier: the
/// scheduler's own wake / schedule costs for `sched`, the list-register access of `gic`.
pub fn load_costs(ctx: &PointCtx, model: &str, dbg: DebugBuild, sched: SchedKind, gic: Gic) -> Result<XenCosts, ScenarioError> {
    let plat = ctx.platform;
    let c = |k: &str| plat.cost(k, model).cloned().map_err(|e| ctx.platform_err(e));
    let h = |k: &str| c(k).map(|d| dbg.hyp(d));
    Ok(XenCosts {
        wfi_exit: c("wfi_exit")?,
        idle_wakeup: c("idle_wakeup")?,
        trap: c("trap_to_el2")?,
        handler: h("xen_irq_handler")?,
        wake: h("vcpu_wake")?,
        sched_wake: h(&format!("{}_wake", sched.key()))?,
        sched: h("sched")?,
        sched_pick: h(&format!("{}_schedule", sched.key()))?,
        save: h("context_save")?,
        restore: h("context_restore")?,
        // Hardware accesses: not scaled by the DEBUG build.
        lr_access: c(if gic.sysreg_cpu_interface() { "gicv3_sysreg_access" } else { "gicv2_mmio_access" })?,
        maintenance: h("maintenance_handler")?,
        eret: c("eret")?,
        ack: c("guest_ack")?,
        block: h("vcpu_block")?,
        twi_update: h("twi_update")?,
    })
}

/// The most a path may cost with cold caches and TLBs over its warm self
/// (`platform.params.cold_factor`). The bound's reasoning (an order of magnitude, not a
/// measurement): a path in which every instruction stalls on a miss to DRAM costs the DRAM
/// latency (~100 ns on the SoCs these models cover) per instruction instead of ~1 ns at ~1 GHz
/// and CPI ~1, so ~100×; real cold paths cost far less (S3's fit: 1.43×), since a cache line
/// holds several instructions. Issue 45: a factor of 10⁶ passed validation and `sim
/// xen-wfi-policy` ran for minutes on its busy-neighbour points (10¹²: hours).
pub const MAX_COLD_FACTOR: f64 = 100.0;

/// `platform.params.cold_factor`, a finite factor from 1 to [`MAX_COLD_FACTOR`].
pub fn cold_factor(ctx: &PointCtx, model: &str) -> Result<f64, ScenarioError> {
    let f = ctx.platform.param("cold_factor", model).map_err(|e| ctx.platform_err(e))?;
    ctx.check_range("platform.params.cold_factor", f, 1.0, false, MAX_COLD_FACTOR)?;
    Ok(f)
}

/// Shared-L2 interference from `platform.params.cold_factor` and
/// `platform.params.l2_evict_per_busy_neighbour` (a fraction 0..=1).
pub fn cache_share(ctx: &PointCtx, model: &str, cold_factor: f64) -> Result<super::CacheShare, ScenarioError> {
    let e = ctx.platform.param("l2_evict_per_busy_neighbour", model).map_err(|e| ctx.platform_err(e))?;
    if !(0.0..=1.0).contains(&e) {
        return Err(ctx.invalid("platform.params.l2_evict_per_busy_neighbour", "a fraction from 0 to 1", e));
    }
    Ok(super::CacheShare { cold_factor, evict_per_busy: e })
}

/// `platform.params.list_registers`, an integer 1..=16.
pub fn list_registers(ctx: &PointCtx, model: &str) -> Result<usize, ScenarioError> {
    let lrs = ctx.platform.param("list_registers", model).map_err(|e| ctx.platform_err(e))?;
    if !(1.0..=16.0).contains(&lrs) || lrs.fract() != 0.0 {
        return Err(ctx.invalid("platform.params.list_registers", "an integer 1..=16", lrs));
    }
    Ok(lrs as usize)
}

/// The board's GIC generation from the profile's `gic` fact (`results::vocab::Gic`: v2, v3,
/// v4, v4.1; a profile without one is a GICv2 board, as the S3 and S4 ones are); a fact that is
/// not a GIC generation is refused, naming it.
pub fn gic_version(ctx: &PointCtx) -> Result<Gic, ScenarioError> {
    match ctx.platform.facts.get("gic") {
        None => Ok(Gic::V2),
        Some(g) => Gic::parse(g).map_err(|e| ctx.invalid("platform.facts.gic", "a GIC generation (v2, v3, v4, v4.1)", e)),
    }
}

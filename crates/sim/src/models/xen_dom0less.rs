//! `xen-arm-dom0less`: Xen on Arm, dom0less (no dom0: the guests are built by Xen at boot,
//! `xen/arch/arm/domain_build.c:create_domUs` in 4.17), `sched=null vwfi=native`, one vCPU
//! pinned per pCPU, GICv2; or the same guest on bare metal (`hypervisor.kind = "none"`).
//! Two classes, each a straight-line path per sample (no vCPU ever blocks, so no scheduler):
//!
//! - `timer`: the guest's **virtual** timer (CNTV, PPI 27) fires while the vCPU runs a loop.
//!   Native: comparator → GIC → the core's IRQ vector. Xen: the physical PPI 27 is routed to EL2
//!   (HCR_EL2.IMO); `xen/arch/arm/time.c:vtimer_interrupt` masks CNTV_CTL and calls
//!   `vgic_inject_irq` on the running vCPU directly — no hypervisor timer, no TIMER_SOFTIRQ, no
//!   `vtimer.c` callback, which the *physical* timer of S3 goes through
//!   (`htimer_interrupt` → softirq → `phys_timer_expired` → `vgic_inject_irq`). The path from
//!   the trap to the eret is the lab census's segment `xen-vtimer-running` timed on the board —
//!   the one definition both Xen timer models charge (`xen_core::timer_path`, issue 43 items 2
//!   and 3). The guest's CNTV_* writes do not trap (S3's CNTP_* do).
//!   Path: raise → trap-to-el2 → vtimer handler → lr-write → eret → guest vector.
//! - `ipi`: vCPU 0 writes GICD_SGIR (a data abort: Xen traps the distributor) to send an SGI to
//!   vCPU 1, which sleeps in WFI natively. Xen: `vgic-v2.c:vgic_v2_to_sgi` →
//!   `vgic.c:vgic_to_sgi` → `vgic_inject_irq` → `domain.c:vcpu_kick`: the target `is_running`
//!   (it never blocked: WFI does not trap), so `vcpu_unblock` does nothing and
//!   `smp_send_event_check_mask` writes GICD_SGIR for the physical event-check SGI; the target
//!   pCPU leaves WFI, traps, Xen acks the SGI (`do_sgi`), and on return
//!   (`leave_hypervisor_to_guest` → `vgic_sync_to_lrs`) writes the LR and erets.
//!   Latency = from just before vCPU 0's write to vCPU 1's vector; figure `sender_trap` = the
//!   write's round trip on vCPU 0 (trap → emulation + SGI write → eret). The trap-to-eret part
//!   is the census segment `xen-sgi-send` ([`sgi_emulation`]); the event-check SGI write is not
//!   in it (the lab's vCPUs share one pCPU) and the target's path is the profile's. Native: one GICD_SGIR
//!   write, the SGI reaches the core, WFI exits, vector.
//!
//! Which SGIs a GICD_SGIR value names: `arch::arm::sgi::Sgir`.
//!
//! Physical sanity (issue 43 item 5): the timer latency is read in ticks of the board's generic
//! counter (`params.counter_mhz`; a profile without it is refused), and a `period_us` no longer
//! than the timer path (cold) is refused: the model takes one interrupt at a time and would
//! otherwise time a deadline that passes mid-path as if it fit.
use serde::Deserialize;

use crate::arch::arm::generic_timer::TimerKind;
use crate::arch::arm::sgi::Sgir;
use crate::census::{self, Segment};
use crate::engine::{CostDist, RngStreams, SimTime, TraceSet};
use crate::hyp::scheduler::SchedKind;
use crate::hyp::vwfi::Vwfi;
use crate::model::{Model, PointCtx, PointOutput, PreparedPoint, RunOpts, SimError};
use crate::models::path::{self, Seg};
use crate::models::xen_core::timer_path::{self, TimerHandler};
use crate::models::xen_core::{config, XenCosts};
use crate::scenario::ScenarioError;
use results::{ConfigResult, LatencyRecorder};

pub struct XenArmDom0less;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    None,
    Xen,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Hypervisor {
    kind: Kind,
    #[serde(default = "null")]
    scheduler: SchedKind,
    #[serde(default = "native")]
    vwfi: Vwfi,
}

fn null() -> SchedKind {
    SchedKind::Null
}
fn native() -> Vwfi {
    Vwfi::Native
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Workload {
    /// Timer period (tbm re-arms after each interrupt).
    period_us: f64,
    samples: u64,
    #[serde(default)]
    warmup: u64,
    /// Rounds paid with cold caches (× `params.cold_factor`).
    #[serde(default)]
    cold_rounds: u64,
    /// vCPUs of the guest (one per pCPU); the IPI goes from vCPU 0 to vCPU 1.
    vcpus: u32,
}

struct Costs {
    raise: CostDist,
    entry: CostDist,
    sgir_write: CostDist,
    /// Leaving WFI standby (`wfi_exit`): the same clock restart on bare metal and under
    /// `vwfi=native` (the guest's own WFI).
    wfi_exit: CostDist,
    /// Xen's costs, the virtual timer's handler, the SGI emulation (from the census), the
    /// target's event-check handler, and the census segment of the sender's trap.
    xen: Option<(XenCosts, TimerHandler, CostDist, CostDist, Segment)>,
}

/// The sender's SGI emulation: the census segment `xen-sgi-send` (the trapped write's round trip,
/// vwfi=native) less the profile's trap and eret, with the shape of `vgic_sgir_emulation`'s
/// distribution. The census's window runs to the sender's eret, so the sender's return path
/// (`leave_hypervisor_to_guest`, `vgic_sync_to_lrs`, `return_from_trap`: about 100 of its 764
/// instructions) sits before the event-check SGI write here: the latency is high by that much.
fn sgi_emulation(ctx: &PointCtx, xc: &XenCosts, shape: &CostDist) -> Result<(CostDist, Segment), ScenarioError> {
    let seg = census::segments::timed(ctx, SGI_SEGMENT, timer_path::board_gic(ctx)?)?;
    let emul = timer_path::from_census(ctx, &seg, &[&xc.trap, &xc.eret], shape, 1.0)?;
    Ok((emul, seg))
}

/// The census segment of the sender's trapped SGI write.
pub const SGI_SEGMENT: &str = "xen-sgi-send";

struct Prepared {
    c: Costs,
    /// The generic counter's tick (ps): the bench reads its latency from CNTVCT, so a timer
    /// latency is a whole number of ticks (`platform.params.counter_mhz`).
    tick_ps: f64,
    samples: u64,
    warmup: u64,
    cold_rounds: u64,
    cold_factor: f64,
    ipi_targets: Vec<u32>,
    seed: u64,
}

impl Model for XenArmDom0less {
    fn name(&self) -> &'static str {
        "xen-arm-dom0less"
    }
    fn summary(&self) -> &'static str {
        "Xen on Arm dom0less, sched=null vwfi=native, GICv2: virtual timer to a running vCPU and GICD_SGIR IPI to a vCPU in WFI, vs bare metal"
    }
    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError> {
        let hyp: Hypervisor = ctx.section("hypervisor")?;
        let wl: Workload = ctx.section("workload")?;
        if hyp.scheduler != SchedKind::Null {
            return Err(ctx.invalid(
                "hypervisor.scheduler",
                "\"null\" (this model has no scheduler on its paths; model `xen-arm` runs credit1/credit2/RTDS)",
                format!("{:?}", hyp.scheduler).to_lowercase(),
            ));
        }
        if hyp.vwfi != Vwfi::Native {
            return Err(ctx.invalid("hypervisor.vwfi", "\"native\" (a vCPU that never blocks; model `xen-arm` runs trap and adaptive)", format!("{:?}", hyp.vwfi).to_lowercase()));
        }
        ctx.check_range("workload.period_us", wl.period_us, 0.0, true, 1e9)?;
        ctx.check_count("workload.samples", wl.samples, 1, crate::model::MAX_SAMPLES)?;
        ctx.check_horizon("workload.period_us", wl.period_us * 1000.0 * wl.samples as f64, "period_us × samples")?;
        let cpus = ctx.platform.cpus;
        if wl.vcpus < 2 || wl.vcpus > cpus.min(8) {
            return Err(ctx.invalid("workload.vcpus", &format!("2..={} (one vCPU per pCPU of `{}`, at most 8 GICv2 CPU interfaces)", cpus.min(8), ctx.platform.name), wl.vcpus));
        }
        let name = self.name();
        let c = |k: &str| ctx.platform.cost(k, name).cloned().map_err(|e| ctx.platform_err(e));
        let p = |k: &str| ctx.platform.param(k, name).map_err(|e| ctx.platform_err(e));
        let cold_factor = config::cold_factor(ctx, name)?;
        let xen = match hyp.kind {
            Kind::None => None,
            Kind::Xen => {
                let dbg = config::debug_build(ctx, 1.0)?;
                let xc = config::load_costs(ctx, name, dbg, SchedKind::Null, config::gic_version(ctx)?)?;
                let vtimer = timer_path::timer_handler(ctx, &xc, dbg, TimerKind::Virtual)?;
                let (emul, send) = sgi_emulation(ctx, &xc, &c("vgic_sgir_emulation")?)?;
                Some((xc, vtimer, emul, c("xen_sgi_handler")?, send))
            }
        };
        // Physical sanity (issue 43 item 5). The bench reads its latency from the generic counter:
        // a board without one is refused, not timed as if the clock were exact.
        let counter_mhz = p("counter_mhz")?;
        ctx.check_range("platform.params.counter_mhz", counter_mhz, 1e-3, false, 1e6)?;
        // One interrupt at a time: the model has no queue for a deadline that passes while the
        // previous interrupt's path still runs, so a period shorter than the path (cold, the
        // longest it gets) is refused rather than timed as if it fit.
        let path_ns: f64 = {
            let mut segs = vec![c("timer_irq_raise")?.mean_ns(), c("guest_exception_entry")?.mean_ns()];
            if let Some((x, vtimer, ..)) = &xen {
                segs.extend([x.trap.mean_ns(), vtimer.cost.mean_ns(), x.lr_access.mean_ns(), x.eret.mean_ns()]);
            }
            segs.iter().sum::<f64>() * cold_factor
        };
        if wl.period_us * 1000.0 <= path_ns {
            return Err(ctx.invalid(
                "workload.period_us",
                &format!(
                    "a period longer than the timer path it triggers ({:.3} µs cold on `{}`): the next deadline would pass before this interrupt reached the guest",
                    path_ns / 1000.0,
                    ctx.platform.name
                ),
                wl.period_us,
            ));
        }
        // vCPU 0 names vCPU 1 in CPUTargetList (Linux gic_raise_softirq with one CPU).
        let ipi_targets = Sgir::decode(Sgir::encode_list(0b10, 1)).targets(0, wl.vcpus);
        Ok(Box::new(Prepared {
            tick_ps: 1e6 / counter_mhz,
            c: Costs { raise: c("timer_irq_raise")?, entry: c("guest_exception_entry")?, sgir_write: c("gicv2_mmio_access")?, wfi_exit: c("wfi_exit")?, xen },
            samples: wl.samples,
            warmup: wl.warmup,
            cold_rounds: wl.cold_rounds,
            cold_factor,
            ipi_targets,
            seed: ctx.seed,
        }))
    }
}

impl PreparedPoint for Prepared {
    fn work(&self) -> u64 {
        2 * self.samples
    }

    fn run(self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError> {
        if self.ipi_targets != [1] {
            return Err(SimError(format!("GICD_SGIR decoding named vCPUs {:?}, expected [1]", self.ipi_targets)));
        }
        let streams = RngStreams::new(self.seed);
        let mut result = ConfigResult::default();
        let c = &self.c;
        let mut kept = Vec::new();
        // Timer.
        {
            let mut rng = streams.stream("timer");
            let mut rec = LatencyRecorder::new(self.warmup);
            let mut traces = TraceSet::picking(opts.traces.picker("timer"));
            let path: Vec<Seg> = match &c.xen {
                None => vec![("timer-irq-raise", &c.raise), ("guest-vector", &c.entry)],
                Some((x, vtimer, ..)) => vec![
                    ("timer-irq-raise", &c.raise),
                    ("trap-to-el2", &x.trap),
                    (vtimer.name, &vtimer.cost),
                    ("lr-write", &x.lr_access),
                    ("eret", &x.eret),
                    ("guest-vector", &c.entry),
                ],
            };
            for k in 0..self.samples {
                let mut t = traces.start(SimTime::ZERO);
                let d = path::run(&path, path::cold_scale(k, self.cold_rounds, self.cold_factor), &mut rng, &mut t);
                // The deadline is a counter value; the handler reads CNTVCT: whole ticks.
                let ticks = (d.ps() as f64 / self.tick_ps).floor();
                rec.record((ticks * self.tick_ps / 1000.0).round() as u64);
                traces.add(t);
            }
            result.classes.insert("timer".into(), rec.finish());
            result.breakdown.insert("timer".into(), traces.breakdown());
            kept.extend(traces.kept);
        }
        (opts.progress)(self.samples);
        // IPI.
        {
            let mut rng = streams.stream("ipi");
            let mut rec = LatencyRecorder::new(self.warmup);
            let mut traces = TraceSet::picking(opts.traces.picker("ipi"));
            let mut sender_ps: u128 = 0;
            for k in 0..self.samples {
                let s = path::cold_scale(k, self.cold_rounds, self.cold_factor);
                let mut t = traces.start(SimTime::ZERO);
                let d = match &c.xen {
                    None => {
                        let p: [Seg; 4] = [("gicd_sgir-write", &c.sgir_write), ("sgi-to-cpu", &c.raise), ("wfi-exit", &c.wfi_exit), ("guest-vector", &c.entry)];
                        path::run(&p, s, &mut rng, &mut t)
                    }
                    Some((x, _, emul, sgi, _)) => {
                        let send: [Seg; 3] = [("sgir-trap-to-el2", &x.trap), ("vgic_to_sgi+vgic_inject_irq+vcpu_kick", emul), ("event-check-sgi-write", &c.sgir_write)];
                        let at = path::run(&send, s, &mut rng, &mut t);
                        let eret = SimTime::from_ns_f64(x.eret.sample_ns(&mut rng) * s);
                        sender_ps += (at + eret).ps() as u128;
                        let target: [Seg; 7] = [
                            ("sgi-to-cpu", &c.raise),
                            ("wfi-exit", &c.wfi_exit),
                            ("trap-to-el2", &x.trap),
                            ("do_sgi(event-check)", sgi),
                            ("lr-write", &x.lr_access),
                            ("eret", &x.eret),
                            ("guest-vector", &c.entry),
                        ];
                        at + path::run(&target, s, &mut rng, &mut t)
                    }
                };
                rec.record(d.ns());
                traces.add(t);
            }
            result.classes.insert("ipi".into(), rec.finish());
            result.breakdown.insert("ipi".into(), traces.breakdown());
            kept.extend(traces.kept);
            if let Some((_, vtimer, _, _, send)) = &c.xen {
                result.set_figure("sender_trap", sender_ps as f64 / 1000.0 / self.samples as f64, "ns");
                result.notes.extend(vtimer.census_notes());
                result.notes.extend(send.describe(SGI_SEGMENT));
            }
        }
        (opts.progress)(self.samples);
        Ok(PointOutput { result, traces: kept, events: 2 * self.samples })
    }
}

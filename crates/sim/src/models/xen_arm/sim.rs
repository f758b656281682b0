//! The event loop of the `xen-arm` model: the tbm guest (and the optional second guest) on the
//! shared Xen core ([`crate::models::xen_core`]; its `paths` module lists the paths the timer
//! interrupt takes). The timer is a PPI taken on the vCPU's own pCPU: its trace starts with
//! `phys-irq` (comparator to the CPU), then the core's path, with Xen's timer handler as
//! `xen-irq-handler`.
use results::{ConfigResult, LatencyRecorder};

use super::{OtherKind, Prepared, TbmIdle};
use crate::arch::arm::generic_timer::{forwarding, TimerKind};
use crate::arch::arm::list_registers::{EoiEffect, InjectOutcome};
use crate::engine::time::{ceil_nonneg, floor_nonneg, round_nonneg};
use crate::engine::{RngStreams, SimRng, SimTime, TraceSet};
use crate::model::{PointOutput, PreparedPoint, RunOpts, SimError};
use crate::models::xen_core::{Act, Cont, Core, Delivery, Ev, Progress, VcpuInit};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Tbm,
    Busy,
    Idle,
    Bursty,
}

/// The model's events.
#[derive(Debug, Clone, Copy)]
enum Mev {
    /// A physical interrupt for vCPU `v` (its timer) reaches its pCPU.
    Irq {
        v: usize,
        round: Option<u64>,
        deadline: SimTime,
    },
    BurstEnd {
        v: usize,
    },
}

/// The tbm guest's handler finished on vCPU `v`.
struct TbmDone {
    v: usize,
}

/// Delivery tag: the tbm round (None: the second guest's wake-up interrupt).
type Round = Option<u64>;

struct Sim<'a> {
    p: &'a Prepared,
    core: Core<'a, Round, Mev, TbmDone>,
    roles: Vec<Role>,
    /// Bursty: computation demanded (sum of on-phase lengths drawn).
    demand: Vec<SimTime>,
    burst_rng: Vec<SimRng>,
    rec: LatencyRecorder,
    traces: TraceSet,
    tick_ps: f64,
}

impl<'a> Sim<'a> {
    fn new(p: &'a Prepared, picker: crate::engine::Picker) -> Self {
        let streams = RngStreams::new(p.seed);
        let total = p.pcpus * p.vcpus_per_pcpu;
        let roles: Vec<Role> = (0..total)
            .map(|i| match (i, p.other) {
                (0, _) => Role::Tbm,
                (_, OtherKind::Busy) => Role::Busy,
                (_, OtherKind::Idle | OtherKind::None) => Role::Idle,
                (_, OtherKind::Bursty) => Role::Bursty,
            })
            .collect();
        let inits: Vec<VcpuInit> = roles
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let computes = *r == Role::Busy || (*r == Role::Tbm && p.tbm_idle == TbmIdle::Spin);
                VcpuInit { pcpu: i % p.pcpus, act: if computes { Act::Compute } else { Act::Wfi }, vpe: false }
            })
            .collect();
        Sim {
            p,
            core: Core::new(&p.xen, p.seed, p.pcpus, &inits),
            burst_rng: (0..total).map(|i| streams.stream(&format!("other-vcpu{i}"))).collect(),
            demand: vec![SimTime::ZERO; total],
            roles,
            rec: LatencyRecorder::new(p.warmup),
            traces: TraceSet::picking(picker),
            tick_ps: 1e6 / p.counter_mhz,
        }
    }

    /// Deadline rounded up to a counter tick (tbm programs CVAL in ticks).
    fn to_tick(&self, t: SimTime) -> SimTime {
        let ticks = ceil_nonneg(t.ps() as f64 / self.tick_ps);
        SimTime(round_nonneg(ticks * self.tick_ps) as u64)
    }

    fn on_irq(&mut self, now: SimTime, v: usize, round: Option<u64>, deadline: SimTime) {
        let p = self.core.vcpus[v].pcpu;
        if self.core.defer_if_busy(p, Mev::Irq { v, round, deadline }) {
            return;
        }
        if self.core.vcpus[v].pending.is_some() {
            // Still pending from an earlier edge: coalesces in the LR (cannot happen for tbm).
            return;
        }
        let core = &mut self.core;
        core.settle(p, now);
        core.charge(p, now);
        let cold = match round {
            Some(r) if r < self.p.cold_rounds => self.p.cold_factor,
            _ => core.interference(p),
        };
        let mut t = self.traces.start(deadline);
        if now > deadline {
            t.push("hyp-busy", now - deadline);
        }
        let mut prefix = core.seg(&mut t, "phys-irq", &self.p.costs.raise, cold);
        let case = core.irq_case(p, v);
        prefix += core.take_irq(p, &mut t, cold);
        let h = if self.roles[v] == Role::Tbm { &self.p.costs.tbm_timer } else { &self.p.costs.other_timer };
        prefix += core.seg(&mut t, h.name, &h.cost, cold);
        let (wake, was_blocked) = core.wake_if_blocked(v, &mut t, cold);
        prefix += wake;
        // Inject (into the LRs if loaded, else into the saved copy restored on entry).
        let f = forwarding(if self.roles[v] == Role::Tbm { self.p.timer } else { TimerKind::Virtual });
        if core.vcpus[v].lrs.inject(f.vintid, 0xa0, f.hw, false) == InjectOutcome::Queued {
            core.n.lr_queued += 1;
        }
        if self.roles[v] != Role::Tbm {
            core.n.other_wakeups += 1;
        }
        core.vcpus[v].pending = Some(Delivery { tag: round, cold, deadline, trace: t, case, waited: false, via_lr: true });
        core.after_inject(now, p, v, prefix, was_blocked);
    }

    fn on_path_done(&mut self, now: SimTime, p: usize) {
        let (cont, deferred) = self.core.finish_path(now, p);
        match cont {
            Cont::Run { next, deliver } => {
                self.core.enter(now, p, next);
                if deliver {
                    let n = next.expect("delivery to a running vCPU");
                    self.complete_delivery(now, n);
                }
                self.core.after_change(now, p);
            }
            Cont::Model(TbmDone { v }) => {
                // EOI through the GIC virtual CPU interface: no exit, unless it raises the
                // maintenance interrupt (then Xen's handler runs before the guest goes on).
                let vint = forwarding(self.p.timer).vintid;
                let mut extra = SimTime::ZERO;
                match self.core.vcpus[v].lrs.guest_eoi(vint) {
                    Ok(effects) => {
                        for e in effects {
                            match e {
                                EoiEffect::DeactivatePhysical(_) => self.core.n.hw_deactivations += 1,
                                EoiEffect::Maintenance(_) => {
                                    let refills = self.core.vcpus[v].lrs.maintenance().len();
                                    extra += self.core.maintenance_path(v, refills);
                                }
                            }
                        }
                    }
                    Err(e) => panic!("tbm EOI: {e}"),
                }
                // Re-arm the timer `period` ahead (CNTP_CVAL write traps with the physical timer).
                let deadline = self.to_tick(now + self.p.period);
                let round = self.rec.count();
                self.core.q.schedule_at(deadline, Ev::Model(Mev::Irq { v, round: Some(round), deadline }));
                match self.p.tbm_idle {
                    TbmIdle::Wfi => self.core.guest_wfi(now, v, extra),
                    TbmIdle::Spin => {
                        self.core.vcpus[v].act = Act::Compute;
                        if extra > SimTime::ZERO {
                            self.core.start_path(self.core.vcpus[v].pcpu, now, extra, Cont::Run { next: Some(v), deliver: false });
                        }
                    }
                }
            }
        }
        self.core.replay(now, deferred);
    }

    fn complete_delivery(&mut self, now: SimTime, v: usize) {
        let core = &mut self.core;
        let d = core.vcpus[v].pending.take().expect("pending");
        let acked = core.vcpus[v].lrs.guest_ack();
        debug_assert!(acked.is_some());
        let p = core.vcpus[v].pcpu;
        match d.tag {
            Some(round) => {
                // tbm reads the counter at IRQ entry: latency in whole ticks.
                let ticks = floor_nonneg(now.ps() as f64 / self.tick_ps) - round_nonneg(d.deadline.ps() as f64 / self.tick_ps);
                let ns_f = ticks * self.tick_ps / 1000.0;
                // `.round().max(0.0) as u64`: zero unless positive.
                let ns = if ns_f > 0.0 { round_nonneg(ns_f) as u64 } else { 0 };
                self.rec.record(ns);
                if d.waited {
                    core.n.waited += 1;
                }
                let mut t = d.trace;
                if self.traces.wants_more() {
                    t.label = format!("timer #{round} ({}{})", d.case, if d.waited { ", waited" } else { "" });
                }
                self.traces.add(t);
                core.vcpus[v].act = Act::Handler;
                let mut dur = core.c(&self.p.costs.guest_handler);
                if forwarding(self.p.timer).programming_traps {
                    dur += core.c(&self.p.costs.sysreg_trap);
                    core.n.exits_sysreg += 1;
                }
                core.start_path(p, now, dur, Cont::Model(TbmDone { v }));
            }
            None => {
                // The second guest's wake-up: EOI at once, start a burst.
                let _ = core.vcpus[v].lrs.guest_eoi(acked.unwrap_or(0));
                core.vcpus[v].act = Act::Compute;
                let on = SimTime::from_ns_f64(self.burst_rng[v].exponential(self.p.burst_on_us * 1000.0));
                self.demand[v] += on;
                core.q.schedule_in(on, Ev::Model(Mev::BurstEnd { v }));
            }
        }
    }

    fn on_burst_end(&mut self, now: SimTime, v: usize) {
        let p = self.core.vcpus[v].pcpu;
        if self.core.defer_if_busy(p, Mev::BurstEnd { v }) {
            return;
        }
        let off = self.burst_rng[v].exponential(self.p.burst_off_us * 1000.0);
        let next_on = now + SimTime::from_ns_f64(off);
        self.core.q.schedule_at(next_on, Ev::Model(Mev::Irq { v, round: None, deadline: next_on }));
        if self.core.pcpus[p].current == Some(v) {
            self.core.guest_wfi(now, v, SimTime::ZERO);
        } else {
            // Descheduled mid-burst: it executes WFI when it next runs.
            self.core.settle(p, now);
            self.core.vcpus[v].act = Act::Wfi;
        }
    }

    fn run(&mut self, opts: &RunOpts) -> Result<SimTime, SimError> {
        // tbm starts at an arbitrary point relative to Xen's scheduler ticks.
        let phase = streams_phase(self.p.seed, self.p.period);
        let first = self.to_tick(self.p.period + phase);
        self.core.q.schedule_at(first, Ev::Model(Mev::Irq { v: 0, round: Some(0), deadline: first }));
        for v in 1..self.roles.len() {
            if self.roles[v] == Role::Bursty {
                let off = self.burst_rng[v].exponential(self.p.burst_off_us * 1000.0);
                let t = SimTime::from_ns_f64(off);
                self.core.q.schedule_at(t, Ev::Model(Mev::Irq { v, round: None, deadline: t }));
            }
        }
        for p in 0..self.core.pcpus.len() {
            self.core.reschedule(p, SimTime::ZERO, SimTime::ZERO);
        }
        let mut progress = Progress::new(opts, 1024, 2_000_000_000);
        while let Some((now, ev)) = self.core.q.pop() {
            match ev {
                Ev::Model(Mev::Irq { v, round, deadline }) => self.on_irq(now, v, round, deadline),
                Ev::PathDone { p } => self.on_path_done(now, p),
                Ev::Slice { p, gen } => self.core.on_slice(now, p, gen),
                Ev::Model(Mev::BurstEnd { v }) => self.on_burst_end(now, v),
            }
            if progress.step(self.rec.count(), self.p.samples, self.core.q.processed(), "the tbm guest never gets its interrupts")? {
                break;
            }
        }
        progress.finish(self.rec.count());
        if self.rec.count() < self.p.samples {
            return Err(SimError(format!(
                "the tbm vCPU stopped receiving timer interrupts after {} of {} rounds (is it starved by the scheduler?)",
                self.rec.count(),
                self.p.samples
            )));
        }
        Ok(self.core.q.now())
    }
}

/// Start phase of the tbm guest, uniform in [0, period), from its own stream.
fn streams_phase(seed: u64, period: SimTime) -> SimTime {
    let mut r = RngStreams::new(seed).stream("tbm-phase");
    SimTime((r.f64() * period.ps() as f64) as u64)
}

impl PreparedPoint for Prepared {
    fn work(&self) -> u64 {
        self.samples
    }

    fn run(self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError> {
        let mut sim = Sim::new(&self, opts.traces.picker("timer"));
        let end = sim.run(opts)?;
        for p in 0..sim.core.pcpus.len() {
            sim.core.settle(p, end);
        }
        let mut r = ConfigResult::default();
        r.classes.insert("timer".into(), sim.rec.finish());
        r.breakdown.insert("timer".into(), sim.traces.breakdown());
        let n = &sim.core.n;
        n.add_common(&mut r);
        for (k, v) in [
            ("exits.sysreg", n.exits_sysreg),
            ("gic.hw_deactivations", n.hw_deactivations),
            ("vwfi.twi_switches", n.twi_switches),
            ("vwfi.adaptive_kicks", n.adaptive_kicks),
            ("timer.waited_in_runqueue", n.waited),
            ("other.wakeups", n.other_wakeups),
        ] {
            r.add_counter(k, v);
        }
        let secs = end.ns_f64() / 1e9;
        r.set_figure("simulated_time", secs, "s");
        let others = sim.roles.len() - 1;
        if others > 0 {
            // The tbm vCPU never computes, so summing every vCPU's work counts the other guest's.
            let work: f64 = sim.core.vcpus.iter().skip(1).map(|v| v.work.ns_f64() / 1e9).sum();
            let thr = work / secs;
            // Upper bound of what the other guest could get: per pCPU, the demanded fractions
            // f_i (busy 1, bursty its realised on-time / time) summed, capped at one pCPU.
            let ideal: f64 = (0..self.pcpus)
                .map(|p| {
                    (1..sim.roles.len())
                        .filter(|v| sim.core.vcpus[*v].pcpu == p)
                        .map(|v| match sim.roles[v] {
                            Role::Busy => 1.0,
                            Role::Bursty => sim.demand[v].ns_f64() / 1e9 / secs,
                            _ => 0.0,
                        })
                        .sum::<f64>()
                        .min(1.0)
                })
                .sum();
            r.set_figure("other.throughput", thr, "pCPU");
            r.set_figure("other.ideal", ideal, "pCPU");
            if ideal > 0.0 {
                r.set_figure("other.loss", (1.0 - thr / ideal) * 100.0, "%");
            }
            r.set_figure("other.vcpus", others as f64, if others == 1 { "vCPU" } else { "vCPUs" });
        }
        let idle: f64 = sim.core.pcpus.iter().map(|p| p.idle.ns_f64() / 1e9).sum();
        r.set_figure("pcpu.idle", idle / secs, "pCPU");
        r.notes.push(format!(
            "xen-arm: scheduler {:?}, vwfi={}, other={}, {} pCPU(s) × {} vCPU(s), timer {:?}",
            self.xen.sched,
            self.xen.vwfi.as_str(),
            self.other.as_str(),
            self.pcpus,
            self.vcpus_per_pcpu,
            self.timer
        ));
        let mut census = self.costs.tbm_timer.census_notes();
        for n in self.costs.other_timer.census_notes() {
            if !census.contains(&n) {
                census.push(n);
            }
        }
        r.notes.extend(census);
        let _ = self.first_pcpu;
        Ok(PointOutput { result: r, traces: sim.traces.kept, events: sim.core.q.processed() })
    }
}

//! The event loop of the `xen-arm` model.
//!
//! Every pCPU is either running a vCPU in the guest (computing, or sleeping natively in WFI),
//! idle in Xen's idle loop, or executing a hypervisor path. A path is a sequence of costed
//! segments run atomically on its pCPU (Xen runs with interrupts masked); events for a busy pCPU
//! wait until the path ends. The timer interrupt of the tbm vCPU takes one of these paths
//! (segments as pushed onto its trace):
//!
//! | where the vCPU is | path |
//! |---|---|
//! | running (computing) | phys-irq → trap-to-el2 → xen-irq-handler → lr-write → eret → guest-ack |
//! | sleeping natively in WFI (`vwfi=native`) | phys-irq → wfi-exit → trap-to-el2 → xen-irq-handler → lr-write → eret → guest-ack |
//! | blocked after a trapped WFI, pCPU idle | phys-irq → idle-wakeup → xen-irq-handler → vcpu-wake → sched → context-restore → lr-write → eret → guest-ack |
//! | blocked, another vCPU running | phys-irq → trap-to-el2 → xen-irq-handler → vcpu-wake → (wait-runqueue if not preempting) → sched → context-save → context-restore → lr-write → eret → guest-ack |
//! | runnable but not running (descheduled) | phys-irq → … → xen-irq-handler → wait-runqueue → sched → context-save → context-restore → lr-write → eret → guest-ack |
//!
//! Scheduling decisions come from [`crate::hyp::scheduler::RunQueue`] (one per pCPU, vCPUs pinned)
//! and WFI trapping from [`crate::hyp::vwfi::WfiTrapControl`], re-evaluated after every path
//! (the points where a pCPU's runqueue can change: wake-up, block, dispatch). Injection goes
//! through each vCPU's [`LrFile`].
use results::{ConfigResult, LatencyRecorder};

use super::{OtherKind, Prepared};
use crate::arch::arm::generic_timer::{forwarding, TimerKind};
use crate::arch::arm::list_registers::{EoiEffect, InjectOutcome, LrFile};
use crate::engine::{CostDist, EventQueue, RngStreams, SimRng, SimTime, Trace, TraceSet};
use crate::hyp::scheduler::{Preempt, RunQueue};
use crate::hyp::vwfi::{TwiChange, WfiTrapControl};
use crate::model::{PointOutput, PreparedPoint, RunOpts, SimError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XState {
    Running,
    Runnable,
    Blocked,
}

/// What the guest is doing on the vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Compute,
    Wfi,
    Handler,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Tbm,
    Busy,
    Idle,
    Bursty,
}

/// An interrupt injected into a vCPU and not yet acknowledged.
struct Delivery {
    /// tbm round (None: the second guest's wake-up interrupt).
    round: Option<u64>,
    deadline: SimTime,
    trace: Trace,
    case: &'static str,
    waited: bool,
}

struct Vcpu {
    role: Role,
    pcpu: usize,
    xs: XState,
    act: Act,
    lrs: LrFile,
    pending: Option<Delivery>,
    work: SimTime,
    /// Bursty: computation demanded (sum of on-phase lengths drawn).
    demand: SimTime,
}

enum Cont {
    /// Path ends with `next` running (or the pCPU idle); `deliver`: `next` acknowledges its pending IRQ.
    Run { next: Option<usize>, deliver: bool },
    /// The tbm guest's handler finished.
    TbmDone { v: usize },
}

struct Pcpu {
    rq: RunQueue,
    current: Option<usize>,
    dispatched_at: SimTime,
    charged_at: SimTime,
    last_settle: SimTime,
    busy: bool,
    cont: Option<Cont>,
    deferred: Vec<Ev>,
    twi: WfiTrapControl,
    slice_gen: u64,
    idle: SimTime,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A physical interrupt for vCPU `v` (its timer) reaches its pCPU.
    Irq { v: usize, round: Option<u64>, deadline: SimTime },
    PathDone { p: usize },
    Slice { p: usize, gen: u64 },
    BurstEnd { v: usize },
}

#[derive(Default)]
struct Counters {
    exits_irq: u64,
    exits_wfi: u64,
    exits_sysreg: u64,
    wfi_native: u64,
    context_switches: u64,
    vcpu_wakeups: u64,
    sched_ticks: u64,
    maintenance_irqs: u64,
    hw_deactivations: u64,
    lr_queued: u64,
    twi_switches: u64,
    adaptive_kicks: u64,
    waited: u64,
    other_wakeups: u64,
}

struct Sim<'a> {
    p: &'a Prepared,
    q: EventQueue<Ev>,
    rng: SimRng,
    burst_rng: Vec<SimRng>,
    pcpus: Vec<Pcpu>,
    vcpus: Vec<Vcpu>,
    rec: LatencyRecorder,
    traces: TraceSet,
    n: Counters,
    tick_ps: f64,
}

fn sample(d: &CostDist, rng: &mut SimRng, factor: f64) -> SimTime {
    let t = d.sample(rng);
    if factor == 1.0 {
        t
    } else {
        t.scale(factor)
    }
}

impl<'a> Sim<'a> {
    fn new(p: &'a Prepared, keep_traces: usize) -> Self {
        let streams = RngStreams::new(p.seed);
        let mut pcpus: Vec<Pcpu> = (0..p.pcpus)
            .map(|_| Pcpu {
                rq: RunQueue::new(p.sched, p.sched_params),
                current: None,
                dispatched_at: SimTime::ZERO,
                charged_at: SimTime::ZERO,
                last_settle: SimTime::ZERO,
                busy: false,
                cont: None,
                deferred: Vec::new(),
                twi: WfiTrapControl::new(p.vwfi),
                slice_gen: 0,
                idle: SimTime::ZERO,
            })
            .collect();
        let total = p.pcpus * p.vcpus_per_pcpu;
        let mut vcpus = Vec::with_capacity(total);
        let mut burst_rng = Vec::with_capacity(total);
        for i in 0..total {
            let role = if i == 0 {
                Role::Tbm
            } else {
                match p.other {
                    OtherKind::Busy => Role::Busy,
                    OtherKind::Idle | OtherKind::None => Role::Idle,
                    OtherKind::Bursty => Role::Bursty,
                }
            };
            let pcpu = i % p.pcpus;
            pcpus[pcpu].rq.add(i);
            pcpus[pcpu].rq.set_runnable(i, true);
            vcpus.push(Vcpu {
                role,
                pcpu,
                xs: XState::Runnable,
                act: if role == Role::Busy { Act::Compute } else { Act::Wfi },
                lrs: LrFile::new(p.gic, p.list_registers),
                pending: None,
                work: SimTime::ZERO,
                demand: SimTime::ZERO,
            });
            burst_rng.push(streams.stream(&format!("other-vcpu{i}")));
        }
        Sim {
            p,
            q: EventQueue::with_capacity(64),
            rng: streams.stream("path"),
            burst_rng,
            pcpus,
            vcpus,
            rec: LatencyRecorder::new(p.warmup),
            traces: TraceSet::new(keep_traces),
            n: Counters::default(),
            tick_ps: 1e6 / p.counter_mhz,
        }
    }

    fn c(&mut self, d: &CostDist) -> SimTime {
        sample(d, &mut self.rng, 1.0)
    }

    /// Deadline rounded up to a counter tick (tbm programs CVAL in ticks).
    fn to_tick(&self, t: SimTime) -> SimTime {
        let ticks = (t.ps() as f64 / self.tick_ps).ceil();
        SimTime((ticks * self.tick_ps).round() as u64)
    }

    /// Count the elapsed time since the last event on `p` as work / idle time.
    fn settle(&mut self, p: usize, now: SimTime) {
        let pc = &mut self.pcpus[p];
        let dt = now - pc.last_settle;
        pc.last_settle = now;
        if pc.busy {
            return;
        }
        match pc.current {
            Some(v) => {
                let vc = &mut self.vcpus[v];
                if vc.act == Act::Compute && vc.role != Role::Tbm {
                    vc.work += dt;
                }
            }
            None => pc.idle += dt,
        }
    }

    fn charge(&mut self, p: usize, now: SimTime) {
        let pc = &mut self.pcpus[p];
        if let Some(c) = pc.current {
            let ran = now - pc.charged_at;
            pc.rq.charge(c, ran);
        }
        pc.charged_at = now;
    }

    fn start_path(&mut self, p: usize, now: SimTime, dur: SimTime, cont: Cont) {
        let pc = &mut self.pcpus[p];
        debug_assert!(!pc.busy);
        pc.busy = true;
        pc.cont = Some(cont);
        self.q.schedule_at(now + dur, Ev::PathDone { p });
    }

    fn set_slice(&mut self, p: usize, at: Option<SimTime>) {
        let pc = &mut self.pcpus[p];
        pc.slice_gen += 1;
        if let Some(t) = at {
            let gen = pc.slice_gen;
            self.q.schedule_at(t.max(self.q.now()), Ev::Slice { p, gen });
        }
    }

    /// Append the delivery segments of `v`'s pending interrupt, starting at absolute `at`.
    fn delivery_segments(&mut self, v: usize, at: SimTime) -> SimTime {
        let cold = self.cold(v);
        let costs = &self.p.costs;
        let d = self.vcpus[v].pending.as_mut().expect("pending delivery");
        let end = d.trace.start + d.trace.total();
        let mut total = SimTime::ZERO;
        if at > end {
            d.trace.push("wait-runqueue", at - end);
            d.waited = true;
        }
        for (name, c) in [("lr-write", &costs.lr_write), ("eret", &costs.eret), ("guest-ack", &costs.ack)] {
            let t = sample(c, &mut self.rng, cold);
            d.trace.push(name, t);
            total += t;
        }
        total
    }

    fn cold(&self, v: usize) -> f64 {
        match self.vcpus[v].pending.as_ref().and_then(|d| d.round) {
            Some(r) if r < self.p.cold_rounds => self.p.cold_factor,
            _ => 1.0,
        }
    }

    /// Pick what runs next on `p` after `prefix` of hypervisor work, and start that path.
    fn reschedule(&mut self, p: usize, now: SimTime, prefix: SimTime) {
        self.charge(p, now);
        let cur = self.pcpus[p].current;
        let cur_runnable = cur.filter(|c| self.vcpus[*c].xs != XState::Blocked);
        let d = self.pcpus[p].rq.pick(now, cur_runnable);
        let cold = d.next.map_or(1.0, |n| self.cold(n));
        let mut dur = prefix + sample(&self.p.costs.sched, &mut self.rng, cold);
        if d.next != cur {
            if let Some(c) = cur {
                dur += sample(&self.p.costs.save, &mut self.rng, cold);
                if self.vcpus[c].xs == XState::Running {
                    self.vcpus[c].xs = XState::Runnable;
                }
            }
            if d.next.is_some() {
                dur += sample(&self.p.costs.restore, &mut self.rng, cold);
                self.n.context_switches += 1;
            }
        }
        let mut deliver = false;
        if let Some(n) = d.next {
            if self.vcpus[n].pending.is_some() {
                // Record the scheduler segments on the delivered interrupt's trace.
                let t_sched = dur - prefix;
                let dl = self.vcpus[n].pending.as_mut().unwrap();
                let end = dl.trace.start + dl.trace.total();
                let sched_start = now + prefix;
                if sched_start > end {
                    dl.trace.push("wait-runqueue", sched_start - end);
                    dl.waited = true;
                }
                dl.trace.push(if d.next != cur { "sched+context-switch" } else { "sched" }, t_sched);
                dur += self.delivery_segments(n, now + dur);
                deliver = true;
            } else {
                dur += self.c(&self.p.costs.eret);
            }
        }
        self.set_slice(p, d.until.map(|u| u.max(now + dur)));
        self.start_path(p, now, dur, Cont::Run { next: d.next, deliver });
    }

    /// The guest on `v` (running on its pCPU, which is not busy) executes WFI.
    fn guest_wfi(&mut self, now: SimTime, v: usize, extra: SimTime) {
        let p = self.vcpus[v].pcpu;
        self.settle(p, now);
        self.vcpus[v].act = Act::Wfi;
        let others = self.pcpus[p].rq.others_runnable(Some(v));
        if !matches!(self.pcpus[p].twi.reevaluate(others, false), TwiChange::None) {
            self.n.twi_switches += 1;
        }
        if self.vcpus[v].pending.is_some() {
            // WFI completes at once when an interrupt is pending; the model delivers it now.
            let dur = extra + self.delivery_segments(v, now + extra);
            self.start_path(p, now, dur, Cont::Run { next: Some(v), deliver: true });
            return;
        }
        if self.pcpus[p].twi.trapping {
            self.n.exits_wfi += 1;
            let prefix = extra + self.c(&self.p.costs.trap) + self.c(&self.p.costs.block);
            self.vcpus[v].xs = XState::Blocked;
            self.pcpus[p].rq.set_runnable(v, false);
            self.reschedule(p, now, prefix);
        } else {
            self.n.wfi_native += 1;
            if extra > SimTime::ZERO {
                self.start_path(p, now, extra, Cont::Run { next: Some(v), deliver: false });
            }
        }
    }

    fn on_irq(&mut self, now: SimTime, v: usize, round: Option<u64>, deadline: SimTime) {
        let p = self.vcpus[v].pcpu;
        if self.pcpus[p].busy {
            self.pcpus[p].deferred.push(Ev::Irq { v, round, deadline });
            return;
        }
        if self.vcpus[v].pending.is_some() {
            // Still pending from an earlier edge: coalesces in the LR (cannot happen for tbm).
            return;
        }
        self.settle(p, now);
        self.charge(p, now);
        let cold = match round {
            Some(r) if r < self.p.cold_rounds => self.p.cold_factor,
            _ => 1.0,
        };
        let costs = &self.p.costs;
        let rng = &mut self.rng;
        let mut t = Trace::new("", deadline);
        if now > deadline {
            t.push("hyp-busy", now - deadline);
        }
        let mut push = |t: &mut Trace, name: &'static str, c: &CostDist| {
            let d = sample(c, rng, cold);
            t.push(name, d);
            d
        };
        let mut prefix = push(&mut t, "phys-irq", &costs.raise);
        let cur = self.pcpus[p].current;
        let case;
        match cur {
            None => {
                prefix += push(&mut t, "idle-wakeup", &costs.idle_wakeup);
                case = "trapped WFI, pCPU idle";
            }
            Some(u) => {
                if self.vcpus[u].act == Act::Wfi {
                    prefix += push(&mut t, "wfi-exit", &costs.wfi_exit);
                }
                prefix += push(&mut t, "trap-to-el2", &costs.trap);
                self.n.exits_irq += 1;
                case = if u == v {
                    if self.vcpus[v].act == Act::Wfi {
                        "native WFI"
                    } else {
                        "guest running"
                    }
                } else if self.vcpus[v].xs == XState::Blocked {
                    "trapped WFI, other vCPU running"
                } else {
                    "descheduled (runnable)"
                };
            }
        }
        prefix += push(&mut t, "xen-irq-handler", &costs.handler);
        let was_blocked = self.vcpus[v].xs == XState::Blocked;
        if was_blocked {
            prefix += push(&mut t, "vcpu-wake", &costs.wake);
            self.vcpus[v].xs = XState::Runnable;
            self.pcpus[p].rq.set_runnable(v, true);
            self.n.vcpu_wakeups += 1;
        }
        // Inject (into the LRs if loaded, else into the saved copy restored on entry).
        let f = forwarding(if self.vcpus[v].role == Role::Tbm { self.p.timer } else { TimerKind::Virtual });
        if self.vcpus[v].lrs.inject(f.vintid, 0xa0, f.hw, false) == InjectOutcome::Queued {
            self.n.lr_queued += 1;
        }
        if self.vcpus[v].role != Role::Tbm {
            self.n.other_wakeups += 1;
        }
        self.vcpus[v].pending = Some(Delivery { round, deadline, trace: t, case, waited: false });
        if cur == Some(v) {
            let dur = prefix + self.delivery_segments(v, now + prefix);
            self.start_path(p, now, dur, Cont::Run { next: Some(v), deliver: true });
            return;
        }
        // Adaptive vwfi re-evaluates on enqueue: if the running vCPU sleeps natively in WFI and
        // now has company, set TWI and kick it: it re-executes WFI, traps and blocks, and the
        // pCPU goes to the runnable vCPUs (instead of descheduling an idle vCPU as runnable).
        if let Some(u) = cur.filter(|u| *u != v && was_blocked && self.vcpus[*u].act == Act::Wfi) {
            let others = self.pcpus[p].rq.others_runnable(Some(u));
            match self.pcpus[p].twi.reevaluate(others, true) {
                TwiChange::SetAndKick => {
                    self.n.twi_switches += 1;
                    self.n.adaptive_kicks += 1;
                    self.n.exits_wfi += 1;
                    let kick = self.c(&self.p.costs.twi_update)
                        + self.c(&self.p.costs.eret)
                        + self.c(&self.p.costs.trap)
                        + self.c(&self.p.costs.block);
                    self.vcpus[v].pending.as_mut().unwrap().trace.push("adaptive-kick (other vCPU leaves WFI, traps, blocks)", kick);
                    self.vcpus[u].xs = XState::Blocked;
                    self.pcpus[p].rq.set_runnable(u, false);
                    self.reschedule(p, now, prefix + kick);
                    return;
                }
                TwiChange::Set(_) => self.n.twi_switches += 1,
                TwiChange::None => {}
            }
        }
        let pre = if was_blocked {
            let ran = now - self.pcpus[p].dispatched_at;
            self.pcpus[p].rq.wake_preempts(now, v, cur, ran)
        } else {
            Preempt::No
        };
        match (cur, pre) {
            (None, _) | (_, Preempt::Now) => self.reschedule(p, now, prefix),
            (Some(u), pre) => {
                if let Preempt::At(at) = pre {
                    self.set_slice(p, Some(at));
                }
                // Back to the running vCPU; the woken one waits in the runqueue.
                let dur = prefix + self.c(&self.p.costs.eret);
                self.start_path(p, now, dur, Cont::Run { next: Some(u), deliver: false });
            }
        }
    }

    fn on_path_done(&mut self, now: SimTime, p: usize) {
        self.settle(p, now);
        let pc = &mut self.pcpus[p];
        pc.busy = false;
        let cont = pc.cont.take().expect("a path in progress");
        let mut deferred = std::mem::take(&mut pc.deferred);
        match cont {
            Cont::Run { next, deliver } => {
                let pc = &mut self.pcpus[p];
                if pc.current != next {
                    pc.current = next;
                    pc.dispatched_at = now;
                    pc.charged_at = now;
                }
                if let Some(n) = next {
                    self.vcpus[n].xs = XState::Running;
                }
                if deliver {
                    let n = next.expect("delivery to a running vCPU");
                    self.complete_delivery(now, n);
                }
                self.after_change(now, p);
            }
            Cont::TbmDone { v } => {
                // EOI through the GIC virtual CPU interface: no exit.
                let vint = forwarding(self.p.timer).vintid;
                match self.vcpus[v].lrs.guest_eoi(vint) {
                    Ok(effects) => {
                        for e in effects {
                            match e {
                                EoiEffect::DeactivatePhysical(_) => self.n.hw_deactivations += 1,
                                EoiEffect::Maintenance(_) => {
                                    self.n.maintenance_irqs += 1;
                                    self.vcpus[v].lrs.maintenance();
                                }
                            }
                        }
                    }
                    Err(e) => panic!("tbm EOI: {e}"),
                }
                // Re-arm the timer `period` ahead (CNTP_CVAL write traps with the physical timer).
                let deadline = self.to_tick(now + self.p.period);
                let round = self.rec.count();
                self.q.schedule_at(deadline, Ev::Irq { v, round: Some(round), deadline });
                self.guest_wfi(now, v, SimTime::ZERO);
            }
        }
        // Replay events that arrived while the pCPU was busy, in order.
        for e in deferred.drain(..) {
            self.q.schedule_at(now, e);
        }
    }

    /// After a path: re-evaluate WFI trapping; an idle vCPU left running traps now if required.
    fn after_change(&mut self, now: SimTime, p: usize) {
        let Some(cur) = self.pcpus[p].current else { return };
        if self.pcpus[p].busy {
            return;
        }
        let in_wfi = self.vcpus[cur].act == Act::Wfi;
        let others = self.pcpus[p].rq.others_runnable(Some(cur));
        let change = self.pcpus[p].twi.reevaluate(others, in_wfi);
        let mut extra = SimTime::ZERO;
        match change {
            TwiChange::None => {}
            TwiChange::Set(_) => {
                self.n.twi_switches += 1;
            }
            TwiChange::SetAndKick => {
                self.n.twi_switches += 1;
                self.n.adaptive_kicks += 1;
                extra = self.c(&self.p.costs.twi_update) + self.c(&self.p.costs.eret);
            }
        }
        if in_wfi && self.pcpus[p].twi.trapping {
            // The vCPU's idle loop (re-)executes WFI, which now traps.
            self.guest_wfi(now, cur, extra);
        }
    }

    fn complete_delivery(&mut self, now: SimTime, v: usize) {
        let d = self.vcpus[v].pending.take().expect("pending");
        let acked = self.vcpus[v].lrs.guest_ack();
        debug_assert!(acked.is_some());
        let p = self.vcpus[v].pcpu;
        match d.round {
            Some(round) => {
                // tbm reads the counter at IRQ entry: latency in whole ticks.
                let ticks = (now.ps() as f64 / self.tick_ps).floor() - (d.deadline.ps() as f64 / self.tick_ps).round();
                let ns = (ticks * self.tick_ps / 1000.0).round().max(0.0) as u64;
                self.rec.record(ns);
                if d.waited {
                    self.n.waited += 1;
                }
                let mut t = d.trace;
                t.label = format!("timer #{round} ({}{})", d.case, if d.waited { ", waited" } else { "" });
                self.traces.add(t);
                self.vcpus[v].act = Act::Handler;
                let mut dur = self.c(&self.p.costs.guest_handler);
                if forwarding(self.p.timer).programming_traps {
                    dur += self.c(&self.p.costs.sysreg_trap);
                    self.n.exits_sysreg += 1;
                }
                self.start_path(p, now, dur, Cont::TbmDone { v });
            }
            None => {
                // The second guest's wake-up: EOI at once, start a burst.
                let _ = self.vcpus[v].lrs.guest_eoi(acked.unwrap_or(0));
                self.vcpus[v].act = Act::Compute;
                let on = SimTime::from_ns_f64(self.burst_rng[v].exponential(self.p.burst_on_us * 1000.0));
                self.vcpus[v].demand += on;
                self.q.schedule_in(on, Ev::BurstEnd { v });
            }
        }
    }

    fn on_slice(&mut self, now: SimTime, p: usize, gen: u64) {
        if gen != self.pcpus[p].slice_gen {
            return;
        }
        if self.pcpus[p].busy {
            self.pcpus[p].deferred.push(Ev::Slice { p, gen });
            return;
        }
        self.settle(p, now);
        self.n.sched_ticks += 1;
        let prefix = match self.pcpus[p].current {
            Some(c) => {
                let mut d = self.c(&self.p.costs.trap);
                if self.vcpus[c].act == Act::Wfi {
                    d += self.c(&self.p.costs.wfi_exit);
                }
                d
            }
            None => self.c(&self.p.costs.idle_wakeup),
        };
        self.reschedule(p, now, prefix);
    }

    fn on_burst_end(&mut self, now: SimTime, v: usize) {
        let p = self.vcpus[v].pcpu;
        if self.pcpus[p].busy {
            self.pcpus[p].deferred.push(Ev::BurstEnd { v });
            return;
        }
        let off = self.burst_rng[v].exponential(self.p.burst_off_us * 1000.0);
        let next_on = now + SimTime::from_ns_f64(off);
        self.q.schedule_at(next_on, Ev::Irq { v, round: None, deadline: next_on });
        if self.pcpus[p].current == Some(v) {
            self.guest_wfi(now, v, SimTime::ZERO);
        } else {
            // Descheduled mid-burst: it executes WFI when it next runs.
            self.settle(p, now);
            self.vcpus[v].act = Act::Wfi;
        }
    }

    fn run(&mut self, opts: &RunOpts) -> Result<SimTime, SimError> {
        // tbm starts at an arbitrary point relative to Xen's scheduler ticks.
        let phase = streams_phase(self.p.seed, self.p.period);
        let first = self.to_tick(self.p.period + phase);
        self.q.schedule_at(first, Ev::Irq { v: 0, round: Some(0), deadline: first });
        for v in 1..self.vcpus.len() {
            if self.vcpus[v].role == Role::Bursty {
                let off = self.burst_rng[v].exponential(self.p.burst_off_us * 1000.0);
                let t = SimTime::from_ns_f64(off);
                self.q.schedule_at(t, Ev::Irq { v, round: None, deadline: t });
            }
        }
        for p in 0..self.pcpus.len() {
            self.reschedule(p, SimTime::ZERO, SimTime::ZERO);
        }
        let mut reported = 0;
        while let Some((now, ev)) = self.q.pop() {
            match ev {
                Ev::Irq { v, round, deadline } => self.on_irq(now, v, round, deadline),
                Ev::PathDone { p } => self.on_path_done(now, p),
                Ev::Slice { p, gen } => self.on_slice(now, p, gen),
                Ev::BurstEnd { v } => self.on_burst_end(now, v),
            }
            let done = self.rec.count();
            if done >= self.p.samples {
                break;
            }
            if done >= reported + 1024 {
                (opts.progress)(done - reported);
                reported = done;
            }
            if self.q.processed() > 2_000_000_000 {
                return Err(SimError("event budget exhausted: the tbm guest never gets its interrupts".into()));
            }
        }
        (opts.progress)(self.rec.count() - reported);
        if self.rec.count() < self.p.samples {
            return Err(SimError(format!(
                "the tbm vCPU stopped receiving timer interrupts after {} of {} rounds (is it starved by the scheduler?)",
                self.rec.count(),
                self.p.samples
            )));
        }
        Ok(self.q.now())
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
        let mut sim = Sim::new(&self, opts.keep_traces);
        let end = sim.run(opts)?;
        for p in 0..sim.pcpus.len() {
            sim.settle(p, end);
        }
        let mut r = ConfigResult::default();
        r.classes.insert("timer".into(), sim.rec.finish());
        r.breakdown.insert("timer".into(), sim.traces.breakdown());
        let n = &sim.n;
        for (k, v) in [
            ("exits.irq", n.exits_irq),
            ("exits.wfi", n.exits_wfi),
            ("exits.sysreg", n.exits_sysreg),
            ("wfi.native_sleeps", n.wfi_native),
            ("context_switches", n.context_switches),
            ("vcpu_wakeups", n.vcpu_wakeups),
            ("sched.ticks", n.sched_ticks),
            ("maintenance_irqs", n.maintenance_irqs),
            ("gic.hw_deactivations", n.hw_deactivations),
            ("gic.lr_overflow", n.lr_queued),
            ("vwfi.twi_switches", n.twi_switches),
            ("vwfi.adaptive_kicks", n.adaptive_kicks),
            ("timer.waited_in_runqueue", n.waited),
            ("other.wakeups", n.other_wakeups),
        ] {
            r.add_counter(k, v);
        }
        let secs = end.ns_f64() / 1e9;
        r.set_figure("simulated_time", secs, "s");
        let others = sim.vcpus.len() - 1;
        if others > 0 {
            let work: f64 = sim.vcpus.iter().skip(1).map(|v| v.work.ns_f64() / 1e9).sum();
            let thr = work / secs;
            // Upper bound of what the other guest could get: per pCPU, the demanded fractions
            // f_i (busy 1, bursty its realised on-time / time) summed, capped at one pCPU.
            let ideal: f64 = (0..self.pcpus)
                .map(|p| {
                    sim.vcpus
                        .iter()
                        .skip(1)
                        .filter(|v| v.pcpu == p)
                        .map(|v| match v.role {
                            Role::Busy => 1.0,
                            Role::Bursty => v.demand.ns_f64() / 1e9 / secs,
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
            r.set_figure("other.vcpus", others as f64, "vCPUs");
        }
        let idle: f64 = sim.pcpus.iter().map(|p| p.idle.ns_f64() / 1e9).sum();
        r.set_figure("pcpu.idle", idle / secs, "pCPU");
        r.notes.push(format!(
            "xen-arm: scheduler {:?}, vwfi={}, other={}, {} pCPU(s) × {} vCPU(s), timer {:?}",
            self.sched,
            self.vwfi.as_str(),
            self.other.as_str(),
            self.pcpus,
            self.vcpus_per_pcpu,
            self.timer
        ));
        let _ = self.first_pcpu;
        Ok(PointOutput { result: r, traces: sim.traces.kept, events: sim.q.processed() })
    }
}

//! The hypervisor paths of the Xen core. An interrupt for vCPU `v` taken on pCPU `p` goes
//! (segments as pushed onto its trace; the model pushes the arrival segments and the handler):
//!
//! | where the vCPU is | path |
//! |---|---|
//! | running (computing) | arrival → trap-to-el2 → handler → lr-write → eret → guest-ack |
//! | sleeping natively in WFI (`vwfi=native`) | arrival → wfi-exit → trap-to-el2 → handler → lr-write → eret → guest-ack |
//! | blocked after a trapped WFI, pCPU idle | arrival → idle-wakeup → handler → vcpu-wake → sched → context-restore → lr-write → eret → guest-ack |
//! | blocked, another vCPU running | arrival → trap-to-el2 → handler → vcpu-wake → (wait-runqueue if not preempting) → sched → context-save → context-restore → lr-write → eret → guest-ack |
//! | runnable but not running (descheduled) | arrival → … → handler → wait-runqueue → sched → context-save → context-restore → lr-write → eret → guest-ack |
//!
//! A delivery that is not through a list register (a GICv4 vLPI waiting in the VPT) skips
//! `lr-write`; a vCPU with a vPE adds `vpe-schedule-in` when it is switched in.
//! Scheduling decisions come from [`crate::hyp::scheduler::RunQueue`] (one per pCPU, vCPUs pinned)
//! and WFI trapping from [`crate::hyp::vwfi::WfiTrapControl`], re-evaluated after every path
//! (the points where a pCPU's runqueue can change: wake-up, block, dispatch).
use super::{sample, Act, Cont, Core, Ev, VpeSwitch, XState, GIC_EXTRA_REGS};
use crate::engine::{CostDist, SimTime, Trace};
use crate::hyp::scheduler::Preempt;
use crate::hyp::vwfi::TwiChange;

impl<'a, T, X: Copy, C> Core<'a, T, X, C> {
    /// Push one costed segment (scaled by `cold`) and return its duration.
    pub fn seg(&mut self, t: &mut Trace, name: &'static str, d: &CostDist, cold: f64) -> SimTime {
        let dur = sample(d, &mut self.rng, cold);
        t.push(name, dur);
        dur
    }

    /// Append the delivery segments of `v`'s pending interrupt, starting at absolute `at`.
    pub fn delivery_segments(&mut self, v: usize, at: SimTime) -> SimTime {
        let cold = self.cold(v);
        let costs = &self.cfg.costs;
        let d = self.vcpus[v].pending.as_mut().expect("pending delivery");
        let end = d.trace.start + d.trace.total();
        let mut total = SimTime::ZERO;
        if at > end {
            d.trace.push("wait-runqueue", at - end);
            d.waited = true;
        }
        let lr: &[(&'static str, &CostDist)] = &[("lr-write", &costs.lr_access), ("eret", &costs.eret), ("guest-ack", &costs.ack)];
        let segs = if d.via_lr { lr } else { &lr[1..] };
        for (name, c) in segs {
            let t = sample(c, &mut self.rng, cold);
            d.trace.push(name, t);
            total += t;
        }
        total
    }

    /// Pick what runs next on `p` after `prefix` of hypervisor work, and start that path:
    /// `schedule` (schedule() + the scheduler's do_schedule), then on a switch `context-save`
    /// (ctxt_switch_from: registers + every LR and 3 GIC control registers read back) and
    /// `context-restore` (schedule_tail → ctxt_switch_to: registers + the same GIC registers
    /// written), then the delivery if the next vCPU has one pending.
    pub fn reschedule(&mut self, p: usize, now: SimTime, prefix: SimTime) {
        self.charge(p, now);
        let cur = self.pcpus[p].current;
        let cur_runnable = cur.filter(|c| self.vcpus[*c].xs != XState::Blocked);
        // schedule() reads the clock after the `prefix` (Xen: NOW() at its start): that is the
        // switched-in vCPU's state_entry_time and the time its ratelimit is measured from.
        let d = self.pcpus[p].rq.pick(now + prefix, cur_runnable);
        let cold = d.next.map_or(1.0, |n| self.cold(n));
        let cfg = self.cfg;
        let costs = &cfg.costs;
        let gic_regs = cfg.list_registers + GIC_EXTRA_REGS;
        let t_sched = sample(&costs.sched, &mut self.rng, cold) + sample(&costs.sched_pick, &mut self.rng, cold);
        let (mut t_save, mut t_restore, mut vpe_in) = (SimTime::ZERO, SimTime::ZERO, SimTime::ZERO);
        if d.next != cur {
            if let Some(c) = cur {
                t_save = sample(&costs.save, &mut self.rng, cold) + sample(&costs.lr_access, &mut self.rng, cold).scale(gic_regs as f64);
                let blocking = self.vcpus[c].xs == XState::Blocked;
                if self.vcpus[c].xs == XState::Running {
                    self.vcpus[c].xs = XState::Runnable;
                }
                if let (true, Some(vc)) = (self.vcpus[c].vpe, &cfg.vpe) {
                    t_save += sample(&vc.schedule_out, &mut self.rng, cold);
                    self.n.vpe_schedule_out += 1;
                    self.vpe_log.push(VpeSwitch::Out { v: c, blocking });
                }
            }
            if let Some(n) = d.next {
                t_restore = sample(&costs.restore, &mut self.rng, cold) + sample(&costs.lr_access, &mut self.rng, cold).scale(gic_regs as f64);
                self.n.context_switches += 1;
                if let (true, Some(vc)) = (self.vcpus[n].vpe, &cfg.vpe) {
                    vpe_in = sample(&vc.schedule_in, &mut self.rng, cold);
                    self.n.vpe_schedule_in += 1;
                    self.vpe_log.push(VpeSwitch::In(n));
                }
            }
        }
        let mut dur = prefix + t_sched + t_save + t_restore + vpe_in;
        let mut deliver = false;
        if let Some(n) = d.next {
            if self.vcpus[n].pending.is_some() {
                // Record the scheduler segments on the delivered interrupt's trace.
                let dl = self.vcpus[n].pending.as_mut().expect("the vCPU has a pending interrupt");
                let end = dl.trace.start + dl.trace.total();
                let sched_start = now + prefix;
                if sched_start > end {
                    dl.trace.push("wait-runqueue", sched_start - end);
                    dl.waited = true;
                }
                for (name, t) in [("schedule", t_sched), ("context-save", t_save), ("context-restore", t_restore), ("vpe-schedule-in", vpe_in)] {
                    if t > SimTime::ZERO {
                        dl.trace.push(name, t);
                    }
                }
                dur += self.delivery_segments(n, now + dur);
                deliver = true;
            } else {
                dur += self.c(&costs.eret);
            }
        }
        self.set_slice(p, d.until.map(|u| u.max(now + dur)));
        self.start_path(p, now, dur, Cont::Run { next: d.next, deliver });
    }

    /// The maintenance interrupt (PPI 25) a guest EOI raised on `v`'s pCPU, taken at once from the
    /// guest: trap, Xen's handler, `refills` LR writes moving queued interrupts from the software
    /// queue into freed LRs (GICH_HCR.UIE / ICH_HCR.UIE, [`crate::arch::arm::list_registers`]),
    /// eret. Returns its duration (the caller runs it as part of the guest's current path).
    pub fn maintenance_path(&mut self, v: usize, refills: usize) -> SimTime {
        self.n.maintenance_irqs += 1;
        self.n.exits_irq += 1;
        self.n.lr_refills += refills as u64;
        let p = self.vcpus[v].pcpu;
        let f = self.interference(p);
        let costs = &self.cfg.costs;
        let mut t = sample(&costs.trap, &mut self.rng, 1.0) + sample(&costs.maintenance, &mut self.rng, f);
        // Read MISR and EISR, then one write per refilled LR.
        t += sample(&costs.lr_access, &mut self.rng, 1.0).scale((2 + refills) as f64);
        t + sample(&costs.eret, &mut self.rng, 1.0)
    }

    /// The guest on `v` (running on its pCPU, which is not busy) executes WFI.
    pub fn guest_wfi(&mut self, now: SimTime, v: usize, extra: SimTime) {
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
            let costs = &self.cfg.costs;
            let prefix = extra + self.c(&costs.trap) + self.c(&costs.block);
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

    /// How an interrupt for `v` taken on `p` finds things (trace label), before any state changes.
    pub fn irq_case(&self, p: usize, v: usize) -> &'static str {
        match self.pcpus[p].current {
            None => "trapped WFI, pCPU idle",
            Some(u) if u == v => {
                if self.vcpus[v].act == Act::Wfi {
                    "native WFI"
                } else {
                    "guest running"
                }
            }
            Some(_) if self.vcpus[v].xs == XState::Blocked => "trapped WFI, other vCPU running",
            Some(_) => "descheduled (runnable)",
        }
    }

    /// The pCPU takes a physical interrupt into EL2: `idle-wakeup` from Xen's idle loop, or
    /// (`wfi-exit`) `trap-to-el2` from the running guest.
    pub fn take_irq(&mut self, p: usize, t: &mut Trace, cold: f64) -> SimTime {
        let cfg = self.cfg;
        match self.pcpus[p].current {
            None => self.seg(t, "idle-wakeup", &cfg.costs.idle_wakeup, cold),
            Some(u) => {
                let mut d = SimTime::ZERO;
                if self.vcpus[u].act == Act::Wfi {
                    d += self.seg(t, "wfi-exit", &cfg.costs.wfi_exit, cold);
                }
                d += self.seg(t, "trap-to-el2", &cfg.costs.trap, cold);
                self.n.exits_irq += 1;
                d
            }
        }
    }

    /// Unblock `v` if it is blocked (`vcpu-wake`); returns the time and whether it was.
    pub fn wake_if_blocked(&mut self, v: usize, t: &mut Trace, cold: f64) -> (SimTime, bool) {
        if self.vcpus[v].xs != XState::Blocked {
            return (SimTime::ZERO, false);
        }
        let cfg = self.cfg;
        let d = self.seg(t, "vcpu-wake", &cfg.costs.wake, cold) + self.seg(t, "runq-tickle", &cfg.costs.sched_wake, cold);
        let p = self.vcpus[v].pcpu;
        self.vcpus[v].xs = XState::Runnable;
        self.pcpus[p].rq.set_runnable(v, true);
        self.n.vcpu_wakeups += 1;
        (d, true)
    }

    /// After `prefix` of hypervisor work on `p` made `v`'s delivery pending: deliver at once if
    /// `v` runs here, else wake / preempt / return to the running vCPU per the scheduler.
    pub fn after_inject(&mut self, now: SimTime, p: usize, v: usize, prefix: SimTime, was_blocked: bool) {
        let cur = self.pcpus[p].current;
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
                    let costs = &self.cfg.costs;
                    let kick = self.c(&costs.twi_update) + self.c(&costs.eret) + self.c(&costs.trap) + self.c(&costs.block);
                    self.vcpus[v].pending.as_mut().expect("the vCPU has a pending interrupt").trace.push("adaptive-kick (other vCPU leaves WFI, traps, blocks)", kick);
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
            // The scheduler decides after the wake-up path (runq_tickle → SCHEDULE_SOFTIRQ →
            // schedule()), measuring the running vCPU's run time from its state_entry_time.
            let at = now + prefix;
            let ran = cur.and_then(|u| self.pcpus[p].rq.running_for(u, at)).unwrap_or(at - self.pcpus[p].dispatched_at);
            self.pcpus[p].rq.wake_preempts(at, v, cur, ran)
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
                let dur = prefix + self.c(&self.cfg.costs.eret);
                self.start_path(p, now, dur, Cont::Run { next: Some(u), deliver: false });
            }
        }
    }

    /// A path on `p` ended: returns its continuation and the events held meanwhile (hand them
    /// back with [`Core::replay`] after handling the continuation).
    pub fn finish_path(&mut self, now: SimTime, p: usize) -> (Cont<C>, Vec<Ev<X>>) {
        self.settle(p, now);
        let pc = &mut self.pcpus[p];
        pc.busy = false;
        let cont = pc.cont.take().expect("a path in progress");
        (cont, std::mem::take(&mut pc.deferred))
    }

    /// `Cont::Run`: `next` is now current on `p` (running).
    pub fn enter(&mut self, now: SimTime, p: usize, next: Option<usize>) {
        let pc = &mut self.pcpus[p];
        if pc.current != next {
            pc.current = next;
            pc.dispatched_at = now;
            pc.charged_at = now;
        }
        if let Some(n) = next {
            self.vcpus[n].xs = XState::Running;
        }
    }

    /// Replay events that arrived while a pCPU was busy, in order.
    pub fn replay(&mut self, now: SimTime, mut deferred: Vec<Ev<X>>) {
        for e in deferred.drain(..) {
            self.q.schedule_at(now, e);
        }
    }

    /// After a path: re-evaluate WFI trapping; an idle vCPU left running traps now if required.
    pub fn after_change(&mut self, now: SimTime, p: usize) {
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
                let costs = &self.cfg.costs;
                extra = self.c(&costs.twi_update) + self.c(&costs.eret);
            }
        }
        if in_wfi && self.pcpus[p].twi.trapping {
            // The vCPU's idle loop (re-)executes WFI, which now traps.
            self.guest_wfi(now, cur, extra);
        }
    }

    /// A scheduler slice (credit2 timer, RTDS budget) ended on `p`.
    pub fn on_slice(&mut self, now: SimTime, p: usize, gen: u64) {
        if gen != self.pcpus[p].slice_gen {
            return;
        }
        if self.pcpus[p].busy {
            self.pcpus[p].deferred.push(Ev::Slice { p, gen });
            return;
        }
        self.settle(p, now);
        self.n.sched_ticks += 1;
        let costs = &self.cfg.costs;
        let prefix = match self.pcpus[p].current {
            Some(c) => {
                let mut d = self.c(&costs.trap);
                if self.vcpus[c].act == Act::Wfi {
                    d += self.c(&costs.wfi_exit);
                }
                d
            }
            None => self.c(&costs.idle_wakeup),
        };
        self.reschedule(p, now, prefix);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Core, Counters, VcpuInit, VpeCosts, XenCosts, XenSetup};
    use super::*;
    use crate::hyp::scheduler::{SchedKind, SchedParams};
    use crate::hyp::vwfi::Vwfi;
    use results::vocab::Gic;

    fn setup(vpe: bool) -> XenSetup {
        let k = |ns| CostDist::constant_ns(ns);
        XenSetup {
            sched: SchedKind::Null,
            sched_params: SchedParams::default(),
            vwfi: Vwfi::Trap,
            costs: XenCosts {
                wfi_exit: k(1.0),
                idle_wakeup: k(2.0),
                trap: k(3.0),
                handler: k(4.0),
                wake: k(5.0),
                sched_wake: k(0.5),
                sched: k(6.0),
                sched_pick: k(0.0),
                save: k(7.0),
                restore: k(8.0),
                lr_access: k(9.0),
                maintenance: k(14.0),
                eret: k(10.0),
                ack: k(11.0),
                block: k(12.0),
                twi_update: k(13.0),
            },
            list_registers: 4,
            gic: Gic::V3,
            vpe: vpe.then(|| VpeCosts { schedule_in: k(100.0), schedule_out: k(200.0) }),
            cache: super::super::CacheShare::NONE,
        }
    }

    /// Dispatch vCPU 0 at t=0, then let it execute WFI (trapped): block and schedule out.
    fn dispatch_then_block(cfg: &XenSetup, vpe: bool) -> (SimTime, SimTime, Counters) {
        let mut core: Core<(), (), ()> = Core::new(cfg, 1, 1, &[VcpuInit { pcpu: 0, act: Act::Compute, vpe }]);
        core.reschedule(0, SimTime::ZERO, SimTime::ZERO);
        let (t_in, _) = core.q.pop().unwrap();
        let (cont, _) = core.finish_path(t_in, 0);
        let Cont::Run { next, .. } = cont else { panic!("a Run continuation") };
        core.enter(t_in, 0, next);
        core.guest_wfi(t_in, 0, SimTime::ZERO);
        let (t_out, _) = core.q.pop().unwrap();
        assert_eq!(core.vcpus[0].xs, XState::Blocked);
        (t_in, t_out - t_in, core.n)
    }

    #[test]
    fn a_vpe_pays_vpendbaser_at_each_context_switch() {
        let (t_in, t_out, n) = dispatch_then_block(&setup(true), true);
        // sched 6 + restore 8 + (4 LRs + 3 GIC registers) x 9 + schedule-in 100 + eret 10.
        assert_eq!(t_in, SimTime::from_ns_f64(187.0));
        // trap 3 + block 12 + sched 6 + save 7 + 7 x 9 + schedule-out 200.
        assert_eq!(t_out, SimTime::from_ns_f64(291.0));
        assert_eq!((n.vpe_schedule_in, n.vpe_schedule_out, n.exits_wfi), (1, 1, 1));
        // Without a vPE the same switches cost nothing extra (and draw nothing).
        let (t_in, t_out, n) = dispatch_then_block(&setup(false), false);
        assert_eq!((t_in, t_out), (SimTime::from_ns_f64(87.0), SimTime::from_ns_f64(91.0)));
        assert_eq!(n.vpe_schedule_in + n.vpe_schedule_out, 0);
    }
}

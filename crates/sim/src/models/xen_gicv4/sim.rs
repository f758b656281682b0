//! The event loop of `xen-gicv4`: fio jobs on dom0 vCPUs of the shared Xen core, their device
//! completions routed by the software LPI path, GICv4.1 direct injection, or bare metal.
use results::{ConfigResult, LatencyRecorder};

use super::vpe::{Gicv4, VlpiRoute, LPI_BASE};
use super::{Mode, Prepared};
use crate::arch::arm::list_registers::{EoiEffect, InjectOutcome};
use crate::engine::{RngStreams, SimRng, SimTime, Trace, TraceSet};
use crate::hyp::credit2_tickle::{tickle, Tickle};
use crate::hyp::masked_windows::{MaskedWindows, WindowSource};
use crate::hyp::scheduler::SchedKind;
use crate::model::{PointOutput, PreparedPoint, RunOpts, SimError};
use crate::models::workload::fio::{BlockDevice, InFlight, JobQueue};
use crate::models::xen_core::{Act, Cont, Core, Delivery, Ev, Progress, VcpuInit, VpeSwitch, XState};

/// Xen maps every host LPI to pCPU 0 (xen/arch/arm/gic-v3-its.c, gicv3_its_map_host_events).
const HOST_LPI_PCPU: usize = 0;

#[derive(Debug, Clone, Copy)]
enum Mev {
    /// The job on vCPU `v` starts submitting.
    Start { v: usize },
    /// The device finished an I/O of the job on `v` and wrote its MSI; `masked`: it was held
    /// by a masked window on pCPU 0.
    Msi { v: usize, submitted: SimTime, raised: SimTime, posted: bool, masked: bool },
    /// Masked-window source `src` on pCPU 0 is due (dom0 tick, rare stall).
    Window { src: usize },
    /// Xen's SGI (vcpu_kick / scheduler tickle) reaches `v`'s pCPU (software path).
    Kick { v: usize, was_blocked: bool },
}

enum GCont {
    Submitted { v: usize },
    Handled { v: usize },
}

#[derive(Default)]
struct Counters {
    host_lpis: u64,
    kicks: u64,
    direct: u64,
    doorbells: u64,
    vpt_pending: u64,
    vmovp: u64,
    coalesced: u64,
    route_mismatch: u64,
    spurious: u64,
    interrupts: u64,
    ticks: u64,
    stalls: u64,
    held_by_window: u64,
    masked: SimTime,
}

struct Sim<'a> {
    p: &'a Prepared,
    core: Core<'a, (), Mev, GCont>,
    jobs: Vec<JobQueue>,
    /// vINTID to EOI when the guest handler on a vCPU ends (delivered through an LR).
    eoi: Vec<Option<u32>>,
    /// The functional GICv4.1 (direct LPIs only).
    gic: Option<Gicv4>,
    device: BlockDevice,
    dev_rng: SimRng,
    mig_rng: SimRng,
    rec: LatencyRecorder,
    traces: TraceSet,
    n: Counters,
    submitted: u64,
    /// Buffer for the completions one handler reaps (reused).
    reaped: Vec<InFlight>,
    /// pCPU 0's masked-window sources, their kinds, the RNG of their lengths, and the end of
    /// the window open now (if any).
    windows: MaskedWindows,
    window_kind: Vec<WindowKind>,
    window_rng: SimRng,
    window_end: SimTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WindowKind {
    Tick,
    Stall,
}

impl<'a> Sim<'a> {
    fn new(p: &'a Prepared, picker: crate::engine::Picker) -> Self {
        let streams = RngStreams::new(p.seed);
        let (mut sources, mut rngs, mut kinds) = (Vec::new(), Vec::new(), Vec::new());
        // Only Xen has a pCPU 0 funnel; bare metal has no hypervisor windows.
        if p.mode == Mode::Xen {
            for (kind, name, arr) in [(WindowKind::Tick, "dom0-tick", &p.windows.tick), (WindowKind::Stall, "pcpu0-stall", &p.windows.stall)] {
                if let Some(a) = arr {
                    sources.push(WindowSource { name, arrivals: a.clone() });
                    rngs.push(streams.stream(name));
                    kinds.push(kind);
                }
            }
        }
        let is_job = |v: usize| v >= p.first_vcpu && v < p.first_vcpu + p.job.numjobs as usize;
        let inits: Vec<VcpuInit> = (0..p.vcpus).map(|v| VcpuInit { pcpu: v, act: if is_job(v) { Act::Compute } else { Act::Wfi }, vpe: p.direct }).collect();
        Sim {
            p,
            core: Core::new(&p.xen, p.seed, p.vcpus, &inits),
            jobs: vec![JobQueue::default(); p.vcpus],
            eoi: vec![None; p.vcpus],
            gic: p.direct.then(|| Gicv4::new(p.vcpus, (0..p.vcpus).filter(|v| is_job(*v)))),
            device: BlockDevice::new(p.device.clone()),
            dev_rng: RngStreams::new(p.device_seed).stream("device"),
            mig_rng: streams.stream("credit2-migrate"),
            rec: LatencyRecorder::new(p.warmup),
            traces: TraceSet::picking(picker),
            n: Counters::default(),
            submitted: 0,
            reaped: Vec::new(),
            windows: MaskedWindows::new(sources, rngs, SimTime::ZERO),
            window_kind: kinds,
            window_rng: streams.stream("pcpu0-window-length"),
            window_end: SimTime::ZERO,
        }
    }

    /// Submit one read at `at` (if more are wanted) and schedule its completion MSI.
    fn submit(&mut self, v: usize, at: SimTime) {
        if self.submitted >= self.p.completions + self.p.job.iodepth as u64 * self.p.job.numjobs as u64 {
            return;
        }
        self.submitted += 1;
        let raised = self.device.submit(at, self.p.job.bytes(), &mut self.dev_rng);
        self.jobs[v].in_flight += 1;
        self.core.q.schedule_at(raised, Ev::Model(Mev::Msi { v, submitted: at, raised, posted: false, masked: false }));
    }

    fn on_start(&mut self, now: SimTime, v: usize) {
        let pc = self.core.vcpus[v].pcpu;
        if self.core.defer_if_busy(pc, Mev::Start { v }) {
            return;
        }
        self.core.settle(pc, now);
        let mut at = now;
        for _ in 0..self.p.job.iodepth {
            at += self.core.c(&self.p.costs.submit);
            self.submit(v, at);
        }
        self.core.start_path(pc, now, at - now, Cont::Model(GCont::Submitted { v }));
    }

    /// A new trace for the interrupt of an I/O submitted at `submitted`, raised at `raised`.
    fn io_trace(traces: &mut TraceSet, now: SimTime, submitted: SimTime, raised: SimTime, masked: bool) -> Trace {
        let mut t = traces.start(submitted);
        t.push("device-service", raised - submitted);
        if now > raised {
            t.push(if masked { "pcpu0-masked" } else { "cpu-busy" }, now - raised);
        }
        t
    }

    /// A masked window on pCPU 0 is due: Xen runs there with interrupts masked for its length
    /// (a held host LPI is replayed when it ends).
    fn on_window(&mut self, now: SimTime, src: usize) {
        let h = HOST_LPI_PCPU;
        if self.core.defer_if_busy(h, Mev::Window { src }) {
            return;
        }
        let len = match self.window_kind[src] {
            WindowKind::Tick => {
                // dom0 vCPU 0's tick: Xen wakes it (idle-wakeup, vtimer handler, wake, schedule,
                // restore, LR write, eret) and, after the guest's tick handler, takes its WFI
                // (trap, block, schedule, save). Both Xen parts run masked; the guest's handler
                // between them is short and counted with them (docs/xen-gicv4-fio.md).
                self.n.ticks += 1;
                let c = &self.p.xen.costs;
                let r = &mut self.window_rng;
                [
                    &c.idle_wakeup,
                    &c.handler,
                    &c.wake,
                    &c.sched_wake,
                    &c.sched,
                    &c.sched_pick,
                    &c.restore,
                    &c.lr_access,
                    &c.eret,
                    &c.trap,
                    &c.block,
                    &c.sched,
                    &c.sched_pick,
                    &c.save,
                ]
                .iter()
                .map(|d| d.sample(r))
                .fold(SimTime::ZERO, |a, b| a + b)
            }
            WindowKind::Stall => {
                self.n.stalls += 1;
                self.p.windows.stall_len
            }
        };
        self.windows.open(src, len);
        self.n.masked += len;
        self.window_end = now + len;
        self.core.settle(h, now);
        let cur = self.core.pcpus[h].current;
        self.core.start_path(h, now, len, Cont::Run { next: cur, deliver: false });
        self.core.q.schedule_at(self.windows.due(src).max(now), Ev::Model(Mev::Window { src }));
    }

    fn on_msi(&mut self, now: SimTime, v: usize, submitted: SimTime, raised: SimTime, posted: bool, masked: bool) {
        if !posted {
            // The CQE is in memory from the moment the device wrote it, whatever the interrupt does.
            self.jobs[v].posted.push(InFlight { submitted, completed: raised });
            self.jobs[v].in_flight -= 1;
        }
        let j = self.core.vcpus[v].pcpu;
        let at = if self.p.mode == Mode::Xen && !self.p.direct { HOST_LPI_PCPU } else { j };
        let held = masked || (at == HOST_LPI_PCPU && now < self.window_end);
        if self.core.defer_if_busy(at, Mev::Msi { v, submitted, raised, posted: true, masked: held }) {
            if held && !masked {
                self.n.held_by_window += 1;
            }
            return;
        }
        // GICv4.1: the ITS acts on every MSI; its answer decides the path.
        let route = self.gic.as_mut().map(|g| g.msi(v));
        if self.core.vcpus[v].pending.is_some() {
            // Already pending (LR or VPT): the edge merges; the handler reaps this CQE too.
            if route.is_some_and(|r| r != VlpiRoute::AlreadyPending) {
                self.n.route_mismatch += 1;
            }
            self.n.coalesced += 1;
            return;
        }
        self.n.interrupts += 1;
        let t = Self::io_trace(&mut self.traces, now, submitted, raised, masked);
        let Some(route) = route else {
            match self.p.mode {
                Mode::BareMetal => self.direct_resident(now, v, t, "bare metal"),
                Mode::Xen => self.software(now, v, t),
            }
            return;
        };
        // Cross-check against the core's view: running → resident; blocked → out with DB.
        let vc = &self.core.vcpus[v];
        let expect = if self.core.pcpus[j].current == Some(v) && vc.xs == XState::Running {
            VlpiRoute::Direct
        } else if vc.xs == XState::Blocked {
            VlpiRoute::Doorbell
        } else {
            VlpiRoute::PendingInVpt
        };
        if expect != route {
            self.n.route_mismatch += 1;
        }
        match route {
            VlpiRoute::Direct => self.direct_resident(now, v, t, "vPE resident"),
            VlpiRoute::Doorbell => self.doorbell(now, v, t),
            VlpiRoute::PendingInVpt | VlpiRoute::AlreadyPending => {
                self.n.vpt_pending += 1;
                let mut t = t;
                self.core.seg(&mut t, "its-translate", &self.p.costs.its_translate, 1.0);
                let case = self.core.irq_case(j, v);
                self.core.vcpus[v].pending = Some(Delivery { tag: (), cold: 1.0, deadline: raised, trace: t, case, waited: false, via_lr: false });
            }
        }
    }

    /// The vCPU (or CPU) runs here: the (v)LPI is taken with no hypervisor.
    fn direct_resident(&mut self, now: SimTime, v: usize, mut t: Trace, case: &'static str) {
        let j = self.core.vcpus[v].pcpu;
        self.core.settle(j, now);
        let c = &self.p.costs;
        let mut dur = self.core.seg(&mut t, "its-translate", &c.its_translate, 1.0);
        if self.p.mode == Mode::Xen {
            dur += self.core.seg(&mut t, "vlpi-deliver", &c.vlpi_deliver, 1.0);
        }
        if self.core.vcpus[v].act == Act::Wfi {
            if self.p.wfi_spins {
                // The series: the vCPU is in its WFI → trap → eret loop (vwfi=trap, never blocked):
                // the vLPI waits for the round trip in progress (charged whole: an upper bound).
                dur += self.core.seg(&mut t, "wfi-trap-loop", &self.p.xen.costs.trap, 1.0);
                dur += self.core.seg(&mut t, "wfi-trap-loop-eret", &self.p.xen.costs.eret, 1.0);
            } else {
                dur += self.core.seg(&mut t, "wfi-exit", &self.p.xen.costs.wfi_exit, 1.0);
            }
        }
        dur += self.core.seg(&mut t, "guest-ack", &self.p.xen.costs.ack, 1.0);
        self.n.direct += 1;
        self.core.vcpus[v].pending = Some(Delivery { tag: (), cold: 1.0, deadline: t.start, trace: t, case, waited: false, via_lr: false });
        self.core.start_path(j, now, dur, Cont::Run { next: Some(v), deliver: true });
    }

    /// GICv4.1, vPE out with DB: the doorbell LPI at the vPE's redistributor wakes the vCPU.
    fn doorbell(&mut self, now: SimTime, v: usize, mut t: Trace) {
        let j = self.core.vcpus[v].pcpu;
        self.core.settle(j, now);
        self.core.charge(j, now);
        self.n.doorbells += 1;
        let c = &self.p.costs;
        let mut prefix = self.core.seg(&mut t, "its-translate", &c.its_translate, 1.0);
        prefix += self.core.seg(&mut t, "doorbell-lpi", &c.vlpi_deliver, 1.0);
        let case = self.core.irq_case(j, v);
        prefix += self.core.take_irq(j, &mut t, 1.0);
        prefix += self.core.seg(&mut t, "xen-doorbell-handler", &c.doorbell_handler, 1.0);
        if let Some(g) = self.gic.as_mut() {
            g.ack_doorbell(v);
        }
        // credit2's runq_tickle picks the pCPU (hyp::credit2_tickle): the vCPU's own pCPU is in
        // Xen's idle vCPU here (it blocked in WFI), so it is re-used; `credit2_migrate_prob`
        // is a what-if on top (a scenario guess, 0 in the shipped S1 scenario).
        let moved = self.p.xen.sched == SchedKind::Credit2 && {
            let idle: Vec<bool> = (0..self.p.pcpus).map(|q| q >= self.core.pcpus.len() || self.core.pcpus[q].current.is_none()).collect();
            matches!(tickle(j, &idle, &vec![true; idle.len()]), Tickle::Moved(_))
        };
        if moved || (self.p.migrate_prob > 0.0 && self.mig_rng.chance(self.p.migrate_prob)) {
            // The woken vCPU runs on another idle pCPU: the vPE follows (VMOVP + VSYNC).
            prefix += self.core.seg(&mut t, "vmovp", &c.vmovp, 1.0);
            self.n.vmovp += 1;
        }
        let (wake, was_blocked) = self.core.wake_if_blocked(v, &mut t, 1.0);
        prefix += wake;
        self.core.vcpus[v].pending = Some(Delivery { tag: (), cold: 1.0, deadline: t.start, trace: t, case, waited: false, via_lr: false });
        self.core.after_inject(now, j, v, prefix, was_blocked);
    }

    /// GICv3 software path: the host LPI is taken on pCPU 0, Xen injects and kicks the vCPU.
    fn software(&mut self, now: SimTime, v: usize, mut t: Trace) {
        let h = HOST_LPI_PCPU;
        let j = self.core.vcpus[v].pcpu;
        self.core.settle(h, now);
        self.core.charge(h, now);
        self.n.host_lpis += 1;
        let c = &self.p.costs;
        let case = self.core.irq_case(j, v);
        let mut prefix = self.core.seg(&mut t, "its-translate", &c.its_translate, 1.0);
        prefix += self.core.take_irq(h, &mut t, 1.0);
        prefix += self.core.seg(&mut t, "xen-lpi-handler", &c.lpi_handler, 1.0);
        let (wake, was_blocked) = self.core.wake_if_blocked(v, &mut t, 1.0);
        prefix += wake;
        if self.core.vcpus[v].lrs.inject(LPI_BASE + v as u32, 0xa0, None, false) == InjectOutcome::Queued {
            self.core.n.lr_queued += 1;
        }
        self.eoi[v] = Some(LPI_BASE + v as u32);
        self.core.vcpus[v].pending = Some(Delivery { tag: (), cold: 1.0, deadline: t.start, trace: t, case, waited: false, via_lr: true });
        if j == h {
            self.core.after_inject(now, h, v, prefix, was_blocked);
            return;
        }
        // pCPU 0 returns to what it was doing; the SGI reaches the vCPU's pCPU.
        let cur = self.core.pcpus[h].current;
        let dur = prefix + if cur.is_some() { self.core.c(&self.p.xen.costs.eret) } else { SimTime::ZERO };
        self.core.start_path(h, now, dur, Cont::Run { next: cur, deliver: false });
        let sgi = self.core.c(&c.sgi);
        self.n.kicks += 1;
        self.core.q.schedule_at(now + prefix + sgi, Ev::Model(Mev::Kick { v, was_blocked }));
    }

    fn on_kick(&mut self, now: SimTime, v: usize, was_blocked: bool) {
        let j = self.core.vcpus[v].pcpu;
        if self.core.defer_if_busy(j, Mev::Kick { v, was_blocked }) {
            return;
        }
        let Some(d) = self.core.vcpus[v].pending.as_mut() else {
            return; // Already delivered (the guest found it pending at its next WFI).
        };
        let mut t = std::mem::take(&mut d.trace);
        let end = t.start + t.total();
        t.push("sgi-to-vcpu-pcpu", now.saturating_sub(end));
        self.core.settle(j, now);
        self.core.charge(j, now);
        let mut prefix = self.core.take_irq(j, &mut t, 1.0);
        prefix += self.core.seg(&mut t, "xen-sgi-handler", &self.p.costs.sgi_handler, 1.0);
        self.core.vcpus[v].pending.as_mut().expect("checked").trace = t;
        self.core.after_inject(now, j, v, prefix, was_blocked);
    }

    /// The guest acknowledged the interrupt: its NVMe handler reaps, completes and resubmits.
    fn complete_delivery(&mut self, now: SimTime, v: usize) {
        let d = self.core.vcpus[v].pending.take().expect("pending");
        if d.via_lr {
            let acked = self.core.vcpus[v].lrs.guest_ack();
            debug_assert!(acked.is_some());
        } else if let Some(g) = self.gic.as_mut() {
            g.ack_vlpi(v);
        }
        let mut t = d.trace;
        let c = &self.p.costs;
        let mut at = now + self.core.seg(&mut t, "guest-irq-entry", &c.irq_entry, 1.0);
        let mut reaped = std::mem::take(&mut self.reaped);
        self.jobs[v].reap_into(now, &mut reaped);
        if reaped.is_empty() {
            self.n.spurious += 1;
        }
        for (i, io) in reaped.iter().enumerate() {
            let done = if i == 0 { self.core.seg(&mut t, "guest-io-complete", &c.complete, 1.0) } else { self.core.c(&c.complete) };
            at += done;
            self.rec.record((at - io.submitted).ps() / 1000);
        }
        if self.traces.wants_more() {
            t.label = format!("I/O completion ({}, {} reaped)", d.case, reaped.len());
        }
        self.traces.add(t);
        for _ in 0..reaped.len() {
            at += self.core.c(&c.submit);
            self.submit(v, at);
        }
        self.reaped = reaped;
        self.core.vcpus[v].act = Act::Handler;
        let j = self.core.vcpus[v].pcpu;
        self.core.start_path(j, now, at - now, Cont::Model(GCont::Handled { v }));
    }

    fn on_path_done(&mut self, now: SimTime, p: usize) {
        let (cont, deferred) = self.core.finish_path(now, p);
        match cont {
            Cont::Run { next, deliver } => {
                self.core.enter(now, p, next);
                if deliver {
                    self.complete_delivery(now, next.expect("delivery to a running vCPU"));
                }
                self.core.after_change(now, p);
            }
            Cont::Model(GCont::Submitted { v }) => self.core.guest_wfi(now, v, SimTime::ZERO),
            Cont::Model(GCont::Handled { v }) => {
                let mut extra = SimTime::ZERO;
                if let Some(vint) = self.eoi[v].take() {
                    // Guest EOI through the virtual CPU interface; LPIs have no HW bit. A
                    // maintenance interrupt (LR underflow with queued LPIs) runs Xen's handler.
                    if let Ok(effects) = self.core.vcpus[v].lrs.guest_eoi(vint) {
                        for e in effects {
                            if let EoiEffect::Maintenance(_) = e {
                                let refills = self.core.vcpus[v].lrs.maintenance().len();
                                extra += self.core.maintenance_path(v, refills);
                            }
                        }
                    }
                }
                self.core.guest_wfi(now, v, extra);
            }
        }
        self.core.replay(now, deferred);
    }

    /// Apply the core's vPE context switches to the functional GIC, in order.
    fn apply_residency(&mut self) {
        let Some(g) = self.gic.as_mut() else { return };
        for s in self.core.vpe_log.drain(..) {
            match s {
                VpeSwitch::In(v) => g.schedule_in(v),
                VpeSwitch::Out { v, blocking } => g.schedule_out(v, blocking),
            }
        }
    }

    fn run(&mut self, opts: &RunOpts) -> Result<SimTime, SimError> {
        for p in 0..self.core.pcpus.len() {
            self.core.reschedule(p, SimTime::ZERO, SimTime::ZERO);
        }
        self.apply_residency();
        for src in 0..self.windows.len() {
            self.core.q.schedule_at(self.windows.due(src), Ev::Model(Mev::Window { src }));
        }
        for k in 0..self.p.job.numjobs as usize {
            self.core.q.schedule_at(SimTime::from_us(10), Ev::Model(Mev::Start { v: self.p.first_vcpu + k }));
        }
        let mut progress = Progress::new(opts, 4096, 4_000_000_000);
        while let Some((now, ev)) = self.core.q.pop() {
            match ev {
                Ev::Model(Mev::Start { v }) => self.on_start(now, v),
                Ev::Model(Mev::Msi { v, submitted, raised, posted, masked }) => self.on_msi(now, v, submitted, raised, posted, masked),
                Ev::Model(Mev::Window { src }) => self.on_window(now, src),
                Ev::Model(Mev::Kick { v, was_blocked }) => self.on_kick(now, v, was_blocked),
                Ev::PathDone { p } => self.on_path_done(now, p),
                Ev::Slice { p, gen } => self.core.on_slice(now, p, gen),
            }
            self.apply_residency();
            if progress.step(self.rec.count(), self.p.completions, self.core.q.processed(), "fio never reached its completions")? {
                break;
            }
        }
        progress.finish(self.rec.count());
        if self.rec.count() < self.p.completions {
            return Err(SimError(format!("fio stalled after {} of {} completions", self.rec.count(), self.p.completions)));
        }
        Ok(self.core.q.now())
    }
}

impl PreparedPoint for Prepared {
    fn work(&self) -> u64 {
        self.completions
    }

    fn run(self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError> {
        let mut sim = Sim::new(&self, opts.traces.picker("io"));
        let end = sim.run(opts)?;
        let mut r = ConfigResult::default();
        let done = sim.rec.count();
        r.classes.insert("io".into(), sim.rec.finish());
        r.breakdown.insert("io".into(), sim.traces.breakdown());
        let (n, x) = (&sim.n, &sim.core.n);
        for (k, v) in [
            ("interrupts", n.interrupts),
            ("pcpu0.windows.tick", n.ticks),
            ("pcpu0.windows.stall", n.stalls),
            ("lpi.held_by_pcpu0_window", n.held_by_window),
            ("interrupts.coalesced", n.coalesced),
            ("interrupts.spurious", n.spurious),
            ("lpi.host_on_pcpu0", n.host_lpis),
            ("sgi.kicks", n.kicks),
            ("vlpi.direct", n.direct),
            ("vlpi.doorbells", n.doorbells),
            ("vlpi.vpt_pending", n.vpt_pending),
            ("its.vmovp", n.vmovp),
            ("vpe.schedule_in", x.vpe_schedule_in),
            ("vpe.schedule_out", x.vpe_schedule_out),
            ("device.throttled", sim.device.throttled),
            ("gic.route_mismatch", n.route_mismatch),
            ("gic.violations", sim.gic.as_ref().map_or(0, |g| g.violations + g.unexpected)),
            ("its.commands_at_runtime", sim.gic.as_ref().map_or(0, |g| g.commands)),
        ] {
            r.add_counter(k, v);
        }
        x.add_common(&mut r);
        let secs = end.ns_f64() / 1e9;
        r.set_figure("simulated_time", secs, "s");
        r.set_figure("iops", done as f64 / secs, "IOPS");
        r.set_figure("pcpu0_masked_fraction", sim.n.masked.ns_f64() / end.ns_f64().max(1.0), "fraction");
        r.notes.push(format!(
            "xen-gicv4: {} {}, scheduler {:?}, vwfi={}, direct_lpi={}, {} vCPUs, jobs on vCPUs {}..{} (pCPU 0 stalls: {} Hz × {} µs, the rate fitted to the one published S1 figure; the rest predicted)",
            match self.mode {
                Mode::Xen => "xen",
                Mode::BareMetal => "bare-metal",
            },
            self.job_name,
            self.xen.sched,
            if self.wfi_spins { "trap (never blocks: the series' sticky pending_last)" } else { self.xen.vwfi.as_str() },
            if self.direct { "on" } else { "off" },
            self.vcpus,
            self.first_vcpu,
            self.first_vcpu + self.job.numjobs as usize - 1,
            self.windows.stall_hz,
            self.windows.stall_len.ns_f64() / 1000.0
        ));
        Ok(PointOutput { result: r, traces: sim.traces.kept, events: sim.core.q.processed() })
    }
}

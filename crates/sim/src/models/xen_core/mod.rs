//! The shared Xen-on-Arm core: pCPUs, vCPUs, per-pCPU runqueues ([`crate::hyp::scheduler`]), WFI
//! trapping ([`crate::hyp::vwfi`]), list-register injection ([`LrFile`]) and costed hypervisor
//! paths run atomically on a pCPU. Both the tbm timer model (`xen-arm`) and the storage model
//! (`xen-gicv4`) drive the same core, so the timer and the fio workload run on one hypervisor.
//!
//! Every pCPU is either running a vCPU in the guest (computing, or sleeping natively in WFI),
//! idle in Xen's idle loop, or executing a hypervisor path. A path is a sequence of costed
//! segments run atomically on its pCPU (Xen runs with interrupts masked); events for a busy pCPU
//! wait until the path ends ([`Pcpu::deferred`]). The paths an interrupt for a vCPU takes are
//! listed in [`paths`]. A model supplies its own events (`X`), path continuations (`C`) and a tag
//! per delivered interrupt (`T`); the core owns everything Xen does.
//!
//! GICv4 additions are inert unless a vCPU has a vPE ([`Vcpu::vpe`]): then every context switch
//! pays the VPENDBASER schedule-in / schedule-out ([`VpeCosts`]), and a delivery can arrive
//! through the virtual pending table instead of a list register ([`Delivery::via_lr`]).
use crate::arch::arm::list_registers::LrFile;
use crate::engine::{CostDist, EventQueue, RngStreams, SimRng, SimTime, Trace};
use crate::hyp::scheduler::{RunQueue, SchedKind, SchedParams};
use crate::hyp::vwfi::{Vwfi, WfiTrapControl};
use results::vocab::Gic;

pub mod config;
pub mod paths;
pub mod timer_path;

/// Hypervisor-path costs every Xen model charges (profile keys in parentheses).
#[derive(Debug, Clone)]
pub struct XenCosts {
    /// pCPU leaving WFI inside the guest (`wfi_exit`), vwfi=native.
    pub wfi_exit: CostDist,
    /// pCPU leaving WFI in Xen's idle loop, IRQ taken at EL2 (`idle_wakeup`).
    pub idle_wakeup: CostDist,
    /// Exception from the guest to EL2 with register save (`trap_to_el2`).
    pub trap: CostDist,
    /// IAR, do_IRQ and the source's handler up to vgic_inject_irq (`xen_irq_handler`).
    pub handler: CostDist,
    /// vcpu_unblock's scheduler-independent part: runstate change, locks (`vcpu_wake`).
    pub wake: CostDist,
    /// The scheduler's wake hook: runqueue insert + tickle (`credit1_wake`, `credit2_wake`,
    /// `null_wake` or `rtds_wake`, per [`SchedKind::key`]).
    pub sched_wake: CostDist,
    /// schedule() softirq, the scheduler-independent part: locks, runstate, timers (`sched`).
    pub sched: CostDist,
    /// The scheduler's do_schedule: pick the next vCPU, accounting (`<scheduler>_schedule`).
    pub sched_pick: CostDist,
    /// ctxt_switch_from without the GIC: EL1 sysregs, VFP, timer (`context_save`).
    pub save: CostDist,
    /// ctxt_switch_to without the GIC: EL1 sysregs, VFP, timer, VTTBR (`context_restore`).
    pub restore: CostDist,
    /// One list-register-file access: GICv2 `GICH_*` over MMIO (`gicv2_mmio_access`) or GICv3
    /// `ICH_*_EL2` system register (`gicv3_sysreg_access`), per the profile's `gic` fact.
    pub lr_access: CostDist,
    /// Xen's maintenance-interrupt handler without the trap and the LR writes
    /// (`maintenance_handler`): read MISR/EISR, clear the finished LRs.
    pub maintenance: CostDist,
    /// Return to the guest (`eret`).
    pub eret: CostDist,
    /// Guest reads IAR from the GIC virtual CPU interface, no exit (`guest_ack`).
    pub ack: CostDist,
    /// vcpu_block after a trapped WFI (`vcpu_block`).
    pub block: CostDist,
    /// Write HCR_EL2.TWI/TWE (`twi_update`), adaptive only.
    pub twi_update: CostDist,
}

/// GIC registers Xen saves and restores besides the list registers at a context switch
/// (GICv2 `gicv2_save_state`: GICH_APR, GICH_VMCR, GICH_HCR; GICv3: ICH_AP1R0, ICH_VMCR, ICH_HCR).
pub const GIC_EXTRA_REGS: usize = 3;

/// Shared-L2 interference: busy vCPUs on the other pCPUs of the cluster evict the hypervisor
/// path's lines between two interrupts, so a warm path is partly as slow as a cold one.
///
/// What it models, and its bound (issue 43 item 5): the *capacity* effect on the interrupted
/// path only — lines of the hypervisor's working set refetched after a neighbour evicted them —
/// as a linear share of the path's cold penalty, one share per busy neighbour. It is bounded by
/// the fully cold path: however many neighbours compute, a warm path never costs more than
/// `cold_factor` × its warm cost ([`CacheShare::factor`] saturates at 1 share). It does not
/// model bandwidth contention on the L2 or the interconnect, snoop traffic, or the neighbours'
/// own slowdown; a neighbour that idles (WFI, blocked) evicts nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheShare {
    /// Cost factor of a fully cold path (`params.cold_factor`).
    pub cold_factor: f64,
    /// Fraction of the path's working set one busy neighbour evicts (`params.l2_evict_per_busy_neighbour`);
    /// 0 = private caches or cache colouring.
    pub evict_per_busy: f64,
}

impl CacheShare {
    /// None: no interference.
    pub const NONE: CacheShare = CacheShare { cold_factor: 1.0, evict_per_busy: 0.0 };

    /// Factor of a warm path with `busy` neighbours computing: 1 + (cold − 1) × min(1, busy × evict).
    pub fn factor(&self, busy: usize) -> f64 {
        1.0 + (self.cold_factor - 1.0) * (busy as f64 * self.evict_per_busy).min(1.0)
    }
}

/// GICv4 residency costs at a context switch of a vCPU that has a vPE (docs/sources.md B.2).
#[derive(Debug, Clone)]
pub struct VpeCosts {
    /// Write GICR_VPENDBASER (Valid) and poll Dirty until the VPT is parsed (`vpe_schedule_in`).
    pub schedule_in: CostDist,
    /// Clear Valid, poll Dirty, read PendingLast / set DB (`vpe_schedule_out`).
    pub schedule_out: CostDist,
}

/// What the core needs to know about the hypervisor.
#[derive(Debug, Clone)]
pub struct XenSetup {
    pub sched: SchedKind,
    pub sched_params: SchedParams,
    pub vwfi: Vwfi,
    pub costs: XenCosts,
    pub list_registers: usize,
    pub gic: Gic,
    /// GICv4 residency costs, when some vCPU has a vPE.
    pub vpe: Option<VpeCosts>,
    /// Shared-cache interference between the simulated pCPUs.
    pub cache: CacheShare,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XState {
    Running,
    Runnable,
    Blocked,
}

/// What the guest is doing on the vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Compute,
    Wfi,
    Handler,
}

/// An interrupt on its way into a vCPU and not yet acknowledged.
pub struct Delivery<T> {
    /// The model's tag (tbm round, I/O id, …).
    pub tag: T,
    /// Cost factor of this delivery's segments (cold caches).
    pub cold: f64,
    pub deadline: SimTime,
    pub trace: Trace,
    pub case: &'static str,
    pub waited: bool,
    /// Injected through a list register (false: a vLPI taken from the VPT once resident).
    pub via_lr: bool,
}

pub struct Vcpu<T> {
    pub pcpu: usize,
    pub xs: XState,
    pub act: Act,
    pub lrs: LrFile,
    pub pending: Option<Delivery<T>>,
    /// Guest computation done (time in `Act::Compute` while running).
    pub work: SimTime,
    /// Has a GICv4 vPE (VPENDBASER written at each of its context switches).
    pub vpe: bool,
}

/// How a path ends.
pub enum Cont<C> {
    /// `next` runs (or the pCPU idles); `deliver`: `next` acknowledges its pending interrupt.
    Run { next: Option<usize>, deliver: bool },
    /// A model-defined continuation (e.g. the guest's handler finished).
    Model(C),
}

/// Core events; `Model` carries the model's own.
#[derive(Debug, Clone, Copy)]
pub enum Ev<X> {
    PathDone { p: usize },
    Slice { p: usize, gen: u64 },
    Model(X),
}

pub struct Pcpu<X, C> {
    pub rq: RunQueue,
    pub current: Option<usize>,
    pub dispatched_at: SimTime,
    pub charged_at: SimTime,
    pub last_settle: SimTime,
    pub busy: bool,
    pub cont: Option<Cont<C>>,
    pub deferred: Vec<Ev<X>>,
    pub twi: WfiTrapControl,
    pub slice_gen: u64,
    pub idle: SimTime,
}

#[derive(Default, Debug, Clone)]
pub struct Counters {
    pub exits_irq: u64,
    pub exits_wfi: u64,
    pub exits_sysreg: u64,
    pub wfi_native: u64,
    pub context_switches: u64,
    pub vcpu_wakeups: u64,
    pub sched_ticks: u64,
    pub maintenance_irqs: u64,
    pub hw_deactivations: u64,
    pub lr_queued: u64,
    pub twi_switches: u64,
    pub adaptive_kicks: u64,
    pub waited: u64,
    pub other_wakeups: u64,
    pub vpe_schedule_in: u64,
    pub vpe_schedule_out: u64,
    pub lr_refills: u64,
}

impl Counters {
    /// Add the counters every model on this core reports (the hypervisor's exits, switches,
    /// wake-ups, ticks and list-register traffic) to `r`; a model adds its own beside them.
    pub fn add_common(&self, r: &mut results::ConfigResult) {
        for (k, v) in [
            ("exits.irq", self.exits_irq),
            ("exits.wfi", self.exits_wfi),
            ("wfi.native_sleeps", self.wfi_native),
            ("context_switches", self.context_switches),
            ("vcpu_wakeups", self.vcpu_wakeups),
            ("sched.ticks", self.sched_ticks),
            ("maintenance_irqs", self.maintenance_irqs),
            ("gic.lr_overflow", self.lr_queued),
            ("gic.lr_refills", self.lr_refills),
        ] {
            r.add_counter(k, v);
        }
    }
}

/// Sample `d`, scaled by `factor` when it is not 1.
pub fn sample(d: &CostDist, rng: &mut SimRng, factor: f64) -> SimTime {
    let t = d.sample(rng);
    if factor == 1.0 {
        t
    } else {
        t.scale(factor)
    }
}

/// Where a vCPU starts: its pCPU and what its guest does first.
#[derive(Debug, Clone, Copy)]
pub struct VcpuInit {
    pub pcpu: usize,
    pub act: Act,
    pub vpe: bool,
}

/// A vPE residency change the core made at a context switch, for the model to apply to the
/// functional GIC ([`Core::vpe_log`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VpeSwitch {
    /// Made resident on its pCPU's redistributor.
    In(usize),
    /// Made non-resident; `blocking`: the vCPU blocked in WFI (GICv4.1: DB = 1).
    Out { v: usize, blocking: bool },
}

/// The hypervisor state of one simulation.
pub struct Core<'a, T, X, C> {
    pub cfg: &'a XenSetup,
    pub q: EventQueue<Ev<X>>,
    pub rng: SimRng,
    pub pcpus: Vec<Pcpu<X, C>>,
    pub vcpus: Vec<Vcpu<T>>,
    pub n: Counters,
    /// vPE residency changes since the model last drained this, in order.
    pub vpe_log: Vec<VpeSwitch>,
}

impl<'a, T, X: Copy, C> Core<'a, T, X, C> {
    /// `npcpus` pCPUs; vCPUs pinned and made runnable in the order given.
    pub fn new(cfg: &'a XenSetup, seed: u64, npcpus: usize, vcpus: &[VcpuInit]) -> Self {
        let streams = RngStreams::new(seed);
        let mut pcpus: Vec<Pcpu<X, C>> = (0..npcpus)
            .map(|_| Pcpu {
                rq: RunQueue::new(cfg.sched, cfg.sched_params),
                current: None,
                dispatched_at: SimTime::ZERO,
                charged_at: SimTime::ZERO,
                last_settle: SimTime::ZERO,
                busy: false,
                cont: None,
                deferred: Vec::new(),
                twi: WfiTrapControl::new(cfg.vwfi),
                slice_gen: 0,
                idle: SimTime::ZERO,
            })
            .collect();
        let vcpus = vcpus
            .iter()
            .enumerate()
            .map(|(i, init)| {
                pcpus[init.pcpu].rq.add(i);
                pcpus[init.pcpu].rq.set_runnable(i, true);
                Vcpu { pcpu: init.pcpu, xs: XState::Runnable, act: init.act, lrs: LrFile::new(cfg.gic, cfg.list_registers), pending: None, work: SimTime::ZERO, vpe: init.vpe }
            })
            .collect();
        Core { cfg, q: EventQueue::with_capacity(64), rng: streams.stream("path"), pcpus, vcpus, n: Counters::default(), vpe_log: Vec::new() }
    }

    pub fn c(&mut self, d: &CostDist) -> SimTime {
        sample(d, &mut self.rng, 1.0)
    }

    /// Count the elapsed time since the last event on `p` as guest work / idle time.
    pub fn settle(&mut self, p: usize, now: SimTime) {
        let pc = &mut self.pcpus[p];
        let dt = now - pc.last_settle;
        pc.last_settle = now;
        if pc.busy {
            return;
        }
        match pc.current {
            Some(v) => {
                let vc = &mut self.vcpus[v];
                if vc.act == Act::Compute {
                    vc.work += dt;
                }
            }
            None => pc.idle += dt,
        }
    }

    /// Charge the running vCPU's run time to its runqueue.
    pub fn charge(&mut self, p: usize, now: SimTime) {
        let pc = &mut self.pcpus[p];
        if let Some(c) = pc.current {
            let ran = now - pc.charged_at;
            pc.rq.charge(c, ran);
        }
        pc.charged_at = now;
    }

    /// Occupy `p` for `dur`, then continue with `cont`.
    pub fn start_path(&mut self, p: usize, now: SimTime, dur: SimTime, cont: Cont<C>) {
        let pc = &mut self.pcpus[p];
        debug_assert!(!pc.busy);
        pc.busy = true;
        pc.cont = Some(cont);
        self.q.schedule_at(now + dur, Ev::PathDone { p });
    }

    pub fn set_slice(&mut self, p: usize, at: Option<SimTime>) {
        let pc = &mut self.pcpus[p];
        pc.slice_gen += 1;
        if let Some(t) = at {
            let gen = pc.slice_gen;
            self.q.schedule_at(t.max(self.q.now()), Ev::Slice { p, gen });
        }
    }

    /// Hold a model event until `p`'s path ends; true if it was held.
    pub fn defer_if_busy(&mut self, p: usize, ev: X) -> bool {
        if self.pcpus[p].busy {
            self.pcpus[p].deferred.push(Ev::Model(ev));
            true
        } else {
            false
        }
    }

    /// Cost factor of a warm path on `p` from shared-L2 interference: the number of other pCPUs
    /// running a computing vCPU right now, through [`CacheShare::factor`].
    pub fn interference(&self, p: usize) -> f64 {
        if self.cfg.cache.evict_per_busy == 0.0 {
            return 1.0;
        }
        let busy = (0..self.pcpus.len()).filter(|q| *q != p).filter(|q| self.pcpus[*q].current.is_some_and(|c| self.vcpus[c].act == Act::Compute)).count();
        self.cfg.cache.factor(busy)
    }

    /// Cost factor of `v`'s pending delivery (1 without one).
    pub fn cold(&self, v: usize) -> f64 {
        self.vcpus[v].pending.as_ref().map_or(1.0, |d| d.cold)
    }
}

/// The event-loop bookkeeping both Xen models share: progress reports every `every`
/// completions, and an event budget so a model bug (a guest that never finishes) ends in an
/// error rather than a hang.
pub struct Progress<'o, 'p> {
    opts: &'o crate::model::RunOpts<'p>,
    reported: u64,
    every: u64,
    budget: u64,
}

impl<'o, 'p> Progress<'o, 'p> {
    pub fn new(opts: &'o crate::model::RunOpts<'p>, every: u64, budget: u64) -> Self {
        Progress { opts, reported: 0, every, budget }
    }

    /// After an event: `Ok(true)` once `done` reached `target`; `Err(why_stuck)` when the event
    /// budget is spent.
    pub fn step(&mut self, done: u64, target: u64, processed: u64, why_stuck: &str) -> Result<bool, crate::model::SimError> {
        if done >= target {
            return Ok(true);
        }
        if done >= self.reported + self.every {
            (self.opts.progress)(done - self.reported);
            self.reported = done;
        }
        if processed > self.budget {
            return Err(crate::model::SimError(format!("event budget exhausted: {why_stuck}")));
        }
        Ok(false)
    }

    /// Report the rest.
    pub fn finish(&mut self, done: u64) {
        (self.opts.progress)(done.saturating_sub(self.reported));
        self.reported = done;
    }
}

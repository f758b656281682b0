//! The timed simulation of the IPI microbenchmark.
//!
//! Per operation the sender (vCPU 0) walks its cpumask, then either writes the ICR once per
//! destination group (`icr_writes`: per APIC ID in physical mode, per cluster in cluster mode) —
//! each write a VM exit in which KVM delivers to that group's vCPUs one after another — or makes
//! one `KVM_HC_SEND_IPI` hypercall per 128-ID window. Each destination is kicked at the moment KVM
//! reaches it; what the kick costs and how fast the target reaches its handler depends on the
//! target's state: still halt-polling (KVM's per-vCPU window, `hyp::halt_poll`, or a fixed one),
//! blocked (halted longer than its window: wake-up vector), or in guest mode (HLT exits disabled:
//! with posted interrupts the notification vector, PIR → vIRR without an exit; without them a kick
//! that forces an exit). Targets run the handler (in Broadcast lock under one spinlock, `lock.rs`),
//! acknowledge, and go back to idle; the sender waits for every acknowledgement
//! (smp_call_function_many with wait=1). Handler entries are events in the queue, so the lock is
//! taken in arrival order.
use results::{ConfigResult, LatencyRecorder};

use super::config::{Costs, PollRule, Prepared, Row};
use super::lock::SpinLock;
use crate::arch::x86::destination::{icr_writes, resolve, ApicMode, IcrDest, Shorthand};
use crate::arch::x86::ipiv::{self, IcrWrite, IpivOutcome};
use crate::arch::x86::lapic::{Accept, Lapic};
use crate::arch::x86::posted_interrupt::{PiDesc, PostEffect, VcpuState};
use crate::arch::x86::pv_ipi::pack;
use crate::engine::{CostDist, EventQueue, RngStreams, SimRng, SimTime, Trace, TraceSet};
use crate::hyp::halt_poll::{HaltOutcome, HaltPoll};
use crate::model::{PointOutput, PreparedPoint, RunOpts, SimError};

struct Target {
    apic: Lapic,
    pi: PiDesc,
    /// When the vCPU last went idle (HLT); `None`: idle since long before the row started.
    idle_since: Option<SimTime>,
    /// KVM's per-vCPU poll window (adaptive rules only).
    poll: Option<HaltPoll>,
}

/// How long "idle since before the row" counts as: far beyond any poll window.
const LONG_IDLE_NS: u64 = 1_000_000_000;

impl Target {
    /// Is this halted target still polling when KVM reaches it at `t`? With an adaptive rule this
    /// ends the halt, so KVM's grow/shrink update is applied.
    fn still_polling(&mut self, t: SimTime, rule: PollRule) -> bool {
        let idle_ns = self.idle_since.map_or(LONG_IDLE_NS, |since| t.saturating_sub(since).ps() / 1000);
        match (rule, self.poll.as_mut()) {
            (PollRule::Adaptive(_), Some(hp)) => hp.halt(idle_ns, true) == HaltOutcome::Polled,
            (PollRule::Fixed(window), _) => idle_ns < window,
            (PollRule::Adaptive(_), None) => false,
        }
    }
}

/// How the sender leaves the guest for one group of destinations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExitKind {
    /// KVM_HC_SEND_IPI: VMCALL exit, `kvm_pv_send_ipi` walks the bitmap through `phys_map`.
    Hypercall,
    /// WRMSR(ICR) with a physical destination: `phys_map[dest]`.
    IcrPhysical,
    /// WRMSR(ICR) with a logical (cluster) destination: cluster table lookup, then the mask.
    IcrLogical,
}

/// One exit of an operation and the APIC IDs it delivers to, in order.
struct Exit {
    kind: ExitKind,
    ids: Vec<u32>,
}

/// The path an IPI takes to one destination, by the target's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Halt-polling in the host: kick, the poll loop sees it, VM entry injects.
    Polling,
    /// Blocked: wake the vCPU thread (wake-up vector with posted interrupts).
    Blocked,
    /// In guest mode, posted interrupts: notification vector to its pCPU, no exit.
    Notify,
    /// In guest mode, no posted interrupts: a kick IPI forces an exit, injection on re-entry.
    KickExit,
    /// IPIv posted it to a halt-polling target: the poll loop finds PIR set, no KVM delivery.
    IpivPolling,
    /// IPIv posted it to a blocked target: the wake-up vector's handler wakes it.
    IpivBlocked,
    /// IPIv posted it to a target in guest mode: the notification vector, no exit anywhere.
    IpivNotify,
}

impl Path {
    /// What KVM's delivery to the target costs, what the target's way to its handler costs, and
    /// the trace segment of the latter.
    fn costs(self, c: &Costs) -> (&CostDist, &CostDist, usize) {
        match self {
            Path::Polling => (&c.deliver_to_polling, &c.wake_from_poll, 6),
            Path::Blocked => (&c.deliver_to_blocked, &c.wake_from_block, 7),
            Path::Notify => (&c.pi_notification_send, &c.pi_notification_to_handler, 8),
            Path::KickExit => (&c.deliver_to_polling, &c.kick_exit_to_handler, 9),
            // The CPU's post is charged as the sender's `ipiv_post`; nothing more on its side.
            Path::IpivPolling => (&ZERO, &ZERO, 6),
            Path::IpivBlocked => (&ZERO, &c.wake_from_block, 7),
            Path::IpivNotify => (&ZERO, &c.pi_notification_to_handler, 8),
        }
    }
}

static ZERO: CostDist = CostDist::Constant { ns: 0.0 };

enum Ev {
    /// Target `id` enters its IPI handler.
    Handler(u32),
    /// The sender has seen every acknowledgement of the current operation.
    OpDone,
}

/// Segments of a destination's path, in order (indices into `RowRun::segs`).
const SEGMENTS: [&str; 12] = [
    "guest-cpumask-walk",
    "earlier-exits-of-this-op",
    "icr-write-exit",
    "pv-ipi-hypercall-exit",
    "deliver-earlier-destinations",
    "kvm-deliver+kick",
    "halt-poll-exit+vmentry",
    "vcpu-wakeup+vmentry",
    "pi-notification-to-handler",
    "kick-exit+vmentry",
    "ipiv-post (no exit)",
    "pi-wakeup-handler",
];

/// Per-row accumulators (plain counters on the hot path; named only at the end).
struct RowRun {
    delivery_ns: f64,
    total_ns: f64,
    /// Time handlers waited for the Broadcast-lock spinlock.
    lock_wait_ns: f64,
    lat: LatencyRecorder,
    /// Per-operation round trips (the vmexit row's class).
    round_trip: LatencyRecorder,
    traces: TraceSet,
    /// (passes, total ps) per entry of SEGMENTS.
    segs: [(u64, u128); SEGMENTS.len()],
}

/// Hot-path event counters, added to the result once per row.
#[derive(Default)]
struct Counts {
    icr_write_exits: u64,
    hypercall_exits: u64,
    posted: u64,
    poll_success: u64,
    poll_fail: u64,
    kicks: u64,
    coalesced: u64,
    eoi_exits: u64,
    hlt_exits: u64,
    pi_notifications: u64,
    kick_exits: u64,
    poll_grows: u64,
    poll_shrinks: u64,
    lock_contended: u64,
    logical_decodes: u64,
    ipiv_posted: u64,
}

impl Counts {
    fn add_to(&self, r: &mut ConfigResult) {
        for (k, v) in [
            ("exits.icr_write", self.icr_write_exits),
            ("exits.hypercall", self.hypercall_exits),
            ("exits.eoi", self.eoi_exits),
            ("exits.hlt", self.hlt_exits),
            ("posted_interrupts", self.posted),
            ("halt_poll.success", self.poll_success),
            ("halt_poll.fail", self.poll_fail),
            ("wakeups", self.poll_fail),
            ("kicks", self.kicks),
            ("ipi.coalesced", self.coalesced),
            ("pi.notifications", self.pi_notifications),
            ("exits.kick", self.kick_exits),
            ("halt_poll.grow", self.poll_grows),
            ("halt_poll.shrink", self.poll_shrinks),
            ("lock.contended", self.lock_contended),
            ("icr.logical_decode", self.logical_decodes),
            ("ipiv.posted", self.ipiv_posted),
        ] {
            if v > 0 {
                r.add_counter(k, v);
            }
        }
    }
}

impl PreparedPoint for Prepared {
    fn work(&self) -> u64 {
        self.wl.iterations * self.wl.rows.len() as u64
    }

    fn run(self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError> {
        let streams = RngStreams::new(self.seed);
        let mut rng = streams.stream("paths");
        let mut q: EventQueue<Ev> = EventQueue::with_capacity(self.vcpus as usize + 1);
        let mut result = ConfigResult::default();
        let mut traces_out = Vec::new();
        let mut targets: Vec<Target> = (0..self.vcpus)
            .map(|_| Target {
                apic: Lapic::default(),
                pi: PiDesc::default(),
                idle_since: None,
                poll: match self.poll {
                    PollRule::Adaptive(p) => Some(HaltPoll::new(p)),
                    PollRule::Fixed(_) => None,
                },
            })
            .collect();
        for row in &self.wl.rows {
            let mut rr = RowRun {
                delivery_ns: 0.0,
                total_ns: 0.0,
                lock_wait_ns: 0.0,
                lat: LatencyRecorder::new(self.wl.warmup),
                round_trip: LatencyRecorder::new(self.wl.warmup),
                traces: TraceSet::picking(opts.traces.picker(row.key())),
                segs: [(0, 0); SEGMENTS.len()],
            };
            let mut counts = Counts::default();
            let groups = self.exit_groups(*row);
            // Each row starts with every target long idle (the module reports between rows), so
            // a row's steady state does not depend on which row ran before it.
            for tg in targets.iter_mut() {
                tg.idle_since = None;
                if let Some(hp) = tg.poll.as_mut() {
                    (hp.grows, hp.shrinks) = (0, 0);
                }
            }
            let mut reported = 0;
            for op in 0..self.wl.iterations {
                self.run_op(*row, &groups, op, &mut q, &mut targets, &mut rng, &mut rr, &mut counts)?;
                if (op + 1) % 1024 == 0 {
                    (opts.progress)(op + 1 - reported);
                    reported = op + 1;
                }
            }
            (opts.progress)(self.wl.iterations - reported);
            for hp in targets.iter().filter_map(|t| t.poll.as_ref()) {
                counts.poll_grows += hp.grows;
                counts.poll_shrinks += hp.shrinks;
            }
            counts.add_to(&mut result);
            for (name, (n, ps)) in SEGMENTS.iter().zip(rr.segs) {
                if n > 0 {
                    rr.traces.add_segment_total(name, n, ps);
                }
            }
            let k = row.key();
            let per = self.wl.totals_over.unwrap_or(self.wl.iterations) as f64 / self.wl.iterations as f64;
            result.set_figure(&format!("{k}.delivery"), rr.delivery_ns * per, "ns");
            result.set_figure(&format!("{k}.total"), rr.total_ns * per, "ns");
            if *row == Row::BroadcastLock {
                result.set_figure(&format!("{k}.lock_wait"), rr.lock_wait_ns * per, "ns");
            }
            if *row == Row::VmexitIpi {
                // kvm-unit-tests prints cycles per round trip; the class keeps ns like every class.
                let class = self.vmexit_class();
                let mean_ns = rr.total_ns / self.wl.iterations as f64;
                result.set_figure(&format!("{class}.cycles"), mean_ns * self.cpu_ghz, "cycles");
                result.classes.insert(class.to_string(), rr.round_trip.finish());
                result.breakdown.insert(class.to_string(), rr.traces.breakdown());
            } else if rr.lat.count() > 0 {
                result.classes.insert(k.to_string(), rr.lat.finish());
                result.breakdown.insert(k.to_string(), rr.traces.breakdown());
            }
            traces_out.extend(rr.traces.kept);
        }
        result.set_figure("simulated_time", q.now().ns_f64() / 1e9, "s");
        Ok(PointOutput { result, traces: traces_out, events: q.processed() })
    }
}

impl Prepared {
    /// The ICR write the guest makes for a fixed-mode IPI to APIC ID `dest` in physical mode.
    fn icr(&self, dest: u32) -> IcrWrite {
        IcrWrite { vector: self.wl.vector, fixed: true, logical: false, shorthand: Shorthand::None, dest }
    }

    /// The vmexit row's class: `ipi_xapic` or `ipi_x2apic` (kvm-unit-tests runs the test in either).
    fn vmexit_class(&self) -> &'static str {
        match self.hyp.apic_mode {
            ApicMode::X2apicPhysical | ApicMode::X2apicCluster => "ipi_x2apic",
            _ => "ipi_xapic",
        }
    }

    /// The exits one operation of `row` takes, each with the APIC IDs it delivers to, in order:
    /// one hypercall per 128-ID window (multicast with PV IPI), else one ICR write per
    /// destination group of the APIC mode. The same every operation, so computed once per row.
    ///
    /// Where cluster and physical mode differ: the guest's ICR writes (`icr_writes`), and on the
    /// host a logical destination is decoded through the cluster table
    /// (`kvm_apic_map_get_logical_dest`) while a physical one indexes `phys_map` directly. The PV
    /// hypercall is the same in both modes: the guest's `__send_ipi_mask` packs APIC IDs and the
    /// host's `kvm_pv_send_ipi` indexes `map->phys_map[min + i]` for each set bit whatever the
    /// guest's mode (arch/x86/kvm/lapic.c, 4180bf1b655a); only unicasts keep the mode's ICR write.
    fn exit_groups(&self, row: Row) -> Vec<Exit> {
        let dests: Vec<u32> = match row {
            Row::DryRun | Row::SelfIpi => return Vec::new(),
            Row::NormalIpi | Row::VmexitIpi => vec![self.wl.normal_target],
            Row::BroadcastIpi | Row::BroadcastLock => (1..self.vcpus).collect(),
        };
        if dests.len() > 1 && self.hyp.pv_ipi {
            pack(dests.iter().copied()).iter().map(|call| Exit { kind: ExitKind::Hypercall, ids: call.destinations().collect() }).collect()
        } else {
            icr_writes(self.hyp.apic_mode, &dests)
                .into_iter()
                .map(|d| Exit {
                    kind: if matches!(d, IcrDest::Logical(_)) { ExitKind::IcrLogical } else { ExitKind::IcrPhysical },
                    ids: resolve(self.hyp.apic_mode, d, Shorthand::None, 0, &dests),
                })
                .collect()
        }
    }

    /// Run one operation of `row` starting now; returns when the sender has all acknowledgements.
    #[allow(clippy::too_many_arguments)]
    fn run_op(
        &self,
        row: Row,
        groups: &[Exit],
        op: u64,
        q: &mut EventQueue<Ev>,
        targets: &mut [Target],
        rng: &mut SimRng,
        rr: &mut RowRun,
        n: &mut Counts,
    ) -> Result<(), SimError> {
        let c = &self.costs;
        let t0 = q.now();
        let loop_cost = c.loop_overhead.sample(rng);
        let n_dests = match row {
            Row::DryRun => {
                rr.total_ns += loop_cost.ns_f64();
                q.schedule_in(loop_cost, Ev::OpDone);
                return drain(q);
            }
            Row::SelfIpi => {
                // smp_call_function_single(self) runs the function locally: no interrupt at all.
                rr.delivery_ns += c.self_call_delivery.sample_ns(rng);
                let total = loop_cost + c.self_call_total.sample(rng);
                rr.total_ns += total.ns_f64();
                q.schedule_in(total, Ev::OpDone);
                return drain(q);
            }
            _ => groups.iter().map(|g| g.ids.len()).sum::<usize>(),
        };
        let send_start = t0 + loop_cost;
        // The guest walks its cpumask (and packs the PV bitmap) before the first exit.
        let mut t = send_start;
        for _ in 0..n_dests {
            t += c.guest_send_per_dest.sample(rng);
        }
        let walk_end = t;
        let keep = op == 1 && rr.traces.wants_more();
        let mut pending = 0u32;
        let mut last_trace_for: Vec<Trace> = Vec::new();
        for Exit { kind, ids } in groups {
            let hypercall = *kind == ExitKind::Hypercall;
            let exit_start = t;
            // IPIv: a physical unicast ICR write the CPU virtualizes posts without an exit.
            let virtualized = *kind == ExitKind::IcrPhysical && ids.len() == 1 && ipiv::virtualizes(self.hyp.ipiv, self.icr(ids[0]), self.vcpus - 1);
            let exit = if virtualized {
                n.ipiv_posted += 1;
                self.costs.ipiv_post.as_ref().ok_or_else(|| SimError("IPIv on without the ipiv_post cost".into()))?.sample(rng)
            } else {
                match kind {
                    ExitKind::Hypercall => {
                        n.hypercall_exits += 1;
                        c.vmcall_exit.sample(rng) + c.pv_ipi_handler.sample(rng)
                    }
                    ExitKind::IcrPhysical => {
                        n.icr_write_exits += 1;
                        c.icr_exit.sample(rng)
                    }
                    ExitKind::IcrLogical => {
                        n.icr_write_exits += 1;
                        n.logical_decodes += 1;
                        c.icr_exit.sample(rng) + c.icr_logical_decode.sample(rng)
                    }
                }
            };
            t += exit;
            for id in ids {
                let tg = &mut targets[*id as usize];
                let state = if !self.hyp.hlt_exits {
                    VcpuState::InGuest
                } else if tg.still_polling(t, self.poll) {
                    VcpuState::InHost
                } else {
                    VcpuState::Blocked
                };
                let path = if virtualized {
                    match ipiv::icr_write(true, self.icr(*id), self.vcpus - 1, &mut tg.pi, state) {
                        IpivOutcome::Posted(PostEffect::KickToEntry) => Path::IpivPolling,
                        IpivOutcome::Posted(PostEffect::WakeupVector) => Path::IpivBlocked,
                        IpivOutcome::Posted(PostEffect::NotifyInGuest) => Path::IpivNotify,
                        other => return Err(SimError(format!("vCPU {id}: unexpected IPIv outcome {other:?} for an idle target"))),
                    }
                } else if self.hyp.posted_interrupts {
                    n.posted += 1;
                    match tg.pi.post(self.wl.vector, state) {
                        PostEffect::NotifyInGuest => Path::Notify,
                        PostEffect::KickToEntry => Path::Polling,
                        PostEffect::WakeupVector => Path::Blocked,
                        other => return Err(SimError(format!("vCPU {id}: unexpected posted-interrupt effect {other:?} for an idle target"))),
                    }
                } else {
                    match state {
                        VcpuState::InGuest => Path::KickExit,
                        VcpuState::InHost => Path::Polling,
                        _ => Path::Blocked,
                    }
                };
                *match path {
                    Path::Polling => &mut n.poll_success,
                    Path::Blocked => &mut n.poll_fail,
                    Path::Notify => &mut n.pi_notifications,
                    Path::KickExit => &mut n.kick_exits,
                    Path::IpivPolling => &mut n.poll_success,
                    Path::IpivBlocked => &mut n.poll_fail,
                    Path::IpivNotify => &mut n.pi_notifications,
                } += 1;
                let (deliver_cost, respond_cost, respond_seg) = path.costs(c);
                let (deliver, mut respond) = (deliver_cost.sample(rng), respond_cost.sample(rng));
                let ipiv_cost = |d: &Option<CostDist>, k: &str| d.clone().ok_or_else(|| SimError(format!("IPIv on without the {k} cost")));
                match path {
                    Path::IpivBlocked => respond += ipiv_cost(&c.pi_wakeup_handler, "pi_wakeup_handler")?.sample(rng),
                    Path::IpivPolling => respond += ipiv_cost(&c.ipiv_poll_wake, "ipiv_poll_wake")?.sample(rng),
                    _ => {}
                }
                let extra = if !hypercall && ids.len() > 1 { c.icr_multicast_extra.sample(rng) } else { SimTime::ZERO };
                let before = t;
                t += deliver + extra;
                if !virtualized {
                    n.kicks += 1;
                }
                if self.hyp.posted_interrupts {
                    tg.pi.sync(&mut tg.apic);
                } else if tg.apic.accept(self.wl.vector) == Accept::Coalesced {
                    n.coalesced += 1;
                }
                let entry = t + respond;
                q.schedule_at(entry, Ev::Handler(*id));
                pending += 1;
                rr.lat.record((entry - send_start).ns());
                if matches!(row, Row::NormalIpi | Row::VmexitIpi) {
                    // The benchmark's delivery column: handler entry − send time, per operation
                    // (it prints 0 for the broadcast rows).
                    rr.delivery_ns += (entry - send_start).ns_f64();
                }
                let segments = [
                    (0, walk_end - send_start),
                    (1, exit_start - walk_end),
                    (
                        if hypercall {
                            3
                        } else if virtualized {
                            10
                        } else {
                            2
                        },
                        exit,
                    ),
                    (4, before - (exit_start + exit)),
                    (5, deliver + extra),
                    (respond_seg, respond),
                ];
                for (i, d) in segments {
                    rr.segs[i].0 += 1;
                    rr.segs[i].1 += d.ps() as u128;
                }
                if keep {
                    let mut tr = Trace::new(format!("{} op {op} → APIC ID {id}", row.key()), send_start);
                    for (i, d) in segments {
                        tr.push(SEGMENTS[i], d);
                    }
                    last_trace_for.push(tr);
                }
            }
        }
        // The last destination is the critical path; show it first.
        for tr in last_trace_for.into_iter().rev() {
            rr.traces.keep(tr);
        }
        let sender_free = t;
        // Targets run their handlers; the lock row serialises them in arrival order.
        let mut lock = SpinLock::new(self.socket[0]);
        let mut last_done = sender_free;
        while pending > 0 {
            let (now, ev) = q.pop().ok_or_else(|| SimError("event queue ran dry with handlers pending".into()))?;
            let Ev::Handler(id) = ev else {
                return Err(SimError("operation finished before its handlers ran".into()));
            };
            let tg = &mut targets[id as usize];
            let acked = tg.apic.ack();
            if acked != Some(self.wl.vector) {
                return Err(SimError(format!("vCPU {id}: IPI vector {:#x} not deliverable (got {acked:?})", self.wl.vector)));
            }
            let body_end = if row == Row::BroadcastLock { lock.take(now, self.socket[id as usize], c, rng) } else { now };
            let mut done = body_end + c.handler_and_ack.sample(rng);
            tg.apic.eoi();
            if !self.hyp.apicv {
                n.eoi_exits += 1;
                done += c.eoi_exit.sample(rng);
            }
            if self.hyp.hlt_exits {
                n.hlt_exits += 1;
            }
            tg.idle_since = Some(done);
            last_done = last_done.max(done);
            pending -= 1;
        }
        rr.total_ns += (last_done - t0).ns_f64();
        if row == Row::VmexitIpi {
            rr.round_trip.record((last_done - t0).ns());
        }
        rr.lock_wait_ns += lock.wait_ps as f64 / 1000.0;
        n.lock_contended += lock.contended;
        q.schedule_at(last_done, Ev::OpDone);
        drain(q)
    }
}

/// Pop the operation's end.
fn drain(q: &mut EventQueue<Ev>) -> Result<(), SimError> {
    match q.pop() {
        Some((_, Ev::OpDone)) => Ok(()),
        _ => Err(SimError("expected the end of the operation".into())),
    }
}

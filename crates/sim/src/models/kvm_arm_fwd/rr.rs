//! The netperf TCP_RR loop: one transaction outstanding, node A (native or guest) sends a request,
//! node B (native) answers, A's receive interrupt and network stack close the round trip.
//!
//! Per transaction, on the critical path (segments of the transaction's trace, class `rtt`):
//! A tcp-tx-stack → nic-tx-dma → wire (frame serialisation twice: store-and-forward switch) →
//! nic-rx-dma → B's interrupt path, rx stack and reply → the same wire back → A's interrupt path
//! ([`super::paths`]) → A's tcp-rx-stack. Off the critical path but on A's CPU: after sending,
//! the guest idles — its WFI traps (an exit), KVM blocks the vCPU; and every `tx_irq_every`-th
//! frame sent raises a TX-completion interrupt (xgmac), handled by an empty NAPI poll after which
//! the guest idles (and exits) again. An interrupt that finds A's CPU still busy waits
//! (`wait-for-cpu`). B pays the native interrupt path and the same TX-completion interrupts.
use results::{ConfigResult, LatencyRecorder};

use super::paths::{interrupt, CpuAt, Path};
use super::Prepared;
use crate::engine::{CostDist, RngStreams, SimRng, SimTime, Trace, TraceSet};
use crate::hyp::assigned_irq::AssignedIrq;
use crate::model::{RunOpts, SimError};

/// Ethernet bytes on the wire around an L2 payload: preamble + SFD 8, header 14, FCS 4, IFG 12
/// (IEEE 802.3); minimum frame (header to FCS) 64 bytes.
const ETH_OVERHEAD: f64 = 38.0;
const ETH_MIN_FRAME: f64 = 64.0;
/// IPv4 20 + TCP 20 + timestamp option 12 (Linux default net.ipv4.tcp_timestamps = 1).
pub(super) const TCPIP_HEADERS: f64 = 52.0;

/// Bytes a TCP segment with `payload` bytes occupies on the wire.
pub(super) fn wire_bytes(payload: f64) -> f64 {
    let frame = (14.0 + TCPIP_HEADERS + payload + 4.0).max(ETH_MIN_FRAME);
    frame + ETH_OVERHEAD - 18.0
}

/// One node's CPU: when its current path ends, and how many frames it has sent.
#[derive(Default)]
struct Node {
    free: SimTime,
    sent: u64,
}

/// Counters of node A (named once at the end).
#[derive(Default)]
struct Counts {
    irqs: u64,
    tx_irqs: u64,
    exits_wfi: u64,
    exits_irq: u64,
    exits_maintenance: u64,
    waited: u64,
    refires: u64,
}

struct Run<'a> {
    p: &'a Prepared,
    rng: SimRng,
    a: Node,
    b: Node,
    irq: Option<AssignedIrq>,
    n: Counts,
    /// Frame serialisation times.
    ser_req: SimTime,
    ser_resp: SimTime,
}

impl Run<'_> {
    fn sample(&mut self, d: &CostDist) -> SimTime {
        d.sample(&mut self.rng)
    }

    /// Push a sampled segment onto `t` and return its duration.
    fn seg(&mut self, t: &mut Trace, name: &'static str, d: &CostDist) -> SimTime {
        let x = self.sample(d);
        t.push(name, x);
        x
    }

    /// Frame from one NIC to the other: tx DMA, serialisation into the switch, switch latency,
    /// serialisation out, rx DMA. Returns the duration, segments pushed onto `t`.
    fn wire(&mut self, t: &mut Trace, ser: SimTime) -> SimTime {
        let p = self.p;
        let c = &p.costs;
        let mut d = self.seg(t, "nic-tx-dma", &c.nic_tx_dma);
        t.push("wire-serialise", ser);
        d += ser;
        d += self.seg(t, "switch", &c.switch_latency);
        t.push("wire-serialise", ser);
        d += ser;
        d + self.seg(t, "nic-rx-dma", &c.nic_rx_dma)
    }

    /// Node A (the guest, or native) goes idle after finishing work at `at`: the guest's WFI
    /// traps and KVM blocks the vCPU, keeping the pCPU busy a little longer.
    fn a_idle(&mut self, at: SimTime) {
        self.a.free = at;
        if self.p.path != Path::Native {
            self.n.exits_wfi += 1;
            let p = self.p;
            let c = &p.costs;
            let (x, y) = (c.world_switch_out.sample(&mut self.rng), c.vcpu_block.sample(&mut self.rng));
            self.a.free = at + x + y;
        }
    }

    /// The interrupt path on A for an interrupt asserted at `at`, pushed onto `t` when given.
    /// Returns (handler end, offset of the handler start from `at`).
    fn a_interrupt(&mut self, at: SimTime, mut t: Option<&mut Trace>) -> Result<(SimTime, SimTime), SimError> {
        let start = at.max(self.a.free);
        if start > at {
            self.n.waited += 1;
            if let Some(t) = t.as_deref_mut() {
                t.push("wait-for-cpu", start - at);
            }
        }
        // A's CPU is never running guest or native code when a frame arrives: the loop idles it
        // after every send. It is idle, or still finishing the path that blocks the vCPU.
        let cpu = if at >= self.a.free { CpuAt::Idle } else { CpuAt::HostBusy };
        let cpu = if self.p.path == Path::Native && cpu == CpuAt::HostBusy { CpuAt::Running } else { cpu };
        let rng = &mut self.rng;
        let mut charge = |name: &'static str, d: &CostDist| {
            let x = d.sample(rng);
            if let Some(t) = t.as_deref_mut() {
                t.push(name, x);
            }
            x
        };
        let mut total = SimTime::ZERO;
        let mut counted = |name: &'static str, d: &CostDist| {
            let x = charge(name, d);
            total += x;
            x
        };
        let o = interrupt(self.p.path, cpu, self.irq.as_mut(), &self.p.costs, &mut counted)?;
        self.n.irqs += 1;
        self.n.exits_irq += o.irq_exits;
        self.n.exits_maintenance += o.maintenance_exits;
        if o.refired {
            self.n.refires += 1;
            return Err(SimError("the NIC's line re-fired at completion: the driver left it asserted".into()));
        }
        Ok((start + total, start - at + o.to_handler))
    }

    /// The native path on B for an interrupt at `at` (B idles whenever it waits for a frame).
    fn b_interrupt(&mut self, at: SimTime, t: Option<&mut Trace>) -> Result<SimTime, SimError> {
        let start = at.max(self.b.free);
        let cpu = if at >= self.b.free { CpuAt::Idle } else { CpuAt::Running };
        let mut t = t;
        if start > at {
            if let Some(t) = t.as_deref_mut() {
                t.push("remote: wait-for-cpu", start - at);
            }
        }
        let rng = &mut self.rng;
        let mut total = SimTime::ZERO;
        let mut charge = |name: &'static str, d: &CostDist| {
            let x = d.sample(rng);
            if let Some(t) = t.as_deref_mut() {
                t.push(remote_name(name), x);
            }
            total += x;
            x
        };
        interrupt(Path::Native, cpu, None, &self.p.costs, &mut charge)?;
        Ok(start + total)
    }

    /// A TX-completion interrupt (every `tx_irq_every` frames) when `node` sent a frame that
    /// left its NIC at `at`: the interrupt path, an empty NAPI poll, idle again.
    fn tx_completion(&mut self, on_a: bool, at: SimTime) -> Result<(), SimError> {
        let sent = if on_a { &mut self.a.sent } else { &mut self.b.sent };
        *sent += 1;
        if *sent % self.p.tx_irq_every != 0 {
            return Ok(());
        }
        let p = self.p;
        let poll = &p.costs.napi_poll;
        if on_a {
            self.n.tx_irqs += 1;
            let (end, _) = self.a_interrupt(at, None)?;
            let d = self.sample(poll);
            self.a_idle(end + d);
        } else {
            let end = self.b_interrupt(at, None)?;
            self.b.free = end + self.sample(poll);
        }
        Ok(())
    }

    /// One transaction starting at `t0` (A's application about to send). Returns its trace.
    /// `traces`: where the trace comes from (labelled only when it will be kept for printing).
    fn transaction(&mut self, k: u64, t0: SimTime, traces: &mut TraceSet, rtt_irq: &mut LatencyRecorder) -> Result<Trace, SimError> {
        let p = self.p;
        let c = &p.costs;
        let (tx, rx) = (&c.tcp_tx_stack, &c.tcp_rx_stack);
        let mut tr = traces.start(t0);
        if traces.wants_more() {
            tr.label = format!("transaction #{k} ({})", p.path.as_str());
        }
        // A sends the request and idles.
        let sent = t0 + self.seg(&mut tr, "tcp-tx-stack", tx);
        self.a_idle(sent);
        let ser_req = self.ser_req;
        let at_b = sent + self.wire(&mut tr, ser_req);
        self.tx_completion(true, sent + c.nic_tx_dma.mean_ns_time() + ser_req)?;
        // B: interrupt, receive, netserver replies.
        let mut t = self.b_interrupt(at_b, Some(&mut tr))?;
        t += self.seg(&mut tr, "remote: tcp-rx-stack", rx);
        t += self.seg(&mut tr, "remote: tcp-tx-stack", tx);
        self.b.free = t;
        let ser_resp = self.ser_resp;
        let at_a = t + self.wire(&mut tr, ser_resp);
        self.tx_completion(false, t + c.nic_tx_dma.mean_ns_time() + ser_resp)?;
        // A: the response interrupt, then the stack up to netperf's recv().
        let (end, to_handler) = self.a_interrupt(at_a, Some(&mut tr))?;
        rtt_irq.record(to_handler.ns());
        let done = end + self.seg(&mut tr, "tcp-rx-stack", rx);
        self.a.free = done;
        if tr.start + tr.total() != done {
            return Err(SimError(format!("transaction #{k}: trace total {} does not match the timeline", tr.total())));
        }
        Ok(tr)
    }
}

/// Name of a native-path segment when it runs on the remote node.
fn remote_name(name: &'static str) -> &'static str {
    match name {
        "idle-wakeup" => "remote: idle-wakeup",
        "irq-entry" => "remote: irq-entry",
        "gic-ack" => "remote: gic-ack",
        "nic-irq-handler" => "remote: nic-irq-handler",
        "gic-eoi" => "remote: gic-eoi",
        other => other,
    }
}

trait MeanTime {
    fn mean_ns_time(&self) -> SimTime;
}

impl MeanTime for CostDist {
    /// The NIC's TX DMA time used to place the TX-completion interrupt (its mean: where exactly
    /// it lands does not change the critical path).
    fn mean_ns_time(&self) -> SimTime {
        SimTime::from_ns_f64(self.mean_ns())
    }
}

fn ser_time(bytes: f64, gbps: f64) -> SimTime {
    SimTime::from_ns_f64(bytes * 8.0 / gbps)
}

/// Run the TCP_RR loop; returns the result (classes `rtt`, `irq_delivery`), kept traces and the
/// number of transactions simulated (as events).
pub(super) fn run(p: &Prepared, opts: &RunOpts) -> Result<(ConfigResult, Vec<Trace>, u64), SimError> {
    let streams = RngStreams::new(p.seed);
    let mut r = Run {
        p,
        rng: streams.stream("rr"),
        a: Node::default(),
        b: Node::default(),
        irq: p.path.assigned_irq(p.list_registers),
        n: Counts::default(),
        ser_req: ser_time(wire_bytes(p.request_bytes), p.link_gbps),
        ser_resp: ser_time(wire_bytes(p.response_bytes), p.link_gbps),
    };
    let mut rtt = LatencyRecorder::new(p.warmup);
    let mut irq_lat = LatencyRecorder::new(p.warmup);
    let mut traces = TraceSet::picking(opts.traces.picker("rtt"));
    let mut t = SimTime::ZERO;
    let mut measured_from = SimTime::ZERO;
    let mut reported = 0;
    for k in 0..p.transactions {
        if k == p.warmup {
            measured_from = t;
        }
        let tr = r.transaction(k, t, &mut traces, &mut irq_lat)?;
        t = tr.start + tr.total();
        rtt.record(tr.total().ns());
        traces.add(tr);
        if let Some(a) = &r.irq {
            a.check_invariants().map_err(|e| SimError(format!("transaction #{k}: {e}")))?;
        }
        if (k + 1) % 4096 == 0 {
            (opts.progress)(k + 1 - reported);
            reported = k + 1;
        }
    }
    (opts.progress)(p.transactions - reported);
    let mut result = ConfigResult::default();
    let measured = (p.transactions - p.warmup) as f64;
    let secs = (t - measured_from).ns_f64() / 1e9;
    let all_secs = t.ns_f64() / 1e9;
    let n = &r.n;
    let exits = n.exits_wfi + n.exits_irq + n.exits_maintenance;
    result.set_figure("trans_per_s", measured / secs, "1/s");
    result.set_figure("irq_per_s", n.irqs as f64 / all_secs, "1/s");
    result.set_figure("exits_per_trans", exits as f64 / p.transactions as f64, "exits");
    result.set_figure("maintenance_exits_per_irq", n.exits_maintenance as f64 / n.irqs.max(1) as f64, "exits");
    result.set_figure("simulated_time", all_secs, "s");
    for (k, v) in [
        ("transactions", p.transactions),
        ("irqs", n.irqs),
        ("irqs.tx_completion", n.tx_irqs),
        ("exits", exits),
        ("exits.wfi", n.exits_wfi),
        ("exits.irq", n.exits_irq),
        ("exits.maintenance", n.exits_maintenance),
        ("irq.waited_for_cpu", n.waited),
    ] {
        result.add_counter(k, v);
    }
    if let Some(a) = &r.irq {
        let c = a.counts;
        for (k, v) in [
            ("vfio.mask", c.vfio_masks),
            ("vfio.unmask", c.vfio_unmasks),
            ("eventfd.irqfd", c.irqfd_signals),
            ("eventfd.resamplefd", c.resample_signals),
            ("gic.hw_deactivate", c.gic_deactivations),
            ("irq.refired", c.refires),
        ] {
            result.add_counter(k, v);
        }
    }
    result.classes.insert("rtt".into(), rtt.finish());
    result.classes.insert("irq_delivery".into(), irq_lat.finish());
    result.breakdown.insert("rtt".into(), traces.breakdown());
    Ok((result, traces.kept, p.transactions))
}

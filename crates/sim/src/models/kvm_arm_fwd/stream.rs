//! TCP stream patterns (netperf TCP_STREAM from node A to node B): sustained throughput and
//! interrupt rate of the sender, as a steady-state throughput model — simple, with its
//! assumptions stated:
//!
//! - Throughput R (payload bytes/s) is the largest rate that satisfies three caps: the link
//!   (1448-byte segments in 1538 wire bytes), the window (`window_bytes` in flight per round trip
//!   of a full segment and its ACK, the ACK's interrupt path on A included), and A's CPU
//!   (utilisation ≤ 1). B (native) is assumed not to be the bottleneck. The round trip counts
//!   the delayed-ACK wait (the ACK of a pair leaves after the pair's second segment arrived).
//! - A's CPU per second: copy (`copy_per_kb`), one `tcp_send_syscall` per `send_bytes`, one
//!   `tcp_tx_segment` per segment, one `tcp_ack_rx` per ACK (one ACK per `segments_per_ack`
//!   segments, Linux delayed ACK), and per interrupt the path of [`super::paths`] with the vCPU
//!   running (a busy sender: the interrupt forces an exit) plus a NAPI poll.
//! - Interrupt events: ACK arrivals and TX completions (one per `tx_irq_every` frames, xgmac).
//!   NAPI mitigation (xgmac masks RI/TI in its handler and re-enables them when the poll
//!   completes): an event arriving while the previous interrupt is still masked is absorbed.
//!   Treating events as Poisson with rate E and the masked window W (interrupt path + poll + one
//!   ACK), the interrupt rate is the non-paralysable dead-time rate E / (1 + E·W).
use results::ConfigResult;

use super::paths::{interrupt, CpuAt};
use super::rr::{wire_bytes, TCPIP_HEADERS};
use super::{Prepared, StreamPattern};
use crate::engine::{CostDist, SimTime};
use crate::model::SimError;

/// Payload per full segment: MTU 1500 − IP/TCP headers with timestamps.
const MSS: f64 = 1500.0 - TCPIP_HEADERS;

/// Mean cost (ns) of one interrupt on A with the CPU busy, and the exits it takes.
fn irq_mean(p: &Prepared) -> Result<(f64, f64), SimError> {
    let mut irq = p.path.assigned_irq(p.list_registers);
    let mut total = 0.0;
    let mut charge = |_: &'static str, d: &CostDist| {
        total += d.mean_ns();
        SimTime::from_ns_f64(d.mean_ns())
    };
    let o = interrupt(p.path, CpuAt::Running, irq.as_mut(), &p.costs, &mut charge)?;
    Ok((total, (o.irq_exits + o.maintenance_exits) as f64))
}

/// Evaluate one pattern; figures `stream.<name>.{mbps, irq_per_s, cpu, exits_per_s}`.
pub(super) fn evaluate(p: &Prepared, s: &StreamPattern, r: &mut ConfigResult) -> Result<(), SimError> {
    let c = &p.costs;
    let m = |d: &CostDist| d.mean_ns() * 1e-9;
    let (irq_ns, exits_per_irq) = irq_mean(p)?;
    let irq_s = irq_ns * 1e-9;
    let link_bps = p.link_gbps * 1e9 / 8.0;
    let r_link = link_bps * MSS / wire_bytes(MSS);
    // Round trip of a full segment and its ACK.
    let ser_data = wire_bytes(MSS) / link_bps;
    let ser_ack = wire_bytes(0.0) / link_bps;
    let hop = |ser: f64| m(&c.nic_tx_dma) + 2.0 * ser + m(&c.switch_latency) + m(&c.nic_rx_dma);
    let remote = m(&c.irq_entry) + m(&c.gic_ack) + m(&c.nic_irq_handler) + m(&c.gic_eoi) + m(&c.tcp_ack_rx) + m(&c.copy_per_kb) * MSS / 1024.0 + m(&c.tcp_tx_segment);
    // Delayed ACK: a segment's ACK leaves only after the next `segments_per_ack - 1` segments
    // have arrived behind it, one serialisation each.
    let spa = p.segments_per_ack;
    let ack_wait = (spa - 1.0) * ser_data;
    let rtt0 = hop(ser_data) + ack_wait + remote + hop(ser_ack) + irq_s + m(&c.napi_poll) + m(&c.tcp_ack_rx);
    let r_window = s.window_bytes / rtt0;
    let masked_window = irq_s + m(&c.napi_poll) + m(&c.tcp_ack_rx);
    // (interrupts/s, CPU utilisation) at payload rate `rate`.
    let load = |rate: f64| {
        let segs = rate / MSS;
        let events = segs / spa + segs / p.tx_irq_every as f64;
        let irqs = events / (1.0 + events * masked_window);
        let cpu = rate / 1024.0 * m(&c.copy_per_kb)
            + rate / s.send_bytes * m(&c.tcp_send_syscall)
            + segs * m(&c.tcp_tx_segment)
            + segs / spa * m(&c.tcp_ack_rx)
            + irqs * (irq_s + m(&c.napi_poll));
        (irqs, cpu)
    };
    let cap = r_link.min(r_window);
    let (rate, bound) = if load(cap).1 <= 1.0 {
        (cap, if r_link <= r_window { "link" } else { "window" })
    } else {
        // CPU-bound: utilisation grows with the rate; bisect for utilisation 1.
        let (mut lo, mut hi) = (0.0, cap);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if load(mid).1 <= 1.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo, "cpu")
    };
    let (irqs, cpu) = load(rate);
    let k = |f: &str| format!("stream.{}.{f}", s.name);
    r.set_figure(&k("mbps"), rate * 8.0 / 1e6, "Mb/s");
    r.set_figure(&k("irq_per_s"), irqs, "1/s");
    r.set_figure(&k("cpu"), cpu.min(1.0), "fraction");
    r.set_figure(&k("exits_per_s"), irqs * exits_per_irq, "1/s");
    r.set_figure(&k("rtt0"), rtt0 * 1e6, "us");
    r.notes.push(format!("stream {}: {}-bound (link cap {:.0} Mb/s, window cap {:.0} Mb/s)", s.name, bound, r_link * 8e-6, r_window * 8e-6));
    Ok(())
}

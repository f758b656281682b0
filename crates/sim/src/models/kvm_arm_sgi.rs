//! `kvm-arm64-sgi`: an SGI from vCPU 0 to vCPU `workload.target` under KVM/arm64 with GICv3
//! emulation (no GICv4.1 vSGIs), VHE host, one vCPU per pCPU.
//!
//! The guest writes `ICC_SGI1R_EL1` (Linux `gic_send_sgi`); with HCR_EL2.IMO set the write traps
//! to EL2 (IHI 0069 §12.2.22), KVM's `kvm_handle_sys_reg` → `access_gic_sgi` →
//! `vgic_v3_dispatch_sgi` finds the target by MPIDR (`hyp::kvm_sgi_dispatch`: the walk before
//! Linux 6.8 or the MPIDR table after), queues the SGI (`vgic_v3_queue_sgi` →
//! `vgic_queue_irq_unlock`) and kicks the target (`kvm_vcpu_kick`). What the kick costs depends on
//! the target:
//! - class `ipi` (one-way): the target runs a guest loop; the kick is a host IPI to its pCPU, the
//!   IRQ exits the guest, KVM flushes the SGI into a list register (`kvm_vgic_flush_hwstate`) and
//!   re-enters; latency = from just before the sender's write to the target's handler entry.
//! - figure `normal_ipi.total`: S2's ipi_benchmark "Normal IPI" (`smp_call_function_single` with
//!   wait) — the target idles in WFI, which traps; KVM halt-polls it (`kvm_vcpu_wfi` →
//!   `kvm_vcpu_halt`; back-to-back operations stay inside the poll window), so the kick is seen
//!   by the poll loop; the target runs the function, releases the csd, and the sender, spinning
//!   on it, sees the line change. Total over `totals_over` operations (the benchmark's NTIMES).
//! - figure `dispatch_ns`: host time in `vgic_v3_dispatch_sgi` (lookup + queue), mean.
//!
//! A target index the VM does not have is legal: the walk visits every vCPU and queues nothing;
//! `delivered` is 0 and no latency is recorded.
use serde::Deserialize;

use crate::arch::arm::sgi::{kvm_default_mpidr, Sgi1r};
use crate::engine::{CostDist, RngStreams, SimTime, Trace, TraceSet};
use crate::hyp::kvm_sgi_dispatch::{dispatch, Dispatch, MpidrLookup};
use crate::model::{Model, PointCtx, PointOutput, PreparedPoint, RunOpts, SimError};
use crate::models::path::{self, Seg};
use crate::scenario::ScenarioError;
use results::{ConfigResult, LatencyRecorder};

pub struct KvmArm64Sgi;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Hypervisor {
    mpidr_lookup: MpidrLookup,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vm {
    vcpus: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Workload {
    /// The target vCPU index (the sender is vCPU 0).
    target: u32,
    /// One-way SGIs simulated for class `ipi`.
    samples: u64,
    /// Normal-IPI operations simulated.
    iterations: u64,
    /// `normal_ipi.total` is reported over this many operations (NTIMES).
    totals_over: u64,
}

/// KVM/arm64's GICv3 emulation allows this many vCPUs (`VGIC_V3_MAX_CPUS`).
const MAX_VCPUS: u32 = 512;

struct Costs {
    trap_exit: CostDist,
    trap_return: CostDist,
    sysreg_decode: CostDist,
    queue_and_kick: CostDist,
    walk_step: CostDist,
    table_lookup: CostDist,
    kick_ipi: CostDist,
    irq_exit_flush_entry: CostDist,
    poll_wake_entry: CostDist,
    guest_vector: CostDist,
    guest_handler: CostDist,
    loop_overhead: CostDist,
    line_transfer: CostDist,
}

struct Prepared {
    d: Dispatch,
    c: Costs,
    samples: u64,
    iterations: u64,
    totals_over: u64,
    seed: u64,
}

impl Model for KvmArm64Sgi {
    fn name(&self) -> &'static str {
        "kvm-arm64-sgi"
    }
    fn summary(&self) -> &'static str {
        "KVM/arm64 GICv3 emulation: an SGI from vCPU 0, target found by MPIDR walk or table; one-way latency and ipi_benchmark Normal IPI"
    }
    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError> {
        let hyp: Hypervisor = ctx.section("hypervisor")?;
        let vm: Vm = ctx.section("vm")?;
        let wl: Workload = ctx.section("workload")?;
        ctx.check_count("vm.vcpus", vm.vcpus as u64, 1, MAX_VCPUS as u64)?;
        if wl.target == 0 || wl.target >= MAX_VCPUS {
            return Err(ctx.invalid("workload.target", &format!("a vCPU index from 1 to {} (0 is the sender)", MAX_VCPUS - 1), wl.target));
        }
        ctx.check_count("workload.samples", wl.samples, 1, crate::model::MAX_SAMPLES)?;
        ctx.check_count("workload.iterations", wl.iterations, 1, crate::model::MAX_SAMPLES)?;
        ctx.check_count("workload.totals_over", wl.totals_over, 1, crate::model::MAX_SAMPLES)?;
        let mpidrs: Vec<u64> = (0..vm.vcpus).map(kvm_default_mpidr).collect();
        let reg = Sgi1r::encode_unicast(kvm_default_mpidr(wl.target), 1);
        let d = dispatch(hyp.mpidr_lookup, reg, 0, &mpidrs);
        let c = |k: &str| ctx.platform.cost(k, self.name()).cloned().map_err(|e| ctx.platform_err(e));
        let costs = Costs {
            trap_exit: c("sysreg_trap_exit")?,
            trap_return: c("sysreg_trap_return")?,
            sysreg_decode: c("sysreg_decode")?,
            queue_and_kick: c("sgi_queue_and_kick")?,
            walk_step: c("mpidr_walk_step")?,
            table_lookup: c("mpidr_table_lookup")?,
            kick_ipi: c("kick_ipi")?,
            irq_exit_flush_entry: c("irq_exit_flush_entry")?,
            poll_wake_entry: c("poll_wake_entry")?,
            guest_vector: c("guest_vector")?,
            guest_handler: c("guest_ipi_handler")?,
            loop_overhead: c("loop_overhead")?,
            line_transfer: c("line_transfer")?,
        };
        Ok(Box::new(Prepared { d, c: costs, samples: wl.samples, iterations: wl.iterations, totals_over: wl.totals_over, seed: ctx.seed }))
    }
}

impl Prepared {
    /// The dispatch: one step per vCPU the walk visits or per table lookup, then queue + kick
    /// when a target was found. Returns its duration.
    fn dispatch_time(&self, rng: &mut crate::engine::SimRng, t: &mut Trace) -> SimTime {
        let mut total = SimTime::ZERO;
        let mut steps = |n: u32, name: &'static str, d: &CostDist, rng: &mut crate::engine::SimRng| {
            let mut s = SimTime::ZERO;
            for _ in 0..n {
                s += d.sample(rng);
            }
            if n > 0 {
                t.push(name, s);
            }
            s
        };
        total += steps(self.d.visited, "mpidr-walk", &self.c.walk_step, rng);
        total += steps(self.d.lookups, "mpidr-table-lookup", &self.c.table_lookup, rng);
        if !self.d.targets.is_empty() {
            total += path::run(&[("queue+kick", &self.c.queue_and_kick)], 1.0, rng, t);
        }
        total
    }
}

impl PreparedPoint for Prepared {
    fn work(&self) -> u64 {
        self.samples + self.iterations
    }

    fn run(self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError> {
        let streams = RngStreams::new(self.seed);
        let mut rng = streams.stream("ipi");
        let mut result = ConfigResult::default();
        let c = &self.c;
        let delivered = !self.d.targets.is_empty();
        let mut lat = LatencyRecorder::new(0);
        let mut traces = TraceSet::picking(opts.traces.picker("ipi"));
        let mut dispatch_ps: u128 = 0;
        let mut sender_ps: u128 = 0;
        for k in 0..self.samples {
            let mut t = traces.start(SimTime::ZERO);
            let enter: [Seg; 2] = [("sysreg-trap-exit", &c.trap_exit), ("sysreg-decode", &c.sysreg_decode)];
            let mut at = path::run(&enter, 1.0, &mut rng, &mut t);
            let disp = self.dispatch_time(&mut rng, &mut t);
            dispatch_ps += disp.ps() as u128;
            at += disp;
            sender_ps += (at + c.trap_return.sample(&mut rng)).ps() as u128;
            if delivered {
                let target: [Seg; 3] = [("kick-ipi", &c.kick_ipi), ("irq-exit+vgic-flush+entry", &c.irq_exit_flush_entry), ("guest-vector", &c.guest_vector)];
                at += path::run(&target, 1.0, &mut rng, &mut t);
                lat.record(at.ns());
                if traces.wants_more() {
                    t.label = format!("SGI #{k} vCPU 0 → vCPU {}", self.d.targets[0]);
                }
                traces.add(t);
            }
        }
        (opts.progress)(self.samples);
        let n = self.samples as f64;
        result.set_figure("dispatch_ns", dispatch_ps as f64 / 1000.0 / n, "ns");
        result.set_figure("sender_trap", sender_ps as f64 / 1000.0 / n, "ns");
        result.set_figure("mpidr_walk_visits", self.d.visited as f64, "vCPUs");
        result.set_figure("delivered", self.d.targets.len() as f64, "vCPUs");
        if delivered {
            result.classes.insert("ipi".into(), lat.finish());
            result.breakdown.insert("ipi".into(), traces.breakdown());
            let mut total_ps: u128 = 0;
            let mut bench_rng = streams.stream("normal_ipi");
            let r = &mut bench_rng;
            for _ in 0..self.iterations {
                // Sender: set up the csd, trap on the SGI write, dispatch (finds + kicks), return.
                let mut op = c.loop_overhead.sample(r) + c.trap_exit.sample(r) + c.sysreg_decode.sample(r);
                let mut sink = Trace::new("", SimTime::ZERO);
                op += self.dispatch_time(r, &mut sink);
                let sender_back = op + c.trap_return.sample(r);
                // Target: halt-polling in KVM sees the queued SGI, re-enters, runs the function.
                let done = op + c.poll_wake_entry.sample(r) + c.guest_vector.sample(r) + c.guest_handler.sample(r);
                total_ps += (sender_back.max(done) + c.line_transfer.sample(r)).ps() as u128;
            }
            (opts.progress)(self.iterations);
            let per = self.totals_over as f64 / self.iterations as f64;
            result.set_figure("normal_ipi.total", total_ps as f64 / 1000.0 * per, "ns");
        }
        result.add_counter("exits.sysreg", self.samples + if delivered { self.iterations } else { 0 });
        Ok(PointOutput { result, traces: traces.kept, events: self.samples + self.iterations })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prep(lookup: MpidrLookup, vcpus: u32, target: u32) -> Prepared {
        let k = |ns: f64| CostDist::constant_ns(ns);
        let mpidrs: Vec<u64> = (0..vcpus).map(kvm_default_mpidr).collect();
        let d = dispatch(lookup, Sgi1r::encode_unicast(kvm_default_mpidr(target), 1), 0, &mpidrs);
        Prepared {
            d,
            c: Costs {
                trap_exit: k(100.0),
                trap_return: k(100.0),
                sysreg_decode: k(50.0),
                queue_and_kick: k(80.0),
                walk_step: k(10.0),
                table_lookup: k(30.0),
                kick_ipi: k(100.0),
                irq_exit_flush_entry: k(400.0),
                poll_wake_entry: k(200.0),
                guest_vector: k(20.0),
                guest_handler: k(100.0),
                loop_overhead: k(50.0),
                line_transfer: k(80.0),
            },
            samples: 10,
            iterations: 10,
            totals_over: 10,
            seed: 1,
        }
    }

    fn dispatch_ns(p: &Prepared) -> f64 {
        let mut rng = RngStreams::new(1).stream("t");
        p.dispatch_time(&mut rng, &mut Trace::new("", SimTime::ZERO)).ns_f64()
    }

    #[test]
    fn walk_dispatch_grows_with_the_target_index_table_does_not() {
        let w: Vec<f64> = [1, 15, 31].iter().map(|t| dispatch_ns(&prep(MpidrLookup::Walk, 32, *t))).collect();
        let tb: Vec<f64> = [1, 15, 31].iter().map(|t| dispatch_ns(&prep(MpidrLookup::Table, 32, *t))).collect();
        assert_eq!(w, vec![80.0 + 20.0, 80.0 + 160.0, 80.0 + 320.0]);
        assert!(tb.iter().all(|x| *x == 110.0), "{tb:?}");
    }

    #[test]
    fn walk_for_a_fixed_target_does_not_grow_with_vm_size() {
        assert_eq!(dispatch_ns(&prep(MpidrLookup::Walk, 4, 1)), dispatch_ns(&prep(MpidrLookup::Walk, 64, 1)));
    }
}

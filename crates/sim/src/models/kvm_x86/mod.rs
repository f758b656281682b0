//! `kvm-x86`: KVM x86 delivery paths as `irqlab run` measures them (timer with HLT or a ring-3
//! busy loop, device interrupts over irqfd / KVM_SIGNAL_MSI / KVM_IRQ_LINE / level irqfd with
//! resamplefd, IPIs one way and round trip) plus cyclictest, for an L1 guest or an L2 guest
//! whose exits are reflected through L1, with APIC-timer virtualization off, for L1 only, or
//! emulated by L0 for L1's KVM ("nested", S5).
//!
//! Function and time stay apart: which mechanism serves the timer and why it falls back is
//! `arch::x86::apic_timer::serve`; whether a halted vCPU is caught by polling is
//! `hyp::halt_poll` (KVM's grow/shrink rule); EOI exits come from `apicv`; a halted target's
//! wake-up from the posted-interrupt descriptor. The guest's own ring-0 instructions are counted
//! from crates/kvm/guest/bench.S (`paths::guest`) and charged `guest_ring0_insn` each, which on a
//! nested PVM host (every ring-0 instruction emulated) is microseconds. Every sample's segments
//! are kept on its trace.
//!
//! For timer benchmarks with the feature on, the point also runs its own baseline (the same
//! configuration with `timer_virt = "off"`, same seed) and reports `min_reduction_pct` and
//! `mean_reduction_pct`, as S5 reports its rows.

mod config;
mod paths;
mod walk;

use results::{ConfigResult, LatencyRecorder};

use crate::arch::x86::apic_timer::{Level, TimerVirt};
use crate::arch::x86::posted_interrupt::PiDesc;
use crate::engine::{RngStreams, SimTime, TraceSet};
use crate::model::{Model, PointCtx, PointOutput, PreparedPoint, RunOpts, SimError};
use crate::scenario::ScenarioError;

use config::Prepared;
pub use config::{Via, Wait, WorkloadKind};
pub use paths::guest;
use paths::VcpuHalt;
use walk::Walk;
pub use walk::{ExitKind, Exits, EXIT_KINDS};

pub struct KvmX86;

impl Model for KvmX86 {
    fn name(&self) -> &'static str {
        "kvm-x86"
    }
    fn summary(&self) -> &'static str {
        "KVM x86 timer/device/IPI paths (irqlab run benchmarks, cyclictest), L1 or nested L2, APIC-timer virtualization and halt polling"
    }
    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError> {
        Ok(Box::new(config::prepare(ctx, self.name())?))
    }
}

/// One latency class being collected.
struct Class {
    name: String,
    lat: LatencyRecorder,
    traces: TraceSet,
}

/// What one simulation of the point produced.
struct Outcome {
    classes: Vec<Class>,
    exits: Exits,
    samples: u64,
    halts: Vec<VcpuHalt>,
    end: SimTime,
}

impl Class {
    fn new(name: String, warmup: u64, keep: &crate::engine::TraceKeep) -> Self {
        let traces = TraceSet::picking(keep.picker(&name));
        Class { name, lat: LatencyRecorder::new(warmup), traces }
    }
    fn record(&mut self, label: impl FnOnce() -> String, start: SimTime, lat: SimTime, segs: &[(&'static str, SimTime)]) {
        self.lat.record(lat.ns());
        let mut t = self.traces.start(start);
        if self.traces.wants_more() {
            t.label = label();
        }
        t.segments.extend_from_slice(segs);
        self.traces.add(t);
    }
}

impl Prepared {
    fn simulate(&self, opts: &RunOpts, report: bool) -> Result<Outcome, SimError> {
        let streams = RngStreams::new(self.seed);
        let mut rng = streams.stream("paths");
        let c = &self.costs;
        let mut w = Walk::new(&mut rng, &c.guest_ring0_insn, &c.vmexit_roundtrip, &c.nested_reflect);
        let keep = opts.traces;
        let warm = self.wl.warmup;
        let n = self.wl.samples;
        let mut done = 0u64;
        let mut progress = |k: u64| {
            if report && (k + 1) % 1024 == 0 {
                (opts.progress)(1024);
                done += 1024;
            }
        };
        let period = SimTime::from_ns_f64(self.wl.period_us * 1000.0);
        let (classes, halts) = match self.bench {
            WorkloadKind::Timer | WorkloadKind::TimerHlt | WorkloadKind::TimerBusy => {
                let mut cl = Class::new("timer".into(), warm, keep);
                let mut h = VcpuHalt::new(self);
                let busy = self.wait == Wait::Busy;
                for k in 0..n {
                    let lat = self.timer_sample(&mut w, &mut h, busy);
                    cl.record(|| format!("timer #{k}"), w.t - lat, lat, &w.segs);
                    progress(k);
                }
                (vec![cl], vec![h])
            }
            WorkloadKind::Cyclictest => {
                let mut cl = Class::new("timer".into(), warm, keep);
                let mut halts = Vec::new();
                for thread in 0..self.vcpus {
                    let interval = SimTime::from_ns_f64((self.wl.interval_us + self.wl.distance_us * thread as f64) * 1000.0);
                    let mut h = VcpuHalt::new(self);
                    w.t = SimTime::ZERO;
                    let mut expected = interval;
                    for k in 0..n {
                        let lat = self.cyclictest_sample(&mut w, &mut h, expected);
                        cl.record(|| format!("cyclictest thread {thread} #{k}"), expected, lat, &w.segs);
                        expected += interval;
                        progress(thread as u64 * n + k);
                    }
                    halts.push(h);
                }
                (vec![cl], halts)
            }
            WorkloadKind::Device => {
                let via = self.wl.via;
                let mut cl = Class::new(format!("device_{}", via.name()), warm, keep);
                let mut h = VcpuHalt::new(self);
                let mut pi = PiDesc::default();
                // The guest starts halted; the host triggers one period later.
                self.halt(&mut w, &mut h, SimTime::MAX);
                let mut trigger = w.t + period;
                for k in 0..n {
                    let (lat, host_free) = self.device_sample(&mut w, &mut h, &mut pi, via, trigger);
                    cl.record(|| format!("device {} #{k}", via.name()), trigger, lat, &w.segs[..]);
                    trigger = host_free + period;
                    progress(k);
                }
                (vec![cl], vec![h])
            }
            WorkloadKind::Ipi => {
                let mut one = Class::new("ipi_one_way".into(), warm, keep);
                let mut rt = Class::new("ipi_round_trip".into(), warm, keep);
                let mut h = [VcpuHalt::new(self), VcpuHalt::new(self)];
                let mut pi = [PiDesc::default(), PiDesc::default()];
                // The target starts halted.
                let t0 = w.t;
                self.halt(&mut w, &mut h[1], SimTime::MAX);
                w.t = t0 + period;
                for k in 0..n {
                    let send = w.t;
                    let (a, b, n_one) = self.ipi_sample(&mut w, &mut h, &mut pi);
                    one.record(|| format!("ipi one-way #{k}"), send, a, &w.segs[..n_one]);
                    rt.record(|| format!("ipi round-trip #{k}"), send, b, &w.segs);
                    progress(k);
                }
                let [a, b] = h;
                (vec![one, rt], vec![a, b])
            }
        };
        if report {
            let total = n * if self.bench == WorkloadKind::Cyclictest { self.vcpus as u64 } else { 1 };
            (opts.progress)(total - done);
        }
        let samples = n * if self.bench == WorkloadKind::Cyclictest { self.vcpus as u64 } else { 1 };
        Ok(Outcome { classes, exits: w.exits, samples, halts, end: w.t })
    }

    fn work_samples(&self) -> u64 {
        self.wl.samples * if self.bench == WorkloadKind::Cyclictest { self.vcpus as u64 } else { 1 }
    }

    fn run_form(&self) -> String {
        let mut s = format!(
            "bench={}",
            match self.bench {
                WorkloadKind::Timer | WorkloadKind::TimerHlt | WorkloadKind::TimerBusy => "timer",
                WorkloadKind::Ipi => "ipi",
                WorkloadKind::Device => "device",
                WorkloadKind::Cyclictest => "cyclictest",
            }
        );
        if self.bench == WorkloadKind::Timer {
            s += if self.wait == Wait::Busy { " wait=busy" } else { " wait=hlt" };
        }
        if self.bench == WorkloadKind::Device {
            s += &format!(" via={}", self.wl.via.name());
        }
        s + &format!(" period_us={} samples={} vcpus={} halt_poll_ns={}", self.wl.period_us, self.wl.samples, self.vcpus, self.poll.max_ns)
    }
}

impl PreparedPoint for Prepared {
    fn work(&self) -> u64 {
        self.work_samples()
    }

    fn run(mut self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError> {
        let out = self.simulate(opts, true)?;
        let mut r = ConfigResult::default();
        let mut traces = Vec::new();
        for cl in &out.classes {
            if cl.lat.count() > 0 {
                r.classes.insert(cl.name.clone(), cl.lat.finish());
                r.breakdown.insert(cl.name.clone(), cl.traces.breakdown());
            }
        }
        for cl in out.classes {
            traces.extend(cl.traces.kept);
        }
        for k in EXIT_KINDS {
            r.add_counter(k.key(), out.exits.get(k));
        }
        r.add_counter("exits.total", out.exits.total());
        r.add_counter("exits.reflected_to_l1", out.exits.reflected);
        let (mut polled, mut blocked, mut grows, mut shrinks, mut l1p, mut l1b) = (0, 0, 0, 0, 0, 0);
        for h in &out.halts {
            polled += h.l0.polled;
            blocked += h.l0.blocked;
            grows += h.l0.grows;
            shrinks += h.l0.shrinks;
            l1p += h.l1.polled;
            l1b += h.l1.blocked;
        }
        r.add_counter("halt_poll.success", polled);
        r.add_counter("halt_poll.blocked", blocked);
        r.add_counter("halt_poll.grow", grows);
        r.add_counter("halt_poll.shrink", shrinks);
        if self.hyp.lapic_timer_advance && self.level == Level::L1 {
            // KVM's timer advance: each vCPU's final (tuned) advance, and the time spun before the
            // deadline in kvm_wait_lapic_expire (host CPU time, not latency).
            let n = out.halts.len().max(1) as f64;
            r.set_figure("timer_advance_ns", out.halts.iter().map(|h| h.adv.ns).sum::<f64>() / n, "ns");
            let spun: f64 = out.halts.iter().map(|h| h.spun.ns_f64()).sum();
            r.set_figure("wait_lapic_expire_spun_per_sample", spun / out.samples.max(1) as f64, "ns");
        }
        if self.level == Level::L2 {
            r.add_counter("halt_poll.l1_success", l1p);
            r.add_counter("halt_poll.l1_blocked", l1b);
        }
        let s = out.samples.max(1) as f64;
        r.set_figure("exits_per_sample", out.exits.total() as f64 / s, "exits");
        r.set_figure("reflected_exits_per_sample", out.exits.reflected as f64 / s, "exits");
        r.set_figure("simulated_time", out.end.ns_f64() / 1e9, "s");
        r.notes.push(format!("irqlab run form: {}", self.run_form()));
        let timer_bench = matches!(self.bench, WorkloadKind::Timer | WorkloadKind::Cyclictest);
        if timer_bench {
            let (min_red, mean_red) = if self.hyp.timer_virt == TimerVirt::Off {
                (0.0, 0.0)
            } else {
                self.hyp.timer_virt = TimerVirt::Off;
                let quiet = RunOpts { traces: &crate::engine::TraceKeep::none(), progress: opts.progress };
                let base = self.simulate(&quiet, false)?;
                let b = base.classes[0].lat.summary();
                let m = r.classes.get("timer").map(|c| c.summary.clone()).ok_or_else(|| SimError("no timer samples".into()))?;
                r.set_figure("baseline.min", b.min as f64, "ns");
                r.set_figure("baseline.mean", b.mean, "ns");
                let pct = |base: f64, v: f64| if base > 0.0 { (base - v) / base * 100.0 } else { 0.0 };
                (pct(b.min as f64, m.min as f64), pct(b.mean, m.mean))
            };
            r.set_figure("min_reduction_pct", min_red, "%");
            r.set_figure("mean_reduction_pct", mean_red, "%");
        }
        Ok(PointOutput { result: r, traces, events: out.exits.total() + out.samples })
    }
}

//! `timer-inject`: a periodic physical timer interrupt delivered to one pinned vCPU through a
//! trap-and-inject hypervisor path — the smallest end-to-end model, and the template for others.
//!
//! The guest arms its timer `period_us` ahead (tbm style: after handling the previous one), then
//! either idles in WFI/HLT or computes. When the timer fires, the path depends on where the pCPU is:
//! - guest running (busy): trap to the hypervisor → handler → inject (list register) → re-enter;
//! - guest idle, WFI trapped (`idle = "trap"`): the vCPU is blocked and the pCPU idles in the
//!   hypervisor: wake the pCPU → handler → unblock the vCPU → restore its context → inject → enter;
//! - guest idle, WFI native (`idle = "native"`): the pCPU sleeps inside the guest's WFI; the
//!   interrupt wakes it with a trap straight to the handler, no vCPU context switch.
//!
//! Latency = guest acknowledge − deadline. Each segment is charged from the platform profile.
use serde::Deserialize;

use crate::engine::{CostDist, EventQueue, RngStreams, SimRng, SimTime, Trace, TraceSet};
use crate::model::{Model, PointCtx, PointOutput, PreparedPoint, RunOpts, SimError};
use crate::scenario::ScenarioError;
use results::{ConfigResult, LatencyRecorder};

pub struct TimerInject;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum IdlePolicy {
    Trap,
    Native,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Hypervisor {
    /// What happens when the guest executes WFI/HLT.
    idle: IdlePolicy,
    /// Multiplier on hypervisor-path costs (a DEBUG build is slower).
    #[serde(default = "one")]
    debug_multiplier: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vm {
    vcpus: u32,
    /// pCPU each vCPU is pinned to.
    pin: Vec<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Workload {
    period_us: f64,
    samples: u64,
    #[serde(default)]
    warmup: u64,
    /// Fraction of interrupts that find the guest computing rather than idle.
    #[serde(default)]
    busy_fraction: f64,
    /// The first `cold_rounds` interrupts pay `cold_cache_penalty` (cold caches and TLBs).
    #[serde(default)]
    cold_rounds: u64,
}

/// Costs this model charges, all from the platform profile (`costs.<snake_case name>`).
struct Costs {
    raise: CostDist,
    idle_wakeup: CostDist,
    trap: CostDist,
    handler: CostDist,
    unblock: CostDist,
    restore: CostDist,
    inject: CostDist,
    entry: CostDist,
    ack: CostDist,
    cold: CostDist,
}

struct Prepared {
    idle: IdlePolicy,
    costs: Costs,
    period: SimTime,
    samples: u64,
    warmup: u64,
    busy_fraction: f64,
    cold_rounds: u64,
    seed: u64,
}

impl Model for TimerInject {
    fn name(&self) -> &'static str {
        "timer-inject"
    }
    fn summary(&self) -> &'static str {
        "periodic physical timer to one pinned vCPU through trap-and-inject (WFI trapped or native)"
    }

    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError> {
        let hyp: Hypervisor = ctx.section("hypervisor")?;
        let vm: Vm = ctx.single_vm()?;
        let wl: Workload = ctx.section("workload")?;
        if vm.vcpus == 0 {
            return Err(ctx.invalid("vm[0].vcpus", "at least 1 vCPU", 0));
        }
        ctx.check_pins("vm[0].pin", &vm.pin, vm.vcpus)?;
        if !(wl.period_us > 0.0 && wl.period_us.is_finite()) {
            return Err(ctx.invalid("workload.period_us", "a positive period in µs", wl.period_us));
        }
        ctx.check_count("workload.samples", wl.samples, 1, crate::model::MAX_SAMPLES)?;
        ctx.check_horizon("workload.period_us", wl.period_us * 1000.0 * wl.samples as f64, "period_us × samples")?;
        if !(0.0..=1.0).contains(&wl.busy_fraction) {
            return Err(ctx.invalid("workload.busy_fraction", "a fraction between 0 and 1", wl.busy_fraction));
        }
        if !(hyp.debug_multiplier >= 1.0 && hyp.debug_multiplier.is_finite()) {
            return Err(ctx.invalid("hypervisor.debug_multiplier", "a factor >= 1", hyp.debug_multiplier));
        }
        let c = |k: &str| ctx.platform.cost(k, self.name()).cloned().map_err(|e| ctx.platform_err(e));
        let dbg = |d: CostDist| d.scaled(hyp.debug_multiplier);
        let costs = Costs {
            raise: c("timer_irq_raise")?,
            idle_wakeup: c("idle_wakeup")?,
            trap: c("trap_to_hyp")?,
            handler: dbg(c("hyp_irq_handler")?),
            unblock: dbg(c("vcpu_unblock")?),
            restore: dbg(c("context_restore")?),
            inject: dbg(c("lr_inject")?),
            entry: c("guest_entry")?,
            ack: c("guest_irq_ack")?,
            cold: c("cold_cache_penalty")?,
        };
        Ok(Box::new(Prepared {
            idle: hyp.idle,
            costs,
            period: SimTime::from_ns_f64(wl.period_us * 1000.0),
            samples: wl.samples,
            warmup: wl.warmup,
            busy_fraction: wl.busy_fraction,
            cold_rounds: wl.cold_rounds,
            seed: ctx.seed,
        }))
    }
}

enum Ev {
    /// The guest's timer deadline k is reached.
    Deadline(u64),
    /// The guest acknowledged interrupt k.
    Ack(u64, SimTime),
}

impl Prepared {
    /// Build the path of one interrupt, as segments.
    fn path(&self, k: u64, busy: bool, rng: &mut SimRng, t: &mut Trace) {
        let c = &self.costs;
        t.push("timer-irq-raise", c.raise.sample(rng));
        match (busy, self.idle) {
            (true, _) => {
                t.push("trap-to-hyp", c.trap.sample(rng));
                t.push("hyp-irq-handler", c.handler.sample(rng));
            }
            (false, IdlePolicy::Trap) => {
                t.push("pcpu-idle-wakeup", c.idle_wakeup.sample(rng));
                t.push("hyp-irq-handler", c.handler.sample(rng));
                t.push("vcpu-unblock", c.unblock.sample(rng));
                t.push("context-restore", c.restore.sample(rng));
            }
            (false, IdlePolicy::Native) => {
                t.push("wfi-wakeup-trap", c.trap.sample(rng));
                t.push("hyp-irq-handler", c.handler.sample(rng));
            }
        }
        t.push("lr-inject", c.inject.sample(rng));
        t.push("guest-entry", c.entry.sample(rng));
        t.push("guest-irq-ack", c.ack.sample(rng));
        if k < self.cold_rounds {
            t.push("cold-caches", c.cold.sample(rng));
        }
    }
}

impl PreparedPoint for Prepared {
    fn work(&self) -> u64 {
        self.samples
    }

    fn run(self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError> {
        let streams = RngStreams::new(self.seed);
        let mut path_rng = streams.stream("path");
        let mut guest_rng = streams.stream("guest");
        let mut q: EventQueue<Ev> = EventQueue::with_capacity(4);
        let mut rec = LatencyRecorder::new(self.warmup);
        let mut traces = TraceSet::picking(opts.traces.picker("timer"));
        let mut result = ConfigResult::default();
        q.schedule_at(self.period, Ev::Deadline(0));
        let mut reported = 0;
        // Counted here, added to the result once at the end (a counter never hit is absent).
        let (mut exits_irq, mut exits_wfi_wake, mut wakeups) = (0, 0, 0);
        while let Some((now, ev)) = q.pop() {
            match ev {
                Ev::Deadline(k) => {
                    let busy = guest_rng.chance(self.busy_fraction);
                    let mut t = traces.start(now);
                    if traces.wants_more() {
                        t.label = format!("timer #{k} ({})", if busy { "guest busy" } else { "guest idle" });
                    }
                    self.path(k, busy, &mut path_rng, &mut t);
                    let total = t.total();
                    *(if busy { &mut exits_irq } else { &mut exits_wfi_wake }) += 1;
                    if !busy && self.idle == IdlePolicy::Trap {
                        wakeups += 1;
                    }
                    traces.add(t);
                    q.schedule_in(total, Ev::Ack(k, now));
                }
                Ev::Ack(k, deadline) => {
                    rec.record((now - deadline).ns());
                    if k + 1 < self.samples {
                        q.schedule_in(self.period, Ev::Deadline(k + 1));
                    }
                    if (k + 1) % 4096 == 0 {
                        (opts.progress)(k + 1 - reported);
                        reported = k + 1;
                    }
                }
            }
        }
        (opts.progress)(self.samples - reported);
        for (k, n) in [("exits.irq", exits_irq), ("exits.wfi_wake", exits_wfi_wake), ("injections", exits_irq + exits_wfi_wake), ("vcpu_wakeups", wakeups)] {
            if n > 0 {
                result.add_counter(k, n);
            }
        }
        result.classes.insert("timer".into(), rec.finish());
        result.breakdown.insert("timer".into(), traces.breakdown());
        result.set_figure("simulated_time", q.now().ns_f64() / 1e9, "s");
        Ok(PointOutput { result, traces: traces.kept, events: q.processed() })
    }
}

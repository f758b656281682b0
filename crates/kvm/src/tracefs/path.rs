//! The delivery path of each benchmark as an ordered list of milestones, each a host trace event
//! that marks the end of one segment (the segment from the previous milestone, or from the
//! sample's deadline/trigger stamp, up to this event). The last segment ends at the guest's own
//! arrival stamp (rdtsc in its ISR).
//!
//! The order follows KVM's code (arch/x86/kvm, Linux 6.x):
//! - timer: `apic_timer_fn` (lapic.c) fires the emulated TSC deadline → `apic_timer_expired`
//!   kicks the halted vCPU (`sched_wakeup`) → the vCPU thread leaves `kvm_vcpu_halt`
//!   (`kvm_vcpu_wakeup`) → `kvm_inject_apic_timer_irqs` → `__apic_accept_irq`
//!   (`kvm_apic_accept_irq`) → VM entry (`kvm_entry`) → guest ISR;
//! - device: irqfd write or ioctl → `kvm_set_msi` / `kvm_set_irq` (`kvm_msi_set_irq`,
//!   `kvm_set_irq`) → `__apic_accept_irq` in the caller's context → kick → wakeup → entry → ISR;
//! - ipi: the sender's ICR write (`kvm_apic_ipi`, lapic.c `kvm_apic_send_ipi`) → accept on the
//!   target's LAPIC → kick → wakeup → entry → ISR.
//!
//! Some milestones are optional, because the path legitimately skips them: `sched_wakeup` (halt
//! polling caught the interrupt, the vCPU never slept), `kvm_vcpu_wakeup` (the interrupt came
//! before the vCPU halted, e.g. while its ISR was still being emulated) and the host timer (a
//! deadline already past when armed is injected at once, `start_sw_tscdeadline`). Skips are
//! counted (`breakdown.skipped.*`); a `sched_wakeup` without a following `kvm_vcpu_wakeup` is a
//! lost event.
//! A milestone whose event never fires in a run (e.g. `kvm_entry`/`kvm_exit` under kvm_pvm,
//! which does not emit them, or wakeups when the guest spins) is dropped from the path and said so.
use std::collections::BTreeSet;

use super::parse::Event;
use crate::abi::vector;
use crate::config::{Bench, BenchConfig, Via, Wait};

/// Whose thread an event must come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thread {
    /// The vCPU thread that receives the interrupt.
    Target,
    /// The thread that raises it (host trigger thread, or the sending vCPU).
    Source,
    /// Any thread (e.g. the kworker that injects a level-triggered irqfd).
    Any,
}

/// What an event must look like to mark a milestone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `hrtimer_expire_entry` of one of the target vCPU's own APIC timers.
    OwnApicTimer,
    /// `sched_wakeup` whose wakee is the target vCPU thread.
    WakesTarget,
    /// `kvm_apic_accept_irq` of the benchmark's vector on the target APIC.
    AcceptsVector,
    /// `kvm_apic_ipi` towards the target APIC.
    IpiToTarget,
    /// arm64: `kvm_timer_update_irq` / `vgic_update_irq_pending` (`VCPU: n, IRQ m, level[:] 1`)
    /// raising the benchmark's INTID on the target vCPU.
    RaisesIntid,
    /// The body contains this text (arm64 `kvm_sys_access` naming `ICC_SGI1R_EL1`).
    BodyHas(&'static str),
    /// The event name alone (thread per [`Thread`]).
    Named,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Milestone {
    /// Name of the segment that ends at this milestone.
    pub segment: &'static str,
    /// Trace event (`system/name`).
    pub event: &'static str,
    pub from: Thread,
    pub rule: Rule,
    /// A sample may legitimately skip it (zero-length segment).
    pub optional: bool,
    /// It may fire before the sample's start stamp (timer advance, `lapic_timer_advance`).
    pub early_ok: bool,
    /// When found, the next milestone is required even if optional (a woken vCPU must run).
    pub requires_next: bool,
}

const fn m(segment: &'static str, event: &'static str, from: Thread, rule: Rule) -> Milestone {
    Milestone { segment, event, from, rule, optional: false, early_ok: false, requires_next: false }
}

/// Name of the last segment: from the last host milestone to the guest's arrival stamp.
pub const GUEST_SEGMENT: &str = "guest ISR";

const WOKEN: Milestone = Milestone { optional: true, requires_next: true, ..m("vCPU woken", "sched/sched_wakeup", Thread::Any, Rule::WakesTarget) };
const RUNS: Milestone = Milestone { optional: true, ..m("vCPU thread runs", "kvm/kvm_vcpu_wakeup", Thread::Target, Rule::Named) };
const ENTRY: Milestone = m("VM entry", "kvm/kvm_entry", Thread::Target, Rule::Named);

/// Who is who in one run: thread ids, the target APIC and vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roles {
    pub target_tid: i32,
    pub source_tid: i32,
    /// x86: the target's APIC id; arm64: the target vCPU's index.
    pub target_apic: u32,
    /// x86: the interrupt vector; arm64: the INTID.
    pub vector: u32,
    /// Every thread of the run (vCPUs and the host trigger thread), for the tracefs filters.
    pub all_tids: Vec<i32>,
}

/// The benchmark's path on a host that emits every event (milestones never seen are dropped later).
pub fn path_for(cfg: &BenchConfig) -> Vec<Milestone> {
    let accept = |from| m("interrupt accepted", "kvm/kvm_apic_accept_irq", from, Rule::AcceptsVector);
    match cfg.kind {
        Bench::Timer => {
            let fire = Milestone { early_ok: true, optional: true, ..m("host timer fires", "timer/hrtimer_expire_entry", Thread::Any, Rule::OwnApicTimer) };
            if cfg.wait == Wait::Busy {
                vec![fire, accept(Thread::Target), ENTRY]
            } else {
                vec![fire, WOKEN, RUNS, accept(Thread::Target), ENTRY]
            }
        }
        Bench::Device => {
            let (raise, from) = match cfg.via {
                Via::Irqfd | Via::Msi => ("kvm/kvm_msi_set_irq", Thread::Source),
                Via::Line => ("kvm/kvm_set_irq", Thread::Source),
                // irqfd with resample injects from a kworker (virt/kvm/eventfd.c irqfd_inject).
                Via::Level => ("kvm/kvm_set_irq", Thread::Any),
                // The assigned device's paths start in the host's interrupt handler
                // (vfio_msihandler / vfio_intx_handler), on no thread of ours.
                Via::VfioMsi | Via::VfioIntx => ("kvm/kvm_set_irq", Thread::Any),
            };
            vec![m("irq raised", raise, from, Rule::Named), accept(from), WOKEN, RUNS, ENTRY]
        }
        Bench::Ipi => vec![m("ICR write", "kvm/kvm_apic_ipi", Thread::Source, Rule::IpiToTarget), accept(Thread::Source), WOKEN, RUNS, ENTRY],
    }
}

/// Target APIC and vector of the x86 benchmark's measured interrupt.
pub fn target_of(cfg: &BenchConfig) -> (u32, u32) {
    let (apic, v) = match (cfg.kind, cfg.via) {
        (Bench::Timer, _) => (0, vector::TIMER),
        (Bench::Device, Via::Level) => (0, vector::DEVICE_LEVEL),
        (Bench::Device, _) => (0, vector::DEVICE),
        (Bench::Ipi, _) => (1, vector::IPI),
    };
    (apic, v as u32)
}

/// The architecture whose KVM wrote a trace (the events and their formats differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceArch {
    #[default]
    X86_64,
    Aarch64,
}

impl TraceArch {
    pub fn name(self) -> &'static str {
        match self {
            TraceArch::X86_64 => "x86_64",
            TraceArch::Aarch64 => "aarch64",
        }
    }

    pub fn from_name(s: &str) -> Option<TraceArch> {
        [TraceArch::X86_64, TraceArch::Aarch64].into_iter().find(|a| a.name() == s)
    }

    /// The architecture this build runs on.
    pub fn host() -> TraceArch {
        if cfg!(target_arch = "aarch64") {
            TraceArch::Aarch64
        } else {
            TraceArch::X86_64
        }
    }
}

/// The benchmark's path on `arch`.
pub fn path(arch: TraceArch, cfg: &BenchConfig) -> Vec<Milestone> {
    match arch {
        TraceArch::X86_64 => path_for(cfg),
        TraceArch::Aarch64 => super::path_arm64::path_for(cfg),
    }
}

/// Host timers that deliver a vCPU's timer interrupt: x86 `apic_timer_fn` (lapic.c); arm64
/// `kvm_bg_timer_expire` (the background timer a blocked vCPU's timer is armed on) and
/// `kvm_hrtimer_expire` (an emulated timer), arch/arm64/kvm/arch_timer.c.
pub const OWN_TIMER_FUNCTIONS: [&str; 3] = ["apic_timer_fn", "kvm_bg_timer_expire", "kvm_hrtimer_expire"];

/// Events enabled besides the milestones: `hrtimer_start` tells which hrtimers are ours.
pub const AUX_EVENTS: &[&str] = &["timer/hrtimer_start"];

/// What a run's trace needs beyond its events: the APIC timers the target vCPU armed.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub own_timers: BTreeSet<String>,
}

impl Context {
    /// Learn the target vCPU's APIC hrtimers from its `hrtimer_start` events.
    pub fn learn(events: &[Event], roles: &Roles) -> Context {
        let own_timers = events
            .iter()
            .filter(|e| e.name == "hrtimer_start" && e.pid == roles.target_tid && e.field("function").is_some_and(|f| OWN_TIMER_FUNCTIONS.contains(&f)))
            .filter_map(|e| e.field("hrtimer").map(String::from))
            .collect();
        Context { own_timers }
    }
}

fn short(event: &str) -> &str {
    event.rsplit('/').next().unwrap_or(event)
}

impl Milestone {
    /// The event name without its system.
    pub fn name(&self) -> &'static str {
        short(self.event)
    }

    pub fn matches(&self, e: &Event, roles: &Roles, ctx: &Context) -> bool {
        if e.name != self.name() {
            return false;
        }
        let thread_ok = match self.from {
            Thread::Target => e.pid == roles.target_tid,
            Thread::Source => e.pid == roles.source_tid,
            Thread::Any => true,
        };
        let num = |s: Option<&str>| s.and_then(|v| v.parse::<u64>().ok());
        thread_ok
            && match self.rule {
                Rule::Named => true,
                Rule::OwnApicTimer => e.field("hrtimer").is_some_and(|h| ctx.own_timers.contains(h)),
                Rule::WakesTarget => e.field("pid").and_then(|p| p.parse::<i32>().ok()) == Some(roles.target_tid),
                Rule::AcceptsVector => num(e.word_after("apicid")) == Some(roles.target_apic as u64) && num(e.word_after("vec")) == Some(roles.vector as u64),
                Rule::IpiToTarget => e.word_after("dst").and_then(|d| u64::from_str_radix(d, 16).ok()) == Some(roles.target_apic as u64),
                Rule::RaisesIntid => {
                    let after = |w: &str| num(e.word_after(w).map(|v| v.trim_end_matches(',')));
                    after("VCPU:") == Some(roles.target_apic as u64) && after("IRQ") == Some(roles.vector as u64) && (after("level") == Some(1) || after("level:") == Some(1))
                }
                Rule::BodyHas(text) => e.body.contains(text),
            }
    }

    /// The tracefs filter that keeps this event to the run's own threads (None: no filter).
    pub fn filter(&self, roles: &Roles) -> Option<String> {
        match (self.rule, self.from) {
            (Rule::WakesTarget, _) => Some(format!("pid == {}", roles.target_tid)),
            (Rule::OwnApicTimer, _) => None, // fires in whatever task the timer interrupt hits
            (Rule::AcceptsVector, Thread::Any) => Some(format!("vec == {}", roles.vector)),
            (Rule::RaisesIntid, Thread::Any) => Some(format!("irq == {}", roles.vector)),
            (_, Thread::Any) => None,
            _ => Some(pid_filter(&roles.all_tids)),
        }
    }
}

/// `common_pid == a || common_pid == b …`
pub fn pid_filter(tids: &[i32]) -> String {
    tids.iter().map(|t| format!("common_pid == {t}")).collect::<Vec<_>>().join(" || ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracefs::parse::parse_line;

    fn roles() -> Roles {
        Roles { target_tid: 10, source_tid: 20, target_apic: 1, vector: 224, all_tids: vec![10, 20] }
    }

    #[test]
    fn paths_follow_the_benchmark() {
        let names = |c: BenchConfig| path_for(&c).iter().map(|m| m.segment).collect::<Vec<_>>();
        assert_eq!(names(BenchConfig::default()), ["host timer fires", "vCPU woken", "vCPU thread runs", "interrupt accepted", "VM entry"]);
        assert_eq!(names(BenchConfig { wait: Wait::Busy, ..Default::default() }), ["host timer fires", "interrupt accepted", "VM entry"]);
        assert_eq!(names(BenchConfig { kind: Bench::Ipi, ..Default::default() })[0], "ICR write");
        let lvl = path_for(&BenchConfig { kind: Bench::Device, via: Via::Level, ..Default::default() });
        assert_eq!((lvl[0].event, lvl[0].from), ("kvm/kvm_set_irq", Thread::Any));
        assert_eq!(lvl[1].filter(&roles()).as_deref(), Some("vec == 224"));
    }

    #[test]
    fn rules_check_threads_and_fields() {
        let r = roles();
        let ctx = Context::default();
        let ipi = path_for(&BenchConfig { kind: Bench::Ipi, ..Default::default() });
        let e = |l: &str| parse_line(l).unwrap();
        assert!(ipi[0].matches(&e("vcpu0-20 [0] ..... 5: kvm_apic_ipi: dst 1 vec 224 (Fixed|physical|assert|edge|dst)"), &r, &ctx));
        assert!(!ipi[0].matches(&e("vcpu1-10 [0] ..... 5: kvm_apic_ipi: dst 0 vec 225 (Fixed|physical|assert|edge|dst)"), &r, &ctx));
        assert!(ipi[1].matches(&e("vcpu0-20 [0] ..... 6: kvm_apic_accept_irq: apicid 1 vec 224 (Fixed|edge)"), &r, &ctx));
        assert!(!ipi[1].matches(&e("vcpu0-20 [0] ..... 6: kvm_apic_accept_irq: apicid 0 vec 225 (Fixed|edge)"), &r, &ctx));
        assert!(ipi[2].matches(&e("other-99 [1] d.h3. 7: sched_wakeup: comm=vcpu1 pid=10 prio=120 target_cpu=001"), &r, &ctx));
        assert!(!ipi[3].matches(&e("vcpu0-20 [0] ..... 8: kvm_vcpu_wakeup: wait time 1 ns, polling valid"), &r, &ctx));
        let timer = path_for(&BenchConfig::default());
        let evs = vec![e("vcpu1-10 [0] d..2. 1: hrtimer_start: hrtimer=00000000f355430e function=apic_timer_fn expires=2 softexpires=2 mode=ABS|HARD")];
        let ctx = Context::learn(&evs, &r);
        assert!(timer[0].matches(&e("x-1 [0] d.h.. 3: hrtimer_expire_entry: hrtimer=00000000f355430e function=apic_timer_fn now=9"), &r, &ctx));
        assert!(!timer[0].matches(&e("x-1 [0] d.h.. 3: hrtimer_expire_entry: hrtimer=00000000deadbeef function=apic_timer_fn now=9"), &r, &ctx));
        assert_eq!(timer[2].filter(&r).as_deref(), Some("common_pid == 10 || common_pid == 20"));
    }
}

//! The arm64 benchmarks' delivery paths (KVM/arm64, Linux 6.1: arch/arm64/kvm/arch_timer.c,
//! vgic/vgic.c, vgic/vgic-v3.c, arm.c, handle_exit.c; events in arch/arm64/kvm/trace_arm.h,
//! vgic/trace.h, include/trace/events/kvm.h). Same milestone model as x86 (see `path`), other events:
//! - timer, WFI: the vCPU blocked in `kvm_vcpu_wfi`, so its virtual timer lives on as the
//!   background hrtimer (`kvm_timer_vcpu_put` → `kvm_bg_timer_expire`), which fires and wakes the
//!   vCPU thread (`sched_wakeup`); the thread, loaded again, finds the timer's level high
//!   (`kvm_timer_update_irq`) and injects it into the vGIC (`kvm_vgic_inject_irq` →
//!   `vgic_update_irq_pending`), leaves `kvm_vcpu_halt` (`kvm_vcpu_wakeup`) and enters the guest;
//! - timer, busy: the guest runs; the timer's physical interrupt exits it, and the host takes that
//!   interrupt as soon as `kvm_arch_vcpu_ioctl_run` re-enables interrupts: `kvm_arch_timer_handler`
//!   raises the level (`kvm_timer_update_irq`, `vgic_update_irq_pending`, in hard-IRQ context on
//!   the vCPU thread) *before* the exit is traced (`kvm_exit` IRQ, seen in the lab's traces in
//!   that order), and the vCPU re-enters;
//! - ipi: the sender's write to ICC_SGI1R_EL1 traps (`kvm_exit` SYS64, handled by
//!   `vgic_v3_dispatch_sgi`, which queues the SGI without a trace event), kicks the target, which
//!   wakes and enters;
//! - device: KVM_IRQ_LINE (`kvm_irq_line`) then `vgic_update_irq_pending` for the SPI; an irqfd
//!   routed to an SPI (the level path with resample) is injected inline in the writer's context
//!   by `kvm_arch_set_irq_inatomic` (vgic/vgic-irqfd.c), so its first event is
//!   `vgic_update_irq_pending` on the host thread (`kvm_set_irq` appears only for the lowering on
//!   the guest's EOI: seen so in the lab); an LPI (`--via msi`, or an irqfd hitting the ITS
//!   translation cache in the same function) is queued with no event of its own, so its path
//!   starts at the wake-up unless the cache missed and a kworker injected it (`kvm_set_irq`).
//!
//! - an assigned device (`vfio-*`; the guest raises it and stamps its own write): without GICv4
//!   the MSI or INTx is a host interrupt (`irq_handler_entry` of `vfio-msi…`/`vfio-intx…`,
//!   `vfio_msihandler`/`vfio_intx_handler`) that signals the irqfd, injected inline as above
//!   (an INTx SPI shows `vgic_update_irq_pending`), then the wake-up; with GICv4 a resident vPE
//!   gets the vLPI with no host event at all (every segment but the guest's is skipped, and a
//!   guest waiting in an untrapped WFI has no `kvm_entry` either), and a non-resident one through
//!   its doorbell, a host interrupt named `GICv4-vpe` (vgic-v4.c `vgic_v4_doorbell_handler`).
//!
//! Which of these fire depends on the kernel and the moment (halt polling, a level already
//! raised at load): every milestone whose absence is legitimate is optional, and one that never
//! fires in a run is dropped from its path and said so.
use super::path::{Milestone, Rule, Thread};
use crate::config::{Bench, BenchConfig, Via, Wait};

const fn m(segment: &'static str, event: &'static str, from: Thread, rule: Rule) -> Milestone {
    Milestone { segment, event, from, rule, optional: false, early_ok: false, requires_next: false }
}

const fn opt(x: Milestone) -> Milestone {
    Milestone { optional: true, ..x }
}

const WOKEN: Milestone = Milestone { optional: true, requires_next: false, ..m("vCPU woken", "sched/sched_wakeup", Thread::Any, Rule::WakesTarget) };
const RUNS: Milestone = opt(m("vCPU leaves halt", "kvm/kvm_vcpu_wakeup", Thread::Target, Rule::Named));
const ENTRY: Milestone = m("VM entry", "kvm/kvm_entry", Thread::Target, Rule::Named);

fn raised(from: Thread) -> Milestone {
    opt(m("timer level raised", "kvm/kvm_timer_update_irq", from, Rule::RaisesIntid))
}

/// The assigned device's host interrupt (`irq_handler_entry: irq=N name=vfio-msi[0](…)`), on
/// whatever task it interrupted.
fn host_irq(name: &'static str) -> Milestone {
    opt(m("host IRQ (VFIO handler)", "irq/irq_handler_entry", Thread::Any, Rule::BodyHas(name)))
}

fn pending(from: Thread) -> Milestone {
    opt(m("vGIC pending", "kvm/vgic_update_irq_pending", from, Rule::RaisesIntid))
}

/// The benchmark's path on KVM/arm64.
pub fn path_for(cfg: &BenchConfig) -> Vec<Milestone> {
    match cfg.kind {
        Bench::Timer if cfg.wait == Wait::Busy => {
            let exit = m("IRQ exit traced", "kvm/kvm_exit", Thread::Target, Rule::BodyHas("IRQ:"));
            vec![raised(Thread::Target), pending(Thread::Target), exit, ENTRY]
        }
        Bench::Timer => {
            let fire = Milestone { early_ok: true, ..opt(m("host timer fires", "timer/hrtimer_expire_entry", Thread::Any, Rule::OwnApicTimer)) };
            vec![fire, WOKEN, raised(Thread::Target), pending(Thread::Target), RUNS, ENTRY]
        }
        Bench::Ipi => {
            let trap = m("SGI write traps", "kvm/kvm_exit", Thread::Source, Rule::BodyHas("SYS64"));
            vec![trap, WOKEN, RUNS, ENTRY]
        }
        Bench::Device => {
            let first = match cfg.via {
                Via::Line => vec![m("irq line ioctl", "kvm/kvm_irq_line", Thread::Source, Rule::Named), pending(Thread::Source)],
                Via::Level => vec![m("irqfd raises the SPI", "kvm/vgic_update_irq_pending", Thread::Any, Rule::RaisesIntid)],
                Via::Irqfd => vec![opt(m("irqfd injected", "kvm/kvm_set_irq", Thread::Any, Rule::Named))],
                Via::Msi => vec![],
                Via::VfioMsi => vec![host_irq("vfio-msi"), opt(m("GICv4 doorbell", "irq/irq_handler_entry", Thread::Any, Rule::BodyHas("GICv4-vpe")))],
                Via::VfioIntx => vec![host_irq("vfio-intx"), pending(Thread::Any)],
            };
            // Direct injection to a vCPU in an untrapped WFI re-enters nothing: entry optional.
            let entry = if cfg.via == Via::VfioMsi { opt(ENTRY) } else { ENTRY };
            first.into_iter().chain([WOKEN, RUNS, entry]).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracefs::parse::parse_line;
    use crate::tracefs::path::{Context, Roles};

    fn roles() -> Roles {
        Roles { target_tid: 10, source_tid: 20, target_apic: 0, vector: 27, all_tids: vec![10, 20] }
    }

    #[test]
    fn paths_follow_the_benchmark() {
        let names = |c: BenchConfig| path_for(&c).iter().map(|m| m.segment).collect::<Vec<_>>();
        assert_eq!(names(BenchConfig::default())[0], "host timer fires");
        assert_eq!(names(BenchConfig { wait: Wait::Busy, ..Default::default() }), ["timer level raised", "vGIC pending", "IRQ exit traced", "VM entry"]);
        assert_eq!(names(BenchConfig { kind: Bench::Ipi, ..Default::default() })[0], "SGI write traps");
        assert_eq!(names(BenchConfig { kind: Bench::Device, via: Via::Msi, ..Default::default() }), ["vCPU woken", "vCPU leaves halt", "VM entry"]);
        let vfio = path_for(&BenchConfig { kind: Bench::Device, via: Via::VfioMsi, ..Default::default() });
        assert_eq!(vfio.iter().map(|m| m.segment).collect::<Vec<_>>(), ["host IRQ (VFIO handler)", "GICv4 doorbell", "vCPU woken", "vCPU leaves halt", "VM entry"]);
        assert!(vfio.iter().all(|m| m.optional), "direct injection has no host event at all");
        let e = |l: &str| parse_line(l).unwrap();
        assert!(vfio[0].matches(&e("<idle>-0 [000] d.h1. 9: irq_handler_entry: irq=52 name=vfio-msi[0](0000:00:02.0)"), &roles(), &Context::default()));
        assert!(!vfio[0].matches(&e("<idle>-0 [000] d.h1. 9: irq_handler_entry: irq=11 name=arch_timer"), &roles(), &Context::default()));
        assert!(vfio[1].matches(&e("<idle>-0 [000] d.h1. 9: irq_handler_entry: irq=30 name=GICv4-vpe"), &roles(), &Context::default()));
        assert_eq!(path_for(&BenchConfig { kind: Bench::Device, via: Via::Level, ..Default::default() })[0].filter(&roles()).as_deref(), Some("irq == 27"));
    }

    #[test]
    fn intid_rules_read_both_print_formats() {
        let (r, ctx) = (roles(), Context::default());
        let e = |l: &str| parse_line(l).unwrap();
        let p = path_for(&BenchConfig::default());
        let (raised, pending) = (&p[2], &p[3]);
        assert!(raised.matches(&e("vcpu 0-10 [001] d..1. 5: kvm_timer_update_irq: VCPU: 0, IRQ 27, level 1"), &r, &ctx));
        assert!(!raised.matches(&e("vcpu 0-10 [001] d..1. 5: kvm_timer_update_irq: VCPU: 0, IRQ 27, level 0"), &r, &ctx), "lowered");
        assert!(!raised.matches(&e("vcpu 0-10 [001] d..1. 5: kvm_timer_update_irq: VCPU: 0, IRQ 30, level 1"), &r, &ctx), "another timer");
        assert!(pending.matches(&e("vcpu 0-10 [001] d..1. 6: vgic_update_irq_pending: VCPU: 0, IRQ 27, level: 1"), &r, &ctx));
        assert!(!pending.matches(&e("vcpu 1-11 [001] d..1. 6: vgic_update_irq_pending: VCPU: 0, IRQ 27, level: 1"), &r, &ctx), "another thread");
        let ipi = path_for(&BenchConfig { kind: Bench::Ipi, ..Default::default() });
        let r = Roles { target_tid: 11, source_tid: 10, target_apic: 1, vector: 0, all_tids: vec![10, 11] };
        assert!(ipi[0].matches(&e("vcpu 0-10 [000] d..1. 7: kvm_exit: TRAP: HSR_EC: 0x0018 (SYS64), PC: 0x0000000040080300"), &r, &ctx));
        assert!(!ipi[0].matches(&e("vcpu 0-10 [000] d..1. 7: kvm_exit: TRAP: HSR_EC: 0x0001 (WFx), PC: 0x0000000040080300"), &r, &ctx));
        let busy = path_for(&BenchConfig { wait: Wait::Busy, ..Default::default() });
        assert!(busy[2].matches(&e("vcpu 0-10 [000] d..1. 7: kvm_exit: IRQ: HSR_EC: 0x0000 (UNKNOWN), PC: 0x0000000040080300"), &roles(), &ctx));
    }

    #[test]
    fn the_background_timer_is_the_vcpus_own() {
        let e = |l: &str| parse_line(l).unwrap();
        let evs = vec![e("vcpu 0-10 [001] d..2. 1: hrtimer_start: hrtimer=000000009a1 function=kvm_bg_timer_expire expires=2 softexpires=2 mode=ABS|HARD")];
        let ctx = Context::learn(&evs, &roles());
        let fire = &path_for(&BenchConfig::default())[0];
        assert!(fire.matches(&e("<idle>-0 [001] d.h1. 3: hrtimer_expire_entry: hrtimer=000000009a1 now=3 function=kvm_bg_timer_expire/0x0"), &roles(), &ctx));
        assert!(!fire.matches(&e("<idle>-0 [001] d.h1. 3: hrtimer_expire_entry: hrtimer=000000009a2 now=3 function=tick_sched_timer/0x0"), &roles(), &ctx));
    }
}

//! `irqlab calibrate --primitives FILE`: the host model's costs from measured primitives
//! (`irqlab run primitives`, crates/kvm/src/primitives), so that the paths are *composed* from
//! pieces measured on their own and only what no primitive measures is fitted (issue 26, item 5).
//!
//! Why: fitting scale factors of derived costs to three paths left costs no path identified
//! (`block_wake`, the ioctl costs) and the held-out paths that need them missed. A primitive is
//! measured alone, so its cost is identified whatever the training set.
//!
//! How a path is composed: the `kvm-x86` model (models/kvm_x86/paths.rs) walks each sample
//! through its steps and draws every step's cost independently — a Monte-Carlo convolution of
//! the step distributions. [`MAPPING`] says which model cost each primitive becomes; [`PATHS`]
//! lists, per measured path, the steps on its latency window with the KVM function each follows
//! (Linux 6.x; arch/x86/kvm/{lapic.c,x86.c,irq_comm.c,ioapic.c}, virt/kvm/{kvm_main.c,eventfd.c}).
//! A primitive enters as an empirical distribution (`values_ns`: [`QUANTILES`] evenly spaced
//! quantiles of its histogram), `basis = "measured"`, its source naming the result file, class,
//! host and sample count. A cost that is a *difference* of primitives (an MSR handler beyond the
//! bare exit, blocking beyond polling, an interrupt's entry into a running guest beyond the irqfd
//! write, the exit and the handler) is their quantile-by-quantile difference, floored at 0 (the
//! comonotone difference: exact when the terms move together, an approximation otherwise — stated
//! in its source).
//!
//! What stays free: the costs no primitive measures (`ioapic_route`, `handle_hlt`, …) keep their
//! profile values and `calibrate` fits at most one per training path, on the training paths only;
//! when no training path depends on one, nothing is fitted and every path is a prediction.
//! `device-irqfd` is then not a test: it is the `wake_halt_polled` primitive measured again.
//!
//! Too noisy to identify: a primitive with fewer than [`MIN_SAMPLES`] samples, a non-positive
//! median, or a tail that is not the primitive's (p99 above [`MAX_SPREAD`] × p50 *and* more than
//! [`MAX_TAIL_NS`] above it: on paths of 0.2–20 µs such a tail is another thread or a host tick
//! taking the CPU, not the step) is refused by name, as is a blocked wake-up that is not slower
//! than a polled one (then blocking's cost is not identified).
use std::collections::BTreeMap;

use results::{ResultKind, RunResult};

use crate::platform::Basis;
use crate::scenario::{set_path, Scenario};

use super::{host_identity, CalibrateError};

/// Samples a primitive needs.
pub const MIN_SAMPLES: u64 = 200;
/// A tail beyond this multiple of the median …
pub const MAX_SPREAD: f64 = 20.0;
/// … and this far above it (ns) is not the primitive's own.
pub const MAX_TAIL_NS: f64 = 50_000.0;
/// Quantiles kept per primitive (the empirical distribution the model draws from).
pub const QUANTILES: usize = 400;

/// Where a model cost comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// One primitive's distribution.
    One(&'static str),
    /// Σ coefficient × primitive, quantile by quantile, floored at 0 (the comonotone sum).
    Lin(&'static [(f64, &'static str)]),
    /// Zero: the step is already inside this primitive (it cannot be measured apart from it).
    Inside(&'static str),
}

impl Source {
    /// The primitives it reads.
    pub fn classes(self) -> Vec<&'static str> {
        match self {
            Source::One(a) => vec![a],
            Source::Lin(terms) => terms.iter().map(|t| t.1).collect(),
            Source::Inside(a) => vec![a],
        }
    }
    pub fn describe(self) -> String {
        match self {
            Source::One(a) => format!("`{a}`"),
            Source::Lin(terms) => {
                let s: Vec<String> = terms
                    .iter()
                    .enumerate()
                    .map(|(i, (k, c))| {
                        let sign = if *k < 0.0 {
                            " − "
                        } else if i > 0 {
                            " + "
                        } else {
                            ""
                        };
                        let m = if k.abs() != 1.0 { format!("{}·", k.abs()) } else { String::new() };
                        format!("{sign}{m}`{c}`")
                    })
                    .collect();
                format!("{} (quantile by quantile, floored at 0)", s.concat())
            }
            Source::Inside(a) => format!("0: inside `{a}`"),
        }
    }
}

/// (model cost, where it comes from, the KVM step it stands for).
pub const MAPPING: &[(&str, Source, &str)] = &[
    ("guest_ring0_insn", Source::One("guest_insn"), "one guest ring-0 instruction, emulated by kvm_pvm (x86_emulate_insn)"),
    ("vmexit_roundtrip", Source::One("exit_cpuid"), "the bare exit round trip: CPUID, handled in the kernel (kvm_emulate_cpuid)"),
    ("handle_msr_tsc_deadline", Source::Lin(&[(1.0, "exit_msr"), (-1.0, "exit_cpuid")]), "WRMSR IA32_TSC_DEADLINE beyond the bare exit (kvm_set_lapic_tscdeadline_msr)"),
    ("handle_icr_write", Source::Lin(&[(1.0, "exit_icr"), (-1.0, "exit_cpuid")]), "x2APIC ICR write beyond the bare exit (kvm_x2apic_icr_write → kvm_apic_send_ipi → kvm_irq_delivery_to_apic); the target's kick is in its wake-up"),
    ("ioctl_signal_msi", Source::One("ioctl_signal_msi"), "KVM_SIGNAL_MSI up to the delivery (kvm_send_userspace_msi → kvm_set_msi)"),
    ("ioctl_irq_line", Source::One("ioctl_irq_line"), "KVM_IRQ_LINE up to the IOAPIC (kvm_vm_ioctl_irq_line → kvm_set_irq)"),
    ("eventfd_signal", Source::One("irqfd_signal"), "eventfd write → irqfd_wakeup → kvm_arch_set_irq_inatomic, in the writer's syscall"),
    ("hrtimer_expiry", Source::One("hrtimer_spin"), "KVM's software LAPIC timer is an hrtimer (apic_timer_fn → apic_timer_expired): its expiry lateness"),
    ("handle_host_timer_irq", Source::One("hrtimer_spin"), "the same hrtimer firing on the CPU of a running vCPU (timer-busy: the exit is vmexit_roundtrip)"),
    ("poll_wake", Source::Lin(&[(1.0, "wake_halt_polled"), (-1.0, "irqfd_signal"), (-6.0, "guest_insn")]), "a halted vCPU woken with the host's halt polling (kvm_vcpu_halt: poll loop, or kvm_vcpu_block when the poll fails) up to the guest's re-entry (vcpu_enter_guest, inject_pending_event): the polled irqfd wake-up less its irqfd write, the interrupt entry and the handler's 5 instructions"),
    ("block_wake", Source::Lin(&[(1.0, "wake_halt_blocked"), (-1.0, "irqfd_signal"), (-6.0, "guest_insn")]), "a blocked vCPU thread woken (kvm_vcpu_kick → kvm_vcpu_wake_up → rcuwait_wake_up), scheduled and re-entering the guest: the irqfd wake-up with halt_poll_ns 0 less its irqfd write, the interrupt entry and the handler's 5 instructions"),
    ("cross_cpu_wake", Source::Lin(&[(1.0, "wake_halt_remote"), (-1.0, "wake_halt_polled")]), "waking a halted vCPU from another host CPU: try_to_wake_up → smp_send_reschedule, an IPI between host CPUs — the remote irqfd wake-up less the local one"),
    ("vm_entry_inject", Source::Inside("wake_halt_polled"), "the VM entry that injects after a halt: measured inside the wake-ups (poll_wake, block_wake), not apart"),
    ("guest_irq_entry", Source::One("guest_insn"), "an interrupt entering the guest: under kvm_pvm one emulation event (inject_pending_event; each delivery adds 1 to insn_emulation_fail), measured as one emulated instruction"),
    (
        "forced_exit_running",
        Source::Lin(&[(1.0, "irq_running"), (-1.0, "irqfd_signal"), (-6.0, "guest_insn"), (-1.0, "wake_halt_remote"), (1.0, "wake_halt_polled")]),
        "a host interrupt forcing a running vCPU out of the guest and KVM re-entering it with the interrupt injected (issue 43 item 6): the kick of a running vCPU measured whole (`irq_running`: irqfd from the other CPU → kvm_vcpu_kick → smp_send_reschedule → forced exit → vcpu_enter_guest, inject → handler) less its irqfd write, the guest's interrupt entry and 5 ISR instructions, and the cross-CPU IPI (`wake_halt_remote` − `wake_halt_polled`, as cross_cpu_wake)",
    ),
    ("irqfd_inject_work", Source::One("eventfd_wake"), "a level irqfd's deferred injection (irqfd_wakeup → schedule_work → irqfd_inject): a blocked kworker woken and scheduled, as a thread blocked in read(2) is"),
];

/// Primitives that are measured but enter no cost (kept as checks of the ones that do).
pub const CHECKS: &[(&str, &str)] = &[
    ("exit_pio", "a PIO exit to the VMM and back: no measured path leaves the kernel"),
    ("spin_wake", "a store seen by a thread spinning on another CPU: what a successful halt poll adds at least"),
    ("hrtimer_sleep", "hrtimer expiry plus the wake-up of a sleeping thread: compare hrtimer_spin + eventfd_wake"),
];

/// The steps on each measured path's latency window, in order: (path, [(step, model cost, times)]).
/// `guest_ring0_insn` steps are the guest's own instructions, counted from bench.S
/// (models/kvm_x86/paths.rs `guest`); a step whose cost is another path is that whole path.
pub const PATHS: &[(&str, &[(&str, &str, f64)])] = &[
    (
        "timer-hlt",
        &[
            ("apic_timer_fn → apic_timer_expired: the hrtimer fires late", "hrtimer_expiry", 1.0),
            ("kvm_vcpu_kick seen by the halt-poll loop (kvm_vcpu_halt)", "poll_wake", 1.0),
            ("vcpu_enter_guest, inject (kvm_inject_pending_timer_irqs)", "vm_entry_inject", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
    (
        "timer-hlt-poll0",
        &[
            ("apic_timer_fn → apic_timer_expired: the hrtimer fires late", "hrtimer_expiry", 1.0),
            ("kvm_vcpu_kick → kvm_vcpu_wake_up of the blocked thread (halt_poll_ns 0)", "block_wake", 1.0),
            ("vcpu_enter_guest, inject", "vm_entry_inject", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
    (
        "timer-busy",
        &[
            ("the hrtimer fires on the running vCPU's CPU and forces it out of the guest; KVM re-enters it with the timer injected", "forced_exit_running", 1.0),
            ("hrtimer lateness (handle_external_interrupt_irqoff → apic_timer_expired)", "handle_host_timer_irq", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
    (
        "device-irqfd",
        &[
            ("eventfd write → irqfd_wakeup → kvm_set_msi (inline)", "eventfd_signal", 1.0),
            ("kvm_vcpu_kick seen by the halt-poll loop", "poll_wake", 1.0),
            ("vcpu_enter_guest, inject", "vm_entry_inject", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
    (
        "device-msi",
        &[
            ("KVM_SIGNAL_MSI → kvm_send_userspace_msi → kvm_set_msi", "ioctl_signal_msi", 1.0),
            ("kvm_vcpu_kick seen by the halt-poll loop", "poll_wake", 1.0),
            ("vcpu_enter_guest, inject", "vm_entry_inject", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
    (
        "device-line",
        &[
            ("KVM_IRQ_LINE → kvm_set_irq", "ioctl_irq_line", 1.0),
            ("kvm_ioapic_set_irq → ioapic_service → kvm_irq_delivery_to_apic", "ioapic_route", 1.0),
            ("kvm_vcpu_kick seen by the halt-poll loop", "poll_wake", 1.0),
            ("vcpu_enter_guest, inject", "vm_entry_inject", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
    (
        "device-level",
        &[
            ("eventfd write → irqfd_wakeup: an IOAPIC route cannot inject in atomic context", "eventfd_signal", 1.0),
            ("schedule_work → a kworker runs irqfd_inject → kvm_set_irq", "irqfd_inject_work", 1.0),
            ("kvm_ioapic_set_irq → ioapic_service", "ioapic_route", 1.0),
            ("kvm_vcpu_kick seen by the halt-poll loop", "poll_wake", 1.0),
            ("vcpu_enter_guest, inject", "vm_entry_inject", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
    (
        "ipi-oneway",
        &[
            ("sender: rdtsc … wrmsr set-up (7)", "guest_ring0_insn", 7.0),
            ("ICR write exit", "vmexit_roundtrip", 1.0),
            ("kvm_x2apic_icr_write → kvm_apic_send_ipi → __apic_accept_irq", "handle_icr_write", 1.0),
            ("target on the other host CPU: kvm_vcpu_kick → smp_send_reschedule", "cross_cpu_wake", 1.0),
            ("target: woken from its halt", "poll_wake", 1.0),
            ("vcpu_enter_guest, inject", "vm_entry_inject", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
    (
        "ipi-roundtrip",
        &[
            ("the one-way path", "ipi-oneway", 1.0),
            ("target: reply set-up (8)", "guest_ring0_insn", 8.0),
            ("reply ICR write exit", "vmexit_roundtrip", 1.0),
            ("kvm_apic_send_ipi back", "handle_icr_write", 1.0),
            ("sender on the other host CPU: reschedule IPI", "cross_cpu_wake", 1.0),
            ("sender: woken from its halt", "poll_wake", 1.0),
            ("vcpu_enter_guest, inject", "vm_entry_inject", 1.0),
            ("guest interrupt entry", "guest_irq_entry", 1.0),
            ("ISR_SAVE + rdtsc (5)", "guest_ring0_insn", 5.0),
        ],
    ),
];

/// One primitive's measured distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct Prim {
    pub count: u64,
    pub p50: f64,
    pub p99: f64,
    /// [`QUANTILES`] evenly spaced quantiles, ns, ascending.
    pub quantiles: Vec<f64>,
}

impl Prim {
    /// A primitive from its quantiles (tests: synthetic distributions).
    pub fn from_quantiles(count: u64, quantiles: Vec<f64>) -> Prim {
        let at = |q: f64| quantiles[((q * quantiles.len() as f64) as usize).min(quantiles.len() - 1)];
        Prim { count, p50: at(0.5), p99: at(0.99), quantiles }
    }
}

/// The measured primitives of one result file.
#[derive(Debug, Clone, PartialEq)]
pub struct Primitives {
    pub file: String,
    pub host: String,
    pub prims: BTreeMap<String, Prim>,
}

/// Every primitive a cost reads.
pub fn needed() -> Vec<&'static str> {
    let mut v: Vec<&str> = MAPPING.iter().flat_map(|m| m.1.classes()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Why a primitive cannot be used, or `None`.
pub fn too_noisy(p: &Prim) -> Option<String> {
    if p.count < MIN_SAMPLES {
        return Some(format!("{} samples, fewer than the {MIN_SAMPLES} a primitive needs", p.count));
    }
    if p.p50 <= 0.0 {
        return Some(format!("median {} ns: a primitive's cost must be positive", p.p50));
    }
    if p.p99 > MAX_SPREAD * p.p50 && p.p99 - p.p50 > MAX_TAIL_NS {
        return Some(format!(
            "p99 {:.1} µs is {:.0}× its p50 {:.2} µs (bound: {MAX_SPREAD}× and {} µs above): the tail is other work taking the CPU, not this step — measure on a quieter host",
            p.p99 / 1e3,
            p.p99 / p.p50,
            p.p50 / 1e3,
            MAX_TAIL_NS / 1e3
        ));
    }
    None
}

impl Primitives {
    /// Read the primitives from a measured result of `irqlab run primitives`, refusing what
    /// cannot identify a cost (named by file, primitive and reason).
    pub fn read(file: &str, r: &RunResult) -> Result<Primitives, CalibrateError> {
        let bad = |why: String| CalibrateError::Primitive { file: file.into(), primitive: None, why };
        if r.meta.kind != ResultKind::Measured {
            return Err(bad(format!("a {} result; --primitives takes the result of `irqlab run primitives`", r.meta.kind.as_str())));
        }
        let c = r
            .configs
            .iter()
            .find(|c| c.params.get("bench").is_some_and(|b| b == "primitives"))
            .ok_or_else(|| bad("no configuration with bench = primitives: not a result of `irqlab run primitives`".into()))?;
        if let Some(e) = &c.error {
            return Err(bad(format!("the run failed ({e})")));
        }
        let mut prims = BTreeMap::new();
        let mut noisy = Vec::new();
        for name in needed() {
            let fail = |why: String| CalibrateError::Primitive { file: file.into(), primitive: Some(name.into()), why };
            let Some(l) = c.classes.get(name) else {
                noisy.push((name, "not measured in this file (an older `irqlab run primitives`?)".to_string()));
                continue;
            };
            let h = l.histogram(name).map_err(|e| fail(e.to_string()))?;
            let quantiles = (0..QUANTILES).map(|i| h.value_at_quantile((i as f64 + 0.5) / QUANTILES as f64) as f64).collect();
            let p = Prim { count: l.summary.count, p50: l.summary.p50 as f64, p99: l.summary.p99 as f64, quantiles };
            if let Some(why) = too_noisy(&p) {
                noisy.push((name, format!("too noisy to identify: {why}")));
            }
            prims.insert(name.to_string(), p);
        }
        // Every primitive that cannot be used is named, the first as the error's subject.
        if let Some((first, why)) = noisy.first() {
            let more: String = noisy[1..].iter().map(|(n, w)| format!("; primitive `{n}`: {w}")).collect();
            return Err(CalibrateError::Primitive { file: file.into(), primitive: Some(first.to_string()), why: format!("{why}{more}") });
        }
        let out = Primitives { file: file.into(), host: host_identity(r), prims };
        out.check_wakes()?;
        Ok(out)
    }

    /// Blocking must cost more than polling for `block_wake` to be identified.
    pub fn check_wakes(&self) -> Result<(), CalibrateError> {
        let (b, p) = (&self.prims["wake_halt_blocked"], &self.prims["wake_halt_polled"]);
        if b.p50 < 0.9 * p.p50 {
            return Err(CalibrateError::Primitive {
                file: self.file.clone(),
                primitive: Some("wake_halt_blocked".into()),
                why: format!(
                    "too noisy to identify block_wake: its median {:.2} µs is below wake_halt_polled's {:.2} µs (blocking cannot be cheaper than polling)",
                    b.p50 / 1e3,
                    p.p50 / 1e3
                ),
            });
        }
        Ok(())
    }

    /// A cost's distribution (ascending quantiles, ns).
    pub fn values(&self, f: Source) -> Vec<f64> {
        let q = |n: &str| &self.prims[n].quantiles;
        match f {
            Source::One(a) => q(a).clone(),
            Source::Lin(terms) => (0..QUANTILES.min(q(terms[0].1).len())).map(|i| terms.iter().map(|(k, c)| k * q(c)[i]).sum::<f64>().max(0.0)).collect(),
            Source::Inside(a) => vec![0.0; q(a).len()],
        }
    }

    fn source(&self, f: Source, step: &str) -> String {
        let counts: Vec<String> = f.classes().iter().map(|c| format!("{c}: {} samples, p50 {:.2} µs", self.prims[*c].count, self.prims[*c].p50 / 1e3)).collect();
        format!("measured: irqlab run primitives, {} ({step}) in {} on {} [{}]", f.describe(), self.file, self.host, counts.join("; "))
    }

    /// The cost overrides, as `platform.costs.NAME` tables.
    pub fn costs(&self) -> Vec<(String, toml::Table)> {
        MAPPING
            .iter()
            .map(|(cost, f, step)| {
                let mut t = toml::Table::new();
                let vals: Vec<toml::Value> = self.values(*f).into_iter().map(|v| toml::Value::Float((v * 10.0).round() / 10.0)).collect();
                t.insert("values_ns".into(), toml::Value::Array(vals));
                t.insert("source".into(), self.source(*f, step).into());
                t.insert("basis".into(), Basis::Measured.as_str().into());
                (cost.to_string(), t)
            })
            .collect()
    }

    /// `base` with every mapped cost replaced by its primitive.
    pub fn apply(&self, base: &Scenario) -> Result<Scenario, CalibrateError> {
        let mut doc = base.doc.clone();
        for (cost, t) in self.costs() {
            set_path(&mut doc, &format!("platform.costs.{cost}"), toml::Value::Table(t)).map_err(|e| CalibrateError::Profile(e.to_string()))?;
        }
        let text = toml::to_string(&doc).map_err(|e| CalibrateError::Profile(e.to_string()))?;
        Ok(Scenario::parse(&text, &base.file, &base.name, base.dir.clone())?)
    }
}

/// How a path's latency depends on each primitive, through [`PATHS`] and [`MAPPING`]: the net
/// coefficient of the primitive in the path's sum (e.g. `guest_insn` cancels on a halted path:
/// the handler's instructions are inside the measured wake-up and are taken out of it again).
/// Every primitive the path reads is present, with 0 when it cancels.
pub fn dependence(path: &str) -> BTreeMap<&'static str, f64> {
    let mut out = BTreeMap::new();
    let Some((_, steps)) = PATHS.iter().find(|(p, _)| *p == path) else { return out };
    for (_, cost, n) in steps.iter() {
        if PATHS.iter().any(|(p, _)| p == cost) {
            for (k, v) in dependence(cost) {
                *out.entry(k).or_insert(0.0) += n * v;
            }
        }
        for (c, f, _) in MAPPING {
            if c != cost {
                continue;
            }
            match f {
                Source::One(a) => *out.entry(*a).or_insert(0.0) += n,
                Source::Lin(terms) => terms.iter().for_each(|(k, a)| *out.entry(*a).or_insert(0.0) += n * k),
                Source::Inside(a) => {
                    out.entry(*a).or_insert(0.0);
                }
            }
        }
    }
    out
}

/// The composition, for people: per path, its steps and where each cost comes from.
pub fn composition_text() -> String {
    let mut s = String::new();
    for (path, steps) in PATHS {
        s.push_str(&format!("{path} =\n"));
        for (step, cost, n) in steps.iter() {
            let cost_n = if *n != 1.0 { format!("{n} × {cost}") } else { cost.to_string() };
            let from = MAPPING.iter().find(|m| m.0 == *cost).map(|m| format!("primitive {}", m.1.describe()));
            let from =
                from.unwrap_or_else(|| if PATHS.iter().any(|(p, _)| p == cost) { "the path above".into() } else { "profile (free: fitted on training paths if chosen)".into() });
            s.push_str(&format!("    ⊕ {cost_n:<24} {step}  ← {from}\n"));
        }
    }
    s
}

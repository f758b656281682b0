//! A walk along one delivery path: the clock, the segments since the latency's reference point,
//! and the exits taken, with KVM's exit shape (round trip + handler, plus the reflection through
//! L1 for an L2 exit).
use crate::arch::x86::apic_timer::Level;
use crate::engine::{CostDist, SimRng, SimTime};

/// A VM exit reason the model distinguishes (each a `exits.*` counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// WRMSR IA32_TSC_DEADLINE (or TMICT in one-shot/periodic mode): arming the timer.
    TimerArm,
    /// x2APIC EOI write (no APICv, or a vector in the EOI-exit bitmap).
    Eoi,
    Hlt,
    /// x2APIC ICR write (IPI).
    IcrWrite,
    PreemptionTimer,
    /// A host interrupt (hrtimer expiry) while the vCPU runs.
    ExternalInterrupt,
}

pub const EXIT_KINDS: [ExitKind; 6] = [ExitKind::TimerArm, ExitKind::Eoi, ExitKind::Hlt, ExitKind::IcrWrite, ExitKind::PreemptionTimer, ExitKind::ExternalInterrupt];

impl ExitKind {
    pub fn key(self) -> &'static str {
        match self {
            ExitKind::TimerArm => "exits.timer_arm",
            ExitKind::Eoi => "exits.eoi",
            ExitKind::Hlt => "exits.hlt",
            ExitKind::IcrWrite => "exits.icr_write",
            ExitKind::PreemptionTimer => "exits.preemption_timer",
            ExitKind::ExternalInterrupt => "exits.external_interrupt",
        }
    }
    fn segs(self) -> (&'static str, &'static str) {
        match self {
            ExitKind::TimerArm => ("vmexit:timer-arm", "kvm:arm-timer"),
            ExitKind::Eoi => ("vmexit:eoi", "kvm:eoi"),
            ExitKind::Hlt => ("vmexit:hlt", "kvm:hlt"),
            ExitKind::IcrWrite => ("vmexit:icr-write", "kvm:icr-deliver"),
            ExitKind::PreemptionTimer => ("vmexit:preemption-timer", "kvm:preemption-timer"),
            ExitKind::ExternalInterrupt => ("vmexit:external-interrupt", "kvm:host-hrtimer-irq"),
        }
    }
    fn index(self) -> usize {
        EXIT_KINDS.iter().position(|k| *k == self).unwrap_or(0)
    }
}

/// Exit counts (L0 exits by reason, and how many of them were reflected to L1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exits {
    pub by_kind: [u64; EXIT_KINDS.len()],
    pub reflected: u64,
}

impl Exits {
    pub fn get(&self, k: ExitKind) -> u64 {
        self.by_kind[k.index()]
    }
    pub fn total(&self) -> u64 {
        self.by_kind.iter().sum()
    }
    pub fn add(&mut self, o: &Exits) {
        for (a, b) in self.by_kind.iter_mut().zip(o.by_kind) {
            *a += b;
        }
        self.reflected += o.reflected;
    }
}

pub struct Walk<'a> {
    pub rng: &'a mut SimRng,
    pub t: SimTime,
    pub segs: Vec<(&'static str, SimTime)>,
    pub exits: Exits,
    insn: &'a CostDist,
    roundtrip: &'a CostDist,
    reflect: &'a CostDist,
}

impl<'a> Walk<'a> {
    pub fn new(rng: &'a mut SimRng, insn: &'a CostDist, roundtrip: &'a CostDist, reflect: &'a CostDist) -> Self {
        Walk { rng, t: SimTime::ZERO, segs: Vec::with_capacity(24), exits: Exits::default(), insn, roundtrip, reflect }
    }

    pub fn step(&mut self, seg: &'static str, d: SimTime) {
        self.t += d;
        self.segs.push((seg, d));
    }

    pub fn cost(&mut self, seg: &'static str, c: &CostDist) {
        let d = c.sample(self.rng);
        self.step(seg, d);
    }

    /// `n` guest ring-0 instructions (one segment).
    pub fn insns(&mut self, seg: &'static str, n: u32) {
        let mut d = SimTime::ZERO;
        for _ in 0..n {
            d += self.insn.sample(self.rng);
        }
        self.step(seg, d);
    }

    /// A VM exit of a guest at `level`, handled by `handler` (L0 for L1, L1 for L2).
    pub fn exit(&mut self, kind: ExitKind, level: Level, handler: &CostDist) {
        self.exits.by_kind[kind.index()] += 1;
        let (exit_seg, handler_seg) = kind.segs();
        let rt = self.roundtrip;
        self.cost(exit_seg, rt);
        if level == Level::L2 {
            self.exits.reflected += 1;
            let r = self.reflect;
            self.cost("nested:reflect-via-l1", r);
        }
        self.cost(handler_seg, handler);
    }

    /// An exit forced on a running L1 guest by a host interrupt: its round trip is `forced`, not
    /// the instruction exit's round trip (issue 43 item 6: on a nested PVM host the two differ
    /// by tens of µs).
    pub fn forced_exit(&mut self, kind: ExitKind, forced: &CostDist, handler: &CostDist) {
        self.exits.by_kind[kind.index()] += 1;
        let (exit_seg, handler_seg) = kind.segs();
        self.cost(exit_seg, forced);
        self.cost(handler_seg, handler);
    }

    /// Start the latency window at `at`: drop earlier segments; if the clock is already past
    /// `at` (the guest was still busy), that overrun is the first segment.
    pub fn start_latency(&mut self, at: SimTime) {
        self.segs.clear();
        if self.t > at {
            self.segs.push(("guest-busy-past-reference", self.t - at));
        } else {
            self.t = at;
        }
    }
}

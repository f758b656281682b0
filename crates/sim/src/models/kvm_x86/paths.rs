//! The delivery paths, one sample at a time: timer (HLT or ring-3 busy, bench.S and cyclictest),
//! device (irqfd, KVM_SIGNAL_MSI, KVM_IRQ_LINE, level irqfd + resamplefd), IPI (one way and
//! round trip). Which mechanism serves the timer comes from `apic_timer::serve`; whether a halted
//! vCPU is caught by polling comes from `halt_poll::HaltPoll`; how a device interrupt or IPI
//! reaches a halted target comes from the posted-interrupt descriptor.
use crate::arch::x86::apic_timer::{serve, ApicTimer, Backend, HostTimer, Level, Lvtt, Owner};
use crate::arch::x86::apicv::Apicv;
use crate::arch::x86::posted_interrupt::{PiDesc, PostEffect, VcpuState};
use crate::engine::SimTime;
use crate::hyp::halt_poll::{HaltOutcome, HaltPoll};
use crate::hyp::lapic_timer_advance::TimerAdvance;

use super::config::{Prepared, Via};
use super::walk::{ExitKind, Walk};

/// Guest ring-0 instruction counts of crates/kvm/guest/bench.S (what is emulated one by one on a
/// nested PVM host). The timestamp is the ISR's `rdtsc`, after ISR_SAVE's four pushes.
pub mod guest {
    /// ISR_SAVE (4 pushes) + the rdtsc that takes the timestamp.
    pub const ISR_TO_STAMP: u32 = 5;
    /// timer_isr: shl, or, 10 bookkeeping instructions, add, mov, mov, shr, mov ecx (before wrmsr 0x6e0).
    pub const TIMER_STAMP_TO_ARM: u32 = 17;
    /// EOI_RESTORE_IRET before its wrmsr: xor, xor, mov ecx.
    pub const EOI_PREFIX: u32 = 3;
    /// After the EOI wrmsr: 4 pops + iretq, then the wait loop's `jmp` back to `hlt`.
    pub const EOI_TO_HLT: u32 = 6;
    /// device_isr after the rdtsc up to and including `mov [COUNT], rbx` (the host sees it).
    pub const DEVICE_STAMP_TO_COUNT: u32 = 8;
    /// ipi_main: rdtsc (send timestamp) → shl, or, mov, shr, mov edx, mov eax, mov ecx (before wrmsr 0x830).
    pub const IPI_SEND_TO_ICR: u32 = 7;
    /// ipi_target_isr after the rdtsc: shl, or, mov, shl, mov, xor, mov, mov (before the reply wrmsr).
    pub const IPI_TARGET_TO_REPLY: u32 = 8;
    /// Sender after the ICR write until it halts: cli, cmp, jne, sti.
    pub const IPI_WAIT_TO_HLT: u32 = 4;
    /// Sender between the reply timestamp and arming the pause: rest of ipi_reply_isr (shl, or,
    /// shl, mov, shr, inc, mov), its EOI (3 + wrmsr as one), 4 pops + iretq, sti, mov, cmp, jae,
    /// mov [FLAG], RDTSC64 (3), add, mov, shr, mov ecx.
    pub const IPI_REPLY_TO_ARM: u32 = 7 + 4 + 5 + 5 + 3 + 4;
    /// Sender after the pause timer: period_isr (3 pushes, mov, xor, xor, mov, wrmsr, 3 pops,
    /// iretq), jmp, cli, cmp, jne, sti, jmp, mov rbx, shl, rdtsc.
    pub const IPI_PAUSE_TO_SEND: u32 = 12 + 9;
}

/// Per-vCPU halt-polling state at L0 (and, for an L2 guest, L1's KVM polling for L2).
pub struct VcpuHalt {
    pub l0: HaltPoll,
    pub l1: HaltPoll,
    /// When the vCPU halted, and for L2 whether/when L1 itself halted (L1 blocked).
    halted_at: SimTime,
    l1_halted_at: Option<SimTime>,
    /// L0's timer advance for this (L1) vCPU's LAPIC timer (hyp::lapic_timer_advance). Off for
    /// an L2 guest: L0's and L1's advances on the nested path are not modelled.
    pub adv: TimerAdvance,
    /// Time spun in kvm_wait_lapic_expire (before the deadline, not latency).
    pub spun: SimTime,
}

impl VcpuHalt {
    pub fn new(p: &Prepared) -> Self {
        let adv = TimerAdvance::new(p.hyp.lapic_timer_advance && p.level == Level::L1, p.ghz);
        VcpuHalt { l0: HaltPoll::new(p.poll), l1: HaltPoll::new(p.poll), halted_at: SimTime::ZERO, l1_halted_at: None, adv, spun: SimTime::ZERO }
    }
}

impl Prepared {
    pub fn host_timer(&self) -> HostTimer {
        HostTimer { timer_virt: self.hyp.timer_virt, preemption_timer: self.hyp.preemption_timer }
    }

    fn timer(&self) -> ApicTimer {
        let mut t = ApicTimer::new(Lvtt { vector: 0xEC, masked: false, mode: self.wl.lvtt_mode });
        t.deadline = 1;
        t
    }

    fn apicv(&self) -> Apicv {
        Apicv { enabled: self.hyp.apicv, ..Default::default() }
    }

    /// `kvm_wait_lapic_expire` before the VM entry that injects the timer interrupt for
    /// `deadline`. The walk counts from the deadline (`start_latency`), but L0's host timer fired
    /// `h.adv.ns` earlier: the path so far is hidden up to the advance (KVM spins to the
    /// deadline if it is early), and only what exceeds the advance reaches the guest. The
    /// latency window is rewritten to that remainder (one segment), as the guest sees it.
    fn wait_lapic_expire(&self, w: &mut Walk, h: &mut VcpuHalt, deadline: SimTime) {
        if !h.adv.enabled() {
            return;
        }
        let early = SimTime::from_ns_f64(h.adv.ns);
        let real_now = w.t.saturating_sub(early);
        let wt = h.adv.wait(real_now, deadline);
        h.spun += wt.spun;
        let late = wt.enter_at.saturating_sub(deadline);
        w.segs.clear();
        w.segs.push(("host:timer-path-beyond-advance", late));
        w.t = deadline + late;
    }

    /// The guest arms its timer (the WRMSR of bench.S or the guest kernel's clockevent).
    pub fn arm(&self, w: &mut Walk) {
        let s = serve(&self.timer(), Owner::Running(self.level), self.host_timer());
        if s.arm_exits() {
            w.exit(ExitKind::TimerArm, self.level, &self.costs.handle_msr_tsc_deadline);
        } else {
            w.insns("guest:wrmsr-tsc-deadline (no exit)", 1);
        }
    }

    /// The guest's EOI of `vector`; `level_triggered` puts it in the EOI-exit bitmap.
    pub fn eoi(&self, w: &mut Walk, level_triggered: bool) {
        let mut a = self.apicv();
        if level_triggered {
            a.eoi_exit_bitmap.set(0x40);
        }
        if a.eoi_exits(0x40) {
            w.exit(ExitKind::Eoi, self.level, &self.costs.handle_eoi);
        } else {
            w.insns("guest:virtual-eoi", 1);
        }
    }

    /// The guest executes HLT: the exit, and for L2 L1's KVM arming its software timer for L2
    /// (an L0 exit unless L1 has the feature) and polling; if L1's poll would miss `wake_at`,
    /// L1 halts too.
    pub fn halt(&self, w: &mut Walk, h: &mut VcpuHalt, wake_at: SimTime) {
        w.exit(ExitKind::Hlt, self.level, &self.costs.handle_hlt);
        h.l1_halted_at = None;
        if self.level == Level::L1 {
            h.halted_at = w.t;
        } else {
            // Blocked L2 vCPU: L1's KVM serves L2's deadline with its own hrtimer (D.6 "vCPU
            // blocked"), i.e. L1 writes its own TSC deadline.
            let s1 = serve(&self.timer(), Owner::Running(Level::L1), self.host_timer());
            if s1.arm_exits() {
                w.exit(ExitKind::TimerArm, Level::L1, &self.costs.handle_msr_tsc_deadline);
            }
            h.halted_at = w.t;
            let after = wake_at.saturating_sub(w.t).ps() / 1000;
            if !h.l1.would_poll(after) {
                // L1 polls its window, then its vCPU halts at L0.
                w.t += SimTime::from_ns(h.l1.window_ns.min(after));
                w.exit(ExitKind::Hlt, Level::L1, &self.costs.handle_hlt);
                h.l1_halted_at = Some(w.t);
            }
        }
    }

    /// Wake a halted vCPU for an event that reaches KVM now: poll hit or blocked wake-up, VM
    /// entry with injection, guest interrupt entry. `via_timer`: the event is the vCPU's own
    /// timer (then the host hrtimer fires first; for L2, L1's timer).
    pub fn wake(&self, w: &mut Walk, h: &mut VcpuHalt, via_timer: bool, posted: Option<&mut PiDesc>) {
        let c = &self.costs;
        // The timer's deadline is where the latency window starts (`start_latency`).
        let deadline = w.t;
        let l0_halted = match (self.level, h.l1_halted_at) {
            (Level::L1, _) => Some(h.halted_at),
            (Level::L2, l1) => l1,
        };
        if self.level == Level::L2 {
            let after = w.t.saturating_sub(h.halted_at).ps() / 1000;
            h.l1.halt(after, true);
        }
        if let Some(at) = l0_halted {
            if via_timer {
                w.cost("host:hrtimer-expiry", &c.hrtimer_expiry);
            }
            let after = w.t.saturating_sub(at).ps() / 1000;
            let polled = h.l0.halt(after, true) == HaltOutcome::Polled;
            let state = if polled { VcpuState::InHost } else { VcpuState::Blocked };
            let effect = match posted {
                Some(pi) => {
                    let e = pi.post(0x40, state);
                    // KVM syncs PIR into the vIRR at the VM entry below.
                    *pi = PiDesc::default();
                    e
                }
                None if polled => PostEffect::KickToEntry,
                None => PostEffect::WakeupVector,
            };
            match effect {
                PostEffect::WakeupVector => w.cost("host:wake-blocked-vcpu", &c.block_wake),
                _ => w.cost("host:halt-poll-hit", &c.poll_wake),
            }
            if via_timer && self.level == Level::L1 {
                // A blocked vCPU's timer is KVM's software timer, injected by KVM, with or
                // without the feature (D.6): the timer advance applies.
                self.wait_lapic_expire(w, h, deadline);
            }
            w.cost("host:vmentry+inject", &c.vm_entry_inject);
        } else {
            // L2 with L1 still polling in guest mode: L1's own timer interrupt reaches L1 as
            // the feature (if L1 has it) or an exit serves it.
            self.timer_while_running(w, Level::L1);
        }
        if self.level == Level::L2 {
            w.cost("l1:hrtimer-callback", &c.hrtimer_expiry);
            match h.l1_halted_at {
                Some(_) => w.cost("l1:wake-l2-vcpu", &c.block_wake),
                None => w.cost("l1:halt-poll-hit", &c.poll_wake),
            }
            w.cost("nested:l1-vmresume-to-l2", &c.nested_reflect);
            w.cost("host:vmentry+inject", &c.vm_entry_inject);
        }
        w.cost("guest:irq-entry", &c.guest_irq_entry);
    }

    /// The timer of a guest at `level` expires while that guest runs (ring-3 busy loop, or L1
    /// polling for its L2).
    pub fn timer_while_running(&self, w: &mut Walk, level: Level) {
        let c = &self.costs;
        let s = serve(&self.timer(), Owner::Running(level), self.host_timer());
        match (s.backend, level) {
            (Backend::TimerVirt, _) => w.cost("hw:timer-virt-delivery", &c.timer_virt_delivery),
            (Backend::PreemptionTimer, Level::L1) => w.exit(ExitKind::PreemptionTimer, Level::L1, &c.handle_preemption_timer),
            (Backend::Hrtimer, Level::L1) => {
                // The host's hrtimer interrupt arrives on the CPU where the vCPU runs: it forces
                // the vCPU out of the guest (`forced_exit_running`: on this nested host the PVM
                // switch out of ring 3 and back in with the interrupt injected, measured by the
                // kick primitive; on VMX an external-interrupt exit, the exit round trip), then
                // apic_timer_expired runs at its lateness (`handle_host_timer_irq`).
                w.forced_exit(ExitKind::ExternalInterrupt, &c.forced_exit_running, &c.handle_host_timer_irq)
            }
            (_, Level::L2) => {
                // L1's KVM emulates L2's timer with a timer of its own, which L0 must serve
                // while L2 runs (D.6 "L2 running while L1's timer is armed").
                let s1 = serve(&self.timer(), Owner::L1UnderL2, self.host_timer());
                match s1.backend {
                    Backend::PreemptionTimer => w.exit(ExitKind::PreemptionTimer, Level::L2, &c.handle_preemption_timer),
                    _ => w.exit(ExitKind::ExternalInterrupt, Level::L2, &c.handle_host_timer_irq),
                }
            }
        }
    }

    /// One sample of the timer microbenchmark (bench.S timer_main/timer_isr): from the previous
    /// timestamp to this one; returns the latency (timestamp − deadline).
    pub fn timer_sample(&self, w: &mut Walk, h: &mut VcpuHalt, busy: bool) -> SimTime {
        let period = SimTime::from_ns_f64(self.wl.period_us * 1000.0);
        let deadline = w.t + period;
        w.insns("guest:isr-bookkeeping", guest::TIMER_STAMP_TO_ARM);
        self.arm(w);
        w.insns("guest:eoi-prefix", guest::EOI_PREFIX);
        self.eoi(w, false);
        if busy {
            w.insns("guest:iret-to-ring3", guest::EOI_TO_HLT - 1);
            w.start_latency(deadline);
            self.timer_while_running(w, self.level);
            if self.level == Level::L1 && h.adv.enabled() && serve(&self.timer(), Owner::Running(Level::L1), self.host_timer()).backend != Backend::TimerVirt {
                // The preemption timer / hrtimer fired the advance early; KVM injects and
                // spins to the deadline before the entry.
                self.wait_lapic_expire(w, h, deadline);
                w.cost("host:vmentry+inject", &self.costs.vm_entry_inject);
            }
            w.cost("guest:irq-entry", &self.costs.guest_irq_entry);
        } else {
            w.insns("guest:iret+jmp-to-hlt", guest::EOI_TO_HLT);
            self.halt(w, h, deadline);
            w.start_latency(deadline);
            self.wake(w, h, true, None);
        }
        w.insns("guest:isr-save+rdtsc", guest::ISR_TO_STAMP);
        w.t - deadline
    }

    /// One cyclictest wake-up of a thread with interval `interval`: the guest kernel's timer
    /// interrupt re-arms the next clock event (on the path), EOIs, wakes the FIFO thread.
    pub fn cyclictest_sample(&self, w: &mut Walk, h: &mut VcpuHalt, expected: SimTime) -> SimTime {
        let c = &self.costs;
        // The thread went to sleep: clock_nanosleep programs the deadline, the vCPU idles.
        self.arm(w);
        self.halt(w, h, expected);
        w.start_latency(expected);
        self.wake(w, h, true, None);
        w.cost("guest:hrtimer-interrupt", &c.guest_timer_irq);
        self.arm(w);
        self.eoi(w, false);
        if self.wl.nohz_idle {
            // The idle loop leaves: tick_nohz_idle_exit() restarts the tick and programs the
            // clockevent again (a second deadline write) before schedule_idle() runs the thread.
            self.arm(w);
        }
        w.cost("guest:wake+switch-to-fifo-thread", &c.guest_wakeup_switch);
        w.t - expected
    }

    /// One device interrupt triggered by the host at `trigger`; returns (latency, the time the
    /// host may trigger again before its period: when it saw the count, or the resample).
    pub fn device_sample(&self, w: &mut Walk, h: &mut VcpuHalt, pi: &mut PiDesc, via: Via, trigger: SimTime) -> (SimTime, SimTime) {
        let c = &self.costs;
        w.start_latency(trigger);
        match via {
            Via::Irqfd => w.cost("host:eventfd-write+irqfd-msi", &c.eventfd_signal),
            Via::Msi => w.cost("host:KVM_SIGNAL_MSI", &c.ioctl_signal_msi),
            Via::Line => {
                w.cost("host:KVM_IRQ_LINE", &c.ioctl_irq_line);
                w.cost("kvm:ioapic-route", &c.ioapic_route);
            }
            Via::Level => {
                w.cost("host:eventfd-write+irqfd-level", &c.eventfd_signal);
                // virt/kvm/eventfd.c irqfd_wakeup: kvm_arch_set_irq_inatomic handles only MSI
                // (and Hyper-V SINT) routes (arch/x86/kvm/irq_comm.c); an IOAPIC route returns
                // -EWOULDBLOCK and the injection is deferred: schedule_work(&irqfd->inject) →
                // irqfd_inject in a kworker, which must be woken and scheduled first.
                w.cost("kvm:irqfd_inject-kworker", &c.irqfd_inject_work);
                w.cost("kvm:ioapic-route", &c.ioapic_route);
            }
            Via::VfioMsi | Via::VfioIntx => unreachable!("config::prepare refuses the VFIO paths for this model"),
        }
        let posted = if self.hyp.posted_interrupts { Some(pi) } else { None };
        self.wake(w, h, false, posted);
        w.insns("guest:isr-save+rdtsc", guest::ISR_TO_STAMP);
        let stamp = w.t;
        w.insns("guest:isr-bookkeeping", guest::DEVICE_STAMP_TO_COUNT);
        let mut host_free = w.t;
        w.insns("guest:eoi-prefix", guest::EOI_PREFIX);
        self.eoi(w, via == Via::Level);
        if via == Via::Level {
            w.cost("kvm:ioapic-eoi+resampler", &c.ioapic_eoi_resample);
            let resampled = w.t + c.resamplefd_to_user.sample(w.rng);
            host_free = host_free.max(resampled);
        }
        w.insns("guest:iret+jmp-to-hlt", guest::EOI_TO_HLT);
        self.halt(w, h, SimTime::MAX);
        (stamp - trigger, host_free)
    }

    /// One IPI sample (bench.S ipi_main): vCPU 0 writes the ICR to vCPU 1, which replies.
    /// Returns (one way, round trip, how many of the walk's segments are the one-way path);
    /// `w.t` ends at the next send timestamp, `w.segs` holds the round trip.
    pub fn ipi_sample(&self, w: &mut Walk, h: &mut [VcpuHalt; 2], pi: &mut [PiDesc; 2]) -> (SimTime, SimTime, usize) {
        let c = &self.costs;
        let send = w.t;
        w.start_latency(send);
        w.insns("guest:rdtsc-to-icr", guest::IPI_SEND_TO_ICR);
        w.exit(ExitKind::IcrWrite, self.level, &c.handle_icr_write);
        let icr_done = w.t;
        // Target side. The two vCPUs run on two host CPUs: the kick that wakes the target is a
        // wake-up on another CPU (kvm_vcpu_kick → kvm_vcpu_wake_up → try_to_wake_up →
        // ttwu_queue → smp_send_reschedule: an IPI between host CPUs), charged on top of the wake.
        let [h0, h1] = h;
        let [p0, p1] = pi;
        w.cost("host:cross-cpu-wake", &c.cross_cpu_wake);
        self.wake(w, h1, false, self.hyp.posted_interrupts.then_some(p1));
        w.insns("guest:isr-save+rdtsc", guest::ISR_TO_STAMP);
        let one_way = w.t - send;
        let n_one = w.segs.len();
        w.insns("guest:isr-bookkeeping", guest::IPI_TARGET_TO_REPLY);
        w.exit(ExitKind::IcrWrite, self.level, &c.handle_icr_write);
        let reply_sent = w.t;
        let seg_reply = w.segs.len();
        // The target finishes and halts (in parallel with the sender; its segments are dropped).
        w.insns("target:eoi-prefix", guest::EOI_PREFIX);
        self.eoi(w, false);
        w.insns("target:iret+jmp-to-hlt", guest::EOI_TO_HLT);
        self.halt(w, h1, SimTime::MAX);
        // The sender, after its ICR write, halts unless the reply is already pending.
        w.t = icr_done;
        w.insns("sender:wait-loop", guest::IPI_WAIT_TO_HLT);
        let halts = w.t < reply_sent;
        if halts {
            self.halt(w, h0, reply_sent);
        }
        w.segs.truncate(seg_reply);
        if w.t > reply_sent {
            w.segs.push(("sender:busy-past-reply", w.t - reply_sent));
        } else {
            w.t = reply_sent;
        }
        if halts {
            w.cost("host:cross-cpu-wake", &c.cross_cpu_wake);
            self.wake(w, h0, false, self.hyp.posted_interrupts.then_some(p0));
        } else {
            w.cost("guest:irq-entry", &c.guest_irq_entry);
        }
        w.insns("guest:isr-save+rdtsc", guest::ISR_TO_STAMP);
        let round_trip = w.t - send;
        // The pause between samples: arm the TSC deadline one period ahead, halt, wake.
        let segs = w.segs.len();
        w.insns("sender:reply-isr+loop", guest::IPI_REPLY_TO_ARM);
        let deadline = w.t + SimTime::from_ns_f64(self.wl.period_us * 1000.0);
        self.arm(w);
        w.insns("sender:wait-loop", guest::IPI_WAIT_TO_HLT);
        self.halt(w, h0, deadline);
        w.t = w.t.max(deadline);
        self.wake(w, h0, true, None);
        w.insns("sender:pause-isr+loop", guest::IPI_PAUSE_TO_SEND);
        self.eoi(w, false);
        w.segs.truncate(segs);
        (one_way, round_trip, n_one)
    }
}

//! KVM's LAPIC timer advance: arm the host timer early and spin until the guest's deadline just
//! before the VM entry that injects the timer interrupt, so the interrupt reaches the guest as
//! close to its deadline as possible. Follows Linux arch/x86/kvm/lapic.c (v6.x):
//!
//! - `lapic_timer_advance` (module parameter, bool, default true): the advance is per vCPU,
//!   starts at `LAPIC_TIMER_ADVANCE_NS_INIT` (1000 ns) and is tuned on every wait.
//! - The host timer fires `timer_advance_ns` before the deadline: `start_sw_tscdeadline`
//!   (hrtimer), and `vmx_set_hv_timer` subtracts the advance from the preemption-timer delta.
//! - `kvm_wait_lapic_expire` → `__kvm_wait_lapic_expire`, called before VM entry only when KVM
//!   injected the timer interrupt (`lapic_timer_int_injected`): read the guest TSC, tune the
//!   advance with the error (`adjust_lapic_timer_advance`), then busy-wait (`__wait_lapic_expire`)
//!   if still early.
//! - `adjust_lapic_timer_advance`: ignore an error under `LAPIC_TIMER_ADVANCE_ADJUST_MIN` (100
//!   cycles) or over `LAPIC_TIMER_ADVANCE_ADJUST_MAX` (10000 cycles, "large random spikes");
//!   otherwise move the advance by 1/`LAPIC_TIMER_ADVANCE_ADJUST_STEP` (8) of the error; above
//!   `LAPIC_TIMER_ADVANCE_NS_MAX` (5000 ns) reset it to the initial 1000 ns.
//!
//! A consequence the S5 model shows: a path from the host timer to the wait that is longer than
//! 1000 ns + 10000 cycles is never tuned for (the error is dropped as a spike), so the advance
//! stays at 1000 ns and the guest sees the rest. A hardware-delivered timer (APIC-timer
//! virtualization) is not injected by KVM, so no wait and no tuning happen on that path.
//!
//! Hand-written: a few lines of integer arithmetic over the engine's time type, kept with the
//! kernel's constants so a reader can compare them line by line.
use crate::engine::SimTime;

/// `LAPIC_TIMER_ADVANCE_ADJUST_MIN` (clock cycles).
pub const ADJUST_MIN_CYCLES: f64 = 100.0;
/// `LAPIC_TIMER_ADVANCE_ADJUST_MAX` (clock cycles).
pub const ADJUST_MAX_CYCLES: f64 = 10_000.0;
/// `LAPIC_TIMER_ADVANCE_NS_INIT`.
pub const NS_INIT: f64 = 1000.0;
/// `LAPIC_TIMER_ADVANCE_NS_MAX`.
pub const NS_MAX: f64 = 5000.0;
/// `LAPIC_TIMER_ADVANCE_ADJUST_STEP`.
pub const ADJUST_STEP: f64 = 8.0;

/// One vCPU's timer advance (`kvm_timer.timer_advance_ns`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimerAdvance {
    /// 0 when `lapic_timer_advance` is off.
    pub ns: f64,
    enabled: bool,
    /// TSC frequency (cycles per ns) to turn the error into cycles and back.
    ghz: f64,
}

/// What `__kvm_wait_lapic_expire` did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wait {
    /// When the VM entry may proceed: the deadline if the path was early, else `now`.
    pub enter_at: SimTime,
    /// Time spun in `__wait_lapic_expire`.
    pub spun: SimTime,
}

impl TimerAdvance {
    /// KVM's default (`lapic_timer_advance = true`) or off, on a TSC of `ghz`.
    pub fn new(enabled: bool, ghz: f64) -> Self {
        TimerAdvance { ns: if enabled { NS_INIT } else { 0.0 }, enabled, ghz }
    }

    /// `lapic_timer_advance` is on for this vCPU.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// When the host timer for `deadline` fires.
    pub fn fire_at(&self, deadline: SimTime) -> SimTime {
        deadline.saturating_sub(SimTime::from_ns_f64(self.ns))
    }

    /// `__kvm_wait_lapic_expire` at `now` for `deadline`: tune, then spin if early.
    pub fn wait(&mut self, now: SimTime, deadline: SimTime) -> Wait {
        if !self.enabled {
            return Wait { enter_at: now, spun: SimTime::ZERO };
        }
        let delta_ns = now.ns_f64() - deadline.ns_f64();
        self.adjust(delta_ns);
        if now < deadline {
            Wait { enter_at: deadline, spun: deadline - now }
        } else {
            Wait { enter_at: now, spun: SimTime::ZERO }
        }
    }

    /// `adjust_lapic_timer_advance` with the error `delta_ns` (> 0: late).
    fn adjust(&mut self, delta_ns: f64) {
        let cycles = delta_ns.abs() * self.ghz;
        if !(ADJUST_MIN_CYCLES..=ADJUST_MAX_CYCLES).contains(&cycles) {
            return;
        }
        // The kernel converts cycles to ns with integer division; the model keeps fractions.
        let step = delta_ns.abs() / ADJUST_STEP;
        self.ns = if delta_ns < 0.0 { (self.ns - step).max(0.0) } else { self.ns + step };
        if self.ns > NS_MAX {
            self.ns = NS_INIT;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(v: u64) -> SimTime {
        SimTime::from_ns(v)
    }

    #[test]
    fn fires_early_and_spins_to_the_deadline() {
        let mut a = TimerAdvance::new(true, 2.0);
        assert_eq!(a.fire_at(ns(10_000)), ns(9_000), "1000 ns before the deadline");
        // The path took 600 ns: 400 ns early, spin to the deadline.
        let w = a.wait(ns(9_600), ns(10_000));
        assert_eq!(w, Wait { enter_at: ns(10_000), spun: ns(400) });
        assert!((a.ns - (1000.0 - 400.0 / 8.0)).abs() < 1e-9, "early by 400 ns: advance shrinks by 50 ns, got {}", a.ns);
    }

    #[test]
    fn converges_on_a_steady_path_shorter_than_the_limit() {
        let mut a = TimerAdvance::new(true, 2.0);
        let path = 2500.0; // ns from the host timer to the wait
        let mut deadline = ns(1_000_000);
        for _ in 0..200 {
            let fired = a.fire_at(deadline);
            a.wait(fired + SimTime::from_ns_f64(path), deadline);
            deadline += ns(100_000);
        }
        // Stops within ADJUST_MIN (100 cycles = 50 ns at 2 GHz) of the path.
        assert!((a.ns - path).abs() <= 50.0 + 1.0, "advance {}", a.ns);
    }

    #[test]
    fn a_path_beyond_the_spike_limit_is_never_tuned_for() {
        // 1000 ns + 10000 cycles at 2 GHz = 6000 ns: a 7000 ns path is late by 6000 ns, a spike.
        let mut a = TimerAdvance::new(true, 2.0);
        for _ in 0..50 {
            let d = ns(1_000_000);
            let w = a.wait(a.fire_at(d) + ns(7_000), d);
            assert_eq!(w.spun, SimTime::ZERO);
        }
        assert_eq!(a.ns, NS_INIT);
    }

    #[test]
    fn above_the_maximum_it_resets_to_the_initial_advance() {
        let mut a = TimerAdvance::new(true, 2.0);
        a.ns = 4900.0;
        a.wait(ns(10_000 + 1_600), ns(10_000)); // late by 1600 ns: +200 → 5100 > 5000
        assert_eq!(a.ns, NS_INIT);
    }

    #[test]
    fn off_means_no_advance_and_no_wait() {
        let mut a = TimerAdvance::new(false, 2.0);
        assert_eq!(a.fire_at(ns(5000)), ns(5000));
        assert_eq!(a.wait(ns(4000), ns(5000)), Wait { enter_at: ns(4000), spun: SimTime::ZERO });
        assert_eq!(a.ns, 0.0);
    }
}

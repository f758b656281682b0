//! KVM host-side halt polling: the per-vCPU poll window and its grow/shrink rule.
//!
//! When a vCPU halts, KVM polls for a wake-up event for `vcpu->halt_poll_ns` before it blocks
//! (`kvm_vcpu_halt()`, virt/kvm/kvm_main.c; Documentation/virt/kvm/halt-polling.rst). After the
//! halt it adapts the window from the total halt time `halt_ns` (poll + block) against the
//! maximum `max` (module parameter `halt_poll_ns`, or the VM's KVM_CAP_HALT_POLL value):
//! - an invalid wake-up (not a guest event) shrinks;
//! - `halt_ns <= window`: unchanged (the poll caught it);
//! - `window > 0 && halt_ns > max`: shrink (a long block: polling was wasted);
//! - `window < max && halt_ns < max`: grow (a short block the window just missed);
//! - `max == 0`: window 0.
//!
//! grow: `window *= grow`, raised to `grow_start` if below, capped at `max`; shrink: `window /=
//! shrink`, or 0 when `shrink == 0` (`grow_halt_poll_ns()` / `shrink_halt_poll_ns()`). Defaults
//! differ by kernel version: see [`KernelDefaults`]. Time is in ns; nothing here keeps a clock.

/// The module parameters of one kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaltPollParams {
    /// Maximum window (`halt_poll_ns`, or KVM_CAP_HALT_POLL for the VM), ns. 0 disables polling.
    pub max_ns: u64,
    /// `halt_poll_ns_grow`: multiplier; 0 never grows.
    pub grow: u32,
    /// `halt_poll_ns_grow_start`: the first non-zero window, ns.
    pub grow_start_ns: u64,
    /// `halt_poll_ns_shrink`: divisor; 0 resets the window to 0.
    pub shrink: u32,
    /// Before v5.1 a window below `grow_start` was multiplied, not raised (fixed by dee339b5c1da).
    pub legacy_grow: bool,
}

/// Upstream defaults for x86, by the change that set them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelDefaults {
    /// v4.3, aca6ff29c406 "KVM: dynamic halt-polling": `halt_poll_ns` 500000 (all arches),
    /// grow 2, shrink 0, a hard-coded 10 µs first window (`val == 0 → 10000, else val *= grow`).
    Linux4_3,
    /// x86 in the v4.x kernels after the per-arch default (the S2 era, 4.17/4.18): kvm_main.c
    /// `halt_poll_ns = KVM_HALT_POLL_NS_DEFAULT`, grow 2, shrink 0, no `grow_start` parameter (a
    /// window of 0 grows to a hard-coded 10 µs, otherwise it is multiplied); x86's
    /// KVM_HALT_POLL_NS_DEFAULT is 200000 since 14ebda33 "KVM: x86: reduce default value of
    /// halt_poll_ns parameter" (v4.6-rc, 2016) and still in the Linux 5.0 header
    /// (arch/x86/include/asm/kvm_host.h; the 4.17 file itself not re-read).
    Linux4_17X86,
    /// v5.1, 49113d360bde / dee339b5c1da: `halt_poll_ns_grow_start` = 10000 becomes a parameter
    /// and the floor of every grow; `halt_poll_ns` = KVM_HALT_POLL_NS_DEFAULT, 200000 on x86
    /// (arch/x86/include/asm/kvm_host.h [value not re-read]); grow 2; shrink 0.
    Linux5_1,
    /// aeb1b22a3ac8 "KVM: Enable halt polling shrink parameter by default" (kvm-x86 tree, 2023;
    /// first release not re-read): `halt_poll_ns_shrink` = 2, otherwise as 5.1.
    ShrinkTwo,
}

impl KernelDefaults {
    pub fn params(self) -> HaltPollParams {
        match self {
            KernelDefaults::Linux4_3 => HaltPollParams { max_ns: 500_000, grow: 2, grow_start_ns: 10_000, shrink: 0, legacy_grow: true },
            KernelDefaults::Linux4_17X86 => HaltPollParams { max_ns: 200_000, grow: 2, grow_start_ns: 10_000, shrink: 0, legacy_grow: true },
            KernelDefaults::Linux5_1 => HaltPollParams { max_ns: 200_000, grow: 2, grow_start_ns: 10_000, shrink: 0, legacy_grow: false },
            KernelDefaults::ShrinkTwo => HaltPollParams { max_ns: 200_000, grow: 2, grow_start_ns: 10_000, shrink: 2, legacy_grow: false },
        }
    }
}

/// What one halt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HaltOutcome {
    /// The wake-up arrived while polling (`halt_poll_success`): no block, no scheduler.
    Polled,
    /// The window (possibly 0) ran out; the vCPU blocked after polling `polled_ns`.
    Blocked { polled_ns: u64 },
}

/// One vCPU's halt-polling state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaltPoll {
    pub params: HaltPollParams,
    /// `vcpu->halt_poll_ns`.
    pub window_ns: u64,
    pub polled: u64,
    pub blocked: u64,
    pub grows: u64,
    pub shrinks: u64,
}

impl HaltPoll {
    /// A vCPU starts with a zero window (kvm_vcpu_init).
    pub fn new(params: HaltPollParams) -> Self {
        HaltPoll { params, window_ns: 0, polled: 0, blocked: 0, grows: 0, shrinks: 0 }
    }

    /// Would a halt that begins now and whose wake-up comes `wake_after_ns` later be caught by
    /// the poll? (Read-only; [`HaltPoll::halt`] also applies the update.)
    pub fn would_poll(&self, wake_after_ns: u64) -> bool {
        self.params.max_ns > 0 && self.window_ns > 0 && wake_after_ns <= self.window_ns
    }

    /// A halt whose wake-up event arrives `wake_after_ns` after it begins; `valid` is false for
    /// wake-ups that are not guest events (signals, spurious). Applies KVM's update rule.
    pub fn halt(&mut self, wake_after_ns: u64, valid: bool) -> HaltOutcome {
        let outcome = if self.would_poll(wake_after_ns) {
            self.polled += 1;
            HaltOutcome::Polled
        } else {
            self.blocked += 1;
            HaltOutcome::Blocked { polled_ns: if self.params.max_ns > 0 { self.window_ns } else { 0 } }
        };
        let halt_ns = wake_after_ns;
        let max = self.params.max_ns;
        if !valid {
            self.shrink();
        } else if max == 0 {
            self.window_ns = 0;
        } else if halt_ns <= self.window_ns {
        } else if self.window_ns > 0 && halt_ns > max {
            self.shrink();
        } else if self.window_ns < max && halt_ns < max {
            self.grow();
        }
        outcome
    }

    fn grow(&mut self) {
        let p = self.params;
        if p.grow == 0 {
            return;
        }
        let mut v = if p.legacy_grow && self.window_ns == 0 { p.grow_start_ns } else { self.window_ns.saturating_mul(p.grow as u64) };
        if !p.legacy_grow && v < p.grow_start_ns {
            v = p.grow_start_ns;
        }
        self.window_ns = v.min(p.max_ns);
        self.grows += 1;
    }

    fn shrink(&mut self) {
        self.window_ns = match self.params.shrink {
            0 => 0,
            s => self.window_ns / s as u64,
        };
        self.shrinks += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_from_grow_start_doubling_to_the_cap() {
        let mut h = HaltPoll::new(KernelDefaults::Linux5_1.params());
        // 180 µs halts the window keeps missing: 0 → 10 → 20 → 40 → 80 → 160 → 200 µs (cap).
        let mut seen = Vec::new();
        for _ in 0..6 {
            assert!(matches!(h.halt(180_000, true), HaltOutcome::Blocked { .. }));
            seen.push(h.window_ns);
        }
        assert_eq!(seen, vec![10_000, 20_000, 40_000, 80_000, 160_000, 200_000]);
        // Now the window covers 180 µs: polled, unchanged.
        assert_eq!(h.halt(180_000, true), HaltOutcome::Polled);
        assert_eq!(h.window_ns, 200_000);
        assert_eq!((h.polled, h.blocked, h.grows), (1, 6, 6));
    }

    #[test]
    fn long_block_resets_with_shrink_zero_and_halves_with_shrink_two() {
        let mut h = HaltPoll::new(KernelDefaults::Linux5_1.params());
        h.window_ns = 80_000;
        assert_eq!(h.halt(1_000_000, true), HaltOutcome::Blocked { polled_ns: 80_000 });
        assert_eq!(h.window_ns, 0, "shrink 0 resets");
        // With a zero window a long block changes nothing (no grow: halt_ns >= max).
        h.halt(1_000_000, true);
        assert_eq!(h.window_ns, 0);
        let mut h = HaltPoll::new(KernelDefaults::ShrinkTwo.params());
        h.window_ns = 80_000;
        h.halt(1_000_000, true);
        assert_eq!(h.window_ns, 40_000);
        h.halt(10, false);
        assert_eq!(h.window_ns, 20_000, "an invalid wake-up shrinks even when polled");
    }

    #[test]
    fn legacy_grow_multiplies_small_windows() {
        let mut p = KernelDefaults::Linux4_3.params();
        assert_eq!(p.max_ns, 500_000);
        let mut h = HaltPoll::new(p);
        h.halt(300_000, true);
        assert_eq!(h.window_ns, 10_000);
        p.legacy_grow = false;
        p.grow_start_ns = 50_000;
        let mut a = HaltPoll::new(p);
        a.window_ns = 1_000;
        a.halt(300_000, true);
        assert_eq!(a.window_ns, 50_000, "5.1+: raised to grow_start");
        let mut b = HaltPoll::new(KernelDefaults::Linux4_3.params());
        b.window_ns = 1_000;
        b.halt(300_000, true);
        assert_eq!(b.window_ns, 2_000, "4.3: multiplied");
    }

    #[test]
    fn zero_max_disables_and_grow_zero_never_grows() {
        let mut h = HaltPoll::new(HaltPollParams { max_ns: 0, ..KernelDefaults::Linux5_1.params() });
        h.window_ns = 5_000;
        assert_eq!(h.halt(1_000, true), HaltOutcome::Blocked { polled_ns: 0 });
        assert_eq!(h.window_ns, 0);
        let mut g = HaltPoll::new(HaltPollParams { grow: 0, ..KernelDefaults::Linux5_1.params() });
        g.halt(1_000, true);
        assert_eq!(g.window_ns, 0);
    }
}

//! Masked windows: stretches during which a pCPU runs hypervisor code with interrupts masked, so
//! a physical interrupt routed to that pCPU is taken only when the window ends.
//!
//! Why it matters for S1 (the GICv4 direct-LPI RFC for Xen on Arm, xen-devel, Feb 2026): Xen
//! routes every host LPI to pCPU 0 (xen/arch/arm/gic-v3-its.c, `gicv3_its_map_host_events`,
//! Xen 4.17–4.20: "For now we map every host LPI to host CPU 0"), so on the software path
//! (`gicv3_do_LPI` → `vgic_vcpu_inject_lpi` → `vcpu_kick`, xen/arch/arm/gic-v3-lpi.c and
//! xen/arch/arm/domain.c) *every* device completion of *every* fio job first waits for whatever
//! pCPU 0 is doing with interrupts masked. A direct vLPI, or its doorbell, is raised at the
//! redistributor of the pCPU the vPE was last scheduled on, never pCPU 0 unless the vCPU lives
//! there, so direct injection takes those windows off the path. dom0's vCPU 0 lives on pCPU 0
//! and its own activity (timer ticks trapped and injected by Xen's `vtimer_interrupt`, the
//! schedule softirq around its blocks and wake-ups, hypercalls) is what opens the windows.
//!
//! What is mechanism and what is a number: the mechanism (an interrupt arriving inside a window
//! waits for the window's end; windows from several sources on one pCPU queue behind each other)
//! is here and tested. The arrivals are either periodic (a tick: the rate is a configuration
//! fact, e.g. dom0's `CONFIG_HZ`) or Poisson (rare long stalls: rate and length are *not* given
//! by any source; the S1 scenario fits at most the rate, see docs/xen-gicv4-fio.md). Window
//! lengths are the timed model's (`models/` charges them from the platform profile).
//!
//! This is hand-written rather than a crate because it is a dozen lines of arithmetic over the
//! engine's own time and RNG types.
use crate::engine::{SimRng, SimTime};

/// A parameter of a window source out of its physical range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MaskError {
    #[error("`{key}`: expected {expected}, got {value}")]
    OutOfRange { key: String, expected: &'static str, value: f64 },
}

/// When windows of one source open.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// Every `period`, first at `period` (a tick).
    Periodic { period: SimTime },
    /// Exponential gaps with mean `mean_gap` (rare stalls nobody schedules).
    Poisson { mean_gap: SimTime },
}

impl Arrivals {
    /// A tick at `hz` (0 = none). `key` names the parameter in errors.
    pub fn periodic_hz(key: &str, hz: f64) -> Result<Option<Arrivals>, MaskError> {
        check(key, hz, "a rate in Hz, 0 (none) to 1e6", |v| (0.0..=1e6).contains(&v))?;
        Ok((hz > 0.0).then(|| Arrivals::Periodic { period: SimTime::from_ns_f64(1e9 / hz) }))
    }

    /// Poisson arrivals at `hz` per second (0 = none).
    pub fn poisson_hz(key: &str, hz: f64) -> Result<Option<Arrivals>, MaskError> {
        check(key, hz, "a rate in Hz, 0 (none) to 1e6", |v| (0.0..=1e6).contains(&v))?;
        Ok((hz > 0.0).then(|| Arrivals::Poisson { mean_gap: SimTime::from_ns_f64(1e9 / hz) }))
    }

    fn gap(&self, rng: &mut SimRng) -> SimTime {
        match self {
            Arrivals::Periodic { period } => *period,
            Arrivals::Poisson { mean_gap } => SimTime::from_ns_f64(rng.exponential(mean_gap.ns_f64()).max(1.0)),
        }
    }
}

/// Validate a window length in µs (finite, 0 ..= 1 s).
pub fn length_us(key: &str, us: f64) -> Result<SimTime, MaskError> {
    check(key, us, "a length in µs, 0 to 1e6", |v| (0.0..=1e6).contains(&v))?;
    Ok(SimTime::from_ns_f64(us * 1000.0))
}

fn check(key: &str, v: f64, expected: &'static str, ok: impl Fn(f64) -> bool) -> Result<(), MaskError> {
    if v.is_finite() && ok(v) {
        Ok(())
    } else {
        Err(MaskError::OutOfRange { key: key.to_string(), expected, value: v })
    }
}

/// One source of windows on a pCPU (its lengths are the timed model's: [`MaskedWindows::open`]).
#[derive(Debug, Clone)]
pub struct WindowSource {
    pub name: &'static str,
    pub arrivals: Arrivals,
}

/// The window sources of one pCPU and when each opens next. Each source draws from its own RNG
/// stream so adding a source does not move another's windows.
pub struct MaskedWindows {
    sources: Vec<(WindowSource, SimTime, SimRng)>,
    /// End of the last window opened: a window opening before it queues behind it.
    busy_until: SimTime,
}

impl MaskedWindows {
    /// `rngs[i]` drives source `i` (arrivals and lengths).
    pub fn new(sources: Vec<WindowSource>, rngs: Vec<SimRng>, start: SimTime) -> Self {
        assert_eq!(sources.len(), rngs.len());
        let sources = sources
            .into_iter()
            .zip(rngs)
            .map(|(s, mut rng)| {
                let first = start + s.arrivals.gap(&mut rng);
                (s, first, rng)
            })
            .collect();
        MaskedWindows { sources, busy_until: SimTime::ZERO }
    }

    /// The next source to open a window, and when.
    pub fn next(&self) -> Option<(usize, SimTime)> {
        self.sources.iter().enumerate().map(|(i, s)| (i, s.1)).min_by_key(|&(i, t)| (t, i))
    }

    /// Open source `i`'s window of length `len` (due at its next time); returns its start —
    /// later than due when an earlier window is still open — and schedules the source's next.
    pub fn open(&mut self, i: usize, len: SimTime) -> SimTime {
        let (src, due, rng) = &mut self.sources[i];
        let start = (*due).max(self.busy_until);
        *due += src.arrivals.gap(rng);
        self.busy_until = start + len;
        start
    }

    /// When source `i` opens its next window.
    pub fn due(&self, i: usize) -> SimTime {
        self.sources[i].1
    }

    /// Number of sources.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    pub fn name(&self, i: usize) -> &'static str {
        self.sources[i].0.name
    }
}

/// When an interrupt arriving at `at` is taken on a pCPU whose window is `[start, start + len)`.
pub fn taken_at(at: SimTime, start: SimTime, len: SimTime) -> SimTime {
    if at >= start && at < start + len {
        start + len
    } else {
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    fn us(v: u64) -> SimTime {
        SimTime::from_us(v)
    }

    #[test]
    fn an_interrupt_inside_a_window_waits_for_its_end() {
        assert_eq!(taken_at(us(150), us(100), us(100)), us(200));
        assert_eq!(taken_at(us(100), us(100), us(100)), us(200));
        assert_eq!(taken_at(us(200), us(100), us(100)), us(200), "at the end it is taken at once");
        assert_eq!(taken_at(us(99), us(100), us(100)), us(99), "before the window: no wait");
    }

    #[test]
    fn a_tick_opens_every_period_and_windows_queue() {
        let s = RngStreams::new(1);
        let tick = WindowSource { name: "tick", arrivals: Arrivals::periodic_hz("t", 1000.0).unwrap().unwrap() };
        let long = WindowSource { name: "long", arrivals: Arrivals::Periodic { period: us(1500) } };
        let mut w = MaskedWindows::new(vec![tick, long], vec![s.stream("a"), s.stream("b")], SimTime::ZERO);
        assert_eq!(w.next(), Some((0, us(1000))));
        assert_eq!(w.open(0, us(2)), us(1000));
        assert_eq!(w.next(), Some((1, us(1500))));
        assert_eq!(w.open(1, us(800)), us(1500));
        // The tick due at 2000 µs finds the long window open until 2300 µs: it queues behind it.
        assert_eq!(w.next(), Some((0, us(2000))));
        assert_eq!(w.open(0, us(2)), us(2300));
        assert_eq!(w.name(1), "long");
    }

    #[test]
    fn poisson_windows_come_at_the_asked_rate() {
        let s = RngStreams::new(7);
        let src = WindowSource { name: "stall", arrivals: Arrivals::poisson_hz("r", 50.0).unwrap().unwrap() };
        let mut w = MaskedWindows::new(vec![src], vec![s.stream("x")], SimTime::ZERO);
        let mut n = 0;
        while w.next().unwrap().1 < SimTime::from_us(100_000_000) {
            w.open(0, SimTime::ZERO);
            n += 1;
        }
        // 100 s at 50 Hz: 5000 ± 3σ (σ ≈ 71).
        assert!((4790..=5210).contains(&n), "{n} windows in 100 s at 50 Hz");
    }

    #[test]
    fn out_of_range_parameters_name_their_key() {
        for bad in [-1.0, f64::NAN, f64::INFINITY, 2e6] {
            let e = Arrivals::poisson_hz("hypervisor.pcpu0_stall_rate_hz", bad).unwrap_err();
            assert!(e.to_string().contains("hypervisor.pcpu0_stall_rate_hz"), "{e}");
        }
        assert!(length_us("hypervisor.pcpu0_stall_us", -5.0).unwrap_err().to_string().contains("pcpu0_stall_us"));
        assert_eq!(Arrivals::periodic_hz("k", 0.0), Ok(None), "0 Hz = no source");
        assert_eq!(length_us("k", 3.0), Ok(us(3)));
    }
}

//! Simulated time: integer picoseconds, so that sub-nanosecond costs (a GIC virtual EOI at a few
//! cycles) accumulate without rounding drift and runs are bit-for-bit reproducible.
//!
//! Leaving the clock's range is an error value, not a panic: the arithmetic saturates and latches
//! a per-thread flag (as floating point latches its exception flags, so the hot `+` stays one
//! checked add), and [`guard_overflow`] turns the flag into [`ClockOverflow`] for the point it ran.
use std::cell::Cell;
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in, or span of, simulated time, in picoseconds. u64 picoseconds last 213 days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000_000)
    }
    /// Round a (non-negative) float number of nanoseconds to picoseconds. Beyond the clock's
    /// range it stops the point (see [`ClockOverflow`]) rather than wrapping.
    pub fn from_ns_f64(ns: f64) -> Self {
        let ps = ns * 1000.0;
        // The common case (every cost) in one range check, false for NaN: the same result as below.
        if ps > 0.0 && ps < TWO_51 {
            return SimTime(round_below_2_51(ps));
        }
        if ns.is_nan() || ns <= 0.0 {
            SimTime(0)
        } else if ns * 1000.0 >= u64::MAX as f64 {
            overflow()
        } else {
            SimTime(round_to_u64(ns * 1000.0))
        }
    }
    /// CPU cycles at `ghz` to time.
    pub fn from_cycles(cycles: f64, ghz: f64) -> Self {
        Self::from_ns_f64(cycles / ghz)
    }
    pub const fn ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds, rounded to nearest.
    pub const fn ns(self) -> u64 {
        (self.0 + 500) / 1000
    }
    pub fn ns_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
    pub fn saturating_sub(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(o.0))
    }
    /// Scale a duration by a non-negative factor (e.g. a DEBUG-build multiplier).
    pub fn scale(self, f: f64) -> SimTime {
        SimTime::from_ns_f64(self.0 as f64 * f / 1000.0)
    }
}

/// Simulated time left the representable range: the point that ran it fails with this error.
/// Scenarios are validated so that it does not happen with sensible costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("simulated clock overflow: the run would pass u64 picoseconds (213 days of simulated time)")]
pub struct ClockOverflow;

thread_local! {
    /// Set when time arithmetic on this thread left the range since the last [`guard_overflow`].
    static OVERFLOWED: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` (one point's simulation, on this thread) and fail with [`ClockOverflow`] when any
/// time arithmetic in it overflowed. Whatever `f` computed after the overflow is discarded.
pub fn guard_overflow<T>(f: impl FnOnce() -> T) -> Result<T, ClockOverflow> {
    OVERFLOWED.with(|o| o.set(false));
    let r = f();
    if OVERFLOWED.with(|o| o.replace(false)) {
        Err(ClockOverflow)
    } else {
        Ok(r)
    }
}

/// `x.round() as u64` for `0 <= x < 2^64`, without the `round` library call (x86-64 without
/// SSE4.1 has no rounding instruction, and this is on every cost draw). Exact: below 2^53 the
/// truncation and the fraction `x - trunc(x)` are representable; above it `x` is an integer.
/// Halves round away from zero, as `f64::round` does.
#[inline]
pub fn round_to_u64(x: f64) -> u64 {
    debug_assert!((0.0..u64::MAX as f64).contains(&x), "{x}");
    if x >= ROUND_EXACT_LIMIT {
        return x as u64; // an integer already (beyond 2^53); u64 conversion is the slow path
    }
    round_below_limit(x)
}

/// Below this every `f64` converts to `i64` exactly (it is < 2^63), and from 2^53 on every
/// `f64` is an integer.
const ROUND_EXACT_LIMIT: f64 = 9.2e18;

/// [`round_to_u64`] for `0 <= x < ROUND_EXACT_LIMIT`.
#[inline]
fn round_below_limit(x: f64) -> u64 {
    // Signed conversions are single instructions; unsigned ones are not.
    let i = x as i64;
    if x - i as f64 >= 0.5 {
        i as u64 + 1
    } else {
        i as u64
    }
}

/// 2^51 (2251 s in ps): below it [`round_below_2_51`] is exact.
const TWO_51: f64 = 2_251_799_813_685_248.0;
/// 2^52: adding it to `0 <= x < 2^51` rounds `x` to an integer (ties to even), and the sum's bit
/// pattern minus this one's is that integer.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// [`round_to_u64`] for `0 <= x < 2^51` with no float-to-int conversion: round to nearest even
/// by the 2^52 addition, then turn a tie that went down into one that went up (`f64::round`
/// rounds halves away from zero). `x - r` is exact (both in the same or adjacent binades).
#[inline]
fn round_below_2_51(x: f64) -> u64 {
    let s = x + TWO_52;
    let r = s - TWO_52;
    let i = s.to_bits() - TWO_52.to_bits();
    if x - r == 0.5 {
        i + 1
    } else {
        i
    }
}

/// `fast(x)` for `0 <= x < ROUND_EXACT_LIMIT` (where truncation to `i64` is exact), else
/// `std(x)`: floor, ceil and round of non-negative numbers without the library call (x86-64
/// without SSE4.1 has no rounding instruction).
#[inline]
fn nonneg(x: f64, fast: impl Fn(f64) -> f64, std: fn(f64) -> f64) -> f64 {
    if (0.0..ROUND_EXACT_LIMIT).contains(&x) {
        fast(x)
    } else {
        std(x)
    }
}

/// `x.floor()`; exact for `x >= 0`, since truncation is the floor of a non-negative number.
#[inline]
pub fn floor_nonneg(x: f64) -> f64 {
    nonneg(x, |x| (x as i64) as f64, f64::floor)
}

/// `x.ceil()`; for `x >= 0` exact: `t + 1` is representable below 2^53, and above it `x` is an
/// integer, so `t == x`.
#[inline]
pub fn ceil_nonneg(x: f64) -> f64 {
    nonneg(
        x,
        |x| {
            let t = (x as i64) as f64;
            if t < x {
                t + 1.0
            } else {
                t
            }
        },
        f64::ceil,
    )
}

/// `x.round()` (halves away from zero); exact for `x >= 0`.
#[inline]
pub fn round_nonneg(x: f64) -> f64 {
    nonneg(x, |x| round_below_limit(x) as f64, f64::round)
}

/// Latch the overflow for [`guard_overflow`] and saturate, so that the run ends (every later
/// deadline is already reached) and its point fails with [`ClockOverflow`].
#[cold]
fn overflow() -> SimTime {
    OVERFLOWED.with(|o| o.set(true));
    SimTime::MAX
}

// Time arithmetic never wraps silently (release builds would): it fails the point instead.
impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, o: SimTime) -> SimTime {
        match self.0.checked_add(o.0) {
            Some(v) => SimTime(v),
            None => overflow(),
        }
    }
}
impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, o: SimTime) {
        *self = *self + o;
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, o: SimTime) -> SimTime {
        match self.0.checked_sub(o.0) {
            Some(v) => SimTime(v),
            // After an overflow, saturated times may come out of order; the point fails anyway.
            None if OVERFLOWED.with(Cell::get) => SimTime::ZERO,
            None => panic!("simulated time went backwards: {} - {}", self.0, o.0),
        }
    }
}
impl std::iter::Sum for SimTime {
    fn sum<I: Iterator<Item = SimTime>>(it: I) -> SimTime {
        it.fold(SimTime::ZERO, |a, b| a + b)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.ns_f64();
        if ns >= 1_000_000.0 {
            write!(f, "{:.3} ms", ns / 1e6)
        } else if ns >= 1000.0 {
            write!(f, "{:.3} µs", ns / 1e3)
        } else {
            write!(f, "{ns:.1} ns")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(SimTime::from_ns(3).ps(), 3000);
        assert_eq!(SimTime::from_us(2).ns(), 2000);
        assert_eq!(SimTime::from_ns_f64(1.2345).ps(), 1235);
        assert_eq!(SimTime::from_ns_f64(-4.0), SimTime::ZERO);
        assert_eq!(SimTime::from_cycles(2500.0, 2.5).ns(), 1000);
        assert_eq!(SimTime::from_ps(1499).ns(), 1);
        assert_eq!(SimTime::from_ns(10).scale(1.5), SimTime::from_ns(15));
        assert_eq!(format!("{}", SimTime::from_ns(4850)), "4.850 µs");
    }

    #[test]
    fn round_to_u64_matches_f64_round() {
        let edge = [0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 2.4999999999999996, 4503599627370495.5, 9007199254740993.0, 1.8e19];
        let mut r = crate::engine::RngStreams::new(5).stream("round");
        let random = (0..100_000).map(|i| r.f64() * 10f64.powi(i % 19));
        for x in edge.into_iter().chain(random) {
            assert_eq!(round_to_u64(x), x.round() as u64, "{x}");
            if x < TWO_51 {
                assert_eq!(round_below_2_51(x), x.round() as u64, "{x}");
            }
        }
        for x in [TWO_51 - 0.5, TWO_51 - 1.5, TWO_51 - 0.25, 0.5, 2.5, 3.5, 1e-320, 0.25, 0.75] {
            assert_eq!(round_below_2_51(x), x.round() as u64, "{x}");
        }
    }

    #[test]
    fn nonneg_floor_ceil_round_match_std() {
        let edge = [0.0, -0.0, 0.5, 1.0, 1.5, 2.5, 0.49999999999999994, 4503599627370495.5, 9007199254740993.0, 1.8e19, -1.5, -0.25, f64::INFINITY];
        let mut r = crate::engine::RngStreams::new(6).stream("floor");
        let random = (0..100_000).map(|i| r.f64() * 10f64.powi(i % 20));
        for x in edge.into_iter().chain(random) {
            assert_eq!(floor_nonneg(x), x.floor(), "floor {x}");
            assert_eq!(ceil_nonneg(x), x.ceil(), "ceil {x}");
            assert_eq!(round_nonneg(x), x.round(), "round {x}");
        }
        assert!(floor_nonneg(f64::NAN).is_nan() && ceil_nonneg(f64::NAN).is_nan() && round_nonneg(f64::NAN).is_nan());
    }

    #[test]
    fn from_ns_f64_fast_path_matches_rounding() {
        let mut r = crate::engine::RngStreams::new(8).stream("from_ns");
        for i in 0..100_000 {
            let ns = r.f64() * 10f64.powi(i % 16);
            assert_eq!(SimTime::from_ns_f64(ns).ps(), (ns * 1000.0).round() as u64, "{ns}");
        }
    }

    #[test]
    fn overflow_is_an_error_instead_of_wrapping() {
        let near = SimTime(u64::MAX - 5);
        assert_eq!(guard_overflow(|| near + SimTime(10)), Err(ClockOverflow));
        assert_eq!(guard_overflow(|| SimTime::from_ns_f64(1e300)), Err(ClockOverflow));
        assert_eq!(guard_overflow(|| SimTime(1).scale(1e300)), Err(ClockOverflow));
        assert_eq!(guard_overflow(|| [near, SimTime(6)].into_iter().sum::<SimTime>()), Err(ClockOverflow));
        // Out-of-order saturated times after an overflow do not panic; the guard reports it.
        assert_eq!(guard_overflow(|| (near + SimTime(10)) - SimTime::MAX - SimTime(1)), Err(ClockOverflow));
        // The flag is per guarded run: the next run starts clean.
        assert_eq!(guard_overflow(|| near + SimTime(5)), Ok(SimTime::MAX));
        assert!(std::panic::catch_unwind(|| SimTime(1) - SimTime(2)).is_err(), "backwards without an overflow is a bug");
    }
}

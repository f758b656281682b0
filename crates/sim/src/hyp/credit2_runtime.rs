//! How long credit2 lets the vCPU it just picked run: `csched2_runtime`
//! (xen/common/sched/credit2.c, Xen 4.17.7), as a pure function.
//!
//! Xen's algorithm, for the unit `snext` that `csched2_schedule` chose:
//! 1. run until `snext`'s credit is 0;
//! 2. but if the unit at the head of the runqueue (`swait`, the runnable unit with the most
//!    credit that is *not* running) has credit > 0, run until the two are equal:
//!    `snext.credit − swait.credit`;
//! 3. (caps: not modelled, no domain in irqlab's scenarios is capped);
//! 4. never less than `min_time` = max(`CSCHED2_MIN_TIMER` (500 µs), the ratelimit still owed:
//!    the whole ratelimit for a unit being switched in, `state_entry_time + ratelimit − now` for
//!    the unit that keeps running) and never more than `CSCHED2_MAX_TIMER` (= `CSCHED2_CREDIT_INIT`,
//!    10 ms).
//!
//! Which units are in the runqueue at that moment matters: `csched2_schedule` marks the unit it
//! switches *out* `__CSFLAG_delayed_runq_add` and only puts it back in `csched2_context_saved`,
//! after the switch, so it is not `swait` for the unit switched in. With two vCPUs on one pCPU the
//! one switched in therefore runs until its own credit is spent (up to 10 ms), not until it
//! meets the other's; an interrupt for the other one (runnable, not blocked, so no wake-up and
//! no `runq_tickle`: `vcpu_kick` → `vcpu_unblock` returns at once) waits for that slice end. This is
//! what the Xen lab measured with vwfi=native and a busy neighbour (MAX 10.0 ms,
//! docs/xen-arm-lab.md).
//!
//! The same function bounds a wake-up preemption: `runq_candidate` keeps the running unit while
//! it has run less than the ratelimit, and its runtime is then `min_time` (its credit is below
//! the waker's, so step 2 gives ≤ 0), i.e. at least `CSCHED2_MIN_TIMER`.
use crate::engine::SimTime;

/// The limits of `csched2_runtime` (ps in, [`SimTime`] out).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// `CSCHED2_MIN_TIMER` (500 µs).
    pub min_timer: SimTime,
    /// `CSCHED2_MAX_TIMER` (10 ms).
    pub max_timer: SimTime,
    /// `sched_ratelimit_us` (0: off).
    pub ratelimit: SimTime,
}

/// `csched2_runtime` for a unit with `credit` (ps): `swait`, the credit of the runqueue's head
/// (None: the runqueue is empty); `ran`, how long `snext` has already been running (None: it
/// is being switched in).
pub fn runtime(credit: i64, swait: Option<i64>, ran: Option<SimTime>, l: Limits) -> SimTime {
    let mut min_time = l.min_timer;
    if l.ratelimit > SimTime::ZERO {
        let owed = match ran {
            None => l.ratelimit,
            Some(r) if r < l.ratelimit => l.ratelimit - r,
            Some(_) => SimTime::ZERO,
        };
        min_time = min_time.max(owed);
    }
    let rt_credit = match swait {
        Some(w) if w > 0 => credit - w,
        _ => credit,
    };
    let time = SimTime(rt_credit.max(0) as u64);
    if time < min_time {
        min_time
    } else {
        time.min(l.max_timer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> SimTime {
        SimTime::from_us(n)
    }
    fn c(us_: i64) -> i64 {
        us_ * 1_000_000
    }
    const L: Limits = Limits { min_timer: SimTime(500_000_000), max_timer: SimTime(10_000_000_000), ratelimit: SimTime(1_000_000_000) };

    #[test]
    fn alone_or_against_a_spent_unit_it_runs_its_own_credit() {
        assert_eq!(runtime(c(7_000), None, None, L), us(7_000));
        assert_eq!(runtime(c(7_000), Some(c(-200)), None, L), us(7_000), "swait without credit is ignored");
        assert_eq!(runtime(c(10_500), None, None, L), us(10_000), "clamped to CSCHED2_MAX_TIMER");
    }

    #[test]
    fn against_a_unit_with_credit_it_runs_the_difference_at_least_min_time() {
        assert_eq!(runtime(c(7_000), Some(c(2_000)), None, L), us(5_000));
        // Switched in: the whole ratelimit (1 ms) is owed, above CSCHED2_MIN_TIMER.
        assert_eq!(runtime(c(7_000), Some(c(6_900)), None, L), us(1_000));
        // Kept running after 800 µs: 200 µs of ratelimit owed, so CSCHED2_MIN_TIMER decides.
        assert_eq!(runtime(c(7_000), Some(c(6_900)), Some(us(800)), L), us(500));
        // A waker with more credit than the running unit: rt_credit <= 0, min_time.
        assert_eq!(runtime(c(1_000), Some(c(9_000)), Some(us(100)), L), us(900));
        let no_rl = Limits { ratelimit: SimTime::ZERO, ..L };
        assert_eq!(runtime(c(1_000), Some(c(9_000)), None, no_rl), us(500));
    }
}

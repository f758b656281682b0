//! Xen-like vCPU schedulers as pure policies over one pCPU's runqueue (vCPUs are pinned with
//! `vcpu-pin`, so every pCPU schedules independently):
//!
//! - **credit1-like** (Xen's `credit`, the default scheduler until 4.12 and the one S3 ran):
//!   priorities BOOST > UNDER (credit left) > OVER (none left); round-robin inside a priority on a
//!   `tslice` (Xen `sched_credit_tslice_ms`, default 30 ms); a vCPU woken from
//!   blocked while UNDER is BOOSTed and preempts a running UNDER/OVER vCPU (`csched_vcpu_wake` →
//!   `__runq_tickle`), subject to the 1 ms rate limit (`csched_schedule` keeps the current vCPU
//!   while it has run less than `ratelimit`). BOOST ends once the vCPU is charged run time (Xen:
//!   at the next accounting tick). Credit is topped up for everyone when the best has none.
//! - **null** (static): the first vCPU pinned to a pCPU owns it; others wait forever (Xen's null
//!   scheduler parks vCPUs that have no free pCPU on a wait queue). No time slices, no accounting.
//! - **credit2-like** (xen/common/sched/credit2.c, Xen 4.17.7): every vCPU starts with
//!   `credit_init` ns of credit and burns it while running (equal weights). `runq_candidate`: the
//!   running vCPU stays while it has run less than `ratelimit` (Xen default 1 ms), else the
//!   runnable vCPU with the most credit runs (ties: the running one). When the best credit in
//!   sight is ≤ 0 (`CSCHED2_CREDIT_RESET`), everyone gets `CREDIT_INIT` more (`reset_credit`).
//!   The slice is [`credit2_runtime::runtime`] (`csched2_runtime`): the vCPU's own credit, or the
//!   difference to the runqueue head if that one has credit — the vCPU switched out is not in
//!   the runqueue yet (delayed add) — clamped to [max(`min_slice`, ratelimit owed), `max_slice`]
//!   (CSCHED2_MIN_TIMER 500 µs, CSCHED2_MAX_TIMER 10 ms). A waking vCPU with more credit than the
//!   running one preempts it (`runq_tickle`), at once if the running one has had `ratelimit`,
//!   else when `csched2_runtime` lets it go (≥ `min_slice`). An interrupt for a vCPU that is
//!   runnable but not running is not a wake-up: it waits for the slice end.
//! - **RTDS-like**: each vCPU has a budget per period (Xen defaults 4 ms / 10 ms); the eligible
//!   (runnable, budget left) vCPU with the earliest deadline runs (EDF); budgets are replenished at
//!   period boundaries; no extra time (a vCPU out of budget waits even if the pCPU idles).
//!
//! Times are [`SimTime`]; the timed model charges run time with [`RunQueue::charge`] before asking
//! for a decision.
use serde::Deserialize;

use super::credit2_runtime::{self, Limits};
use crate::engine::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedKind {
    /// Xen's `credit` scheduler (`sched=credit`); `credit1` is accepted as an alias.
    #[serde(alias = "credit")]
    Credit1,
    Null,
    Credit2,
    Rtds,
}

impl SchedKind {
    /// The prefix of this scheduler's path costs in a platform profile (`credit1_wake`, …).
    pub fn key(self) -> &'static str {
        match self {
            SchedKind::Credit1 => "credit1",
            SchedKind::Credit2 => "credit2",
            SchedKind::Null => "null",
            SchedKind::Rtds => "rtds",
        }
    }
}

/// Scheduler parameters (µs in scenario files).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedParams {
    pub credit_init: SimTime,
    pub min_slice: SimTime,
    pub max_slice: SimTime,
    pub ratelimit: SimTime,
    pub rtds_budget: SimTime,
    pub rtds_period: SimTime,
    /// credit1 time slice (Xen `sched_credit_tslice_ms`, default 30 ms).
    pub tslice: SimTime,
}

impl Default for SchedParams {
    fn default() -> Self {
        SchedParams {
            credit_init: SimTime::from_us(10_000),
            min_slice: SimTime::from_us(500),
            max_slice: SimTime::from_us(10_000),
            ratelimit: SimTime::from_us(1_000),
            rtds_budget: SimTime::from_us(4_000),
            rtds_period: SimTime::from_us(10_000),
            tslice: SimTime::from_us(30_000),
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    id: usize,
    runnable: bool,
    /// credit2: remaining credit (ps, may go negative).
    credit: i64,
    /// RTDS: remaining budget (ps) and current deadline.
    budget: i64,
    deadline: SimTime,
    /// credit1: BOOST priority after a wake-up.
    boost: bool,
    /// credit1: when it last stopped running (round-robin order inside a priority).
    queued_at: SimTime,
}

/// A scheduling decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// vCPU to run, or `None` to idle.
    pub next: Option<usize>,
    /// When to decide again (slice end, budget exhaustion, replenishment), if ever.
    pub until: Option<SimTime>,
}

/// What a wake-up does to the running vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preempt {
    /// Reschedule now.
    Now,
    /// Reschedule at this time (rate limit).
    At(SimTime),
    /// Keep running; the waker waits for the next decision.
    No,
}

/// The runqueue of one pCPU.
#[derive(Debug, Clone)]
pub struct RunQueue {
    pub kind: SchedKind,
    pub params: SchedParams,
    entries: Vec<Entry>,
    /// Number of credit resets (credit2).
    pub resets: u64,
    /// The vCPU the last decision ran and since when (Xen `state_entry_time`): credit2's
    /// ratelimit and `csched2_runtime` need how long the running vCPU has run.
    running: Option<(usize, SimTime)>,
}

impl RunQueue {
    pub fn new(kind: SchedKind, params: SchedParams) -> Self {
        RunQueue { kind, params, entries: Vec::new(), resets: 0, running: None }
    }

    /// Pin vCPU `id` here (initially not runnable).
    pub fn add(&mut self, id: usize) {
        self.entries.push(Entry {
            id,
            runnable: false,
            credit: self.params.credit_init.ps() as i64,
            budget: self.params.rtds_budget.ps() as i64,
            deadline: self.params.rtds_period,
            boost: false,
            queued_at: SimTime::ZERO,
        });
    }

    fn e(&self, id: usize) -> &Entry {
        self.entries.iter().find(|e| e.id == id).expect("vCPU pinned to this runqueue")
    }
    fn e_mut(&mut self, id: usize) -> &mut Entry {
        self.entries.iter_mut().find(|e| e.id == id).expect("vCPU pinned to this runqueue")
    }

    pub fn set_runnable(&mut self, id: usize, r: bool) {
        self.e_mut(id).runnable = r;
    }

    pub fn is_runnable(&self, id: usize) -> bool {
        self.e(id).runnable
    }

    /// Runnable vCPUs other than `except` (the running one) — the adaptive-WFI input.
    pub fn others_runnable(&self, except: Option<usize>) -> usize {
        self.entries.iter().filter(|e| e.runnable && Some(e.id) != except && self.may_ever_run(e.id)).count()
    }

    /// Null: only the owner ever runs.
    fn may_ever_run(&self, id: usize) -> bool {
        self.kind != SchedKind::Null || self.entries.first().map(|e| e.id) == Some(id)
    }

    pub fn credit(&self, id: usize) -> i64 {
        self.e(id).credit
    }

    /// Charge `ran` of run time to `id`.
    pub fn charge(&mut self, id: usize, ran: SimTime) {
        let e = self.e_mut(id);
        e.credit -= ran.ps() as i64;
        e.budget -= ran.ps() as i64;
        if ran > SimTime::ZERO {
            e.boost = false;
        }
    }

    /// credit1 priority: BOOST 2, UNDER 1, OVER 0 (Xen CSCHED_PRI_TS_*).
    fn credit1_prio(e: &Entry) -> u8 {
        if e.boost {
            2
        } else if e.credit > 0 {
            1
        } else {
            0
        }
    }

    /// Top up everyone's credit (credit1 accounting / credit2 reset_credit), clipped at
    /// `credit_init + min_slice` (credit2 CARRYOVER_MAX).
    fn reset_credit(&mut self) {
        let init = self.params.credit_init.ps() as i64;
        let cap = init + self.params.min_slice.ps() as i64;
        for e in &mut self.entries {
            e.credit = (e.credit + init).min(cap);
        }
        self.resets += 1;
    }

    fn replenish(&mut self, now: SimTime) {
        if self.kind != SchedKind::Rtds {
            return;
        }
        let (budget, period) = (self.params.rtds_budget.ps() as i64, self.params.rtds_period);
        for e in &mut self.entries {
            while now >= e.deadline {
                e.deadline += period;
                e.budget = budget;
            }
        }
    }

    /// Choose what runs next. `current` is preferred on ties (fewer context switches).
    /// `now` is when the scheduler runs (Xen: `NOW()` at the start of `schedule()`), which is
    /// also the `state_entry_time` of the vCPU it switches in.
    pub fn pick(&mut self, now: SimTime, current: Option<usize>) -> Decision {
        let d = self.decide(now, current);
        self.running = match (d.next, self.running) {
            (Some(n), Some((r, since))) if r == n && current == Some(n) => Some((n, since)),
            (Some(n), _) => Some((n, now)),
            (None, _) => None,
        };
        d
    }

    /// How long `id` has been running at `at` (Xen `now - state_entry_time`), if it is the vCPU
    /// the last decision ran.
    pub fn running_for(&self, id: usize, at: SimTime) -> Option<SimTime> {
        self.running.filter(|(r, _)| *r == id).map(|(_, since)| if at > since { at - since } else { SimTime::ZERO })
    }

    fn decide(&mut self, now: SimTime, current: Option<usize>) -> Decision {
        match self.kind {
            SchedKind::Null => {
                let owner = self.entries.first().filter(|e| e.runnable).map(|e| e.id);
                Decision { next: owner, until: None }
            }
            SchedKind::Credit2 => self.credit2_pick(now, current),
            SchedKind::Credit1 => {
                // The current vCPU goes to the tail of its priority (round-robin at slice end).
                if let Some(c) = current {
                    self.e_mut(c).queued_at = now;
                }
                let best = |entries: &[Entry]| {
                    entries.iter().filter(|e| e.runnable).max_by_key(|e| (Self::credit1_prio(e), std::cmp::Reverse(e.queued_at), std::cmp::Reverse(e.id))).map(|e| e.id)
                };
                let Some(mut next) = best(&self.entries) else { return Decision { next: None, until: None } };
                if self.e(next).credit <= 0 && !self.e(next).boost {
                    self.reset_credit();
                    next = best(&self.entries).expect("still runnable");
                }
                Decision { next: Some(next), until: Some(now + self.params.tslice) }
            }
            SchedKind::Rtds => {
                self.replenish(now);
                let next = self.entries.iter().filter(|e| e.runnable && e.budget > 0).min_by_key(|e| (e.deadline, Some(e.id) != current, e.id)).map(|e| e.id);
                let earliest_deadline = self.entries.iter().filter(|e| e.runnable).map(|e| e.deadline).min();
                let until = match next {
                    Some(n) => {
                        let end = now + SimTime(self.e(n).budget as u64);
                        Some(earliest_deadline.map_or(end, |d| end.min(d)))
                    }
                    None => earliest_deadline,
                };
                Decision { next, until }
            }
        }
    }

    fn limits(&self) -> Limits {
        Limits { min_timer: self.params.min_slice, max_timer: self.params.max_slice, ratelimit: self.params.ratelimit }
    }

    /// credit2's `csched2_schedule`: `runq_candidate`, the reset check, `csched2_runtime`.
    fn credit2_pick(&mut self, now: SimTime, current: Option<usize>) -> Decision {
        // How long `current` has run (unknown: as if for ever, so no ratelimit).
        let ran = current.map(|c| match self.running {
            Some((r, since)) if r == c => now - since,
            _ => SimTime(u64::MAX / 2),
        });
        let best = |entries: &[Entry], skip: &[Option<usize>]| {
            entries.iter().filter(|e| e.runnable && !skip.contains(&Some(e.id))).max_by_key(|e| (e.credit, Some(e.id) == current, std::cmp::Reverse(e.id))).map(|e| e.id)
        };
        let keep = match (current, ran) {
            (Some(c), Some(r)) if self.params.ratelimit > SimTime::ZERO && r < self.params.ratelimit && self.e(c).runnable => Some(c),
            _ => None,
        };
        let Some(next) = keep.or_else(|| best(&self.entries, &[])) else { return Decision { next: None, until: None } };
        // The runqueue as csched2_runtime sees it: without `next` (removed) and without the
        // vCPU switched out (re-queued only after the switch, `__CSFLAG_delayed_runq_add`).
        let switched_out = current.filter(|c| *c != next);
        let swait = best(&self.entries, &[Some(next), switched_out]).map(|w| self.e(w).credit);
        if self.e(next).credit.max(swait.unwrap_or(i64::MIN)) <= 0 {
            // reset_credit: everyone gets CREDIT_INIT more, clipped at CREDIT_INIT + CARRYOVER_MAX.
            self.reset_credit();
        }
        let swait = best(&self.entries, &[Some(next), switched_out]).map(|w| self.e(w).credit);
        let still = if current == Some(next) { ran } else { None };
        let slice = credit2_runtime::runtime(self.e(next).credit, swait, still, self.limits());
        Decision { next: Some(next), until: Some(now + slice) }
    }

    /// A blocked vCPU `waker` just became runnable; `current` has run for `ran` since it was
    /// dispatched (already charged). Does it get preempted?
    pub fn wake_preempts(&mut self, now: SimTime, waker: usize, current: Option<usize>, ran: SimTime) -> Preempt {
        self.replenish(now);
        let Some(cur) = current else {
            return if self.may_ever_run(waker) { Preempt::Now } else { Preempt::No };
        };
        if cur == waker {
            return Preempt::No;
        }
        match self.kind {
            SchedKind::Null => Preempt::No,
            SchedKind::Credit1 => {
                // csched_vcpu_wake: an UNDER vCPU waking from sleep is BOOSTed; __runq_tickle
                // preempts a running vCPU of lower priority (rate limit permitting).
                let w = self.e_mut(waker);
                w.boost = w.credit > 0;
                let (wp, cp) = (Self::credit1_prio(self.e(waker)), Self::credit1_prio(self.e(cur)));
                if wp <= cp {
                    Preempt::No
                } else if ran >= self.params.ratelimit {
                    Preempt::Now
                } else {
                    Preempt::At(now + (self.params.ratelimit - ran))
                }
            }
            SchedKind::Credit2 => {
                // runq_tickle: only a waker with more credit than the running vCPU tickles its
                // pCPU; then runq_candidate keeps the running one within the ratelimit and
                // csched2_runtime gives it min_time (its credit is below the waker's).
                if self.e(waker).credit <= self.e(cur).credit {
                    Preempt::No
                } else if ran >= self.params.ratelimit {
                    Preempt::Now
                } else {
                    Preempt::At(now + credit2_runtime::runtime(self.e(cur).credit, Some(self.e(waker).credit), Some(ran), self.limits()))
                }
            }
            SchedKind::Rtds => {
                let (w, c) = (self.e(waker), self.e(cur));
                if w.budget > 0 && (w.deadline < c.deadline || c.budget <= 0) {
                    Preempt::Now
                } else {
                    Preempt::No
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> SimTime {
        SimTime::from_us(n)
    }

    /// Run a runqueue where every vCPU is always runnable for `total`; return run time per vCPU.
    fn share(kind: SchedKind, n: usize, total: SimTime) -> Vec<u64> {
        let mut rq = RunQueue::new(kind, SchedParams::default());
        for i in 0..n {
            rq.add(i);
            rq.set_runnable(i, true);
        }
        let mut ran = vec![0u64; n];
        let mut now = SimTime::ZERO;
        let mut cur = None;
        while now < total {
            let d = rq.pick(now, cur);
            let Some(next) = d.next else {
                now = d.until.unwrap();
                cur = None;
                continue;
            };
            let end = d.until.unwrap_or(total).min(total);
            rq.charge(next, end - now);
            ran[next] += (end - now).ps();
            now = end;
            cur = Some(next);
        }
        ran
    }

    #[test]
    fn credit2_is_fair() {
        let r = share(SchedKind::Credit2, 3, us(300_000));
        for v in &r {
            let f = *v as f64 / us(300_000).ps() as f64;
            assert!((f - 1.0 / 3.0).abs() < 0.04, "{r:?}");
        }
    }

    #[test]
    fn credit1_round_robins_on_its_timeslice() {
        // 900 ms = 30 slices of 30 ms: 10 each (300 ms would be 10 slices, split 4/3/3).
        let r = share(SchedKind::Credit1, 3, us(900_000));
        for v in &r {
            let f = *v as f64 / us(900_000).ps() as f64;
            assert!((f - 1.0 / 3.0).abs() < 0.04, "{r:?}");
        }
        let mut rq = RunQueue::new(SchedKind::Credit1, SchedParams::default());
        for i in 0..2 {
            rq.add(i);
            rq.set_runnable(i, true);
        }
        let d = rq.pick(SimTime::ZERO, None);
        assert_eq!((d.next, d.until), (Some(0), Some(us(30_000))), "tslice");
        rq.charge(0, us(30_000));
        assert_eq!(rq.pick(us(30_000), Some(0)).next, Some(1), "round-robin at slice end");
    }

    /// vCPU 1 dispatched at 0 and run for 300 µs, then vCPU 0 wakes on the same pCPU.
    fn waker_after_300us(kind: SchedKind) -> RunQueue {
        let mut rq = RunQueue::new(kind, SchedParams::default());
        rq.add(0);
        rq.add(1);
        rq.set_runnable(1, true);
        assert_eq!(rq.pick(SimTime::ZERO, None).next, Some(1));
        rq.charge(1, us(300));
        rq.set_runnable(0, true);
        rq
    }

    #[test]
    fn credit1_boosts_a_waking_vcpu() {
        let mut rq = waker_after_300us(SchedKind::Credit1);
        // Both UNDER, but the waker is BOOSTed: preempts once the rate limit allows.
        assert_eq!(rq.wake_preempts(us(300), 0, Some(1), us(300)), Preempt::At(us(1000)));
        assert_eq!(rq.wake_preempts(us(1500), 0, Some(1), us(1500)), Preempt::Now);
        assert_eq!(rq.pick(us(1500), Some(1)).next, Some(0), "BOOST first");
        // Charged run time ends the boost: the waker is UNDER like the other one.
        rq.charge(0, us(100));
        rq.set_runnable(0, false);
        rq.charge(1, us(20_000));
        rq.set_runnable(0, true);
        // An OVER waker is not boosted and waits.
        rq.charge(0, us(20_000));
        assert_eq!(rq.wake_preempts(us(2000), 0, Some(1), us(2000)), Preempt::No);
    }

    #[test]
    fn null_is_static() {
        let r = share(SchedKind::Null, 3, us(1000));
        assert_eq!(r[1] + r[2], 0);
        let mut rq = RunQueue::new(SchedKind::Null, SchedParams::default());
        rq.add(4);
        rq.add(5);
        rq.set_runnable(5, true);
        assert_eq!(rq.others_runnable(Some(4)), 0, "a parked vCPU never competes");
        assert_eq!(rq.pick(SimTime::ZERO, None).next, None);
    }

    #[test]
    fn rtds_enforces_budget() {
        let r = share(SchedKind::Rtds, 1, us(100_000));
        let f = r[0] as f64 / us(100_000).ps() as f64;
        assert!((f - 0.4).abs() < 0.01, "4 ms per 10 ms: {f}");
        let r = share(SchedKind::Rtds, 2, us(100_000));
        assert!((r[0] as f64 / r[1] as f64 - 1.0).abs() < 0.01);
    }

    #[test]
    fn credit2_wakeup_preemption_and_ratelimit() {
        let mut rq = waker_after_300us(SchedKind::Credit2);
        // Waker has more credit, but the running vCPU has had only 300 µs of its 1 ms.
        assert_eq!(rq.wake_preempts(us(300), 0, Some(1), us(300)), Preempt::At(us(1000)));
        assert_eq!(rq.wake_preempts(us(1500), 0, Some(1), us(1500)), Preempt::Now);
        // Idle pCPU: always at once.
        assert_eq!(rq.wake_preempts(us(1500), 0, None, SimTime::ZERO), Preempt::Now);
        // A waker with less credit waits.
        rq.charge(0, us(5000));
        assert_eq!(rq.wake_preempts(us(2000), 0, Some(1), us(2000)), Preempt::No);
    }

    #[test]
    fn credit2_switched_in_vcpu_runs_its_own_credit_when_only_the_switched_out_one_competes() {
        // Two always-runnable vCPUs on one pCPU, 10 ms of credit each (csched2_runtime with the
        // switched-out unit not yet back in the runqueue, Xen 4.17 credit2.c).
        let mut rq = RunQueue::new(SchedKind::Credit2, SchedParams::default());
        for i in 0..2 {
            rq.add(i);
            rq.set_runnable(i, true);
        }
        // First pick: vCPU 1 waits with 10 ms of credit: run until equal, at least the 1 ms
        // ratelimit owed by a vCPU switched in.
        let d = rq.pick(SimTime::ZERO, None);
        assert_eq!((d.next, d.until), (Some(0), Some(us(1_000))));
        rq.charge(0, us(1_000));
        // vCPU 1 switched in: vCPU 0 is delayed-added, the runqueue is empty, so vCPU 1 runs its
        // whole credit (10 ms, CSCHED2_MAX_TIMER), not the 1 ms credit difference.
        let d = rq.pick(us(1_000), Some(0));
        assert_eq!((d.next, d.until), (Some(1), Some(us(11_000))));
        rq.charge(1, us(10_000));
        // Both spent (1 ms left, 0): vCPU 0 is switched in for its 9 ms.
        let d = rq.pick(us(11_000), Some(1));
        assert_eq!((d.next, d.until), (Some(0), Some(us(20_000))));
        rq.charge(0, us(9_000));
        // Nobody has credit: reset (10 ms each). The tie keeps vCPU 0, which now meets vCPU 1
        // in the runqueue with equal credit: CSCHED2_MIN_TIMER.
        let d = rq.pick(us(20_000), Some(0));
        assert_eq!(rq.resets, 1);
        assert_eq!((d.next, d.until), (Some(0), Some(us(20_500))));
        rq.charge(0, us(500));
        // vCPU 1 switched in with 10 ms against an empty runqueue: its whole credit again.
        let d = rq.pick(us(20_500), Some(0));
        assert_eq!((d.next, d.until), (Some(1), Some(us(30_500))));
    }

    #[test]
    fn credit2_keeps_the_running_vcpu_within_the_ratelimit() {
        let mut rq = RunQueue::new(SchedKind::Credit2, SchedParams::default());
        for i in 0..2 {
            rq.add(i);
            rq.set_runnable(i, true);
        }
        assert_eq!(rq.pick(SimTime::ZERO, None).next, Some(0));
        rq.charge(0, us(400));
        // vCPU 1 has more credit, but vCPU 0 has run 400 µs of its 1 ms: it stays, for the
        // 600 µs owed (above CSCHED2_MIN_TIMER).
        let d = rq.pick(us(400), Some(0));
        assert_eq!((d.next, d.until), (Some(0), Some(us(1_000))));
        // A waker with more credit after 900 µs: 100 µs owed, but never less than MIN_TIMER.
        assert_eq!(rq.wake_preempts(us(900), 1, Some(0), us(900)), Preempt::At(us(1_400)));
    }

    #[test]
    fn rtds_edf_preemption() {
        let mut rq = RunQueue::new(SchedKind::Rtds, SchedParams::default());
        rq.add(0);
        rq.add(1);
        rq.set_runnable(1, true);
        rq.set_runnable(0, true);
        assert_eq!(rq.pick(SimTime::ZERO, None).next, Some(0), "same deadline: lowest id");
        rq.charge(0, us(4000));
        let d = rq.pick(us(4000), Some(0));
        assert_eq!(d.next, Some(1), "0 is out of budget");
        assert_eq!(d.until, Some(us(8000)));
    }
}

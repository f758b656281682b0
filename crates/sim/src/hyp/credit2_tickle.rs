//! Where credit2 runs a vCPU that wakes up: the pCPU choice of `runq_tickle`
//! (xen/common/sched/credit2.c, `runq_tickle`, Xen 4.17–4.20), as a pure function.
//!
//! Xen's order, for a unit whose last pCPU is `cpu`, inside its (soft, then hard) affinity:
//! 1. fully idle cores (`rqd->smt_idle`), trying `cpu` first (`cpumask_test_or_cycle(cpu, …)`:
//!    "checking if we can just re-use the pcpu where we were running before");
//! 2. any idle pCPU that has not been tickled yet (`rqd->idle & ~rqd->tickled`), `cpu` first;
//! 3. otherwise a busy pCPU whose running unit has the lowest credit (`tickle_score`); the woken
//!    unit then preempts only once that unit has run `ratelimit` (`runq_candidate` returns the
//!    current unit while `now - state_entry_time < MICROSECS(prv->ratelimit_us)`; the wait is
//!    [`crate::hyp::scheduler::RunQueue::wake_preempts`]).
//!
//! Neoverse V1 (S1's Graviton3) has no SMT, so a fully idle core is an idle pCPU: step 1 already
//! sees every idle pCPU, tickled or not, and step 2 can add nothing. This function therefore
//! takes no tickled mask (a model with SMT would need step 2).
//! The consequence for S1 (only dom0, 8 vCPUs on 64 pCPUs): a vCPU blocked in WFI leaves its
//! pCPU idle, so it is always woken where it ran (step 1) and never migrates. A migration (and a
//! VMOVP for a vCPU with a vPE) needs its pCPU to be busy at the wake-up.

/// The pCPU `runq_tickle` picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tickle {
    /// The pCPU the vCPU last ran on is idle: no migration.
    Same(usize),
    /// Another idle pCPU: the vCPU migrates (a vPE follows with VMOVP).
    Moved(usize),
    /// No idle pCPU in the affinity: the vCPU waits to preempt a busy one (ratelimit applies).
    Busy,
}

/// `prev`: the pCPU the vCPU last ran on; `idle[p]`: pCPU `p` runs its idle vCPU;
/// `affinity[p]`: the vCPU may run on `p`.
pub fn tickle(prev: usize, idle: &[bool], affinity: &[bool]) -> Tickle {
    let n = idle.len();
    assert!(affinity.len() == n && prev < n);
    // Step 1: fully idle cores, prev first (no tickled filter in Xen's first step).
    match cycle_from(prev, n, |p| idle[p] && affinity[p]) {
        Some(p) if p == prev => Tickle::Same(p),
        Some(p) => Tickle::Moved(p),
        None => Tickle::Busy,
    }
}

/// `cpumask_test_or_cycle(start, mask)`: `start` if set, else the next set bit after it, wrapping.
fn cycle_from(start: usize, n: usize, set: impl Fn(usize) -> bool) -> Option<usize> {
    (0..n).map(|k| (start + k) % n).find(|p| set(*p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vcpu_whose_pcpu_is_idle_wakes_there() {
        let idle = [true, true, true, true];
        assert_eq!(tickle(2, &idle, &[true; 4]), Tickle::Same(2));
        assert_eq!(tickle(0, &idle, &[true; 4]), Tickle::Same(0));
    }

    #[test]
    fn a_busy_pcpu_sends_the_vcpu_to_the_next_idle_one_in_cycle_order() {
        let idle = [true, false, false, true];
        assert_eq!(tickle(1, &idle, &[true; 4]), Tickle::Moved(3));
        assert_eq!(tickle(3, &[true, false, false, false], &[true; 4]), Tickle::Moved(0), "wraps around");
    }

    #[test]
    fn affinity_limits_the_choice_and_no_idle_pcpu_means_waiting() {
        let idle = [true, false, true, false];
        assert_eq!(tickle(1, &idle, &[false, true, false, true]), Tickle::Busy, "pinned (dom0_vcpus_pin) to busy pCPUs");
        assert_eq!(tickle(1, &[false; 4], &[true; 4]), Tickle::Busy);
    }
}

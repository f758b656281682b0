//! The event queue: a binary min-heap on (time, sequence number). The sequence number is the
//! insertion order, so events scheduled for the same picosecond pop in the order they were
//! scheduled — deterministic tie-breaking, independent of the heap's internal layout.
//!
//! Each entry has one `u128` key, `(time << 64) | seq`, so a comparison is a single integer
//! compare. Most handlers pop one event and schedule one follow-up, so `pop` leaves the consumed
//! entry at the top and the next `schedule_*` overwrites it in place — one sift instead of a
//! pop's sift plus a push's sift (the classic "hold" optimisation), invisible to callers.
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::time::SimTime;

struct Entry<E> {
    key: u128,
    /// `None` once popped (the entry then waits at the top to be overwritten or removed).
    /// A `Cell`, so popping can take the event through a shared reference: `peek_mut` would
    /// re-sift the heap on drop for nothing.
    event: Cell<Option<E>>,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (then lowest seq) on top.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

#[inline]
fn key_time(key: u128) -> SimTime {
    SimTime((key >> 64) as u64)
}

/// Pending events ordered by time, FIFO among equal times. Tracks the current time: popping
/// advances it; scheduling in the past is a model bug and panics in debug builds.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
    /// The top entry was popped already and only awaits reuse or removal.
    top_consumed: bool,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), next_seq: 0, now: SimTime::ZERO, popped: 0, top_consumed: false }
    }

    /// Current simulated time (time of the last popped event).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedule `event` at absolute time `at`.
    #[inline]
    pub fn schedule_at(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at:?} < {:?}", self.now);
        let key = ((at.0 as u128) << 64) | self.next_seq as u128;
        self.next_seq += 1;
        let entry = Entry { key, event: Cell::new(Some(event)) };
        if self.top_consumed {
            self.top_consumed = false;
            *self.heap.peek_mut().expect("consumed top exists") = entry;
        } else {
            self.heap.push(entry);
        }
    }

    /// Schedule `event` `delay` after now.
    #[inline]
    pub fn schedule_in(&mut self, delay: SimTime, event: E) {
        self.schedule_at(self.now + delay, event)
    }

    /// Pop the earliest event and advance time to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.settle();
        let top = self.heap.peek()?;
        let t = key_time(top.key);
        let ev = top.event.take().expect("live entries hold their event");
        self.top_consumed = true;
        self.now = t;
        self.popped += 1;
        Some((t, ev))
    }

    /// Remove a consumed top entry, if any.
    #[inline]
    fn settle(&mut self) {
        if self.top_consumed {
            self.top_consumed = false;
            self.heap.pop();
        }
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.settle();
        self.heap.peek().map(|e| key_time(e.key))
    }

    pub fn len(&self) -> usize {
        self.heap.len() - self.top_consumed as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of events processed so far (for events-per-second statistics).
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Drop pending events that match `pred` (e.g. a cancelled timer). O(n).
    pub fn cancel(&mut self, mut pred: impl FnMut(&E) -> bool) -> usize {
        self.settle();
        let before = self.heap.len();
        self.heap.retain(|e| {
            let ev = e.event.take();
            let keep = !ev.as_ref().is_some_and(&mut pred);
            e.event.set(ev);
            keep
        });
        before - self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        for i in 0..100 {
            q.schedule_at(SimTime::from_ns(5), i);
        }
        q.schedule_at(SimTime::from_ns(1), -1);
        assert_eq!(q.pop(), Some((SimTime::from_ns(1), -1)));
        for i in 0..100 {
            assert_eq!(q.pop().unwrap().1, i);
        }
        assert!(q.pop().is_none());
        assert_eq!(q.processed(), 101);
    }

    #[test]
    fn schedule_in_is_relative_to_now() {
        let mut q = EventQueue::new();
        q.schedule_at(SimTime::from_ns(10), 'a');
        q.pop();
        q.schedule_in(SimTime::from_ns(5), 'b');
        assert_eq!(q.pop(), Some((SimTime::from_ns(15), 'b')));
    }

    #[test]
    fn cancel_removes_matching_and_keeps_order() {
        let mut q = EventQueue::new();
        for i in (0..50).rev() {
            q.schedule_at(SimTime::from_ns(i), i);
        }
        assert_eq!(q.cancel(|e| e % 2 == 1), 25);
        let got: Vec<u64> = std::iter::from_fn(|| q.pop().map(|e| e.1)).collect();
        assert_eq!(got, (0..50).step_by(2).collect::<Vec<_>>());
    }

    #[test]
    fn len_and_peek_account_for_the_reused_top() {
        let mut q = EventQueue::new();
        q.schedule_at(SimTime::from_ns(1), 1);
        q.schedule_at(SimTime::from_ns(3), 3);
        assert_eq!(q.pop().unwrap().1, 1);
        assert_eq!(q.len(), 1);
        assert_eq!(q.peek_time(), Some(SimTime::from_ns(3)));
        q.schedule_at(SimTime::from_ns(2), 2);
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop().unwrap().1, 2);
        assert_eq!(q.pop().unwrap().1, 3);
        assert!(q.is_empty());
        assert!(q.pop().is_none());
    }

    proptest! {
        /// Interleaved pops and schedules behave like a sorted reference list.
        #[test]
        fn matches_reference_under_interleaving(ops in proptest::collection::vec((0u64..20, proptest::bool::ANY), 1..400)) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(u64, usize)> = Vec::new();
            let mut now = 0u64;
            for (i, (dt, pop)) in ops.iter().enumerate() {
                if *pop {
                    let got = q.pop().map(|(t, e)| (t.0, e));
                    reference.sort();
                    let want = if reference.is_empty() { None } else { Some(reference.remove(0)) };
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = want { now = t; }
                } else {
                    q.schedule_at(SimTime(now + dt), i);
                    reference.push((now + dt, i));
                }
                prop_assert_eq!(q.len(), reference.len());
            }
        }

        #[test]
        fn pops_sorted_by_time_then_seq(times in proptest::collection::vec(0u64..50, 1..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.schedule_at(SimTime(*t), i);
            }
            let mut last = None;
            while let Some((t, i)) = q.pop() {
                if let Some(l) = last {
                    prop_assert!((t.0, i) > l);
                }
                last = Some((t.0, i));
            }
        }
    }
}

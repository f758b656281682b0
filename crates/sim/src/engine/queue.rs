//! The event queue: a binary min-heap on (time, sequence number). The sequence number is the
//! insertion order, so events scheduled for the same picosecond pop in the order they were
//! scheduled — deterministic tie-breaking, independent of the heap's internal layout.
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::time::SimTime;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
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
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// Pending events ordered by time, FIFO among equal times. Tracks the current time: popping
/// advances it; scheduling in the past is a model bug and panics in debug builds.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0, now: SimTime::ZERO, popped: 0 }
    }

    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), ..Self::new() }
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
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time: at, seq, event });
    }

    /// Schedule `event` `delay` after now.
    #[inline]
    pub fn schedule_in(&mut self, delay: SimTime, event: E) {
        self.schedule_at(self.now + delay, event)
    }

    /// Pop the earliest event and advance time to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.event))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events processed so far (for events-per-second statistics).
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Drop pending events that match `pred` (e.g. a cancelled timer). O(n).
    pub fn cancel(&mut self, mut pred: impl FnMut(&E) -> bool) -> usize {
        let before = self.heap.len();
        self.heap.retain(|e| !pred(&e.event));
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
    fn cancel_removes_matching() {
        let mut q = EventQueue::new();
        q.schedule_at(SimTime::from_ns(1), 1);
        q.schedule_at(SimTime::from_ns(2), 2);
        assert_eq!(q.cancel(|e| *e == 1), 1);
        assert_eq!(q.pop().unwrap().1, 2);
    }

    proptest! {
        #[test]
        fn pops_sorted_by_time_then_seq(times in proptest::collection::vec(0u64..50, 1..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.schedule_at(SimTime(*t), i);
            }
            let mut last = (0u64, 0usize);
            let mut first = true;
            while let Some((t, i)) = q.pop() {
                if !first {
                    prop_assert!((t.0, i) > last);
                }
                first = false;
                last = (t.0, i);
            }
        }
    }
}

//! The Broadcast-lock row's spinlock: one lock every handler takes (`spin_lock(&lock)` around the
//! handler body in the benchmark module), with queueing and the cost of moving the lock's cache
//! line to the next holder.
//!
//! Why this shape: Linux's qspinlock hands the lock over in FIFO order (MCS queue), and each
//! acquisition must pull the lock's line from the previous holder's cache — cheaper inside a
//! socket than across the UPI link. A waiter therefore starts its critical section at
//! `max(arrival, release of the previous holder) + transfer(previous socket → own socket)`.
//! Handlers reach the lock in arrival order (the caller feeds them in event-queue order).
use crate::engine::{SimRng, SimTime};

use super::config::Costs;

/// The lock's state across the handlers of one operation.
#[derive(Debug, Clone)]
pub(super) struct SpinLock {
    /// When the current holder releases it.
    free_at: SimTime,
    /// Socket whose cache holds the line (at the start of an operation: the sender's, which
    /// initialised the benchmark's data).
    holder_socket: u32,
    /// Acquisitions that found the lock held.
    pub contended: u64,
    /// Total time handlers waited for the holder to release, ps.
    pub wait_ps: u128,
}

impl SpinLock {
    /// A lock whose line starts in `home_socket`'s cache.
    pub fn new(home_socket: u32) -> Self {
        SpinLock { free_at: SimTime::ZERO, holder_socket: home_socket, contended: 0, wait_ps: 0 }
    }

    /// A handler on `socket` arriving at `arrive` takes the lock, runs its critical section and
    /// releases it; returns the release time.
    pub fn take(&mut self, arrive: SimTime, socket: u32, c: &Costs, rng: &mut SimRng) -> SimTime {
        if self.free_at > arrive {
            self.contended += 1;
            self.wait_ps += (self.free_at - arrive).ps() as u128;
        }
        let start = arrive.max(self.free_at);
        let transfer = if self.holder_socket == socket { &c.line_transfer_same_socket } else { &c.line_transfer_cross_socket }.sample(rng);
        let release = start + transfer + c.lock_hold.sample(rng);
        self.free_at = release;
        self.holder_socket = socket;
        release
    }
}

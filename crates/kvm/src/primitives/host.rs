//! The host-only primitives: no VM, two threads (or one and a timer), timed with the counter the
//! guest stamps with (`Arch::counter`, the TSC on x86).
//!
//! Why these four: a halted vCPU thread is woken the way any blocked thread is
//! (`kvm_vcpu_kick` → `kvm_vcpu_wake_up` → `rcuwait_wake_up` → `wake_up_process`, Linux 6.x
//! virt/kvm/kvm_main.c), so [`eventfd_wake`] (eventfd_write → `wake_up_locked_poll` →
//! `try_to_wake_up` of a reader blocked in read(2)) is the scheduler part of that wake-up measured
//! without KVM; a polling vCPU thread (`kvm_vcpu_halt`'s poll loop) sees a kick as a store from
//! another CPU, which is [`spin_wake`]; KVM's timer for a halted vCPU is an hrtimer
//! (`apic_timer_fn` → `apic_timer_expired`, arch/x86/kvm/lapic.c), whose expiry lateness a thread
//! polling a timerfd sees ([`hrtimer_spin`]) and a thread sleeping in clock_nanosleep sees with a
//! wake-up on top ([`hrtimer_sleep`]).
//!
//! Each sample is spaced one period from the previous one by spinning, like the device bench's
//! trigger. Hand-written on libc because each is a few calls whose timing is the point.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use vmm_sys_util::eventfd::EventFd;

use crate::arch::VmError;
use crate::arch::{Arch, Imp};
use crate::host::threads;

/// What the host-only primitives need to know.
#[derive(Debug, Clone, Copy)]
pub struct HostRun {
    /// Samples to take (the first is discarded by the caller).
    pub samples: u64,
    pub period: Duration,
    /// Counter frequency (kHz) to turn periods into counter ticks.
    pub khz: u64,
    /// Host CPU for the waiting thread (the CPU the measuring thread runs on too).
    pub pin: Option<usize>,
    /// Another host CPU, for the spinning thread of [`spin_wake`] (a spinner must not share the
    /// measuring thread's CPU).
    pub remote: Option<usize>,
    /// SCHED_FIFO priority for the waiting thread (`--priority`, as the vCPU threads get it).
    pub priority: Option<i32>,
    /// Give up on a sample after this long.
    pub stall: Duration,
}

fn spin_until(t: Instant) {
    while Instant::now() < t {
        std::hint::spin_loop();
    }
}

fn stalled(what: &str, k: u64, stall: Duration) -> VmError {
    VmError::Unsupported(format!("primitive {what}: sample {k} did not complete within {stall:?}"))
}

/// The waiting thread's placement, as a vCPU thread's (`runner::ThreadSetup`).
fn place(pin: Option<usize>, priority: Option<i32>) -> Result<(), VmError> {
    if let Some(c) = pin {
        threads::pin_current(c)?;
    }
    if let Some(p) = priority {
        threads::fifo_current(p)?;
    }
    Ok(())
}

/// A waiter thread that stamps the counter each time `wait` returns, publishing (stamp, count).
struct Waiter {
    stamp: Arc<AtomicU64>,
    seen: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Result<(), VmError>>>,
}

impl Waiter {
    fn spawn(name: &str, r: &HostRun, mut wait: impl FnMut(&AtomicBool) -> bool + Send + 'static) -> Self {
        let (stamp, seen, stop) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
        let (s2, n2, x2) = (stamp.clone(), seen.clone(), stop.clone());
        let (pin_to, prio) = (r.pin, r.priority);
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                place(pin_to, prio)?;
                while !x2.load(Ordering::Acquire) {
                    if wait(&x2) {
                        s2.store(Imp::counter(), Ordering::Release);
                        n2.fetch_add(1, Ordering::AcqRel);
                    }
                }
                Ok(())
            })
            .expect("spawn primitive waiter");
        Waiter { stamp, seen, stop, handle: Some(handle) }
    }

    /// Wait until the waiter has seen `n` events; its stamp for the last one.
    fn stamp_of(&self, n: u64, stall: Duration, what: &str) -> Result<u64, VmError> {
        let t = Instant::now();
        while self.seen.load(Ordering::Acquire) < n {
            if t.elapsed() > stall {
                return Err(stalled(what, n - 1, stall));
            }
            std::hint::spin_loop();
        }
        Ok(self.stamp.load(Ordering::Acquire))
    }

    fn finish(mut self, unblock: impl FnOnce()) -> Result<(), VmError> {
        self.stop.store(true, Ordering::Release);
        unblock();
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            _ => Err(VmError::Unsupported("a primitive's waiter thread panicked".into())),
        }
    }
}

/// Counter ticks from a write to an eventfd until a thread blocked in read(2) on it runs again.
pub fn eventfd_wake(r: &HostRun) -> Result<Vec<i64>, VmError> {
    let fd = EventFd::new(0).map_err(|e| VmError::Setup { step: "eventfd (blocking)", source: e })?;
    let rd = fd.try_clone().map_err(|e| VmError::Setup { step: "eventfd clone", source: e })?;
    let w = Waiter::spawn("prim-eventfd", r, move |stop| rd.read().is_ok() && !stop.load(Ordering::Acquire));
    let mut out = Vec::with_capacity(r.samples as usize);
    let mut next = Instant::now() + r.period;
    for k in 0..r.samples {
        spin_until(next);
        let t0 = Imp::counter();
        fd.write(1).map_err(|e| VmError::Setup { step: "eventfd write", source: e })?;
        let t1 = w.stamp_of(k + 1, r.stall, "eventfd_wake")?;
        out.push(t1 as i64 - t0 as i64);
        next = Instant::now() + r.period;
    }
    w.finish(|| {
        let _ = fd.write(1);
    })?;
    Ok(out)
}

/// Counter ticks from a store on this thread until a thread spinning on it sees it (another CPU
/// when pinned apart).
pub fn spin_wake(r: &HostRun) -> Result<Vec<i64>, VmError> {
    let seq = Arc::new(AtomicU64::new(0));
    let s2 = seq.clone();
    let mut last = 0;
    let w = Waiter::spawn("prim-spin", &HostRun { pin: r.remote, ..*r }, move |stop| loop {
        let v = s2.load(Ordering::Acquire);
        if v != last {
            last = v;
            return true;
        }
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::hint::spin_loop();
    });
    let mut out = Vec::with_capacity(r.samples as usize);
    let mut next = Instant::now() + r.period;
    for k in 0..r.samples {
        spin_until(next);
        let t0 = Imp::counter();
        seq.store(k + 1, Ordering::Release);
        let t1 = w.stamp_of(k + 1, r.stall, "spin_wake")?;
        out.push(t1 as i64 - t0 as i64);
        next = Instant::now() + r.period;
    }
    w.finish(|| {})?;
    Ok(out)
}

fn monotonic() -> libc::timespec {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t
}

fn plus(t: libc::timespec, d: Duration) -> libc::timespec {
    let ns = t.tv_nsec as u64 + d.subsec_nanos() as u64;
    libc::timespec { tv_sec: t.tv_sec + d.as_secs() as libc::time_t + (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

/// How a timer's expiry is waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerWait {
    /// A non-blocking timerfd read in a loop: the hrtimer's expiry as a running thread sees it.
    Spin,
    /// clock_nanosleep(TIMER_ABSTIME): expiry plus the wake-up of the sleeping thread.
    Sleep,
}

/// Counter ticks from a CLOCK_MONOTONIC deadline one period ahead until the waiting thread sees
/// it expire (the deadline is placed on the counter by reading both clocks back to back).
pub fn hrtimer(r: &HostRun, how: TimerWait) -> Result<Vec<i64>, VmError> {
    let r = *r;
    let h = std::thread::Builder::new()
        .name("prim-hrtimer".into())
        .spawn(move || -> Result<Vec<i64>, VmError> {
            place(r.pin, r.priority)?;
            // SAFETY: timerfd_create takes flags only; the fd is closed below.
            let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
            if fd < 0 {
                return Err(VmError::Setup { step: "timerfd_create", source: std::io::Error::last_os_error() });
            }
            let period_ticks = r.period.as_nanos() as u64 * r.khz / 1_000_000;
            let mut out = Vec::with_capacity(r.samples as usize);
            let mut res = Ok(());
            for k in 0..r.samples {
                let now = monotonic();
                let tsc = Imp::counter();
                let deadline = plus(now, r.period);
                let expected = tsc + period_ticks;
                let seen = match how {
                    TimerWait::Spin => {
                        let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: deadline };
                        // SAFETY: fd is a timerfd; spec lives across the call.
                        if unsafe { libc::timerfd_settime(fd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) } != 0 {
                            res = Err(VmError::Setup { step: "timerfd_settime", source: std::io::Error::last_os_error() });
                            break;
                        }
                        let mut buf = 0u64;
                        let t = Instant::now();
                        loop {
                            // SAFETY: reads 8 bytes into `buf`.
                            let n = unsafe { libc::read(fd, &mut buf as *mut u64 as *mut libc::c_void, 8) };
                            if n == 8 {
                                break Imp::counter();
                            }
                            if t.elapsed() > r.stall + r.period {
                                res = Err(stalled("hrtimer_spin", k, r.stall));
                                break 0;
                            }
                        }
                    }
                    TimerWait::Sleep => {
                        // SAFETY: an absolute sleep on CLOCK_MONOTONIC; EINTR just ends it early.
                        unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &deadline, std::ptr::null_mut()) };
                        Imp::counter()
                    }
                };
                if res.is_err() {
                    break;
                }
                out.push(seen as i64 - expected as i64);
            }
            // SAFETY: closing the timerfd created above.
            unsafe { libc::close(fd) };
            res.map(|_| out)
        })
        .expect("spawn hrtimer primitive");
    h.join().map_err(|_| VmError::Unsupported("the hrtimer primitive's thread panicked".into()))?
}

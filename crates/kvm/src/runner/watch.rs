//! What the host watches while the guest runs: it drains the guest's sample ring, ends the run at
//! `--duration` or at the first sample over `--stop-above`, and stops a run whose sample counter
//! has not moved for the watchdog's time — keeping every sample taken so far.
//!
//! The clock and the guest's shared page come in as traits (crosvm tests its irqchip with a fake
//! clock the same way), so all of this is unit-tested without /dev/kvm or real time.
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::collect::main_cycles;
use super::RunError;
use crate::abi::{slot, SharedPage, RING};
use crate::config::{BenchConfig, DISCARDED_FIRST};
use crate::exit::Action;
use crate::host::threads::CpuSamples;
use crate::measurement::Ended;

/// Where "now" comes from.
pub trait Clock {
    fn now(&self) -> Instant;
}

/// The real monotonic clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The run's watcher (see the module doc).
pub struct Watch<'a, P: SharedPage + ?Sized, C: Clock> {
    page: &'a P,
    clock: &'a C,
    cfg: &'a BenchConfig,
    /// Every record taken, in order (device: the host trigger stamp in field 0).
    pub raw: Vec<[u64; 3]>,
    offset: i64,
    stop_cycles: Option<i64>,
    until: Option<Instant>,
    /// The guest was asked to stop (NSAMP lowered).
    stopping: bool,
    pub ended: Option<Ended>,
    pub cpus: CpuSamples,
    tids: Vec<i32>,
}

impl<'a, P: SharedPage + ?Sized, C: Clock> Watch<'a, P, C> {
    pub fn new(page: &'a P, clock: &'a C, cfg: &'a BenchConfig, offset: i64, counter_khz: u64, tids: Vec<i32>) -> Self {
        Watch {
            page,
            clock,
            cfg,
            raw: Vec::new(),
            offset,
            stop_cycles: cfg.stop_above_ns.map(|ns| (ns as u128 * counter_khz as u128 / 1_000_000) as i64),
            until: cfg.duration.map(|d| clock.now() + d),
            stopping: false,
            ended: None,
            cpus: Default::default(),
            tids,
        }
    }

    /// Raw records the guest has completed up to `count` (not yet drained).
    pub fn drain(&mut self, count: u64) -> Result<(), RunError> {
        let have = self.raw.len() as u64;
        if count.saturating_sub(have) > RING {
            return Err(RunError::RingOverrun { ring: RING });
        }
        for k in have..count.min(self.cfg.samples + DISCARDED_FIRST) {
            self.push(self.page.record(k));
        }
        Ok(())
    }

    /// Keep one record; note a sample over the --stop-above threshold.
    pub fn push(&mut self, r: [u64; 3]) {
        let k = self.raw.len() as u64;
        self.raw.push(r);
        if let (None, Some(limit)) = (&self.ended, self.stop_cycles) {
            if k >= DISCARDED_FIRST && main_cycles(self.cfg.kind, &r, self.offset) > limit {
                self.ended = Some(Ended::Above { index: k - DISCARDED_FIRST });
            }
        }
    }

    /// Whether the run has ended (--stop-above) or --duration has passed, marking the latter; no
    /// CPU sampling, so a loop may ask after every sample (`check` samples and tells the guest).
    pub fn due(&mut self) -> bool {
        if self.ended.is_none() && self.until.is_some_and(|u| self.clock.now() >= u) {
            self.ended = Some(Ended::Duration);
        }
        self.ended.is_some()
    }

    /// After each look at the guest: sample the vCPU threads' CPUs, end the run once --duration
    /// has passed, and ask the guest to stop if the run must end. Returns whether it must.
    pub fn check(&mut self) -> bool {
        self.cpus.sample(&self.tids);
        self.due();
        if self.ended.is_some() && !self.stopping {
            // The guest compares its count with NSAMP after each sample: 0 ends it at the next.
            let _ = self.page.set_slot(slot::NSAMP, 0);
            self.stopping = true;
        }
        self.ended.is_some()
    }

    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The configuration being run.
    pub fn cfg(&self) -> &'a BenchConfig {
        self.cfg
    }
}

/// Wait for the guest to finish (timer, ipi), draining its samples and watching the count.
/// `first_sample` is called once, when the first sample appears; `progress` with increments.
pub fn wait_loop<P: SharedPage + ?Sized, C: Clock>(
    w: &mut Watch<'_, P, C>,
    watchdog: Duration,
    rx: &mpsc::Receiver<(u32, Action)>,
    progress: &dyn Fn(u64),
    first_sample: &mut dyn FnMut(),
) -> Result<(), RunError> {
    let mut last = 0;
    let mut last_change = w.now();
    loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok((_, Action::Done)) => {
                let count = w.page.slot(slot::COUNT);
                w.drain(count)?;
                progress(count.saturating_sub(last));
                return Ok(());
            }
            Ok((_, Action::Parked)) | Ok((_, Action::Continue)) | Ok((_, Action::Ready)) => {}
            Ok((_, Action::Fail(e))) => return Err(RunError::Guest(e)),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(RunError::AllVcpusEnded),
        }
        let count = w.page.slot(slot::COUNT);
        w.drain(count)?;
        w.check();
        if count != last {
            if last == 0 {
                first_sample();
            }
            progress(count - last);
            last = count;
            last_change = w.now();
        } else if w.now().duration_since(last_change) > watchdog {
            return Err(RunError::Watchdog { waited: watchdog, count, of: w.cfg.samples + DISCARDED_FIRST });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeMap;

    use super::*;
    use crate::abi::SlotError;
    use crate::config::Bench;

    /// Time moves only when told to (or by `step` at every look).
    struct FakeClock {
        base: Instant,
        at: Cell<Duration>,
        step: Duration,
    }

    impl FakeClock {
        fn new(step: Duration) -> Self {
            FakeClock { base: Instant::now(), at: Cell::new(Duration::ZERO), step }
        }
    }

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            let t = self.at.get();
            self.at.set(t + self.step);
            self.base + t
        }
    }

    /// A guest page whose count advances by `per_look` each time it is read, up to `stop_at`.
    #[derive(Default)]
    struct FakePage {
        slots: RefCell<BTreeMap<u64, u64>>,
        per_look: u64,
        stop_at: u64,
        latency: u64,
    }

    impl SharedPage for FakePage {
        fn slot(&self, s: u64) -> u64 {
            let mut slots = self.slots.borrow_mut();
            if s == slot::COUNT {
                let nsamp = slots.get(&slot::NSAMP).copied().unwrap_or(u64::MAX);
                let c = slots.entry(s).or_insert(0);
                if *c < self.stop_at && nsamp != 0 {
                    *c += self.per_look;
                }
                return *c;
            }
            slots.get(&s).copied().unwrap_or(0)
        }
        fn set_slot(&self, s: u64, v: u64) -> Result<(), SlotError> {
            self.slots.borrow_mut().insert(s, v);
            Ok(())
        }
        fn record(&self, k: u64) -> [u64; 3] {
            // timer records: [_, latency, _]; sample 5 is slow.
            [0, if k == 5 { 10 * self.latency } else { self.latency }, 0]
        }
    }

    fn cfg() -> BenchConfig {
        BenchConfig { kind: Bench::Timer, samples: 100, ..Default::default() }
    }

    #[test]
    fn the_watchdog_fires_when_the_count_stops_and_keeps_the_samples() {
        let page = FakePage { per_look: 1, stop_at: 7, latency: 50, ..Default::default() };
        let clock = FakeClock::new(Duration::from_millis(300));
        let c = cfg();
        let mut w = Watch::new(&page, &clock, &c, 0, 1_000_000, vec![]);
        let (_tx, rx) = mpsc::channel();
        let mut firsts = 0;
        let e = wait_loop(&mut w, Duration::from_secs(2), &rx, &|_| {}, &mut || firsts += 1).unwrap_err();
        assert_eq!(e, RunError::Watchdog { waited: Duration::from_secs(2), count: 7, of: 101 });
        assert!(e.to_string().contains("no progress for 2s after 7 of 101 samples"), "{e}");
        assert_eq!(w.raw.len(), 7, "the samples taken before the stall are kept");
        assert_eq!(firsts, 1);
    }

    #[test]
    fn duration_ends_the_run_and_tells_the_guest() {
        let page = FakePage { per_look: 1, stop_at: 1000, latency: 50, ..Default::default() };
        let clock = FakeClock::new(Duration::from_millis(100));
        let c = BenchConfig { duration: Some(Duration::from_secs(1)), ..cfg() };
        let mut w = Watch::new(&page, &clock, &c, 0, 1_000_000, vec![]);
        let mut looks = 0;
        while !w.check() {
            looks += 1;
            assert!(looks < 100, "--duration never ended the run");
        }
        assert_eq!(w.ended, Some(Ended::Duration));
        // ten steps of 100 ms: the first look at or after 1 s (one now() was spent in new()).
        assert_eq!(looks, 9);
        assert_eq!(page.slots.borrow()[&slot::NSAMP], 0, "NSAMP lowered so the guest stops");
    }

    #[test]
    fn due_marks_the_duration_without_telling_the_guest_yet() {
        let page = FakePage::default();
        let clock = FakeClock::new(Duration::from_millis(400));
        let c = BenchConfig { duration: Some(Duration::from_secs(1)), ..cfg() };
        let mut w = Watch::new(&page, &clock, &c, 0, 1_000_000, vec![]);
        assert!(!w.due() && !w.due(), "0.4 s, 0.8 s");
        assert!(w.due(), "1.2 s: past --duration");
        assert_eq!(w.ended, Some(Ended::Duration));
        assert!(!page.slots.borrow().contains_key(&slot::NSAMP), "only check() lowers NSAMP");
        assert!(w.check());
        assert_eq!(page.slots.borrow()[&slot::NSAMP], 0);
    }

    #[test]
    fn stop_above_keeps_the_sample_that_crossed() {
        let page = FakePage { per_look: 3, stop_at: 20, latency: 1000, ..Default::default() };
        let clock = FakeClock::new(Duration::from_millis(1));
        // 1 MHz counter (counter_khz 1000): 1000 ticks = 1 ms; stop above 5 ms.
        let c = BenchConfig { stop_above_ns: Some(5_000_000), ..cfg() };
        let mut w = Watch::new(&page, &clock, &c, 0, 1000, vec![]);
        w.drain(10).unwrap();
        // record 5 is 10 ms: kept index 5 − DISCARDED_FIRST.
        assert_eq!(w.ended, Some(Ended::Above { index: 5 - DISCARDED_FIRST }));
        assert!(w.check());
    }

    #[test]
    fn a_ring_overrun_is_an_error_not_silent_loss() {
        let page = FakePage::default();
        let clock = FakeClock::new(Duration::ZERO);
        let c = cfg();
        let mut w = Watch::new(&page, &clock, &c, 0, 1000, vec![]);
        assert_eq!(w.drain(RING + 1), Err(RunError::RingOverrun { ring: RING }));
        assert!(w.drain(RING).is_ok());
    }

    #[test]
    fn a_failing_vcpu_ends_the_wait_with_its_reason() {
        let page = FakePage { per_look: 0, ..Default::default() };
        let clock = FakeClock::new(Duration::ZERO);
        let c = cfg();
        let mut w = Watch::new(&page, &clock, &c, 0, 1000, vec![]);
        let (tx, rx) = mpsc::channel();
        tx.send((1, Action::Fail("vCPU 1: boom".into()))).unwrap();
        assert_eq!(wait_loop(&mut w, Duration::from_secs(1), &rx, &|_| {}, &mut || {}), Err(RunError::Guest("vCPU 1: boom".into())));
        drop(tx);
        assert_eq!(wait_loop(&mut w, Duration::from_secs(1), &rx, &|_| {}, &mut || {}), Err(RunError::AllVcpusEnded));
    }
}

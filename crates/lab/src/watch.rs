//! Watching the lab's console: every wait is bounded. A [`Watcher`] is fed lines with the time
//! they arrived (from a [`Clock`]; tests use a fake one) and says when the run is over: the
//! guest's `end` line, an error/fault line, a Xen panic, or a bound that passed — boot (QEMU start
//! to the guest's `start` line), first sample, silence between lines, and the whole run.
use std::time::{Duration, Instant};

pub trait Clock {
    fn now(&self) -> Duration;
}

/// Wall time since the watcher started.
pub struct RealClock(pub Instant);

impl Clock for RealClock {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub boot: Duration,
    pub first_sample: Duration,
    pub silence: Duration,
    pub total: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The guest's `end` line arrived.
    Done,
    /// The guest reported an error or a fault, or Xen panicked: the line.
    Failed(String),
    /// A bound passed: which, and how long it was.
    TimedOut(String),
}

/// What a QEMU session's console watcher does; [`Watcher`] for the Xen guest's report,
/// `kvm::KvmWatcher` for the KVM lab's framed file.
pub trait Watch {
    /// One console line at `now`; `Some` when the run is over.
    fn line(&mut self, line: &str, now: Duration) -> Option<Outcome>;
    /// How long to wait for the next line from `now`.
    fn wait_for(&self, now: Duration) -> Duration;
    /// `Some` when a bound has passed at `now`.
    fn check(&self, now: Duration) -> Option<Outcome>;
}

impl Watch for Watcher {
    fn line(&mut self, line: &str, now: Duration) -> Option<Outcome> {
        Watcher::line(self, line, now)
    }
    fn wait_for(&self, now: Duration) -> Duration {
        Watcher::wait_for(self, now)
    }
    fn check(&self, now: Duration) -> Option<Outcome> {
        Watcher::check(self, now)
    }
}

#[derive(Debug)]
pub struct Watcher {
    bounds: Bounds,
    pub started: Option<Duration>,
    pub first_sample: Option<Duration>,
    last_line: Duration,
    pub samples: u64,
}

/// The record kind of an `@irqlab v1 <seq> <kind> …` line, if it is one.
fn kind(line: &str) -> Option<(&str, &str)> {
    let rest = &line[line.find(armguest::console::MARKER)? + armguest::console::MARKER.len()..];
    let mut it = rest.splitn(3, ' ');
    let _seq = it.next()?;
    Some((it.next()?, it.next().unwrap_or("")))
}

impl Watcher {
    pub fn new(bounds: Bounds) -> Watcher {
        Watcher { bounds, started: None, first_sample: None, last_line: Duration::ZERO, samples: 0 }
    }

    /// One console line at `now`; `Some` when the run is over.
    pub fn line(&mut self, line: &str, now: Duration) -> Option<Outcome> {
        self.last_line = now;
        if line.contains("Panic on CPU") || line.contains("Xen BUG at") {
            return Some(Outcome::Failed(line.trim_end().to_string()));
        }
        match kind(line) {
            Some(("start", rest)) if !rest.contains("bench=spin") => self.started = Some(now),
            Some(("t", _)) | Some(("i", _)) => {
                self.first_sample.get_or_insert(now);
                self.samples += 1;
            }
            Some(("end", _)) => return Some(Outcome::Done),
            Some(("error", _)) | Some(("fault", _)) => return Some(Outcome::Failed(line.trim_end().to_string())),
            _ => {}
        }
        None
    }

    /// The bound in force at `now` and when it passes.
    fn deadline(&self) -> (Duration, String) {
        let b = &self.bounds;
        let mut d = vec![(b.total, format!("the whole run took longer than {} s", b.total.as_secs()))];
        match (self.started, self.first_sample) {
            (None, _) => d.push((b.boot, format!("no `start` line from the guest within {} s of QEMU's start (Xen or the guest did not boot)", b.boot.as_secs()))),
            (Some(s), None) => d.push((s + b.first_sample, format!("no sample within {} s of the guest's start", b.first_sample.as_secs()))),
            _ => {}
        }
        if self.started.is_some() {
            d.push((self.last_line + b.silence, format!("the console was silent for {} s after {} sample(s)", b.silence.as_secs(), self.samples)));
        }
        d.into_iter().min_by_key(|x| x.0).expect("at least the total bound")
    }

    /// How long to wait for the next line from `now`.
    pub fn wait_for(&self, now: Duration) -> Duration {
        self.deadline().0.saturating_sub(now)
    }

    /// `Some` when a bound has passed at `now`.
    pub fn check(&self, now: Duration) -> Option<Outcome> {
        let (at, why) = self.deadline();
        (now >= at).then_some(Outcome::TimedOut(why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct Fake(Cell<u64>);
    impl Clock for Fake {
        fn now(&self) -> Duration {
            Duration::from_secs(self.0.get())
        }
    }

    fn bounds() -> Bounds {
        Bounds { boot: Duration::from_secs(100), first_sample: Duration::from_secs(20), silence: Duration::from_secs(30), total: Duration::from_secs(1000) }
    }

    /// Drives a watcher over (seconds, line) pairs the way the lab's loop does.
    fn drive(lines: &[(u64, &str)]) -> (Outcome, Watcher, u64) {
        let clock = Fake(Cell::new(0));
        let mut w = Watcher::new(bounds());
        let mut it = lines.iter().peekable();
        loop {
            let now = clock.now();
            let wait = w.wait_for(now).as_secs();
            match it.peek() {
                Some((t, l)) if *t <= now.as_secs() + wait => {
                    clock.0.set(*t);
                    it.next();
                    if let Some(o) = w.line(l, clock.now()) {
                        return (o, w, clock.0.get());
                    }
                }
                _ => {
                    clock.0.set(now.as_secs() + wait);
                    if let Some(o) = w.check(clock.now()) {
                        return (o, w, clock.0.get());
                    }
                }
            }
        }
    }

    const START: &str = "(XEN) DOM1: @irqlab v1 0 start bench=timer wait=wfi period=1 samples=2 warmup=0 freq=1 report=console abi=1 *00";

    #[test]
    fn a_complete_run_ends_at_the_end_line() {
        let (o, w, t) = drive(&[
            (10, "(XEN) Xen version 4.17"),
            (12, START),
            (13, "(XEN) DOM1: @irqlab v1 1 t 0 5 *00"),
            (14, "(XEN) DOM1: @irqlab v1 2 t 1 5 *00"),
            (15, "(XEN) DOM1: @irqlab v1 3 end samples=2 *00"),
        ]);
        assert_eq!(o, Outcome::Done);
        assert_eq!((w.started, w.first_sample, w.samples, t), (Some(Duration::from_secs(12)), Some(Duration::from_secs(13)), 2, 15));
    }

    #[test]
    fn a_guest_that_never_starts_is_ended_at_the_boot_bound() {
        let (o, _, t) = drive(&[(5, "(XEN) Xen version 4.17"), (50, "(XEN) Initializing Credit2 scheduler")]);
        assert!(matches!(&o, Outcome::TimedOut(w) if w.contains("no `start` line")), "{o:?}");
        assert_eq!(t, 100);
    }

    #[test]
    fn a_neighbour_start_line_is_not_the_guest_starting() {
        let spin = "(XEN) DOM2: @irqlab v1 0 start bench=spin wait=wfi *00";
        let (o, _, t) = drive(&[(5, spin)]);
        assert!(matches!(o, Outcome::TimedOut(_)));
        assert_eq!(t, 100);
    }

    #[test]
    fn no_first_sample_and_silence_bounds() {
        let (o, _, t) = drive(&[(10, START)]);
        assert!(matches!(&o, Outcome::TimedOut(w) if w.contains("no sample within 20 s")), "{o:?}");
        assert_eq!(t, 30);
        let (o, _, t) = drive(&[(10, START), (11, "(XEN) DOM1: @irqlab v1 1 t 0 5 *00")]);
        assert!(matches!(&o, Outcome::TimedOut(w) if w.contains("silent for 30 s after 1 sample")), "{o:?}");
        assert_eq!(t, 41);
    }

    #[test]
    fn total_bound_holds_even_with_steady_output() {
        let mut lines = vec![(1u64, START.to_string())];
        for s in 2..2000u64 {
            lines.push((s, format!("(XEN) DOM1: @irqlab v1 {s} t {s} 5 *00")));
        }
        let refs: Vec<(u64, &str)> = lines.iter().map(|(t, l)| (*t, l.as_str())).collect();
        let (o, _, t) = drive(&refs);
        assert!(matches!(&o, Outcome::TimedOut(w) if w.contains("whole run")), "{o:?}");
        assert_eq!(t, 1000);
    }

    #[test]
    fn faults_and_panics_end_the_run() {
        let (o, _, _) = drive(&[(1, START), (2, "(XEN) DOM1: @irqlab v1 1 fault vector=4 esr=1 elr=2 *00")]);
        assert!(matches!(o, Outcome::Failed(l) if l.contains("fault")));
        let (o, _, _) = drive(&[(1, "(XEN) Panic on CPU 0:")]);
        assert!(matches!(o, Outcome::Failed(_)));
    }
}

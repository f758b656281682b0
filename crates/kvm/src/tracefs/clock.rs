//! Putting a nanosecond trace clock on the counter's time line, for hosts without a trace clock
//! that counts in the guest's own counter (x86 has `x86-tsc`; arm64 has none: its trace clocks
//! are all ns).
//!
//! Two problems, two steps:
//! 1. **Resolution.** With an ns clock the `trace` text prints `seconds.microseconds`
//!    (kernel/trace/trace_output.c `trace_print_time`, flag `TRACE_FILE_TIME_IN_NS`, rounded by
//!    `ns2usecs`): 1 µs, too
//!    coarse. The same buffer read with `options/raw` set prints `pid cpu ts` with the full ns
//!    timestamp (`print_raw_fmt`) but no fields. Reading `trace` does not consume the buffer, so
//!    the instance is read twice with tracing stopped and the two texts are zipped line by line;
//!    each pair is checked (same pid, same CPU, same microsecond) so a mismatch is an error, never
//!    a silently shifted event.
//! 2. **Time base.** `mono_raw` (`ktime_get_raw_fast_ns`, the clock of CLOCK_MONOTONIC_RAW) is a
//!    fixed linear function of the arch counter (the clocksource's mult/shift, never slewed by
//!    NTP). The run reads (counter, CLOCK_MONOTONIC_RAW) pairs before and after it, each bracketed
//!    by two counter reads, and maps every event's ns onto counter ticks with the line through
//!    them. The guest's stamps are counter ticks, so the splitter then works unchanged.
use super::parse::parse_line;

/// Why a ns trace could not be put on the counter's time line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ClockError {
    #[error("trace texts disagree at event {index}: `{text}` vs raw `{raw}` ({why}); the buffer changed between the two reads")]
    Mismatch { index: usize, text: String, raw: String, why: &'static str },
    #[error("the raw trace has {raw} events, the formatted one {text}")]
    Count { text: usize, raw: usize },
    #[error("counter/clock pairs do not span any time (counter {0} → {1}); cannot map ns to ticks")]
    Degenerate(u64, u64),
}

/// One reading of the counter and CLOCK_MONOTONIC_RAW, and how far apart the two counter reads
/// that bracket the clock read were (its uncertainty, in ticks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub ticks: u64,
    pub ns: u64,
    pub spread: u64,
}

/// Take the tightest of a few bracketed readings.
pub fn read_pair(counter: &dyn Fn() -> u64) -> Pair {
    let mut best: Option<Pair> = None;
    for _ in 0..16 {
        let a = counter();
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
        let b = counter();
        let p = Pair { ticks: a / 2 + b / 2 + (a % 2 + b % 2) / 2, ns: ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64, spread: b.saturating_sub(a) };
        if best.is_none_or(|q| p.spread < q.spread) {
            best = Some(p);
        }
    }
    best.expect("16 readings")
}

/// ns → counter ticks, the line through two pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterMap {
    pub a: Pair,
    pub b: Pair,
}

impl CounterMap {
    pub fn new(a: Pair, b: Pair) -> Result<CounterMap, ClockError> {
        if b.ticks <= a.ticks || b.ns <= a.ns {
            return Err(ClockError::Degenerate(a.ticks, b.ticks));
        }
        Ok(CounterMap { a, b })
    }

    /// Ticks per second the two pairs imply (compare with CNTFRQ).
    pub fn ticks_per_s(&self) -> f64 {
        (self.b.ticks - self.a.ticks) as f64 * 1e9 / (self.b.ns - self.a.ns) as f64
    }

    pub fn to_ticks(&self, ns: u64) -> u64 {
        let (dt, dn) = ((self.b.ticks - self.a.ticks) as i128, (self.b.ns - self.a.ns) as i128);
        let off = (ns as i128 - self.a.ns as i128) * dt;
        // round to nearest (dn > 0; floor division so times before the first pair round alike)
        let q = (2 * off + dn).div_euclid(2 * dn);
        (self.a.ticks as i128 + q).max(0) as u64
    }

    /// How the map was made, for the result's notes.
    pub fn describe(&self, counter_hz: u64) -> String {
        format!(
            "breakdown: trace clock mono_raw (ns) mapped onto the counter through two (counter, CLOCK_MONOTONIC_RAW) pairs {:.3} s apart: {:.0} ticks/s (counter frequency {counter_hz} Hz), reads bracketed within {} and {} ticks",
            (self.b.ns - self.a.ns) as f64 / 1e9,
            self.ticks_per_s(),
            self.a.spread,
            self.b.spread
        )
    }
}

fn is_event_line(l: &str) -> bool {
    let t = l.trim();
    !t.is_empty() && !t.starts_with('#') && !t.contains("[LOST ")
}

/// `pid cpu ns …` of a line read with `options/raw`.
fn raw_fields(l: &str) -> Option<(i32, u32, u64)> {
    let mut w = l.split_whitespace();
    Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?, w.next()?.parse().ok()?))
}

/// `seconds.micros:` → µs.
fn micros(ts_word: &str) -> Option<u64> {
    let (s, us) = ts_word.trim_end_matches(':').split_once('.')?;
    Some(s.parse::<u64>().ok()? * 1_000_000 + us.parse::<u64>().ok()?)
}

/// The formatted `trace` text with every event's `seconds.micros:` timestamp replaced by counter
/// ticks, from the same buffer read with `options/raw` (see the module doc). Comment and
/// lost-event lines are kept as they are.
pub fn retime(text: &str, raw: &str, map: &CounterMap) -> Result<String, ClockError> {
    let mut raws = raw.lines().filter(|l| is_event_line(l));
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let (mut n_text, mut n_raw) = (0, 0);
    for line in text.lines() {
        if !is_event_line(line) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        n_text += 1;
        let Some(r) = raws.next() else { continue };
        n_raw += 1;
        let bad = |why| ClockError::Mismatch { index: n_text - 1, text: line.trim().chars().take(100).collect(), raw: r.trim().chars().take(60).collect(), why };
        let (pid, cpu, ns) = raw_fields(r).ok_or_else(|| bad("raw line is not `pid cpu ns`"))?;
        let ts_word = line.split_whitespace().find(|w| w.ends_with(':') && micros(w).is_some()).ok_or_else(|| bad("no `seconds.micros:` timestamp"))?;
        let retimed = line.replacen(ts_word, &format!("{}:", map.to_ticks(ns)), 1);
        let e = parse_line(&retimed).ok_or_else(|| bad("formatted line is not an event"))?;
        if (e.pid, e.cpu) != (pid, cpu) {
            return Err(bad("pid or CPU differ"));
        }
        // ns2usecs (kernel/trace/trace.h) rounds to the nearest microsecond
        if micros(ts_word) != Some((ns + 500) / 1000) {
            return Err(bad("timestamps differ"));
        }
        out.push_str(&retimed);
        out.push('\n');
    }
    n_raw += raws.count();
    if n_raw != n_text {
        return Err(ClockError::Count { text: n_text, raw: n_raw });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracefs::parse::parse_trace;

    fn map() -> CounterMap {
        // 62.5 MHz: 16 ns per tick; tick 1000 at 5 s.
        CounterMap::new(Pair { ticks: 1000, ns: 5_000_000_000, spread: 1 }, Pair { ticks: 1000 + 62_500_000, ns: 6_000_000_000, spread: 2 }).unwrap()
    }

    #[test]
    fn the_map_follows_the_line_through_its_pairs() {
        let m = map();
        assert_eq!(m.ticks_per_s().round(), 62_500_000.0);
        assert_eq!(m.to_ticks(5_000_000_000), 1000);
        assert_eq!(m.to_ticks(5_000_000_160), 1010);
        assert_eq!(m.to_ticks(5_000_000_167), 1010, "rounds to the nearest tick");
        assert_eq!(m.to_ticks(5_000_000_169), 1011);
        assert_eq!(m.to_ticks(4_999_999_840), 990, "before the first pair too");
        assert!(CounterMap::new(m.b, m.a).is_err());
        assert!(m.describe(62_500_000).contains("62500000 ticks/s"));
    }

    const TEXT: &str = "# tracer: nop\n#\n          vcpu 0-77      [001] d..1.     5.000001: kvm_entry: PC: 0x0000000040080200\nCPU:1 [LOST 3 EVENTS]\n   ksoftirqd/1-15  [001] d.s2.     5.000002: sched_wakeup: comm=vcpu 0 pid=77 prio=120 target_cpu=001\n";
    const RAW: &str = "# tracer: nop\n77 1 5000001160 type: 1234\nCPU:1 [LOST 3 EVENTS]\n15 1 5000002499 type: 300\n";

    #[test]
    fn retime_puts_full_ns_on_the_counter() {
        let out = retime(TEXT, RAW, &map()).unwrap();
        let t = parse_trace(&out);
        assert_eq!(t.lost_events, 3);
        assert_eq!(t.events.iter().map(|e| e.ts).collect::<Vec<_>>(), [1000 + 73, 1000 + 156]);
        assert_eq!(t.events[1].field("pid"), Some("77"), "fields are kept");
        assert!(out.starts_with("# tracer: nop\n#\n"));
    }

    #[test]
    fn retime_refuses_texts_that_do_not_pair() {
        let shifted = RAW.replace("5000001160", "5000001500");
        assert!(retime(TEXT, &RAW.replace("5000001160", "5000000500"), &map()).is_ok(), "rounded up to 5.000001");
        assert!(matches!(retime(TEXT, &shifted, &map()), Err(ClockError::Mismatch { why: "timestamps differ", index: 0, .. })));
        let other_pid = RAW.replace("15 1 ", "16 1 ");
        assert!(matches!(retime(TEXT, &other_pid, &map()), Err(ClockError::Mismatch { why: "pid or CPU differ", index: 1, .. })));
        let short = RAW.replace("15 1 5000002499 type: 300\n", "");
        assert_eq!(retime(TEXT, &short, &map()), Err(ClockError::Count { text: 2, raw: 1 }));
        let long = format!("{RAW}15 1 5000003999 type: 300\n");
        assert_eq!(retime(TEXT, &long, &map()), Err(ClockError::Count { text: 2, raw: 3 }));
    }

    #[test]
    fn a_pair_is_bracketed_by_the_counter() {
        let c = std::cell::Cell::new(100u64);
        let p = read_pair(&|| {
            c.set(c.get() + 3);
            c.get()
        });
        assert_eq!(p.spread, 3);
        assert!(p.ns > 0);
    }
}

//! Reading the text of a tracefs instance's `trace` file (Documentation/trace/ftrace.rst,
//! "Output format"): `comm-pid [cpu] flags timestamp: event: body`, with the `x86-tsc` clock so
//! timestamps are raw TSC counts. Only the fields the splitter needs are extracted; the body keeps
//! the event's own print format and is queried with [`Event::field`] / [`Event::word_after`].
//!
//! Lines that are not events (headers, `#` comments, `CPU:1 [LOST 12 EVENTS]` markers) are
//! skipped but counted, so lost buffers are reported instead of silently dropped.

/// One trace event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Timestamp in TSC cycles (trace_clock `x86-tsc`).
    pub ts: u64,
    /// Thread id of the task that was running when the event fired (`common_pid`).
    pub pid: i32,
    pub cpu: u32,
    /// Event name without the system, e.g. `kvm_apic_accept_irq`.
    pub name: String,
    /// The event's formatted fields.
    pub body: String,
}

impl Event {
    /// The value of `key=value` in the body (`sched_wakeup: comm=vcpu0 pid=123 …`).
    pub fn field(&self, key: &str) -> Option<&str> {
        self.body.split_whitespace().find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }

    /// The word that follows `word` in the body (`kvm_apic_accept_irq: apicid 0 vec 236 …`).
    pub fn word_after(&self, word: &str) -> Option<&str> {
        let mut it = self.body.split_whitespace();
        while let Some(w) = it.next() {
            if w == word {
                return it.next();
            }
        }
        None
    }
}

/// A parsed trace: events in timestamp order, plus what could not be used.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub events: Vec<Event>,
    /// Events the ring buffer reported lost (`[LOST n EVENTS]` markers).
    pub lost_events: u64,
    /// Non-comment lines that did not parse as events (first few kept for the message).
    pub unparsed: u64,
    pub unparsed_examples: Vec<String>,
}

/// Parse one event line; `None` for anything else.
pub fn parse_line(line: &str) -> Option<Event> {
    // The comm may contain spaces and dashes: anchor on the " [NNN] " CPU field instead.
    let open = find_cpu_field(line)?;
    let (task, rest) = (line[..open].trim(), &line[open + 1..]);
    let close = rest.find(']')?;
    let cpu = rest[..close].trim().parse().ok()?;
    let (_comm, pid) = task.rsplit_once('-')?;
    let pid = pid.parse().ok()?;
    let rest = rest[close + 1..].trim_start();
    // Optional irq-flags column (e.g. `d.h2.`), then `timestamp:`.
    let (first, tail) = rest.split_once(' ')?;
    let (ts_word, after) = if first.ends_with(':') { (first, tail) } else { tail.trim_start().split_once(' ')? };
    let ts = ts_word.strip_suffix(':')?.parse().ok()?;
    let (name, body) = after.trim_start().split_once(':')?;
    Some(Event { ts, pid, cpu, name: name.trim().to_string(), body: body.trim().to_string() })
}

fn find_cpu_field(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(off) = line[i..].find(" [") {
        let open = i + off + 1;
        let digits = b[open + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && b.get(open + 1 + digits) == Some(&b']') {
            return Some(open);
        }
        i = open;
    }
    None
}

/// Parse a whole `trace` file. Events are sorted by timestamp (the text is merged per CPU by
/// the kernel already; sorting makes hand-edited and concatenated traces safe too).
pub fn parse_trace(text: &str) -> Trace {
    let mut t = Trace::default();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(n) = lost_marker(l) {
            t.lost_events += n;
            continue;
        }
        match parse_line(line) {
            Some(e) => t.events.push(e),
            None => {
                t.unparsed += 1;
                if t.unparsed_examples.len() < 3 {
                    t.unparsed_examples.push(l.chars().take(120).collect());
                }
            }
        }
    }
    t.events.sort_by_key(|e| e.ts);
    t
}

/// `CPU:1 [LOST 12 EVENTS]` → 12.
fn lost_marker(l: &str) -> Option<u64> {
    let i = l.find("[LOST ")?;
    l[i + 6..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_with_odd_comms_and_flags() {
        let e = parse_line("      lto cgu.05-30420   [000] d.h3. 4737342379180: sched_wakeup: comm=vcpu0 pid=30455 prio=120 target_cpu=000").unwrap();
        assert_eq!((e.ts, e.pid, e.cpu, e.name.as_str()), (4737342379180, 30420, 0, "sched_wakeup"));
        assert_eq!(e.field("pid"), Some("30455"));
        assert_eq!(e.field("comm"), Some("vcpu0"));
        let e = parse_line("           vcpu0-30455   [001] ..... 4737349415520: kvm_apic_accept_irq: apicid 0 vec 236 (Fixed|edge)").unwrap();
        assert_eq!(e.word_after("vec"), Some("236"));
        assert_eq!(e.word_after("apicid"), Some("0"));
        // no flags column (options/irq-info off)
        let e = parse_line("  my-task-name-7 [1] 12345: kvm_vcpu_wakeup: wait time 3 ns, polling valid").unwrap();
        assert_eq!((e.pid, e.ts, e.name.as_str()), (7, 12345, "kvm_vcpu_wakeup"));
    }

    #[test]
    fn rejects_non_events_and_counts_lost() {
        assert!(parse_line("# tracer: nop").is_none());
        assert!(parse_line("vcpu0-1 [000] ..... 1.234567: kvm_entry: vcpu 0").is_none(), "non-TSC clock timestamps are refused");
        let t = parse_trace("# hdr\nCPU:1 [LOST 12 EVENTS]\ngarbage line\n a-2 [000] ..... 20: x: b\n a-2 [000] ..... 10: y: c\n");
        assert_eq!(t.lost_events, 12);
        assert_eq!(t.unparsed, 1);
        assert_eq!(t.events.iter().map(|e| e.ts).collect::<Vec<_>>(), [10, 20]);
    }
}

//! Splitting each sample into segments: from its start stamp (deadline or trigger, host TSC)
//! through the milestones of its path (host trace events on the `x86-tsc` clock) to the guest's
//! arrival stamp. The segments of a matched sample add up to its measured latency exactly.
//!
//! For sample k the search window is (arrival of k−1, arrival of k]. Milestone i is the first
//! matching event at or after milestone i−1 (a milestone marked `early_ok` may precede the start
//! stamp; its segment is then zero; other events before the start stamp are ignored). A sample is *unmatched* and counted, never dropped silently,
//! when a required milestone has no event in its window (`missing`: lost or never emitted) or its
//! only events come before the previous milestone (`out of order`), or when the arrival stamp
//! precedes the last host event.
use std::collections::BTreeMap;

use results::BreakdownBuilder;

use super::parse::{Event, Trace};
use super::path::{Context, Milestone, Roles, GUEST_SEGMENT};

pub use crate::measurement::Stamps;

/// The outcome of splitting every sample of a run.
#[derive(Debug, Clone, Default)]
pub struct Split {
    pub breakdown: BreakdownBuilder,
    /// The path actually used (milestones never seen in the run removed).
    pub path: Vec<&'static str>,
    /// Milestones enabled but never seen in this run's trace.
    pub never_seen: Vec<&'static str>,
    pub matched: u64,
    pub unmatched: u64,
    /// Per milestone event: samples in which it was missing.
    pub missing: BTreeMap<&'static str, u64>,
    /// Samples with events out of order (including an arrival before the last host event).
    pub out_of_order: u64,
    /// The first few out-of-order samples: which milestone came too early.
    pub out_of_order_examples: Vec<String>,
    /// Optional milestones skipped (e.g. no `sched_wakeup`: the vCPU was caught polling).
    pub skipped: BTreeMap<&'static str, u64>,
    /// Sum of matched samples' latencies in ps (their mean is what the segments add up to).
    pub matched_total_ps: u128,
    /// The first `keep` matched samples' paths, rendered.
    pub paths: Vec<String>,
    /// Every matched sample's time in each segment, ps (path order), for percentiles.
    pub per_segment: Vec<(&'static str, Vec<u64>)>,
}

enum Found {
    At(u64),
    Skipped,
    Missing,
    OutOfOrder,
}

fn ps(cycles: u64, tsc_khz: u64) -> u64 {
    (cycles as u128 * 1_000_000_000 / tsc_khz.max(1) as u128) as u64
}

/// Split `samples` (in sample order) along `path`. `label` names rendered paths (`timer #3`).
pub fn split(trace: &Trace, path: &[Milestone], roles: &Roles, stamps: &[Stamps], tsc_khz: u64, keep: usize, label: &str) -> Split {
    let ctx = Context::learn(&trace.events, roles);
    // Only the events that can be milestones, tagged with the milestones they match.
    let relevant: Vec<(&Event, Vec<usize>)> = trace
        .events
        .iter()
        .filter_map(|e| {
            let ms: Vec<usize> = (0..path.len()).filter(|&i| path[i].matches(e, roles, &ctx)).collect();
            (!ms.is_empty()).then_some((e, ms))
        })
        .collect();
    let seen = |i: usize| relevant.iter().any(|(_, ms)| ms.contains(&i));
    let used: Vec<usize> = (0..path.len()).filter(|&i| seen(i)).collect();
    let mut out = Split {
        path: used.iter().map(|&i| path[i].segment).chain([GUEST_SEGMENT]).collect(),
        never_seen: (0..path.len()).filter(|&i| !seen(i)).map(|i| path[i].event).collect(),
        ..Default::default()
    };
    let mut prev_arrival = 0u64;
    for (k, s) in stamps.iter().enumerate() {
        let lo = relevant.partition_point(|(e, _)| e.ts <= prev_arrival);
        let hi = relevant.partition_point(|(e, _)| e.ts <= s.arrival);
        let window = &relevant[lo..hi.max(lo)];
        prev_arrival = prev_arrival.max(s.arrival);
        let mut t = s.start;
        let mut segs: Vec<(&'static str, u64)> = Vec::with_capacity(used.len() + 1);
        let mut failed = None;
        let mut required = false;
        for &i in &used {
            let m = &path[i];
            let optional = m.optional && !std::mem::take(&mut required);
            let found = {
                // Events before the start stamp belong to an earlier phase (vCPU start-up, the
                // previous sample's tail), except for a milestone that may legitimately be early.
                let floor = if m.early_ok { 0 } else { s.start };
                let cands = window.iter().filter(|(e, ms)| e.ts >= floor && ms.contains(&i)).map(|(e, _)| e.ts);
                let from = if m.early_ok && segs.is_empty() { 0 } else { t };
                match cands.clone().find(|&ts| ts >= from) {
                    Some(ts) => Found::At(ts),
                    None if cands.clone().next().is_some() => Found::OutOfOrder,
                    None if optional => Found::Skipped,
                    None => Found::Missing,
                }
            };
            match found {
                Found::At(ts) => {
                    required = m.requires_next;
                    let at = ts.max(t);
                    segs.push((m.segment, at - t));
                    t = at;
                }
                Found::Skipped => {
                    *out.skipped.entry(m.name()).or_default() += 1;
                    segs.push((m.segment, 0));
                }
                Found::Missing => {
                    *out.missing.entry(m.name()).or_default() += 1;
                    failed.get_or_insert(false);
                }
                Found::OutOfOrder => {
                    if failed.is_none() && out.out_of_order_examples.len() < 3 {
                        let after = segs.last().map_or("the start stamp", |x| x.0);
                        out.out_of_order_examples.push(format!("sample {k}: {} only before `{after}`", m.name()));
                    }
                    failed = Some(true);
                }
            }
        }
        if failed.is_none() && s.arrival < t {
            failed = Some(true);
        }
        match failed {
            Some(out_of_order) => {
                out.unmatched += 1;
                if out_of_order {
                    out.out_of_order += 1;
                }
            }
            None => {
                segs.push((GUEST_SEGMENT, s.arrival - t));
                out.matched += 1;
                for (name, c) in &segs {
                    out.breakdown.add_ps(name, ps(*c, tsc_khz));
                    match out.per_segment.iter_mut().find(|x| x.0 == *name) {
                        Some(x) => x.1.push(ps(*c, tsc_khz)),
                        None => out.per_segment.push((name, vec![ps(*c, tsc_khz)])),
                    }
                }
                out.matched_total_ps += segs.iter().map(|(_, c)| ps(*c, tsc_khz) as u128).sum::<u128>();
                if out.paths.len() < keep {
                    out.paths.push(render(&format!("{label} #{k}"), s, &segs, tsc_khz));
                }
            }
        }
    }
    out
}

fn ns(cycles: u64, tsc_khz: u64) -> f64 {
    ps(cycles, tsc_khz) as f64 / 1000.0
}

/// One sample's path, one line per segment, as `irqlab sim --trace` prints a simulated one.
fn render(label: &str, s: &Stamps, segs: &[(&str, u64)], tsc_khz: u64) -> String {
    let total = s.arrival.saturating_sub(s.start);
    let mut r = format!("{label} @ tsc {}: total {:.1} ns\n", s.start, ns(total, tsc_khz));
    let mut at = 0;
    for (name, c) in segs {
        r.push_str(&format!("  +{:>12}  {:<28} {:.1} ns\n", format!("{:.1} ns", ns(at, tsc_khz)), name, ns(*c, tsc_khz)));
        at += c;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BenchConfig;
    use crate::tracefs::parse::parse_trace;
    use crate::tracefs::path::path_for;

    fn roles() -> Roles {
        Roles { target_tid: 10, source_tid: 10, target_apic: 0, vector: 236, all_tids: vec![10] }
    }

    /// Two timer samples on a 1 GHz clock (1 cycle = 1 ns), the second one polled (no sched_wakeup).
    const TRACE: &str = "\
 vcpu0-10 [000] d..2. 100: hrtimer_start: hrtimer=0000aaaa function=apic_timer_fn expires=1 softexpires=1 mode=ABS|HARD
 other-3 [000] d.h.. 1010: hrtimer_expire_entry: hrtimer=0000aaaa function=apic_timer_fn now=2
 other-3 [000] d.h3. 1020: sched_wakeup: comm=vcpu0 pid=10 prio=120 target_cpu=000
 vcpu0-10 [000] ..... 1500: kvm_vcpu_wakeup: wait time 3 ns, polling valid
 vcpu0-10 [000] ..... 1510: kvm_apic_accept_irq: apicid 0 vec 236 (Fixed|edge)
 vcpu0-10 [000] d..2. 1600: hrtimer_start: hrtimer=0000aaaa function=apic_timer_fn expires=1 softexpires=1 mode=ABS|HARD
 other-3 [000] d.h.. 2995: hrtimer_expire_entry: hrtimer=0000aaaa function=apic_timer_fn now=2
 vcpu0-10 [000] ..... 3050: kvm_vcpu_wakeup: wait time 3 ns, polling valid
 vcpu0-10 [000] ..... 3060: kvm_apic_accept_irq: apicid 0 vec 236 (Fixed|edge)
";

    #[test]
    fn segments_add_up_and_optional_wakeup_is_zero() {
        let t = parse_trace(TRACE);
        let stamps = [Stamps { start: 1000, arrival: 1550 }, Stamps { start: 3000, arrival: 3100 }];
        let s = split(&t, &path_for(&BenchConfig::default()), &roles(), &stamps, 1_000_000, 2, "timer");
        assert_eq!((s.matched, s.unmatched, s.out_of_order), (2, 0, 0));
        assert_eq!(s.never_seen, ["kvm/kvm_entry"]);
        assert_eq!(s.skipped.get("sched_wakeup"), Some(&1));
        let b = s.breakdown.finish();
        let mean = |n: &str| b.iter().find(|x| x.segment == n).unwrap().mean_ns;
        assert_eq!(mean("host timer fires"), 5.0, "10 ns, then 0 ns (fired 5 ns before the deadline)");
        assert_eq!(mean("vCPU woken"), 5.0);
        assert_eq!(mean("vCPU thread runs"), (480.0 + 50.0) / 2.0);
        assert_eq!(mean(GUEST_SEGMENT), (40.0 + 40.0) / 2.0);
        let sum: f64 = b.iter().map(|x| x.mean_ns).sum();
        assert_eq!(sum, (550.0 + 100.0) / 2.0, "segment means add up to the mean latency");
        assert!(s.paths[0].starts_with("timer #0 @ tsc 1000: total 550.0 ns"), "{}", s.paths[0]);
        // A wakeup between the samples (before the second deadline) is not part of the second.
        let stray = TRACE.replace(" vcpu0-10 [000] d..2. 1600:", " other-3 [000] d.h3. 2000: sched_wakeup: comm=vcpu0 pid=10 prio=120 target_cpu=000\n vcpu0-10 [000] d..2. 1600:");
        let s2 = split(&parse_trace(&stray), &path_for(&BenchConfig::default()), &roles(), &stamps, 1_000_000, 0, "timer");
        assert_eq!((s2.matched, s2.out_of_order), (2, 0));
        assert_eq!(s2.breakdown.finish(), b);
    }

    #[test]
    fn lost_and_reordered_events_are_counted() {
        let lost = TRACE.replace(" vcpu0-10 [000] ..... 1500: kvm_vcpu_wakeup: wait time 3 ns, polling valid\n", "");
        let stamps = [Stamps { start: 1000, arrival: 1550 }, Stamps { start: 3000, arrival: 3100 }];
        let s = split(&parse_trace(&lost), &path_for(&BenchConfig::default()), &roles(), &stamps, 1_000_000, 0, "timer");
        assert_eq!((s.matched, s.unmatched, s.out_of_order), (1, 1, 0));
        assert_eq!(s.missing.get("kvm_vcpu_wakeup"), Some(&1));
        // The accept moved before the wakeup: out of order.
        let swapped = TRACE.replace("3060: kvm_apic_accept_irq", "3040: kvm_apic_accept_irq");
        let s = split(&parse_trace(&swapped), &path_for(&BenchConfig::default()), &roles(), &stamps, 1_000_000, 0, "timer");
        assert_eq!((s.matched, s.unmatched, s.out_of_order), (1, 1, 1));
        // An arrival stamp before the accept: the accept is not in the sample's window.
        let early = [Stamps { start: 1000, arrival: 1505 }];
        let s = split(&parse_trace(TRACE), &path_for(&BenchConfig::default()), &roles(), &early, 1_000_000, 0, "timer");
        assert_eq!((s.matched, s.unmatched), (0, 1));
        assert_eq!(s.missing.get("kvm_apic_accept_irq"), Some(&1));
    }
}

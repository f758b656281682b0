//! Where the time went, measured: `irqlab run … --breakdown` traces the run's own KVM, timer and
//! scheduler events in a tracefs instance of its own (`instances/irqlab-<pid>`, filtered to the
//! run's threads), and splits every sample between its deadline or trigger stamp, those host
//! events and the guest's arrival stamp, all on the counter's time line: on x86 the trace clock
//! is `x86-tsc` and the guest's TSC equals the host's (the run checks the offset and corrects
//! it); on arm64 the trace clock is `mono_raw` (ns) mapped onto CNTVCT (`clock`), and the guest's
//! virtual counter is the host's minus KVM's offset, read through KVM_REG_ARM_TIMER_CNT.
//!
//! The result carries the same breakdown structure as a simulated one, so `irqlab report` and
//! `compare` show model and measurement segment by segment. Samples whose events are missing or
//! out of order are counted in `breakdown.*` counters, never dropped silently.
//!
//! No maintained Rust crate manages tracefs instances and reads event text (libtracefs is C);
//! the reader here is small: write a few control files, read the instance's `trace` text after
//! the run.
pub mod clock;
pub mod parse;
pub mod path;
pub mod path_arm64;
pub mod record;
pub mod split;

pub mod instance;

pub use record::Recording;

/// Why a breakdown cannot be taken; each message says what is missing and how to enable it.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The kernel has no tracefs.
    #[error("--breakdown needs tracefs, which this kernel does not offer (no `tracefs` in /proc/filesystems): build the kernel with CONFIG_FTRACE and CONFIG_EVENT_TRACING")]
    NoTracefs,
    /// tracefs exists but is not mounted and we may not mount it.
    #[error("--breakdown needs tracefs mounted at /sys/kernel/tracing: run as root (irqlab mounts it), or `sudo mount -t tracefs nodev /sys/kernel/tracing` (mount failed: {0})")]
    NotMounted(String),
    /// A tracefs file could not be written or read.
    #[error("--breakdown: {path}: {source} (tracing needs root or CAP_SYS_ADMIN with write access to tracefs; run irqlab as root)")]
    Access { path: String, source: std::io::Error },
    /// The kernel lacks the trace clock this architecture's breakdown uses.
    #[error("--breakdown needs the `{clock}` trace clock, which {file} does not list")]
    NoClock { clock: &'static str, file: String },
    /// This benchmark's path cannot be broken down on this architecture.
    #[error("{0}")]
    NotOnPath(String),
    /// The ns trace could not be put on the counter's time line.
    #[error("--breakdown: {0}")]
    Clock(#[from] clock::ClockError),
    /// None of the events a path needs exist.
    #[error("--breakdown: this kernel has none of the trace events the {bench} path needs ({events}); enable CONFIG_KVM tracepoints")]
    NoEvents { bench: &'static str, events: String },
    /// A recorded trace file is malformed.
    #[error("{file}: line {line}: {what}")]
    Recording { file: String, line: usize, what: String },
}

pub use crate::measurement::Breakdown;

/// Split a recording's samples; `keep` paths are rendered for printing.
pub fn analyse(rec: &Recording, class: &str, keep: usize) -> Breakdown {
    let trace = parse::parse_trace(&rec.trace);
    let path = path::path(rec.arch, &rec.config());
    let s = split::split(&trace, &path, &rec.roles, &rec.stamps, rec.tsc_khz, keep, class);
    let mut b = Breakdown { class: class.to_string(), segments: s.breakdown.finish(), paths: s.paths, ..Default::default() };
    let c = &mut b.counters;
    c.insert("breakdown.samples_matched".into(), s.matched);
    c.insert("breakdown.samples_unmatched".into(), s.unmatched);
    c.insert("breakdown.events_out_of_order".into(), s.out_of_order);
    c.insert("breakdown.events_lost".into(), trace.lost_events);
    c.insert("breakdown.trace_events".into(), trace.events.len() as u64);
    for (ev, n) in &s.missing {
        c.insert(format!("breakdown.missing.{ev}"), *n);
    }
    for (ev, n) in &s.skipped {
        c.insert(format!("breakdown.skipped.{ev}"), *n);
    }
    let sum: f64 = b.segments.iter().map(|x| x.mean_ns).sum();
    b.figures.push(("breakdown_sum_of_segment_means".into(), sum, "ns"));
    if s.matched > 0 {
        b.figures.push(("breakdown_matched_mean".into(), s.matched_total_ps as f64 / 1000.0 / s.matched as f64, "ns"));
    }
    // Means are what add up; medians say where a typical sample's time goes (they need not add up).
    for (seg, mut v) in s.per_segment {
        v.sort_unstable();
        b.figures.push((format!("breakdown_p50: {seg}"), v[v.len() / 2] as f64 / 1000.0, "ns"));
    }
    b.notes.push(format!("breakdown path ({class}): {}", s.path.join(" -> ")));
    if !s.never_seen.is_empty() {
        b.notes.push(format!("breakdown: enabled but never fired on this host, left out of the path: {}", s.never_seen.join(", ")));
    }
    let total = rec.stamps.len() as u64;
    if s.unmatched > 0 || trace.lost_events > 0 {
        let missing: Vec<String> = s.missing.iter().map(|(e, n)| format!("{e} missing in {n}")).collect();
        b.notes.push(format!(
            "breakdown: {} of {total} samples unmatched ({} out of order{}{}), {} events lost by the ring buffer; the breakdown covers the {} matched samples",
            s.unmatched,
            s.out_of_order,
            if missing.is_empty() { "" } else { ", " },
            missing.join(", "),
            trace.lost_events,
            s.matched
        ));
    }
    if !s.out_of_order_examples.is_empty() {
        b.notes.push(format!("breakdown: out of order: {}", s.out_of_order_examples.join("; ")));
    }
    if trace.unparsed > 0 {
        b.notes.push(format!("breakdown: {} trace lines did not parse, e.g. {:?}", trace.unparsed, trace.unparsed_examples));
    }
    b
}

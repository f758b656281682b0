//! A measurement with a breakdown: check tracefs before anything runs, measure once without
//! tracing (the overhead reference), then once with the path's events traced in our own instance,
//! and split every sample of the traced run.
use std::path::PathBuf;

use results::LatencyRecorder;

use super::DriverError;
use super::{run_bench, run_bench_with};
use crate::arch::{Arch, Imp, TraceDialect};
use crate::config::{Bench, BenchConfig};
use crate::measurement::Measurement;
use crate::measurement::Threads;
use crate::tracefs::clock::{read_pair, retime, CounterMap, Pair};
use crate::tracefs::instance::{locate_or_mount, Instance, Tracefs};
use crate::tracefs::path::{path, pid_filter, Roles, TraceArch, AUX_EVENTS};
use crate::tracefs::{analyse, Recording, TraceError};

/// What `--breakdown` / `--trace` ask for.
#[derive(Debug, Clone, Default)]
pub struct TraceOptions {
    /// Sample paths to render (`--trace N`).
    pub keep_paths: usize,
    /// Write the recording (stamps + raw trace) here.
    pub save_to: Option<PathBuf>,
    /// Also run once untraced and report p50/p99 of both runs.
    pub measure_overhead: bool,
}

/// Tracefs is usable for this benchmark: its path can be broken down on this architecture,
/// tracefs is mounted (mounting it if absent), the architecture's trace clock and at least one
/// of the path's events exist. Returns notes (what was mounted, which events this kernel does
/// not offer).
pub fn preflight(cfg: &BenchConfig) -> Result<(Tracefs, Vec<String>), TraceError> {
    Imp::trace_target(cfg)?;
    let fs = locate_or_mount()?;
    let mut notes = Vec::new();
    if fs.mounted_now {
        notes.push(format!("breakdown: tracefs was not mounted; mounted it at {}", fs.root.display()));
    }
    let clock = fs.root.join("trace_clock");
    let clocks = std::fs::read_to_string(&clock).map_err(|source| TraceError::Access { path: clock.display().to_string(), source })?;
    let want = Imp::trace_clock();
    if !clocks.split_whitespace().any(|c| c.trim_matches(['[', ']']) == want) {
        return Err(TraceError::NoClock { clock: want, file: clock.display().to_string() });
    }
    let path = path(TraceArch::host(), cfg);
    let absent: Vec<&str> = path.iter().map(|m| m.event).filter(|e| !fs.root.join("events").join(e).exists()).collect();
    if absent.len() == path.len() {
        return Err(TraceError::NoEvents { bench: cfg.kind.name(), events: absent.join(", ") });
    }
    if !absent.is_empty() {
        notes.push(format!("breakdown: this kernel does not offer {}; those segments merge into the next", absent.join(", ")));
    }
    Ok((fs, notes))
}

fn roles(cfg: &BenchConfig, t: &Threads) -> Result<Roles, TraceError> {
    let (target_apic, vector) = Imp::trace_target(cfg)?;
    let (target_tid, source_tid) = match cfg.kind {
        Bench::Timer => (t.vcpu_tids[0], t.vcpu_tids[0]),
        Bench::Device => (t.vcpu_tids[0], t.host_tid),
        Bench::Ipi => (t.vcpu_tids[1], t.vcpu_tids[0]),
    };
    let mut all_tids = t.vcpu_tids.clone();
    all_tids.push(t.host_tid);
    Ok(Roles { target_tid, source_tid, target_apic, vector, all_tids })
}

/// Arm tracing in a fresh instance for the run's threads; returns the instance and notes.
fn arm(fs: &Tracefs, cfg: &BenchConfig, roles: &Roles) -> Result<(Instance, Vec<String>), TraceError> {
    let inst = Instance::create(fs)?;
    let mut notes: Vec<String> = inst.removed_stale.iter().map(|n| format!("breakdown: removed stale tracefs instance {n}")).collect();
    inst.write("tracing_on", "0")?;
    inst.use_clock(Imp::trace_clock())?;
    // Roughly 10 events of ~100 bytes per sample, per CPU, with room to spare.
    let kb = (cfg.samples * 2).clamp(2048, 65536);
    inst.write("buffer_size_kb", &kb.to_string())?;
    for m in path(TraceArch::host(), cfg) {
        if fs.root.join("events").join(m.event).exists() {
            notes.extend(inst.enable(m.event, m.filter(roles).as_deref())?);
        }
    }
    for e in AUX_EVENTS {
        if fs.root.join("events").join(e).exists() {
            notes.extend(inst.enable(e, Some(&pid_filter(&[roles.target_tid])))?);
        }
    }
    inst.write("tracing_on", "1")?;
    Ok((inst, notes))
}

/// p50 and p99 of a measurement's first class, ns.
fn p50_p99(m: &Measurement) -> Option<(u64, u64)> {
    let (_, v) = m.classes.first()?;
    let mut rec = LatencyRecorder::new(m.config.warmup);
    v.iter().for_each(|x| rec.record_signed(x.round() as i64));
    let s = rec.summary();
    (s.count > 0).then_some((s.p50, s.p99))
}

/// Run `cfg` with a breakdown (see the module doc). Tracing problems found before the run are
/// errors; the instance is removed whatever happens.
pub fn run_traced(cfg: &BenchConfig, progress: &dyn Fn(u64), opts: &TraceOptions) -> Result<Measurement, DriverError> {
    let (fs, mut notes) = preflight(cfg)?;
    let untraced = if opts.measure_overhead { Some(run_bench(cfg, &|_| {})?) } else { None };
    let mut armed: Option<(Instance, Roles, Pair)> = None;
    let mut m = run_bench_with(cfg, progress, &mut |t| {
        let r = roles(cfg, t)?;
        let (inst, n) = arm(&fs, cfg, &r)?;
        notes.extend(n);
        armed = Some((inst, r, read_pair(&Imp::counter)));
        Ok(())
    })?;
    let Some((inst, roles, before)) = armed else { return Ok(m) };
    inst.write("tracing_on", "0")?;
    let after = read_pair(&Imp::counter);
    let overruns = inst.overruns();
    let text = match read_on_counter(&inst, before, after, m.tsc_khz, &mut notes) {
        Ok(t) => t,
        Err(e) => {
            // The measurement stands; only its breakdown is missing, and the result says why.
            m.notes.extend(notes);
            m.notes.push(format!("breakdown: not taken, the trace could not be read: {e}"));
            return Ok(m);
        }
    };
    drop(inst);
    let rec = Recording { arch: TraceArch::host(), kind: cfg.kind, wait: cfg.wait, via: cfg.via, tsc_khz: m.tsc_khz, roles, stamps: m.stamps.clone(), trace: text };
    if let Some(p) = &opts.save_to {
        match std::fs::write(p, rec.to_text()) {
            Ok(()) => notes.push(format!("breakdown: raw trace and stamps in {}", p.display())),
            Err(e) => notes.push(format!("breakdown: could not write {}: {e}", p.display())),
        }
    }
    let class = m.classes.first().map(|c| c.0.clone()).unwrap_or_default();
    let mut b = analyse(&rec, &class, opts.keep_paths);
    b.counters.insert("breakdown.ring_buffer_overruns".into(), overruns);
    b.notes.splice(0..0, notes);
    if let (Some(u), Some((tp50, tp99))) = (untraced.as_ref().and_then(p50_p99), p50_p99(&m)) {
        let (up50, up99) = u;
        b.figures.extend([
            ("untraced_p50".to_string(), up50 as f64, "ns"),
            ("untraced_p99".to_string(), up99 as f64, "ns"),
            ("traced_p50".to_string(), tp50 as f64, "ns"),
            ("traced_p99".to_string(), tp99 as f64, "ns"),
        ]);
        b.notes.push(format!(
            "tracing overhead ({} samples each): p50 {up50} ns untraced vs {tp50} ns traced ({:+.1}%), p99 {up99} ns vs {tp99} ns ({:+.1}%); the breakdown describes the traced run",
            cfg.samples,
            (tp50 as f64 - up50 as f64) / up50.max(1) as f64 * 100.0,
            (tp99 as f64 - up99 as f64) / up99.max(1) as f64 * 100.0
        ));
    }
    m.breakdown = Some(b);
    Ok(m)
}

/// The instance's `trace` text with timestamps in counter ticks: as it is with `x86-tsc`; with a
/// ns clock, read a second time with `options/raw` and mapped through the counter/clock pairs
/// taken before and after the run (`clock`).
fn read_on_counter(inst: &Instance, before: Pair, after: Pair, counter_khz: u64, notes: &mut Vec<String>) -> Result<String, TraceError> {
    let text = inst.read("trace")?;
    if Imp::trace_clock() == "x86-tsc" {
        return Ok(text);
    }
    inst.write("options/raw", "1")?;
    let raw = inst.read("trace");
    inst.write("options/raw", "0")?;
    let map = CounterMap::new(before, after)?;
    notes.push(map.describe(counter_khz * 1000));
    Ok(retime(&text, &raw?, &map)?)
}

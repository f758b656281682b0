//! What one measurement produced, and its conversion to the shared result format.
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use results::{ConfigResult, LatencyRecorder, SegmentStat};

use crate::config::{Bench, BenchConfig, Wait, DISCARDED_FIRST};

/// Why a run ended before taking `samples`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `--duration` passed.
    Duration,
    /// The kept sample `index` (0-based, after the discarded first one) of the main class was
    /// above `--stop-above`; it is the last sample kept.
    Above { index: u64 },
}

/// Suffix of the class that holds early arrivals: `timer` → `timer_early`.
pub const EARLY_SUFFIX: &str = "_early";

/// `vcpu0: 0,1; vcpu1: 1` for the CPUs each vCPU thread was seen on (empty: none seen).
pub fn describe_cpus(cpus: &[BTreeSet<usize>]) -> String {
    cpus.iter()
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .map(|(i, s)| format!("vcpu{i}: {}", s.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The run's threads, as tracefs sees them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Threads {
    /// Thread id of each vCPU, by vCPU index.
    pub vcpu_tids: Vec<i32>,
    /// The thread that runs the benchmark loop (the device benchmark's trigger).
    pub host_tid: i32,
}

#[derive(Debug, Clone)]
pub struct Measurement {
    pub config: BenchConfig,
    /// (class, latencies in ns; negative when the clocks disagree).
    pub classes: Vec<(String, Vec<f64>)>,
    /// KVM binary-stats deltas over the run.
    pub counters: BTreeMap<String, u64>,
    pub notes: Vec<String>,
    /// Why the run ended early; the samples taken before are kept.
    pub error: Option<String>,
    pub tsc_khz: u64,
    pub tsc_offset: i64,
    /// From the start of `run_bench` (VM creation included) to the first sample.
    pub first_sample: Option<Duration>,
    pub wall: Duration,
    /// The run's threads (for tracing).
    pub threads: Threads,
    /// Each sample of the main class: start (deadline / trigger / send) and arrival, host TSC.
    pub stamps: Vec<Stamps>,
    /// `--breakdown`: where the time went, from host trace events.
    pub breakdown: Option<Breakdown>,
    /// Host CPUs each vCPU thread was seen running on.
    pub cpus_used: Vec<BTreeSet<usize>>,
    /// Why the run ended early (`--duration`, `--stop-above`), if it did.
    pub ended: Option<Ended>,
    /// Settings as actually in force where they may differ from what was asked
    /// (`halt_poll_ns` → `host default (200000 rejected: …)`); they replace the requested value
    /// in [`Measurement::params`], so a setting that did not take effect is never recorded as if
    /// it had.
    pub in_force: Vec<(String, String)>,
}

impl Measurement {
    pub fn new(config: BenchConfig, tsc_khz: u64) -> Self {
        Measurement {
            config,
            classes: Vec::new(),
            counters: BTreeMap::new(),
            notes: Vec::new(),
            error: None,
            tsc_khz,
            tsc_offset: 0,
            first_sample: None,
            wall: Duration::ZERO,
            threads: Threads::default(),
            stamps: Vec::new(),
            breakdown: None,
            cpus_used: Vec::new(),
            ended: None,
            in_force: Vec::new(),
        }
    }

    /// The knobs that define this measurement, as result parameters.
    pub fn params(&self) -> BTreeMap<String, String> {
        let c = &self.config;
        let mut p = BTreeMap::new();
        p.insert("bench".into(), c.kind.name().into());
        p.insert("samples".into(), c.samples.to_string());
        match c.period_cycles {
            Some(cy) => p.insert("period_cycles".into(), cy.to_string()),
            None => p.insert("period_us".into(), c.period_us.to_string()),
        };
        p.insert("vcpus".into(), c.vcpus.to_string());
        if let Some(t) = c.ipi_target {
            p.insert("ipi_target".into(), t.to_string());
        }
        if c.kind == Bench::Timer {
            p.insert("wait".into(), if c.wait == Wait::Busy { "busy" } else { "hlt" }.into());
        }
        if c.kind == Bench::Device && c.wait == Wait::Busy {
            // Not the halted device path the model pairs with `device`: say so.
            p.insert("wait".into(), "busy".into());
        }
        if c.kind == Bench::Device {
            p.insert("via".into(), c.via.name().into());
            if c.via.is_vfio() {
                p.insert("wait".into(), if c.wait == Wait::Busy { "busy" } else { "hlt" }.into());
                p.insert("vfio_trigger".into(), c.vfio_trigger.name().into());
            }
        }
        p.insert("halt_poll_ns".into(), c.halt_poll_ns.map(|n| n.to_string()).unwrap_or_else(|| "host default".into()));
        p.insert("disable_hlt_exits".into(), c.disable_hlt_exits.to_string());
        if !c.pin.is_empty() {
            p.insert("pin".into(), c.pin.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","));
        }
        if let Some(pr) = c.priority {
            p.insert("priority".into(), format!("SCHED_FIFO {pr}"));
        }
        if c.mlock {
            p.insert("mlock".into(), "true".into());
        }
        if let Some(d) = c.duration {
            p.insert("duration_s".into(), d.as_secs_f64().to_string());
        }
        if let Some(ns) = c.stop_above_ns {
            p.insert("stop_above_ns".into(), ns.to_string());
        }
        for (k, v) in &self.in_force {
            p.insert(k.clone(), v.clone());
        }
        p
    }

    pub fn to_config_result(&self, name: &str) -> ConfigResult {
        let mut r = ConfigResult::new(name);
        r.params = self.params();
        for (class, samples) in &self.classes {
            // Early arrivals (before the deadline: lapic_timer_advance, or clock skew) count as 0
            // in the class's histogram; how early they were goes into `<class>_early` and the
            // figures `early.<class>` (count) and `min_signed.<class>` (the most negative, ns).
            let mut rec = LatencyRecorder::new(self.config.warmup);
            let mut early = LatencyRecorder::new(0);
            for v in samples {
                let ns = v.round() as i64;
                rec.record_signed(ns);
                if ns < 0 {
                    early.record(ns.unsigned_abs());
                }
            }
            r.classes.insert(class.clone(), rec.finish());
            if early.count() > 0 {
                let min = samples.iter().copied().fold(f64::INFINITY, f64::min).round();
                r.classes.insert(format!("{class}{EARLY_SUFFIX}"), early.finish());
                r.set_figure(&format!("early.{class}"), early.count() as f64, "samples");
                r.set_figure(&format!("min_signed.{class}"), min, "ns");
            }
        }
        r.set_figure("discarded_first", DISCARDED_FIRST as f64, "samples");
        match self.ended {
            Some(Ended::Above { index }) => {
                r.set_figure("stop_above.index", index as f64, "sample");
                if let Some(v) = self.classes.first().and_then(|(_, s)| s.get(index as usize)) {
                    r.set_figure("stop_above.latency", v.round(), "ns");
                }
            }
            Some(Ended::Duration) => r.notes.push(format!("ended by --duration after {} samples", self.classes.first().map_or(0, |c| c.1.len()))),
            None => {}
        }
        r.counters = self.counters.clone();
        r.set_figure("tsc_khz", self.tsc_khz as f64, "kHz");
        r.set_figure("tsc_offset", self.tsc_offset as f64, "cycles");
        r.set_figure("wall", self.wall.as_secs_f64(), "s");
        if let Some(f) = self.first_sample {
            r.set_figure("vm_start_to_first_sample", f.as_secs_f64() * 1e3, "ms");
        }
        r.notes.extend(self.notes.iter().cloned());
        r.error = self.error.clone();
        if let Some(b) = &self.breakdown {
            b.apply(&mut r);
        }
        r
    }
}

/// One sample's stamps in host TSC cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamps {
    pub start: u64,
    pub arrival: u64,
}

/// A run's breakdown, ready to go into its `ConfigResult`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Breakdown {
    /// The latency class it explains (e.g. `timer`, `device_irqfd`, `ipi_one_way`).
    pub class: String,
    pub segments: Vec<SegmentStat>,
    pub counters: BTreeMap<String, u64>,
    pub figures: Vec<(String, f64, &'static str)>,
    pub notes: Vec<String>,
    /// Rendered sample paths (`--trace N`).
    pub paths: Vec<String>,
}

impl Breakdown {
    /// Put the breakdown into a result: segments, counters, figures, notes, and how the sum of
    /// segment means compares with the class's measured mean (all samples, traced run).
    pub fn apply(&self, r: &mut ConfigResult) {
        r.breakdown.insert(self.class.clone(), self.segments.clone());
        r.counters.extend(self.counters.clone());
        for (k, v, u) in &self.figures {
            r.set_figure(k, *v, u);
        }
        if let Some(mean) = r.classes.get(&self.class).map(|c| c.summary.mean) {
            let sum: f64 = self.segments.iter().map(|x| x.mean_ns).sum();
            if mean > 0.0 {
                let dev = (sum - mean) / mean * 100.0;
                r.set_figure("breakdown_vs_measured_mean", dev, "%");
                r.notes.push(format!("breakdown: segment means add up to {sum:.0} ns; measured mean {mean:.0} ns ({dev:+.1}%)"));
            }
        }
        r.notes.extend(self.notes.iter().cloned());
    }
}

/// The main class's latency of one raw sample record (`abi::SharedPage::record`) in TSC cycles (signed: a timer can fire before its
/// deadline): timer arrival − deadline, device arrival − trigger, IPI one-way.
pub fn main_cycles(kind: Bench, r: &[u64; 3], offset: i64) -> i64 {
    match kind {
        Bench::Timer => r[1] as i64,
        Bench::Device => (r[1] as i64).wrapping_sub(offset).wrapping_sub(r[0] as i64),
        Bench::Ipi => (r[1] as i64).wrapping_sub(r[0] as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_runs_keep_samples_and_error() {
        let mut m = Measurement::new(BenchConfig { warmup: 1, ..Default::default() }, 2_596_138);
        m.classes.push(("timer".into(), vec![5000.0, 17000.0, 18000.0, -3.0]));
        m.error = Some("watchdog: no progress".into());
        m.first_sample = Some(Duration::from_millis(12));
        let r = m.to_config_result("timer hlt");
        let s = &r.classes["timer"].summary;
        assert_eq!(s.count, 4);
        assert_eq!(s.clamped_low, 1);
        assert_eq!(s.warm_max, 18000);
        assert_eq!(r.classes["timer_early"].summary.count, 1);
        assert_eq!(r.classes["timer_early"].summary.max, 3);
        assert_eq!(r.figures["early.timer"].value, 1.0);
        assert_eq!(r.figures["min_signed.timer"].value, -3.0);
        assert_eq!(r.figures["discarded_first"].value, 1.0);
        assert_eq!(r.error.as_deref(), Some("watchdog: no progress"));
        assert_eq!(r.figures["vm_start_to_first_sample"].value, 12.0);
        assert_eq!(r.params["wait"], "hlt");
    }

    #[test]
    fn a_stopped_run_names_the_sample_that_crossed() {
        let mut m = Measurement::new(BenchConfig { stop_above_ns: Some(10_000), ..Default::default() }, 2_596_138);
        m.classes.push(("timer".into(), vec![5000.0, 6000.0, 12000.4]));
        m.ended = Some(Ended::Above { index: 2 });
        let r = m.to_config_result("t");
        assert_eq!(r.figures["stop_above.index"].value, 2.0);
        assert_eq!(r.figures["stop_above.latency"].value, 12000.0);
        assert_eq!(r.params["stop_above_ns"], "10000");
        assert!(!r.classes.contains_key("timer_early"), "no early class without early samples");
        let cpus = [BTreeSet::from([0, 1]), BTreeSet::new(), BTreeSet::from([1])];
        assert_eq!(describe_cpus(&cpus), "vcpu0: 0,1; vcpu2: 1");
    }
}

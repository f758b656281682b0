//! What one measurement produced, and its conversion to the shared result format.
use std::collections::BTreeMap;
use std::time::Duration;

use results::{ConfigResult, LatencyRecorder};

use crate::bench::Threads;
use crate::config::{BenchConfig, BenchKind, WaitMode};
use crate::tracefs::split::Stamps;
use crate::tracefs::Breakdown;

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
        if c.kind == BenchKind::Timer {
            p.insert("wait".into(), if c.wait == WaitMode::Busy { "busy" } else { "hlt" }.into());
        }
        if c.kind == BenchKind::Device {
            p.insert("via".into(), crate::bench::via_name(c.via).into());
        }
        p.insert("halt_poll_ns".into(), c.halt_poll_ns.map(|n| n.to_string()).unwrap_or_else(|| "host default".into()));
        p.insert("disable_hlt_exits".into(), c.disable_hlt_exits.to_string());
        if !c.pin.is_empty() {
            p.insert("pin".into(), c.pin.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","));
        }
        p
    }

    pub fn to_config_result(&self, name: &str) -> ConfigResult {
        let mut r = ConfigResult::new(name);
        r.params = self.params();
        for (class, samples) in &self.classes {
            let mut rec = LatencyRecorder::new(self.config.warmup);
            for v in samples {
                rec.record_signed(v.round() as i64);
            }
            r.classes.insert(class.clone(), rec.finish());
        }
        r.counters = self.counters.clone();
        r.set_figure("tsc_khz", self.tsc_khz as f64, "kHz");
        r.set_figure("tsc_offset", self.tsc_offset as f64, "cycles");
        r.set_figure("wall", self.wall.as_secs_f64(), "s");
        if let Some(f) = self.first_sample {
            r.set_figure("vm_start_to_first_sample", f.as_secs_f64() * 1e3, "ms");
        }
        r.notes = self.notes.clone();
        r.error = self.error.clone();
        if let Some(b) = &self.breakdown {
            b.apply(&mut r);
        }
        r
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
        assert_eq!(r.error.as_deref(), Some("watchdog: no progress"));
        assert_eq!(r.figures["vm_start_to_first_sample"].value, 12.0);
        assert_eq!(r.params["wait"], "hlt");
    }
}

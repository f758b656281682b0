//! A measurement session: what `irqlab run` does between reading its flags and writing its
//! result. The points of a run are checked before anything runs (a point that cannot run keeps
//! its reason; a run none of whose points can run is refused); each point is measured in a fresh
//! VM (its first run traced under `--breakdown`); `--repeat`'s further runs go in rounds over the
//! points, not N runs of one point in a row, so that the points of a matrix (an A and a B)
//! alternate and a host whose load drifts loads them alike; they are pooled into the first run's
//! row. The CLI keeps what is presentation (output files, the progress bar, tables) and sees each
//! point's first measurement through a callback (histograms, sample files, breakdown paths).
//!
//! Layer: drivers (it runs [`crate::runner`]; it reads the plan, the config and the measurement).
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use results::ConfigResult;

use crate::arch::{Arch, Imp};
use crate::config::{allowed_cpus, BenchConfig, ConfigError};
use crate::measurement::{describe_cpus, Measurement};
use crate::plan::{PlanError, Point, RunTable};
use crate::runner::traced::TraceOptions;
use crate::runner::DriverError;

/// Why a point, or the whole session, cannot run; the messages are the layers' own.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The run cannot be planned, or a point's settings do not make a configuration.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A point's settings are impossible here (host CPUs, this architecture's flags).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A run of a point failed.
    #[error(transparent)]
    Run(#[from] DriverError),
    /// No point of the run can run: each reason once, one per line.
    #[error("{}", .0.join("\n  "))]
    NothingCanRun(Vec<String>),
}

/// The points of a run, each with its configuration or why it cannot run.
#[derive(Debug)]
pub struct Plan {
    /// The run's name as the matrix file (or the benchmark) gives it.
    pub name: String,
    pub points: Vec<(String, Result<BenchConfig, SessionError>)>,
}

impl Plan {
    /// Plan a run ([`crate::plan::points`]) and check each point on this host.
    pub fn new(flags: &RunTable, matrix: Option<&Path>, sets: &[String], configs: &[String]) -> Result<Plan, SessionError> {
        let (name, points) = crate::plan::points(flags, matrix, sets, configs)?;
        Plan::checked(name, points, &allowed_cpus())
    }

    /// Check planned points against the host CPUs `cpus` and this architecture's flags:
    /// impossible combinations are usage errors before anything runs, in the flag form and when
    /// no point of a matrix file could run.
    pub fn checked(name: String, points: Vec<Point>, cpus: &[usize]) -> Result<Plan, SessionError> {
        let points: Vec<(String, Result<BenchConfig, SessionError>)> =
            points.into_iter().map(|(n, cfg)| (n, cfg.map_err(SessionError::from).and_then(|cfg| check(cfg, cpus)))).collect();
        if points.iter().all(|p| p.1.is_err()) {
            let mut reasons: Vec<String> = points.iter().filter_map(|p| p.1.as_ref().err().map(|e| e.to_string())).collect();
            reasons.dedup();
            return Err(SessionError::NothingCanRun(reasons));
        }
        Ok(Plan { name, points })
    }

    /// The first point that can run (what `--breakdown`'s preflight checks).
    pub fn first_runnable(&self) -> Option<&BenchConfig> {
        self.points.iter().find_map(|p| p.1.as_ref().ok())
    }

    /// Samples one run of every point takes, for a progress bar.
    pub fn expected_samples(&self) -> u64 {
        self.points.iter().map(|p| p.1.as_ref().map_or(0, expected_samples)).sum()
    }
}

fn check(cfg: BenchConfig, cpus: &[usize]) -> Result<BenchConfig, SessionError> {
    cfg.validate(cpus)?;
    Imp::check_flags(&cfg)?;
    Ok(cfg)
}

/// Samples a point will take: its count, or a `--duration` run's estimate at one sample per
/// period.
fn expected_samples(c: &BenchConfig) -> u64 {
    match c.duration {
        Some(d) => ((d.as_secs_f64() * 1e6 / c.period_us.max(1.0)) as u64).min(c.samples),
        None => c.samples,
    }
}

/// `--breakdown`: the first run of each point traced, its recording (stamps + raw trace) saved
/// in `dir`, `keep_paths` sample paths rendered.
#[derive(Debug, Clone, Copy)]
pub struct Trace<'a> {
    pub keep_paths: usize,
    pub dir: &'a Path,
}

/// How a session runs its points.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// Runs of every point, each in a fresh VM (`--repeat`, at least 1).
    pub repeat: u32,
    pub trace: Option<Trace<'a>>,
    /// The `--set` overrides, recorded in the details.
    pub sets: &'a [String],
}

/// What a session measured: a row per point, in plan order, and the details of the run for the
/// result's provenance (`--set`s, `repeat`, `cpus_used.<point>`).
#[derive(Debug)]
pub struct Session {
    pub configs: Vec<ConfigResult>,
    pub details: BTreeMap<String, String>,
}

/// Run every point of `plan`; progress is reported in samples. `on_first` sees the first run of
/// each point that measured (`--histogram`, `--samples-out` and `--breakdown` describe it). A
/// point that fails keeps its error in its row; the others are measured.
pub fn run(plan: Plan, opts: &Options, progress: &dyn Fn(u64), on_first: &mut dyn FnMut(&str, &Measurement)) -> Session {
    let measure = |cfg: &BenchConfig, name: &str, first: bool| match (&opts.trace, first) {
        (Some(t), true) => traced(cfg, name, t, progress),
        _ => crate::runner::run_bench(cfg, progress),
    };
    let probe = || crate::runner::pv_ipi::probe_pv_ipi(Duration::from_secs(2)).unwrap_or_else(|e| format!("probe failed: {e}"));
    run_with(plan, opts, &measure, &probe, on_first)
}

/// One traced run, its recording next to the result.
fn traced(cfg: &BenchConfig, name: &str, t: &Trace, progress: &dyn Fn(u64)) -> Result<Measurement, DriverError> {
    let _ = std::fs::create_dir_all(t.dir);
    let opts = TraceOptions { keep_paths: t.keep_paths, save_to: Some(t.dir.join(trace_file_name(name))), measure_overhead: true };
    crate::runner::traced::run_traced(cfg, progress, &opts)
}

/// The recording of a point's traced run: `trace-<point>.txt`, the name made file-safe.
fn trace_file_name(point: &str) -> String {
    let safe: String = point.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("trace-{safe}.txt")
}

/// One run of a point: its settings, its name, whether it is the point's first run.
type Measure<'a> = dyn Fn(&BenchConfig, &str, bool) -> Result<Measurement, DriverError> + 'a;

/// A point's row while the session runs: its name, its first run, its settings when it could
/// run, its further runs.
type Row = (String, ConfigResult, Option<BenchConfig>, Vec<Result<ConfigResult, DriverError>>);

/// [`run`] with the measurement and the PV IPI probe given (a test's stand-ins need no KVM).
fn run_with(plan: Plan, opts: &Options, measure: &Measure, probe_pv_ipi: &dyn Fn() -> String, on_first: &mut dyn FnMut(&str, &Measurement)) -> Session {
    let mut details = crate::plan::set_details(opts.sets);
    if opts.repeat > 1 {
        details.insert("repeat".into(), opts.repeat.to_string());
    }
    let mut rows: Vec<Row> = Vec::new();
    for (name, cfg) in plan.points {
        let row = match cfg {
            Err(e) => (name.clone(), ConfigResult::failed(name, BTreeMap::new(), e.to_string()), None, Vec::new()),
            Ok(cfg) => {
                let first = match measure(&cfg, &name, true) {
                    Err(e) => ConfigResult::failed(name.clone(), BTreeMap::new(), e.to_string()),
                    Ok(m) => {
                        on_first(&name, &m);
                        let mut cr = m.to_config_result(&name);
                        let used = describe_cpus(&m.cpus_used);
                        if !used.is_empty() {
                            details.insert(format!("cpus_used.{name}"), used);
                        }
                        if cfg.pv_ipi {
                            cr.notes.push(format!("PV IPI: {}", probe_pv_ipi()));
                        }
                        cr
                    }
                };
                (name, first, Some(cfg), Vec::new())
            }
        };
        rows.push(row);
    }
    // Further rounds over every point, each run in a fresh VM.
    for _ in 1..opts.repeat {
        for (name, _, cfg, more) in rows.iter_mut() {
            if let Some(cfg) = cfg {
                more.push(measure(cfg, name, false).map(|m| m.to_config_result(name)));
            }
        }
    }
    Session { configs: rows.into_iter().map(|(_, first, _, more)| with_repetitions(first, more)).collect(), details }
}

/// The first run of a point with its further runs: each run's summary and the pooled
/// distribution (`results::Repetitions`), the spread of every statistic (`SeedSpread`, shown in
/// the table). A failed run fails the row, naming the run; what the others measured is kept.
fn with_repetitions(mut first: ConfigResult, more: Vec<Result<ConfigResult, DriverError>>) -> ConfigResult {
    if more.is_empty() {
        return first;
    }
    let failures: Vec<String> = more.iter().enumerate().filter_map(|(i, r)| r.as_ref().err().map(|e| format!("run {}: {e}", i + 2))).collect();
    let mut runs: Vec<&ConfigResult> = vec![&first];
    runs.extend(more.iter().filter_map(|r| r.as_ref().ok()));
    let runs: Vec<&ConfigResult> = runs.into_iter().filter(|r| r.error.is_none()).collect();
    let reps = (runs.len() > 1).then(|| results::Repetitions::over(&runs));
    let spread = results::SeedSpread::over(&runs);
    match reps {
        Some(Ok(mut r)) => {
            r.runs.iter_mut().for_each(|x| x.seed = None);
            first.repetitions = Some(r);
            first.seed_spread = Some(spread);
        }
        Some(Err(e)) => first.notes.push(format!("repetitions not pooled: {e}")),
        None => {}
    }
    if !failures.is_empty() {
        let e = failures.join("; ");
        first.error = Some(match first.error.take() {
            Some(f) => format!("run 1: {f}; {e}"),
            None => e,
        });
    }
    first
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    use super::*;
    use crate::runner::RunError;

    fn measured(cfg: &BenchConfig, cpu: usize, base: f64) -> Measurement {
        let mut m = Measurement::new(cfg.clone(), 1_000_000);
        m.classes = vec![("timer".into(), (0..50).map(|i| base + i as f64).collect())];
        m.cpus_used = vec![BTreeSet::from([cpu])];
        m
    }

    #[test]
    fn a_run_none_of_whose_points_can_run_is_refused_with_each_reason_once() {
        let bad = |why: &str| Err(PlanError::Config(why.into()));
        let e = Plan::checked("m".into(), vec![("a".into(), bad("--pin: no")), ("b".into(), bad("--pin: no")), ("c".into(), bad("--vcpus: no"))], &[0]).unwrap_err();
        assert!(matches!(e, SessionError::NothingCanRun(_)));
        assert_eq!(e.to_string(), "--pin: no\n  --vcpus: no");
        // A point the host cannot run keeps its reason, word for word, beside one that can.
        let zero = BenchConfig { vcpus: 0, ..BenchConfig::default() };
        let why = zero.validate(&[0]).unwrap_err().to_string();
        let p = Plan::checked("m".into(), vec![("zero".into(), Ok(zero)), ("ok".into(), Ok(BenchConfig { samples: 7, ..BenchConfig::default() }))], &[0]).unwrap();
        assert_eq!(p.points[0].1.as_ref().unwrap_err().to_string(), why);
        assert_eq!(p.first_runnable().map(|c| c.samples), Some(7));
        assert_eq!(p.expected_samples(), 7);
    }

    #[test]
    fn a_duration_run_expects_one_sample_per_period_up_to_its_count() {
        let c = BenchConfig { duration: Some(Duration::from_millis(10)), period_us: 100.0, samples: 1000, ..BenchConfig::default() };
        assert_eq!(expected_samples(&c), 100);
        assert_eq!(expected_samples(&BenchConfig { samples: 20, ..c }), 20);
    }

    #[test]
    fn repeats_go_in_rounds_over_the_points_and_pool_into_the_first_run() {
        let cfg = BenchConfig { samples: 50, ..BenchConfig::default() };
        let pv = BenchConfig { pv_ipi: true, ..cfg.clone() };
        let plan = Plan { name: "m".into(), points: vec![("a".into(), Ok(cfg)), ("b".into(), Ok(pv)), ("c".into(), Err(PlanError::Config("bad".into()).into()))] };
        let calls = RefCell::new(Vec::new());
        let measure = |cfg: &BenchConfig, name: &str, first: bool| {
            calls.borrow_mut().push((name.to_string(), first));
            let n = calls.borrow().len();
            if n == 6 {
                return Err(DriverError::Run(RunError::AllVcpusEnded));
            }
            Ok(measured(cfg, 3, 1000.0 * n as f64))
        };
        let mut seen = Vec::new();
        let sets = vec!["samples=50".to_string()];
        let s = run_with(plan, &Options { repeat: 3, trace: None, sets: &sets }, &measure, &|| "supported: fake".into(), &mut |name, _| seen.push(name.to_string()));
        let order: Vec<(String, bool)> = ["a", "b", "a", "b", "a", "b"].iter().enumerate().map(|(i, n)| (n.to_string(), i < 2)).collect();
        assert_eq!(*calls.borrow(), order, "first runs, then rounds over every point");
        assert_eq!(seen, ["a", "b"], "only first runs are shown");
        let [a, b, c] = &s.configs[..] else { panic!("{:?}", s.configs) };
        assert_eq!((a.error.as_deref(), a.repetitions.as_ref().map(|r| r.runs.len())), (None, Some(3)));
        assert_eq!(b.error.as_deref(), Some(format!("run 3: {}", RunError::AllVcpusEnded).as_str()));
        assert_eq!(b.repetitions.as_ref().map(|r| r.runs.len()), Some(2), "what the other runs measured is kept");
        assert!(b.notes.contains(&"PV IPI: supported: fake".to_string()) && !a.notes.iter().any(|n| n.starts_with("PV IPI")));
        assert_eq!(c.error.as_deref(), Some("bad"));
        assert_eq!(s.details.get("repeat").map(String::as_str), Some("3"));
        assert_eq!(s.details.get("cpus_used.a").map(String::as_str), Some("vcpu0: 3"));
        assert!(s.details.keys().any(|k| k.contains("samples")), "{:?}", s.details);
    }

    #[test]
    fn one_run_has_no_repetitions() {
        let first = ConfigResult::new("a");
        assert_eq!(with_repetitions(first.clone(), Vec::new()), first);
    }

    #[test]
    fn trace_file_names_are_safe() {
        assert_eq!(trace_file_name("via=msi, wait=hlt"), "trace-via_msi__wait_hlt.txt");
    }
}

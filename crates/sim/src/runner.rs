//! Running a scenario: prepare every point, run them in parallel (rayon), collect one
//! [`RunResult`] in point order. A point that fails to prepare or run is kept as a failed
//! configuration with its error; the other points' results are unaffected.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use results::{ConfigResult, ResultKind, RunMeta, RunResult};

use crate::engine::rng::derive_seed;
use crate::engine::time::{guard_overflow, ClockOverflow};
use crate::engine::{PickRule, SimTime, Trace, TraceKeep, TracePick};
use crate::model::{find_model, model_names, PointCtx, PreparedPoint, RunOpts, SimError};
use crate::scenario::{check_questions, check_references, Point, Scenario, ScenarioError};

/// The version string written into every result.
pub const TOOL_VERSION: &str = concat!("irqlab ", env!("CARGO_PKG_VERSION"));

/// Everything a scenario run produced.
pub struct ScenarioOutput {
    pub result: RunResult,
    /// Sample traces per configuration name.
    pub traces: Vec<(String, Vec<Trace>)>,
    /// Total simulated events over all points.
    pub events: u64,
    /// Index of each configuration among all the scenario's points (before `--config`/`--shard`).
    pub indices: Vec<usize>,
}

/// Options for [`run_scenario`].
pub struct ScenarioOpts<'a> {
    /// Overrides `scenario.seed`.
    pub seed: Option<u64>,
    /// Overrides `scenario.seeds` (seeds per point).
    pub seeds: Option<u64>,
    pub keep_traces: usize,
    /// Called with the total work of the run once, before anything runs.
    pub on_start: &'a (dyn Fn(u64) + Sync),
    /// Called with increments of work done.
    pub progress: &'a (dyn Fn(u64) + Sync),
}

impl ScenarioOpts<'static> {
    /// The scenario's own seed and seed count, no traces kept, no progress shown: what a library
    /// caller or a test starts from (`ScenarioOpts { keep_traces: 1, ..ScenarioOpts::quiet() }`).
    pub fn quiet() -> Self {
        ScenarioOpts { seed: None, seeds: None, keep_traces: 0, on_start: &|_| {}, progress: &|_| {} }
    }

    /// [`ScenarioOpts::quiet`] with the seed overridden.
    pub fn with_seed(seed: Option<u64>) -> Self {
        ScenarioOpts { seed, ..ScenarioOpts::quiet() }
    }
}

/// Why one point cannot be prepared (a problem of the scenario's input: nothing runs), or why its
/// run failed: the model's own error, a clock overflow, or a bug (a panic, whose message is
/// printed too; the other points still run).
#[derive(Debug, thiserror::Error)]
enum PointError {
    /// The point's overrides could not be applied to the document.
    #[error("{file}: {source}")]
    Overrides { file: String, source: crate::scenario::PathError },
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("{file}: [{section}]: model `{model}` reads no such section, so its keys would be ignored; remove it")]
    UnreadSection { file: String, section: &'static str, model: String },
    #[error(
        "{file}: key `workload.warmup`: {warmup} is not below workload.samples ({samples}), so WARM_MAX would have no sample behind it; lower the warmup or take more samples"
    )]
    WarmupCoversSamples { file: String, warmup: i64, samples: i64 },
    #[error(transparent)]
    Model(#[from] SimError),
    #[error(transparent)]
    Overflow(#[from] ClockOverflow),
    #[error("internal error (a bug in irqlab, please report it): {0}")]
    Bug(String),
}

/// The message of a point's panic.
fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
    msg.unwrap_or_else(|| "panic".into())
}

/// Run one prepared point. A clock overflow is no panic: [`guard_overflow`] returns it.
fn run_point(prep: Box<dyn PreparedPoint>, run_opts: &RunOpts) -> Result<crate::model::PointOutput, PointError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| guard_overflow(|| prep.run(run_opts)))) {
        Ok(ran) => Ok(ran??),
        Err(p) => Err(PointError::Bug(panic_message(p))),
    }
}

/// Prepare one point: its platform, the model's preparation, sections the model does not read,
/// and a warmup that leaves WARM_MAX without samples.
fn prepare_point(sc: &Scenario, model: &dyn crate::model::Model, p: &Point) -> Result<(Box<dyn PreparedPoint>, crate::platform::Platform), PointError> {
    let doc = p.doc.as_ref().map_err(|e| PointError::Overrides { file: sc.file.clone(), source: e.clone() })?;
    let platform = sc.platform(doc)?;
    let prep = {
        let ctx = PointCtx::new(&sc.file, &p.name, doc, &platform, p.seed);
        let prep = model.prepare(&ctx)?;
        for section in ["hypervisor", "vm", "workload"] {
            if doc.contains_key(section) && !ctx.read.borrow().contains(section) {
                return Err(PointError::UnreadSection { file: sc.file.clone(), section, model: model.name().to_string() });
            }
        }
        prep
    };
    let wl = doc.get("workload");
    let int = |k: &str| wl.and_then(|w| w.get(k)).and_then(toml::Value::as_integer);
    if let (Some(warmup), Some(samples)) = (int("warmup"), int("samples")) {
        if warmup > 0 && warmup >= samples {
            return Err(PointError::WarmupCoversSamples { file: sc.file.clone(), warmup, samples });
        }
    }
    Ok((prep, platform))
}

/// Prepare the first point of each configuration before the whole point list is built: a
/// problem of the shared document (an unknown key beside a 10,000-point sweep) is reported
/// without holding one copy of the document per point.
fn probe(sc: &Scenario, model: &dyn crate::model::Model, seed: u64) -> Result<(), ScenarioError> {
    let mut problems: Vec<String> = Vec::new();
    for (_, p) in sc.probe_points(seed)? {
        if let Err(e) = prepare_point(sc, model, &p) {
            let e = e.to_string();
            if !problems.contains(&e) {
                problems.push(e);
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ScenarioError::Unusable { problems })
    }
}

/// A point whose every class kept no sample past its warmup (a model's default warmup above a
/// small `samples`): its WARM_MAX would read 0, so the point fails with the reason instead.
fn warm_max_without_samples(c: &ConfigResult) -> Option<String> {
    let starved = |s: &results::Summary| s.warmup > 0 && s.count <= s.warmup;
    (!c.classes.is_empty() && c.classes.values().all(|l| starved(&l.summary))).then(|| {
        let (class, l) = c.classes.iter().next().expect("not empty");
        format!("class `{class}` kept {} sample(s), none past its warmup of {}: WARM_MAX would have no sample behind it; take more samples", l.summary.count, l.summary.warmup)
    })
}

/// Prepare every point; any problem makes the whole input unusable (nothing runs).
fn prepare_all(
    sc: &Scenario,
    model: &dyn crate::model::Model,
    points: &[(usize, crate::scenario::Point)],
) -> Result<(Vec<Box<dyn PreparedPoint>>, BTreeMap<String, String>, bool), ScenarioError> {
    let mut problems: Vec<String> = Vec::new();
    let mut prepared = Vec::with_capacity(points.len());
    let mut platform_desc = None;
    let mut calibrated = false;
    let mut used_costs = BTreeSet::new();
    let mut used_params = BTreeSet::new();
    let mut overridden: BTreeSet<(&'static str, String)> = BTreeSet::new();
    for (_, p) in points {
        let one = prepare_point(sc, model, p).map(|(prep, platform)| {
            calibrated |= platform.has_calibrated();
            platform_desc.get_or_insert_with(|| platform.describe());
            used_costs.extend(platform.used_names("cost"));
            used_params.extend(platform.used_names("param"));
            if let Ok(doc) = &p.doc {
                if let Some(toml::Value::Table(pt)) = doc.get("platform") {
                    for (kind, table) in [("cost", "costs"), ("param", "params")] {
                        if let Some(toml::Value::Table(t)) = pt.get(table) {
                            overridden.extend(t.keys().map(|k| (kind, k.clone())));
                        }
                    }
                }
            }
            prep
        });
        match one {
            Ok(prep) => prepared.push(prep),
            Err(e) => {
                let e = e.to_string();
                if !problems.contains(&e) {
                    problems.push(e);
                }
            }
        }
    }
    let unused = |used_c: &BTreeSet<String>, used_p: &BTreeSet<String>| overridden.iter().any(|(kind, name)| !if *kind == "cost" { used_c } else { used_p }.contains(name));
    if problems.is_empty() && unused(&used_costs, &used_params) && (!sc.selected.is_empty() || sc.shard.is_some()) {
        // A subset runs (`--config`, `--shard`): an override that only the other points use is
        // still a real name. Prepare those points too (validation only, nothing runs).
        let (c, p) = used_names_of_other_points(sc, model, points);
        used_costs.extend(c);
        used_params.extend(p);
    }
    if problems.is_empty() {
        for (kind, name) in &overridden {
            let (used, table) = if *kind == "cost" { (&used_costs, "costs") } else { (&used_params, "params") };
            if !used.contains(name) {
                problems.push(format!(
                    "{}: key `platform.{table}.{name}`: model `{}` uses no {kind} `{name}`{}; the {table} it uses are: {}",
                    sc.file,
                    model.name(),
                    crate::scenario::did_you_mean(name, used.iter().map(String::as_str)),
                    used.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    if !problems.is_empty() {
        return Err(ScenarioError::Unusable { problems });
    }
    Ok((prepared, platform_desc.unwrap_or_default(), calibrated))
}

/// The costs and params that the scenario's points outside `running` use (see [`prepare_all`]).
fn used_names_of_other_points(sc: &Scenario, model: &dyn crate::model::Model, running: &[(usize, Point)]) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut whole = sc.clone();
    whole.selected.clear();
    whole.shard = None;
    let (mut costs, mut params) = (BTreeSet::new(), BTreeSet::new());
    // Seeds do not change which costs a point uses.
    let Ok(all) = whole.points(sc.header.seed) else { return (costs, params) };
    for (i, p) in all {
        if running.iter().any(|r| r.0 == i) {
            continue;
        }
        let Ok(doc) = p.doc.as_ref() else { continue };
        let Ok(platform) = whole.platform(doc) else { continue };
        let ctx = PointCtx::new(&sc.file, &p.name, doc, &platform, p.seed);
        if model.prepare(&ctx).is_ok() {
            costs.extend(platform.used_names("cost"));
            params.extend(platform.used_names("param"));
        }
    }
    (costs, params)
}

/// Each point `n` times: first with its own seed (so a row with `seeds = N` equals the row with
/// `seeds = 1`), then with seeds derived from it.
fn seed_replicas(points: &[(usize, Point)], n: u64) -> Vec<(usize, Point)> {
    let mut out = Vec::with_capacity(points.len() * n as usize);
    for (i, p) in points {
        out.push((*i, p.clone()));
        for k in 1..n {
            let mut q = p.clone();
            q.seed = derive_seed(p.seed, &format!("seed replica {k}"));
            out.push((*i, q));
        }
    }
    out
}

type PointOutput = (ConfigResult, Vec<Trace>, u64);

/// One row from a point's replicas: the first seed's result with the spread over every seed
/// that ran. A replica that failed fails the row (its error names the seed); the first seed's
/// figures are kept.
fn merge_replicas(replicas: Vec<PointOutput>) -> PointOutput {
    let events = replicas.iter().map(|r| r.2).sum();
    let ok: Vec<&ConfigResult> = replicas.iter().map(|r| &r.0).filter(|c| c.error.is_none()).collect();
    let spread = results::SeedSpread::over(&ok);
    // Each seed's summary and the pooled distribution (issue 25); the replicas of one point share
    // their units and their histograms were made here, so pooling cannot fail.
    let repetitions = if ok.len() > 1 { results::Repetitions::over(&ok).ok() } else { None };
    let failures: Vec<String> = replicas.iter().filter_map(|r| r.0.error.as_ref().map(|e| format!("seed {}: {e}", r.0.seed))).collect();
    let mut it = replicas.into_iter();
    let (mut first, traces, _) = it.next().expect("at least one seed per point");
    if first.error.is_none() && !failures.is_empty() {
        first.error = Some(failures.join("; "));
    }
    first.seed_spread = Some(spread);
    first.repetitions = repetitions;
    (first, traces, events)
}

/// Every check `run_scenario` makes before it runs anything (expand the points, resolve each
/// point's platform, prepare the model, unread sections, unused overrides), without running a
/// point. Returns the total work (simulated samples) the run would do. Fuzzers and `--dry-run`
/// style callers use this so they exercise the same validation as a real run.
pub fn validate_scenario(sc: &Scenario, seed: Option<u64>) -> Result<u64, ScenarioError> {
    let model = find_model(&sc.header.model).ok_or_else(|| ScenarioError::UnknownModel { file: sc.file.clone(), model: sc.header.model.clone(), known: model_names() })?;
    probe(sc, model, seed.unwrap_or(sc.header.seed))?;
    let points = sc.points(seed.unwrap_or(sc.header.seed))?;
    let runs = seed_replicas(&points, sc.header.seeds);
    let (prepared, _, _) = prepare_all(sc, model, &runs)?;
    crate::scenario::question::check_values(&sc.file, &sc.questions, &sc.question_domain, &sc.doc)?;
    Ok(prepared.iter().map(|p| p.work()).sum())
}

/// Run every point, keeping the first `opts.keep_traces` sample traces per class.
pub fn run_scenario(sc: &Scenario, opts: &ScenarioOpts) -> Result<ScenarioOutput, ScenarioError> {
    run_scenario_picking(sc, opts, &TracePick::First)
}

/// [`run_scenario`], keeping the `opts.keep_traces` sample traces per class that `pick` chooses.
/// Nearest-to-a-percentile needs the percentile first: the scenario runs twice (the models are
/// deterministic, so the second run has the same samples and the same result) and the progress
/// callbacks see both runs as one.
pub fn run_scenario_picking(sc: &Scenario, opts: &ScenarioOpts, pick: &TracePick) -> Result<ScenarioOutput, ScenarioError> {
    let n = opts.keep_traces;
    let choice = (n > 0).then(|| results::TraceChoice { how: pick.describe(), per_class: n as u64 });
    let rule = match pick {
        TracePick::First => PickRule::First,
        TracePick::Slowest => PickRule::Slowest,
        TracePick::Rounds(r) => PickRule::Rounds(r.clone()),
        TracePick::Percentile(p) if n > 0 => {
            let learn = ScenarioOpts { seed: opts.seed, seeds: opts.seeds, keep_traces: 0, on_start: &|total| (opts.on_start)(2 * total), progress: opts.progress };
            let first = run_points(sc, &learn, &|_| TraceKeep::none(), None)?;
            let targets: Vec<BTreeMap<String, SimTime>> = first.result.configs.iter().map(|c| percentile_targets(c, *p)).collect();
            let again = ScenarioOpts { seed: opts.seed, seeds: opts.seeds, keep_traces: n, on_start: &|_| {}, progress: opts.progress };
            let keep = |point: usize| TraceKeep { n, rule: PickRule::Nearest(SimTime::ZERO), targets: targets.get(point).cloned().unwrap_or_default() };
            return run_points(sc, &again, &keep, choice);
        }
        TracePick::Percentile(_) => PickRule::First,
    };
    let keep = TraceKeep { n, rule, targets: BTreeMap::new() };
    run_points(sc, opts, &|_| keep.clone(), choice)
}

/// Per latency class of a finished configuration, its `p`-th percentile as a simulated time.
fn percentile_targets(c: &ConfigResult, p: f64) -> BTreeMap<String, SimTime> {
    c.classes
        .iter()
        .filter_map(|(name, l)| {
            let h = l.histogram(name).ok()?;
            (!h.is_empty()).then(|| (name.clone(), SimTime::from_ns(h.value_at_quantile(p / 100.0))))
        })
        .collect()
}

/// Run every point. Every point is prepared (validated) first: if any input is unusable
/// nothing runs and the error names each distinct problem. A point that fails while running is
/// kept as a failed configuration with its error; the other points' results are unaffected.
fn run_points(
    sc: &Scenario,
    opts: &ScenarioOpts,
    keep_for_point: &(dyn Fn(usize) -> TraceKeep + Sync),
    choice: Option<results::TraceChoice>,
) -> Result<ScenarioOutput, ScenarioError> {
    let model = find_model(&sc.header.model).ok_or_else(|| ScenarioError::UnknownModel { file: sc.file.clone(), model: sc.header.model.clone(), known: model_names() })?;
    let seed = opts.seed.unwrap_or(sc.header.seed);
    let n_seeds = opts.seeds.unwrap_or(sc.header.seeds);
    crate::scenario::ScenarioHeader::check_seeds(&sc.file, "--seeds", n_seeds)?;
    probe(sc, model, seed)?;
    let points = sc.points(seed)?;
    let runs = seed_replicas(&points, n_seeds);
    let (prepared, platform_desc, calibrated) = prepare_all(sc, model, &runs)?;
    crate::scenario::question::check_values(&sc.file, &sc.questions, &sc.question_domain, &sc.doc)?;
    let total: u64 = prepared.iter().map(|p| p.work()).sum();
    (opts.on_start)(total);

    let done = AtomicU64::new(0);
    let progress = |n: u64| {
        done.fetch_add(n, Ordering::Relaxed);
        (opts.progress)(n)
    };
    let mut outputs: Vec<_> = prepared
        .into_par_iter()
        .zip(runs.par_iter())
        .enumerate()
        .map(|(i, (prep, (_, point)))| {
            // Traces are kept for each point's first seed only.
            let keep = if i as u64 % n_seeds == 0 { keep_for_point(i / n_seeds as usize) } else { TraceKeep::none() };
            let run_opts = RunOpts { traces: &keep, progress: &progress };
            let mut out = match run_point(prep, &run_opts).map_err(|e| format!("{}: point `{}`: {e}", sc.file, point.name)) {
                Ok(o) => o,
                Err(e) => {
                    let mut failed = ConfigResult::failed(point.name.clone(), point.params.clone(), e);
                    failed.seed = point.seed;
                    return (failed, Vec::new(), 0);
                }
            };
            out.result.name = point.name.clone();
            out.result.params = point.params.clone();
            out.result.seed = point.seed;
            if let Some(e) = warm_max_without_samples(&out.result) {
                let mut failed = ConfigResult::failed(point.name.clone(), point.params.clone(), format!("{}: point `{}`: {e}", sc.file, point.name));
                failed.seed = point.seed;
                return (failed, Vec::new(), 0);
            }
            (out.result, out.traces, out.events)
        })
        .collect();
    if n_seeds > 1 {
        outputs = outputs.chunks(n_seeds as usize).map(|replicas| merge_replicas(replicas.to_vec())).collect();
    }

    // Calibrated: the platform has a fitted cost, or the scenario fitted one of its own keys to a
    // published figure (a `fit` reference, e.g. xen-gicv4-fio's pCPU 0 stall rate).
    let fitted_here = sc.references.iter().any(|r| r.role == results::ReferenceRole::Fit);
    let kind = if calibrated || fitted_here { ResultKind::Calibrated } else { ResultKind::Predicted };
    let mut knobs = BTreeMap::new();
    knobs.insert("model".into(), sc.header.model.clone());
    if !sc.header.reproduces.is_empty() {
        knobs.insert("reproduces".into(), sc.header.reproduces.clone());
    }
    for (section, v) in &sc.doc {
        if matches!(section.as_str(), "hypervisor" | "vm" | "workload") {
            knobs.insert(section.clone(), v.to_string().trim().to_string());
        }
    }
    let mut result = RunResult::new(RunMeta {
        tool_version: TOOL_VERSION.into(),
        scenario: sc.name.clone(),
        description: sc.header.description.clone(),
        seed,
        kind,
        platform: platform_desc,
        knobs,
    });
    let mut traces = Vec::new();
    let mut events = 0;
    for (mut cfg, tr, ev) in outputs {
        cfg.traces = tr.iter().map(Trace::to_sample).collect();
        cfg.trace_choice = choice.clone();
        traces.push((cfg.name.clone(), tr));
        events += ev;
        result.configs.push(cfg);
    }
    result.references = check_references(&sc.file, &sc.references, &result)?;
    check_questions(&sc.file, &sc.questions, &result)?;
    result.questions = sc.questions.clone();
    let indices = points.iter().map(|(i, _)| *i).collect();
    Ok(ScenarioOutput { result, traces, events, indices })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_options_keep_the_scenarios_seeds_and_no_traces() {
        let o = ScenarioOpts::quiet();
        assert_eq!((o.seed, o.seeds, o.keep_traces), (None, None, 0));
        let o = ScenarioOpts { keep_traces: 2, ..ScenarioOpts::with_seed(Some(7)) };
        assert_eq!((o.seed, o.keep_traces), (Some(7), 2));
    }

    fn class_of(warmup: u64, n: u64) -> ConfigResult {
        let mut c = ConfigResult::new("p");
        let mut rec = results::LatencyRecorder::new(warmup);
        for v in 0..n {
            rec.record(100 + v);
        }
        c.classes.insert("timer".into(), rec.finish());
        c
    }

    #[test]
    fn a_point_whose_classes_kept_nothing_past_warmup_is_refused() {
        let e = warm_max_without_samples(&class_of(3, 3)).unwrap();
        assert!(e.contains("class `timer` kept 3 sample(s), none past its warmup of 3"), "{e}");
        assert_eq!(warm_max_without_samples(&class_of(3, 4)), None, "one sample past the warmup is a WARM_MAX");
        assert_eq!(warm_max_without_samples(&class_of(0, 0)), None, "no warmup asked, nothing to refuse");
    }
}

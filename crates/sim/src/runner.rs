//! Running a scenario: prepare every point, run them in parallel (rayon), collect one
//! [`RunResult`] in point order. A point that fails to prepare or run is kept as a failed
//! configuration with its error; the other points' results are unaffected.
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use results::{ConfigResult, ResultKind, RunMeta, RunResult};

use crate::engine::Trace;
use crate::model::{find_model, model_names, PointCtx, PreparedPoint, RunOpts};
use crate::scenario::{Scenario, ScenarioError};

/// The version string written into every result.
pub const TOOL_VERSION: &str = concat!("irqlab ", env!("CARGO_PKG_VERSION"));

/// Everything a scenario run produced.
pub struct ScenarioOutput {
    pub result: RunResult,
    /// Sample traces per configuration name.
    pub traces: Vec<(String, Vec<Trace>)>,
    /// Total simulated events over all points.
    pub events: u64,
}

/// Options for [`run_scenario`].
pub struct ScenarioOpts<'a> {
    /// Overrides `scenario.seed`.
    pub seed: Option<u64>,
    pub keep_traces: usize,
    /// Called with the total work of the run once, before anything runs.
    pub on_start: &'a (dyn Fn(u64) + Sync),
    /// Called with increments of work done.
    pub progress: &'a (dyn Fn(u64) + Sync),
}

/// Run every point. Returns `Err` only when the scenario as a whole is unusable (unknown model);
/// per-point problems are recorded in the configurations' `error` fields.
pub fn run_scenario(sc: &Scenario, opts: &ScenarioOpts) -> Result<ScenarioOutput, ScenarioError> {
    let model = find_model(&sc.header.model).ok_or_else(|| ScenarioError::UnknownModel {
        file: sc.file.clone(),
        model: sc.header.model.clone(),
        known: model_names(),
    })?;
    let seed = opts.seed.unwrap_or(sc.header.seed);
    let points = sc.points(seed);

    // Prepare all points first: bad input is reported before any simulation starts.
    let mut platform_desc = None;
    let mut calibrated = false;
    let prepared: Vec<Result<Box<dyn PreparedPoint>, String>> = points
        .iter()
        .map(|p| {
            let doc = p.doc.as_ref().map_err(|e| format!("{}: {e}", sc.file))?;
            let platform = sc.platform(doc).map_err(|e| e.to_string())?;
            calibrated |= platform.has_calibrated();
            platform_desc.get_or_insert_with(|| platform.describe());
            let ctx = PointCtx { file: &sc.file, point_name: &p.name, doc, platform: &platform, seed: p.seed };
            model.prepare(&ctx).map_err(|e| e.to_string())
        })
        .collect();
    let total: u64 = prepared.iter().map(|p| p.as_ref().map_or(0, |p| p.work())).sum();
    (opts.on_start)(total);

    let done = AtomicU64::new(0);
    let progress = |n: u64| {
        done.fetch_add(n, Ordering::Relaxed);
        (opts.progress)(n)
    };
    let outputs: Vec<_> = prepared
        .into_par_iter()
        .zip(points.par_iter())
        .map(|(prep, point)| {
            let run_opts = RunOpts { keep_traces: opts.keep_traces, progress: &progress };
            let mut out = match prep.and_then(|p| p.run(&run_opts).map_err(|e| format!("{}: point `{}`: {e}", sc.file, point.name))) {
                Ok(o) => o,
                Err(e) => {
                    return (ConfigResult::failed(point.name.clone(), point.params.clone(), e), Vec::new(), 0);
                }
            };
            out.result.name = point.name.clone();
            out.result.params = point.params.clone();
            out.result.seed = point.seed;
            (out.result, out.traces, out.events)
        })
        .collect();

    let kind = if calibrated { ResultKind::Calibrated } else { ResultKind::Predicted };
    let mut knobs = std::collections::BTreeMap::new();
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
        platform: platform_desc.unwrap_or_default(),
        knobs,
    });
    let mut traces = Vec::new();
    let mut events = 0;
    for (cfg, tr, ev) in outputs {
        traces.push((cfg.name.clone(), tr));
        events += ev;
        result.configs.push(cfg);
    }
    Ok(ScenarioOutput { result, traces, events })
}

//! `irqlab calibrate`: fit a host's platform profile to measured results of `irqlab run`, and
//! check its predictions on the benchmarks it was not fitted to.
//!
//! Why this shape: the model of *this* host is only believable if it predicts measurements it
//! never saw. So the measured results are split by path (`timer-hlt`, `device-irqfd`, …) into a
//! training subset, whose p50/p99 become `role = "fit"` references, and the rest, which become
//! `role = "check"` references; [`crate::fit`] (Nelder–Mead over scale factors of named costs)
//! does the fitting — there is no second optimiser here. Measured and modelled configurations
//! are paired by parameters ([`run_form`]), never by name, and results of two hosts are never
//! mixed.

use results::{ConfigResult, ReferenceOutcome, ReferenceRole, ResultKind, RunResult};

use crate::fit::{fit, optimise, outcomes, resolve_free, run, with_factors, FitError, FitReport, FitRun, Free};
use crate::platform::Basis;
use crate::runner::{run_scenario, ScenarioOpts};
use crate::scenario::{set_path, Scenario, ScenarioError};

pub mod primitives;
pub mod profile_out;
pub mod run_form;
pub mod session;

use run_form::{label, measured_form, model_form, RunForm};

/// The default training subset (issue 9): timer with HLT, device over irqfd, IPI one-way.
pub const DEFAULT_TRAIN: &[&str] = &["timer-hlt", "device-irqfd", "ipi-oneway"];

/// Relative tolerance of a p50 reference (the target: ±30 %).
pub const P50_TOLERANCE: f64 = 0.30;
/// Relative tolerance of a p99 reference: a factor of 2 above (below, the error is at most −50 %).
pub const P99_TOLERANCE: f64 = 1.0;

/// Why a calibration cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrateError {
    /// No input.
    #[error("no measured result files given")]
    NoInput,
    /// A result that is not a measurement (e.g. a simulated one).
    #[error("{file}: a {kind} result; calibrate takes measured results of `irqlab run`")]
    NotMeasured { file: String, kind: String },
    /// Two results from different hosts.
    #[error("results from different hosts: {a_file} was measured on {a_host}, but {b_file} on {b_host}; calibrate one host at a time")]
    MixedHosts { a_file: String, a_host: String, b_file: String, b_host: String },
    /// The same benchmark measured twice.
    #[error("the same benchmark ({form}) is measured twice: {a} and {b}; give one of them")]
    Duplicate { form: String, a: String, b: String },
    /// A `--train` name that no measured path has.
    #[error("--train `{0}`: no measured path of that name (measured: {1})")]
    UnknownTrain(String, String),
    /// Nothing measured could be paired with the model.
    #[error("no measured configuration pairs with a configuration of {scenario}:\n  {why}")]
    NothingPaired { scenario: String, why: String },
    /// The scenario is unusable.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The fit failed.
    #[error(transparent)]
    Fit(#[from] FitError),
    /// The profile could not be written.
    #[error("calibrated profile: {0}")]
    Profile(String),
    /// No cost to fit and no primitive to compose the paths from.
    #[error("calibrate: no cost to fit: no guess/derived cost is exercised by the training paths (name some with --free)")]
    NoFreeCost,
    /// A `--primitives` file that cannot identify a cost: which primitive, and why.
    #[error("--primitives {file}{}: {why}", primitive.as_ref().map(|p| format!(": primitive `{p}`")).unwrap_or_default())]
    Primitive { file: String, primitive: Option<String>, why: String },
}

/// One measured result file.
#[derive(Debug, Clone)]
pub struct Measured {
    pub file: String,
    pub result: RunResult,
}

/// One latency class of one measured configuration: a path of the host.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPath {
    /// `timer-hlt`, `device-irqfd`, `ipi-oneway`, … (see [`run_form::label`]).
    pub label: String,
    pub file: String,
    /// The measured configuration's name.
    pub config: String,
    pub class: String,
    pub form: RunForm,
    pub p50: f64,
    pub p99: f64,
    pub samples: u64,
    /// In the training subset (`fit` references) or held out (`check`).
    pub train: bool,
}

/// Keys of the host description that identify a host.
const HOST_KEYS: &[&str] = &["host.hostname", "host.cpu_model", "host.kernel", "host.kvm_modules"];

/// The host a measured result was taken on, for people: `vm (AMD EPYC, kernel …, KVM …)`.
pub fn host_identity(r: &RunResult) -> String {
    let g = |k: &str| r.meta.platform.get(k).cloned().unwrap_or_else(|| "?".into());
    format!("{} ({}, kernel {}, KVM {})", g(HOST_KEYS[0]), g(HOST_KEYS[1]), g(HOST_KEYS[2]), g(HOST_KEYS[3]))
}

/// Check every result is a measurement of one host; return that host's identity.
pub fn same_host(ms: &[Measured]) -> Result<String, CalibrateError> {
    let first = ms.first().ok_or(CalibrateError::NoInput)?;
    for m in ms {
        if m.result.meta.kind != ResultKind::Measured {
            return Err(CalibrateError::NotMeasured { file: m.file.clone(), kind: m.result.meta.kind.as_str().into() });
        }
        let differs = HOST_KEYS.iter().any(|k| m.result.meta.platform.get(*k) != first.result.meta.platform.get(*k));
        if differs {
            return Err(CalibrateError::MixedHosts { a_file: first.file.clone(), a_host: host_identity(&first.result), b_file: m.file.clone(), b_host: host_identity(&m.result) });
        }
    }
    Ok(host_identity(&first.result))
}

fn show_form(f: &RunForm) -> String {
    f.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// Every measured path with its label and role; measured configurations the model has no
/// counterpart for are returned apart, with the reason.
pub fn measured_paths(ms: &[Measured], train: &[String]) -> Result<(Vec<MeasuredPath>, Vec<String>), CalibrateError> {
    let mut paths: Vec<MeasuredPath> = Vec::new();
    let mut skipped = Vec::new();
    for m in ms {
        let host = &m.result.meta.platform;
        let host_poll = host.get("host.kvm.halt_poll_ns").map(String::as_str);
        for c in &m.result.configs {
            let at = format!("{} `{}`", m.file, c.name);
            if let Some(e) = &c.error {
                skipped.push(format!("{at}: the run failed ({e})"));
                continue;
            }
            let form = match measured_form(c, host) {
                Ok(f) => f,
                Err(why) => {
                    skipped.push(format!("{at}: {why}"));
                    continue;
                }
            };
            for (class, l) in &c.classes {
                let p = MeasuredPath {
                    label: label(&form, class, host_poll),
                    file: m.file.clone(),
                    config: c.name.clone(),
                    class: class.clone(),
                    form: form.clone(),
                    p50: l.summary.p50 as f64,
                    p99: l.summary.p99 as f64,
                    samples: l.summary.count,
                    train: false,
                };
                if let Some(o) = paths.iter().find(|o| o.form == p.form && o.class == p.class) {
                    return Err(CalibrateError::Duplicate { form: show_form(&p.form), a: format!("{} `{}`", o.file, o.config), b: at });
                }
                paths.push(p);
            }
        }
    }
    for t in train {
        if !paths.iter().any(|p| &p.label == t) {
            let known: Vec<&str> = paths.iter().map(|p| p.label.as_str()).collect();
            return Err(CalibrateError::UnknownTrain(t.clone(), known.join(", ")));
        }
    }
    for p in &mut paths {
        p.train = train.contains(&p.label);
    }
    Ok((paths, skipped))
}

/// The calibration problem: the scenario with one reference per measured p50/p99.
#[derive(Debug, Clone)]
pub struct Plan {
    pub scenario: Scenario,
    /// (path, scenario configuration it pairs with).
    pub paths: Vec<(MeasuredPath, String)>,
    /// Measured configurations or classes left out, with the reason.
    pub skipped: Vec<String>,
    pub host: String,
}

fn run_whole(sc: &Scenario) -> Result<RunResult, ScenarioError> {
    Ok(run_scenario(sc, &ScenarioOpts::quiet())?.result)
}

fn reparse(base: &Scenario, doc: &toml::Table) -> Result<Scenario, CalibrateError> {
    let text = toml::to_string(doc).map_err(|e| CalibrateError::Profile(e.to_string()))?;
    Ok(Scenario::parse(&text, &base.file, &base.name, base.dir.clone())?)
}

/// `(class) of (configuration)` in a model result, by run form.
fn model_config<'a>(r: &'a RunResult, form: &RunForm, class: &str) -> Option<&'a ConfigResult> {
    r.configs.iter().find(|c| model_form(c).as_ref() == Some(form) && c.classes.contains_key(class))
}

/// Build the calibration scenario: `base` with `fit_samples` samples per point, the host's
/// halt-poll window (a measured fact of the host description) and one p50 and one p99
/// reference per measured path that pairs with one of its configurations.
pub fn plan(base: &Scenario, ms: &[Measured], train: &[String], fit_samples: u64) -> Result<Plan, CalibrateError> {
    let host = same_host(ms)?;
    let (paths, mut skipped) = measured_paths(ms, train)?;
    let mut doc = base.doc.clone();
    let set = |doc: &mut toml::Table, k: &str, v: toml::Value| set_path(doc, k, v).map_err(|e| CalibrateError::Profile(e.to_string()));
    set(&mut doc, "workload.samples", toml::Value::Integer(fit_samples.min(1_000_000) as i64))?;
    if let Some(poll) = ms[0].result.meta.platform.get("host.kvm.halt_poll_ns").and_then(|v| v.parse::<f64>().ok()) {
        let mut t = toml::Table::new();
        t.insert("value".into(), toml::Value::Float(poll));
        t.insert("source".into(), format!("measured: /sys/module/kvm/parameters/halt_poll_ns read by irqlab run on {host}").into());
        t.insert("basis".into(), Basis::Measured.as_str().into());
        set(&mut doc, "platform.params.host_halt_poll_ns", toml::Value::Table(t))?;
    }
    let probe = run_whole(&reparse(base, &doc)?)?;
    let mut paired = Vec::new();
    for p in paths {
        match model_config(&probe, &p.form, &p.class) {
            Some(c) => {
                let name = c.name.clone();
                paired.push((p, name));
            }
            None => skipped.push(format!("{} `{}` class {}: no configuration of {} has {} with that class", p.file, p.config, p.class, base.name, show_form(&p.form))),
        }
    }
    if paired.is_empty() {
        return Err(CalibrateError::NothingPaired { scenario: base.name.clone(), why: skipped.join("\n  ") });
    }
    let mut refs = Vec::new();
    for (p, target) in &paired {
        for (stat, value, tol) in [("p50", p.p50, P50_TOLERANCE), ("p99", p.p99, P99_TOLERANCE)] {
            let mut r = toml::Table::new();
            r.insert("config".into(), target.clone().into());
            r.insert("class".into(), p.class.clone().into());
            r.insert("stat".into(), stat.into());
            r.insert("value".into(), toml::Value::Float(value.max(1.0)));
            r.insert("tolerance".into(), toml::Value::Float(tol));
            r.insert("source".into(), format!("measured: {} `{}` ({} samples) on {host}", p.file, p.config, p.samples).into());
            r.insert("role".into(), if p.train { "fit" } else { "check" }.into());
            refs.push(toml::Value::Table(r));
        }
    }
    doc.insert("reference".into(), toml::Value::Array(refs));
    let mut scenario = reparse(base, &doc)?;
    let mut targets: Vec<String> = Vec::new();
    for (_, t) in &paired {
        if !targets.contains(t) {
            targets.push(t.clone());
        }
    }
    scenario.select_configs(&targets)?;
    Ok(Plan { scenario, paths: paired, skipped, host })
}

/// Which costs to fit, and which cannot be identified from the training paths.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FreeChoice {
    /// Fitted: per training path, the guess/derived cost it depends on most.
    pub chosen: Vec<String>,
    /// Exercised by a training path, but a weaker lever there than a chosen one: kept.
    pub kept: Vec<String>,
    /// Exercised only by held-out paths: no training figure identifies them.
    pub check_only: Vec<String>,
    /// Exercised by no measured path at all.
    pub unused: Vec<String>,
}

/// Relative change of a reference's model value below which a cost counts as not exercised.
const EXERCISED: f64 = 1e-3;

/// Choose the free costs by sensitivity: each `guess`/`derived` cost of the profile is scaled
/// ×1.5 once; for each training path (in `train` order) the cost that moves its p50 and p99
/// most, and is not yet chosen, is fitted. Costs with basis `measured` or `published` stay.
pub fn choose_free(sc: &Scenario, train: &[String], paths: &[(MeasuredPath, String)]) -> Result<FreeChoice, CalibrateError> {
    let platform = sc.platform(&sc.doc)?;
    let base = outcomes(sc)?;
    let candidates: Vec<&String> = platform.costs.iter().filter(|(_, c)| matches!(c.basis, Basis::Guess | Basis::Derived)).map(|(k, _)| k).collect();
    // effect[c][i]: relative change of reference i when cost c is scaled.
    let mut effect: Vec<Vec<f64>> = Vec::new();
    for name in &candidates {
        let free = [Free::Cost { name: (*name).clone(), base: platform.costs[*name].dist.clone() }];
        let moved = outcomes(&with_factors(sc, &free, &[1.5], "irqlab calibrate (sensitivity)"))?;
        effect.push(
            base.iter()
                .zip(&moved)
                .map(|(a, b)| match (a.model, b.model) {
                    (Some(x), Some(y)) if x > 0.0 => ((y - x) / x).abs(),
                    _ => 0.0,
                })
                .collect(),
        );
    }
    let path_of = |r: &ReferenceOutcome| paths.iter().find(|(p, t)| *t == r.config && p.class == r.class).map(|(p, _)| p.label.as_str());
    let mut choice = FreeChoice::default();
    for t in train {
        let score = |c: usize| -> f64 { base.iter().enumerate().filter(|(_, r)| path_of(r) == Some(t.as_str())).map(|(i, _)| effect[c][i]).sum() };
        let best = (0..candidates.len()).filter(|&c| !choice.chosen.contains(candidates[c]) && score(c) > EXERCISED).max_by(|&a, &b| score(a).total_cmp(&score(b)));
        if let Some(c) = best {
            choice.chosen.push(candidates[c].clone());
        }
    }
    for (c, name) in candidates.iter().enumerate() {
        if choice.chosen.contains(name) {
            continue;
        }
        let by = |role: ReferenceRole| base.iter().enumerate().any(|(i, r)| r.role == role && effect[c][i] > EXERCISED);
        let list = if by(ReferenceRole::Fit) {
            &mut choice.kept
        } else if by(ReferenceRole::Check) {
            &mut choice.check_only
        } else {
            &mut choice.unused
        };
        list.push((*name).clone());
    }
    Ok(choice)
}

/// [`crate::fit::fit`], then Nelder–Mead restarted from its own optimum (a fresh ±20 % simplex)
/// while the objective improves, at most `restarts` times: objectives made of percentiles of a
/// finite sample are flat in places and rugged in others, and a single simplex stalls on them.
/// Factors of the restarts multiply; the leave-one-out (when asked) is that of the first fit.
pub fn fit_restarting(sc: &Scenario, names: &[String], max_iters: u64, loo: bool, restarts: u32) -> Result<FitReport, CalibrateError> {
    let mut rep = fit(sc, names, max_iters, loo)?;
    for _ in 0..restarts {
        let moved = with_factors(sc, &rep.free, &rep.fit.factors, "irqlab calibrate (restart)");
        let r = optimise(&moved, &resolve_free(&moved, names)?, None, max_iters)?;
        if r.objective >= rep.fit.objective * 0.999 {
            rep.fit.evaluations += r.evaluations;
            break;
        }
        let factors = rep.fit.factors.iter().zip(&r.factors).map(|(a, b)| a * b).collect();
        rep.fit = FitRun { factors, objective: r.objective, evaluations: rep.fit.evaluations + r.evaluations };
    }
    rep.fitted = run(&with_factors(sc, &rep.free, &rep.fit.factors, "irqlab calibrate"))?;
    Ok(rep)
}

/// No cost left to fit (every cost on the training paths comes from a primitive): the report
/// of the scenario as it is, every reference a prediction.
pub fn no_fit(sc: &Scenario) -> Result<FitReport, CalibrateError> {
    let fitted = run(sc)?;
    let objective = fitted.references.iter().filter(|r| r.role == ReferenceRole::Fit).filter_map(|r| r.model.map(|m| ((m - r.published) / r.published).powi(2))).sum();
    Ok(FitReport { free: Vec::new(), fit: FitRun { factors: Vec::new(), objective, evaluations: 1 }, fitted, leave_one_out: Vec::new() })
}

/// The calibration scenario's result with the fitted values: the prediction of every path.
pub fn fitted_result(sc: &Scenario, rep: &FitReport) -> Result<RunResult, CalibrateError> {
    Ok(run_whole(&with_factors(sc, &rep.free, &rep.fit.factors, "irqlab calibrate"))?)
}

/// One row of the comparison: a measured path beside the model's prediction(s).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub label: String,
    pub train: bool,
    pub measured: (f64, f64),
    /// (p50, p99) per predicted result, `None` when it has no such configuration.
    pub predicted: Vec<Option<(f64, f64)>>,
}

impl Comparison {
    /// Relative error of the first prediction's p50.
    pub fn p50_error(&self) -> Option<f64> {
        self.predicted.first().copied().flatten().map(|(p, _)| (p - self.measured.0) / self.measured.0)
    }
    /// Predicted p99 over measured p99 (first prediction).
    pub fn p99_factor(&self) -> Option<f64> {
        self.predicted.first().copied().flatten().map(|(_, p)| p / self.measured.1)
    }
    /// The targets: p50 within ±30 %, p99 within a factor of 2.
    pub fn on_target(&self) -> Option<bool> {
        Some(self.p50_error()?.abs() <= P50_TOLERANCE && (0.5..=2.0).contains(&self.p99_factor()?))
    }
}

/// Pair each measured path with the configurations of predicted results by run form.
pub fn compare(paths: &[MeasuredPath], predicted: &[RunResult]) -> Vec<Comparison> {
    paths
        .iter()
        .map(|p| Comparison {
            label: p.label.clone(),
            train: p.train,
            measured: (p.p50, p.p99),
            predicted: predicted
                .iter()
                .map(|r| {
                    model_config(r, &p.form, &p.class).map(|c| {
                        let s = &c.classes[&p.class].summary;
                        (s.p50 as f64, s.p99 as f64)
                    })
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_primitives;

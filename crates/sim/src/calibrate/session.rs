//! `irqlab calibrate`'s work between its flags and its output, in the order the command does it:
//! measured primitives composed into the profile (`--primitives`), the calibration planned, the
//! free costs chosen by sensitivity (or given), the fit (or none, when every cost on the training
//! paths is a primitive), the comparison with what was measured, and the calibrated profile's
//! text. Each stage is handed to the caller as a [`Step`] as soon as it exists, so that the CLI
//! prints it then (a long fit says what it fits before it starts) and a failure later on leaves
//! what was printed before it; the caller's error type passes through unchanged.
//!
//! `--against` fits nothing: [`against_paths`] pairs the measured paths for a comparison with
//! results already predicted.
use results::RunResult;

use super::primitives::Primitives;
use super::{
    choose_free, compare, fit_restarting, fitted_result, measured_paths, no_fit, plan, profile_out, same_host, CalibrateError, Comparison, FreeChoice, Measured, MeasuredPath, Plan,
};
use crate::fit::FitReport;
use crate::scenario::Scenario;

/// What to calibrate, from the command line.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// Measured results of `irqlab run`, all of one host ([`same_host`] checked).
    pub measured: &'a [Measured],
    /// That host, as the results describe it.
    pub host: &'a str,
    /// `--primitives`: a measured result of `irqlab run primitives` on the same host.
    pub primitives: Option<&'a Measured>,
    /// The scenario whose configurations model the measured benchmarks.
    pub scenario: &'a str,
    /// Training paths (the default ones when not given).
    pub train: &'a [String],
    /// `--free`: the costs to fit (empty: chosen by sensitivity).
    pub free: &'a [String],
    pub fit_samples: u64,
    pub max_iters: u64,
    pub restarts: u32,
    /// Run the leave-one-out check.
    pub loo: bool,
    /// The command line, recorded in the profile.
    pub command: &'a str,
}

/// A stage of a calibration, as soon as it exists.
#[derive(Debug)]
pub enum Step<'a> {
    /// `--primitives`: the primitives read and their file's result (the checks it holds).
    Primitives(&'a Primitives, &'a RunResult),
    /// The measured paths paired with the model's configurations.
    Planned(&'a Plan),
    /// The free costs chosen by sensitivity, and what the training paths cannot identify.
    FreeChosen(&'a FreeChoice),
    /// Every cost on the training paths comes from a primitive: nothing is fitted.
    NothingToFit,
    /// A fit of these costs is about to start.
    Fitting(&'a [String]),
    /// The fit (or the profile as it was, with nothing fitted) and its leave-one-out check.
    Fitted(&'a FitReport),
    /// Measured against the calibrated model, path by path.
    Compared(&'a [Comparison]),
}

impl FreeChoice {
    /// The costs a choice leaves unidentified, each list with why (`not identified (why): …`).
    pub fn unidentified(&self) -> Vec<(&[String], &'static str)> {
        [
            (&self.kept[..], "on a training path, a weaker lever there than the fitted cost: kept at the profile value"),
            (&self.check_only[..], "exercised only by held-out paths: no training path identifies it"),
            (&self.unused[..], "exercised by no measured path"),
        ]
        .into_iter()
        .filter(|(list, _)| !list.is_empty())
        .collect()
    }
}

/// Calibrate: the profile's text, every stage handed to `say` on the way.
pub fn calibrate<E: From<CalibrateError>>(job: &Job, say: &mut dyn FnMut(Step) -> Result<(), E>) -> Result<String, E> {
    let mut base = Scenario::load(job.scenario).map_err(CalibrateError::from)?;
    let mut files: Vec<String> = job.measured.iter().map(|m| m.file.clone()).collect();
    if let Some(pm) = job.primitives {
        // The file must identify its primitives (else it says which and why), and be of this host.
        let pr = Primitives::read(&pm.file, &pm.result)?;
        let mut all = job.measured.to_vec();
        all.push(pm.clone());
        same_host(&all)?;
        say(Step::Primitives(&pr, &pm.result))?;
        base = pr.apply(&base)?;
        files.push(pr.file.clone());
    }
    let p = plan(&base, job.measured, job.train, job.fit_samples)?;
    say(Step::Planned(&p))?;
    let mut unidentified = Vec::new();
    let free = if job.free.is_empty() {
        let choice = choose_free(&p.scenario, job.train, &p.paths)?;
        say(Step::FreeChosen(&choice))?;
        unidentified = choice.unidentified().into_iter().map(|(list, why)| format!("{} — {why}", list.join(", "))).collect();
        choice.chosen
    } else {
        job.free.to_vec()
    };
    if free.is_empty() && job.primitives.is_none() {
        return Err(CalibrateError::NoFreeCost.into());
    }
    let rep = if free.is_empty() {
        say(Step::NothingToFit)?;
        no_fit(&p.scenario)?
    } else {
        say(Step::Fitting(&free))?;
        fit_restarting(&p.scenario, &free, job.max_iters, job.loo, job.restarts)?
    };
    say(Step::Fitted(&rep))?;
    let fitted = fitted_result(&p.scenario, &rep)?;
    let paths: Vec<MeasuredPath> = p.paths.iter().map(|(m, _)| m.clone()).collect();
    say(Step::Compared(&compare(&paths, &[fitted])))?;
    let prov = profile_out::Provenance { command: job.command, host: job.host, files: &files, train: job.train, unidentified: &unidentified };
    Ok(profile_out::calibrated_profile(&p.scenario, &rep, &prov)?)
}

/// `--against`: the measured paths, the training ones marked, and those left out with why.
/// Without `--train` only the default training paths that were measured are marked (a path
/// named by `--train` must exist).
pub fn against_paths(ms: &[Measured], train: &[String], default_train: &[String]) -> Result<(Vec<MeasuredPath>, Vec<String>), CalibrateError> {
    let train: Vec<String> = if train.is_empty() {
        let (all, _) = measured_paths(ms, &[])?;
        default_train.iter().filter(|t| all.iter().any(|p| &p.label == *t)).cloned().collect()
    } else {
        train.to_vec()
    };
    measured_paths(ms, &train)
}

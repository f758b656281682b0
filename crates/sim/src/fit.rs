//! Calibration: fit named costs and parameters of a scenario to its `fit` references, and a
//! leave-one-out check of how well each fitted figure is predicted when it is left out.
//!
//! Why this shape: a figure a model was fitted to proves little, so the fit sees only the
//! references whose role is `fit`; `check` references are never part of the objective, and
//! leave-one-out shows, per fitted figure, the prediction error it would have had.
//!
//! Method: each free cost is multiplied by a scale factor (its distribution keeps its shape),
//! each free parameter is set directly; both are optimised in log space (they are positive) by
//! argmin's Nelder–Mead, starting from the scenario's current values with a simplex of ±20 %.
//! The objective is the sum over fit references of ((model − published) / published)²; the
//! scenario's seed is fixed, so the objective is deterministic (common random numbers) and the
//! fit is reproducible. A run that fails counts as a large residual.
use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
use argmin::solver::neldermead::NelderMead;
use results::{ReferenceOutcome, ReferenceRole};

use crate::engine::CostDist;
use crate::runner::{run_scenario, ScenarioOpts};
use crate::scenario::{set_path, Scenario, ScenarioError};

/// Why a fit cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// The scenario is unusable as it is.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A `--free` name is neither a cost nor a parameter the scenario's platform has.
    #[error("--free `{0}`: no cost or parameter of that name in the scenario's platform (write `costs.NAME` or `params.NAME`; known: {1})")]
    UnknownFree(String, String),
    /// A free parameter is not positive, so it cannot be fitted in log space.
    #[error("--free `{0}`: its value {1} is not positive; only positive values can be fitted")]
    NotPositive(String, f64),
    /// Nothing to fit against.
    #[error("{0}: no [[reference]] with role = \"fit\" — nothing to fit against")]
    NoFitReferences(String),
    /// More free values than fit references: the fit is not determined.
    #[error("{free} free values but only {refs} fit references: the fit would not be determined")]
    Underdetermined { free: usize, refs: usize },
    /// The optimiser failed.
    #[error("optimiser: {0}")]
    Optimiser(String),
}

/// One free value: a cost (scaled as a whole) or a parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Free {
    Cost { name: String, base: CostDist },
    Param { name: String, base: f64 },
}

impl Free {
    /// `costs.NAME` or `params.NAME`.
    pub fn key(&self) -> String {
        match self {
            Free::Cost { name, .. } => format!("costs.{name}"),
            Free::Param { name, .. } => format!("params.{name}"),
        }
    }
    /// The value shown to people: the cost's mean in ns, or the parameter.
    pub fn shown(&self, factor: f64) -> f64 {
        match self {
            Free::Cost { base, .. } => base.scaled(factor).mean_ns(),
            Free::Param { base, .. } => base * factor,
        }
    }
    /// The `[platform.costs.NAME]` / `[platform.params.NAME]` table for a factor.
    pub fn table(&self, factor: f64, source: &str) -> toml::Table {
        let mut t = match self {
            Free::Cost { base, .. } => base.scaled(factor).to_spec_table(),
            Free::Param { base, .. } => {
                let mut t = toml::Table::new();
                t.insert("value".into(), toml::Value::Float(base * factor));
                t
            }
        };
        t.insert("source".into(), source.into());
        t.insert("basis".into(), "calibrated".into());
        t
    }
}

/// Resolve `--free` names against the scenario's (base) platform.
pub fn resolve_free(sc: &Scenario, names: &[String]) -> Result<Vec<Free>, FitError> {
    let platform = sc.platform(&sc.doc)?;
    let known = || {
        let mut k: Vec<String> = platform.costs.keys().map(|c| format!("costs.{c}")).collect();
        k.extend(platform.params.keys().map(|p| format!("params.{p}")));
        k.join(", ")
    };
    names
        .iter()
        .map(|n| {
            let (kind, name) = match n.split_once('.') {
                Some((k @ ("costs" | "params"), rest)) => (Some(k), rest),
                _ => (None, n.as_str()),
            };
            if kind != Some("params") {
                if let Some(c) = platform.costs.get(name) {
                    return Ok(Free::Cost { name: name.into(), base: c.dist.clone() });
                }
            }
            if kind != Some("costs") {
                if let Some(p) = platform.params.get(name) {
                    if p.value <= 0.0 {
                        return Err(FitError::NotPositive(n.clone(), p.value));
                    }
                    return Ok(Free::Param { name: name.into(), base: p.value });
                }
            }
            Err(FitError::UnknownFree(n.clone(), known()))
        })
        .collect()
}

/// The scenario with the free values set to `factors`.
pub fn with_factors(sc: &Scenario, free: &[Free], factors: &[f64], source: &str) -> Scenario {
    let mut s = sc.clone();
    for (f, x) in free.iter().zip(factors) {
        set_path(&mut s.doc, &format!("platform.{}", f.key()), toml::Value::Table(f.table(*x, source))).expect("platform is a table");
    }
    s
}

/// Run the scenario and return its reference outcomes.
pub fn outcomes(sc: &Scenario) -> Result<Vec<ReferenceOutcome>, ScenarioError> {
    Ok(run(sc)?.references)
}

/// Run the scenario quietly: its whole result (the references with the figures' units and the
/// seeds they ran with, for the "vs published" table).
pub fn run(sc: &Scenario) -> Result<results::RunResult, ScenarioError> {
    Ok(run_scenario(sc, &ScenarioOpts::quiet())?.result)
}

/// Sum of squared relative errors over the fit references, skipping index `skip`.
fn objective(refs: &[ReferenceOutcome], skip: Option<usize>) -> f64 {
    refs.iter()
        .enumerate()
        .filter(|(i, r)| r.role == ReferenceRole::Fit && Some(*i) != skip)
        .map(|(_, r)| match r.deviation() {
            Some(d) if d.is_finite() => d * d,
            _ => 1e6,
        })
        .sum()
}

struct Problem<'a> {
    sc: &'a Scenario,
    free: &'a [Free],
    skip: Option<usize>,
    evaluations: std::cell::Cell<u64>,
}

impl CostFunction for Problem<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, logs: &Vec<f64>) -> Result<f64, ArgminError> {
        self.evaluations.set(self.evaluations.get() + 1);
        let factors: Vec<f64> = logs.iter().map(|l| l.exp()).collect();
        if factors.iter().any(|f| !f.is_finite() || *f > 1e6 || *f < 1e-6) {
            return Ok(1e12);
        }
        Ok(match outcomes(&with_factors(self.sc, self.free, &factors, "irqlab fit (trial)")) {
            Ok(refs) => objective(&refs, self.skip),
            Err(_) => 1e9,
        })
    }
}

/// The result of one optimisation.
#[derive(Debug, Clone)]
pub struct FitRun {
    /// Factor per free value (1 = unchanged).
    pub factors: Vec<f64>,
    pub objective: f64,
    pub evaluations: u64,
}

/// Optimise the free values against the fit references (without reference `skip`).
pub fn optimise(sc: &Scenario, free: &[Free], skip: Option<usize>, max_iters: u64) -> Result<FitRun, FitError> {
    let n = free.len();
    let mut simplex = vec![vec![0.0; n]];
    for i in 0..n {
        let mut v = vec![0.0; n];
        v[i] = 0.2f64.ln_1p();
        simplex.push(v);
    }
    let problem = Problem { sc, free, skip, evaluations: std::cell::Cell::new(0) };
    let solver = NelderMead::new(simplex).with_sd_tolerance(1e-7).map_err(|e| FitError::Optimiser(e.to_string()))?;
    let res = Executor::new(problem, solver).configure(|s| s.max_iters(max_iters)).run().map_err(|e| FitError::Optimiser(e.to_string()))?;
    let best = res.state().get_best_param().cloned().unwrap_or_else(|| vec![0.0; n]);
    let evaluations = res.problem.problem.as_ref().map_or(0, |p| p.evaluations.get());
    Ok(FitRun { factors: best.iter().map(|l| l.exp()).collect(), objective: res.state().get_best_cost(), evaluations })
}

/// Everything `irqlab fit` reports.
#[derive(Debug, Clone)]
pub struct FitReport {
    pub free: Vec<Free>,
    pub fit: FitRun,
    /// The scenario's run with the fitted values; its `references` (fit and check) are the
    /// outcomes [`FitReport::outcomes`] gives.
    pub fitted: results::RunResult,
    /// Leave-one-out: each fit reference as predicted by a fit made without it.
    pub leave_one_out: Vec<ReferenceOutcome>,
}

impl FitReport {
    /// References (fit and check) with the fitted values.
    pub fn outcomes(&self) -> &[ReferenceOutcome] {
        &self.fitted.references
    }
}

/// Fit, then (when there are at least two fit references) leave each one out in turn.
pub fn fit(sc: &Scenario, free_names: &[String], max_iters: u64, loo: bool) -> Result<FitReport, FitError> {
    let free = resolve_free(sc, free_names)?;
    let refs = outcomes(sc)?;
    let fit_idx: Vec<usize> = refs.iter().enumerate().filter(|(_, r)| r.role == ReferenceRole::Fit).map(|(i, _)| i).collect();
    if fit_idx.is_empty() {
        return Err(FitError::NoFitReferences(sc.file.clone()));
    }
    if free.len() > fit_idx.len() {
        return Err(FitError::Underdetermined { free: free.len(), refs: fit_idx.len() });
    }
    let best = optimise(sc, &free, None, max_iters)?;
    let fitted = run(&with_factors(sc, &free, &best.factors, "irqlab fit"))?;
    let mut leave_one_out = Vec::new();
    if loo && fit_idx.len() >= 2 && free.len() < fit_idx.len() {
        for &i in &fit_idx {
            let r = optimise(sc, &free, Some(i), max_iters)?;
            let o = outcomes_of(sc, &free, &r.factors)?;
            leave_one_out.push(o[i].clone());
        }
    }
    Ok(FitReport { free, fit: best, fitted, leave_one_out })
}

fn outcomes_of(sc: &Scenario, free: &[Free], factors: &[f64]) -> Result<Vec<ReferenceOutcome>, ScenarioError> {
    outcomes(&with_factors(sc, free, factors, "irqlab fit (leave-one-out)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S3: &str = include_str!("../../../scenarios/xen-arm-zynq-timer.toml");

    fn small() -> Scenario {
        let mut sc = Scenario::parse(S3, "s3.toml", "s3", None).unwrap();
        sc.apply_sets(&[("workload.samples".into(), toml::Value::Integer(60))]).unwrap();
        sc
    }

    #[test]
    fn fit_recovers_a_perturbed_cost() {
        // Move the fitted handler cost away by ×1.5, then fit it back against the references.
        let sc = small();
        let free = resolve_free(&sc, &["xen_irq_handler".into()]).unwrap();
        let moved = with_factors(&sc, &free, &[1.5], "test");
        let before = objective(&outcomes(&moved).unwrap(), None);
        let r = optimise(&moved, &resolve_free(&moved, &["costs.xen_irq_handler".into()]).unwrap(), None, 40).unwrap();
        assert!(r.objective < before / 4.0, "objective {before} -> {}", r.objective);
        assert!((r.factors[0] - 1.0 / 1.5).abs() < 0.15, "factor {}", r.factors[0]);
    }

    #[test]
    fn only_fit_references_enter_the_objective() {
        let refs = outcomes(&small()).unwrap();
        let mut changed = refs.clone();
        for r in changed.iter_mut().filter(|r| r.role == ReferenceRole::Check) {
            r.model = Some(r.published * 10.0);
        }
        assert_eq!(objective(&refs, None), objective(&changed, None));
    }

    #[test]
    fn bad_free_names_are_errors() {
        let sc = small();
        assert!(matches!(resolve_free(&sc, &["nope".into()]), Err(FitError::UnknownFree(..))));
        assert!(matches!(resolve_free(&sc, &["params.xen_irq_handler".into()]), Err(FitError::UnknownFree(..))));
        assert!(resolve_free(&sc, &["params.cold_factor".into()]).is_ok());
        // One more free knob than the scenario has `fit` references (5).
        let many: Vec<String> = ["xen_irq_handler", "context_restore", "sched", "eret", "gicv2_mmio_access", "gicv3_sysreg_access"].map(String::from).to_vec();
        assert!(matches!(fit(&sc, &many, 5, false), Err(FitError::Underdetermined { .. })));
    }
}

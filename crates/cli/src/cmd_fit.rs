//! `irqlab fit SCENARIO --free NAME...`: calibrate named costs/parameters against the scenario's
//! `fit` references (argmin Nelder–Mead, see `sim::fit`), show fit residuals and held-out
//! errors apart, run a leave-one-out check, and write the fitted values as scenario overrides
//! with `basis = "calibrated"`.
use std::path::PathBuf;

use clap::Args;
use report::references::ReferenceTable;
use results::{LatencyUnit, ReferenceOutcome, ReferenceRole};
use sim::fit::fit;

use crate::cmd_sim::SimArgs;
use crate::{CliError, Outcome};

#[derive(Args)]
pub struct FitArgs {
    /// Scenario file, or the name of a shipped scenario.
    pub scenario: String,
    /// A cost (`NAME` or `costs.NAME`) or parameter (`params.NAME`) to fit. Repeatable.
    #[arg(long = "free", value_name = "NAME", required = true, num_args = 1..)]
    pub free: Vec<String>,
    /// Override a scenario value for the fit (e.g. fewer samples), as `sim --set`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Optimiser iterations per fit.
    #[arg(long, default_value_t = 80)]
    pub max_iters: u64,
    /// Skip the leave-one-out check.
    #[arg(long)]
    pub no_loo: bool,
    /// Write the fitted values as `[platform.costs.*]` / `[platform.params.*]` overrides here
    /// (default: print them).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Replace an existing -o file that irqlab did not write.
    #[arg(long)]
    pub force: bool,
}

/// Leave-one-out rows (all `fit` references, each predicted by a fit made without it) as the
/// one "vs published" table, under its own title.
pub(crate) fn leave_one_out(rep: &sim::fit::FitReport) -> String {
    ReferenceTable::within_run(&rep.leave_one_out, &rep.fitted, LatencyUnit::Us).text(|_| "leave-one-out (each fit reference predicted by a fit made without it)".into())
}

pub fn run(a: FitArgs) -> Result<Outcome, CliError> {
    let sim_args = SimArgs::for_fit(&a.scenario, &a.sets);
    let sc = crate::cmd_sim::load(&sim_args)?;
    crate::term::note(&format!("fitting {} to the `fit` references of {} (Nelder–Mead, ≤ {} iterations per fit)…\n", a.free.join(", "), sc.name, a.max_iters));
    let rep = fit(&sc, &a.free, a.max_iters, !a.no_loo)?;
    let mut s = String::from("FREE VALUE               START         FITTED   FACTOR\n");
    for (f, x) in rep.free.iter().zip(&rep.fit.factors) {
        s.push_str(&format!("{:<20} {:>10.3} {:>14.3} {:>8.4}\n", f.key(), f.shown(1.0), f.shown(*x), x));
    }
    s.push_str(&format!("objective (sum of squared relative errors over fit references): {:.3e} after {} model runs\n", rep.fit.objective, rep.fit.evaluations));
    s.push_str(&ReferenceTable::of_run(&rep.fitted, LatencyUnit::Us).text(|role| match role {
        ReferenceRole::Check => "held-out errors (check references, never fitted: predictions)".into(),
        ReferenceRole::Fit => "fit residuals (these figures were fitted: not predictions)".into(),
    }));
    s.push_str(&leave_one_out(&rep));
    let fits: Vec<&ReferenceOutcome> = rep.outcomes().iter().filter(|r| r.role == ReferenceRole::Fit).collect();
    crate::term::out(&s)?;

    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let residuals: Vec<String> = fits.iter().map(|r| format!("{} {} {}: {:+.1}%", r.config, r.class, r.stat, r.deviation().unwrap_or(f64::NAN) * 100.0)).collect();
    let source = format!("irqlab fit ({command}); fit references: {}", residuals.join("; "));
    let mut doc = toml::Table::new();
    for (f, x) in rep.free.iter().zip(&rep.fit.factors) {
        sim::scenario::set_path(&mut doc, &format!("platform.{}", f.key()), toml::Value::Table(f.table(*x, &source)))?;
    }
    let text =
        format!("# Fitted by: {command}\n# Paste into the scenario (replacing the entries of the same name).\n{}", toml::to_string(&doc).map_err(|e| CliError(e.to_string()))?);
    match &a.out {
        Some(p) => {
            let inputs: Vec<PathBuf> = std::path::Path::new(&a.scenario).is_file().then(|| PathBuf::from(&a.scenario)).into_iter().collect();
            let t = crate::output::file::Target { flag: "-o", path: p, inputs: &inputs, force: a.force, kind: crate::output::file::Artefact::FittedCosts };
            crate::output::file::write(&t, text.as_bytes())?;
            crate::term::note(&format!("wrote {}\n", p.display()));
        }
        None => crate::term::out(&format!("\n{text}"))?,
    }
    Ok(Outcome::Ok)
}

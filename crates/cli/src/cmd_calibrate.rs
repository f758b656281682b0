//! `irqlab calibrate MEASURED.json... -o host.toml`: fit this host's platform profile to measured
//! results of `irqlab run` (training paths only, through `sim::fit`), print how well it predicts
//! the held-out paths, and write the profile (fitted costs with `basis = "measured"`).
//!
//! `--primitives PRIMITIVES.json` (the result of `irqlab run primitives` on the same host) first
//! replaces every cost a primitive measures with that measured distribution
//! (`sim::calibrate::primitives`): the paths are then composed from primitives and only the
//! remaining costs can be fitted; a primitive too noisy to identify its cost is refused by name.
//!
//! `irqlab calibrate MEASURED.json... --against PREDICTED.json...` fits nothing: it pairs the
//! measured paths with predicted results (e.g. `irqlab sim kvm-x86-host --profile host.toml`) by
//! parameters and prints measured vs predicted p50/p99 with the error against the first predicted
//! result; further ones (what-ifs on the same profile) show the change they predict against it.
//!
//! The calibration is [`sim::calibrate::session`]'s, handed over stage by stage; this module
//! parses the flags, reads the inputs, prints each stage as it comes and writes the files.
use std::path::{Path, PathBuf};

use crate::output::file::{Artefact, Target};
use clap::Args;
use results::RunResult;
use sim::calibrate::primitives;
use sim::calibrate::session::{self, calibrate, Job, Step};
use sim::calibrate::{compare, same_host, Comparison, Measured, DEFAULT_TRAIN};

use crate::{CliError, Outcome};

#[derive(Args)]
pub struct CalibrateArgs {
    /// Measured results of `irqlab run` (result.json), all from one host.
    #[arg(required = true, num_args = 1..)]
    pub measured: Vec<PathBuf>,
    /// Write the calibrated platform profile here (required unless --against).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Training paths (their p50/p99 are fitted; every other measured path is held out)
    /// [default: timer-hlt,ipi-one-way]. With --against, the default marks only the paths that
    /// were measured; a path named here must exist.
    #[arg(long, value_delimiter = ',')]
    pub train: Vec<String>,
    /// Costs to fit (default: per training path, the guess/derived cost it depends on most).
    #[arg(long = "free", value_name = "NAME", num_args = 1..)]
    pub free: Vec<String>,
    /// The scenario whose configurations model the measured benchmarks.
    #[arg(long, default_value = "kvm-x86-host")]
    pub scenario: String,
    /// Model samples per configuration during the fit.
    #[arg(long, default_value_t = 2000)]
    pub fit_samples: u64,
    /// Optimiser iterations.
    #[arg(long, default_value_t = 80)]
    pub max_iters: u64,
    /// Nelder–Mead restarts from the optimum while the objective improves.
    #[arg(long, default_value_t = 4)]
    pub restarts: u32,
    /// Skip the leave-one-out check.
    #[arg(long)]
    pub no_loo: bool,
    /// Compose the paths from measured primitives (`irqlab run primitives`, same host): every cost
    /// a primitive measures enters as that measured distribution, and only the rest may be fitted.
    #[arg(long, value_name = "PRIMITIVES.json")]
    pub primitives: Option<PathBuf>,
    /// Compare with these predicted results instead of fitting. Repeatable.
    #[arg(long, value_name = "PREDICTED.json")]
    pub against: Vec<PathBuf>,
    /// Also write the comparison table (Markdown) here.
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// Replace an existing -o or --table file that irqlab did not write.
    #[arg(long)]
    pub force: bool,
}

impl CalibrateArgs {
    /// `--train`, or the default training paths.
    fn train(&self) -> Vec<String> {
        if self.train.is_empty() {
            DEFAULT_TRAIN.iter().map(|s| s.to_string()).collect()
        } else {
            self.train.clone()
        }
    }

    /// Where an output file goes, protected like every irqlab output ([`crate::output::file`]).
    fn target<'a>(&'a self, flag: &'a str, path: &'a Path, inputs: &'a [PathBuf], kind: Artefact) -> Target<'a> {
        Target { flag, path, inputs, force: self.force, kind }
    }
}

fn load(paths: &[PathBuf]) -> Result<Vec<Measured>, CliError> {
    paths.iter().map(|p| Ok(Measured { file: p.display().to_string(), result: results::read_json(p)? })).collect()
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

fn pct(x: Option<f64>) -> String {
    x.map(|d| format!("{:+.0}%", d * 100.0)).unwrap_or_else(|| "n/a".into())
}

/// A column group's name: the predicted result's directory (`out/predicted/result.json` →
/// `predicted`, `out/what-if-posted-interrupts/…` → `posted-interrupts`).
fn column_name(p: &Path) -> String {
    let dir = if p.is_dir() { Some(p) } else { p.parent() };
    let name = dir.and_then(|d| d.file_name()).map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| p.display().to_string());
    name.strip_prefix("what-if-").map(String::from).unwrap_or(name)
}

/// Header and rows of the comparison (times in µs).
fn comparison_rows(rows: &[Comparison], names: &[String]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head: Vec<String> = ["PATH", "ROLE", "MEAS p50", "PRED p50", "ERR p50", "MEAS p99", "PRED p99", "p99 ×", "TARGET"].map(String::from).to_vec();
    for n in names.iter().skip(1) {
        head.extend([format!("{n} p50"), "vs pred".into(), format!("{n} p99"), "vs pred".into()]);
    }
    let body = rows
        .iter()
        .map(|c| {
            let first = c.predicted.first().copied().flatten();
            let mut r = vec![
                c.label.clone(),
                if c.train { "fit".into() } else { "held out".into() },
                us(c.measured.0),
                first.map(|p| us(p.0)).unwrap_or_else(|| "n/a".into()),
                pct(c.p50_error()),
                us(c.measured.1),
                first.map(|p| us(p.1)).unwrap_or_else(|| "n/a".into()),
                c.p99_factor().map(|f| format!("{f:.2}")).unwrap_or_else(|| "n/a".into()),
                match c.on_target() {
                    Some(true) => "ok".into(),
                    Some(false) => "MISS".into(),
                    None => "n/a".into(),
                },
            ];
            // Further predictions (what-ifs on the same profile): the change the model predicts
            // against its own baseline (the first prediction), so its error on the baseline cancels.
            for p in c.predicted.iter().skip(1) {
                let rel = |v: f64, base: Option<f64>| pct(base.map(|b| (v - b) / b));
                match p {
                    Some((p50, p99)) => r.extend([us(*p50), rel(*p50, first.map(|f| f.0)), us(*p99), rel(*p99, first.map(|f| f.1))]),
                    None => r.extend(["n/a".into(), String::new(), "n/a".into(), String::new()]),
                }
            }
            r
        })
        .collect();
    (head, body)
}

fn markdown(head: &[String], body: &[Vec<String>]) -> String {
    let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut s = line(head);
    s.push_str(&line(&head.iter().map(|_| "---".to_string()).collect::<Vec<_>>()));
    for r in body {
        s.push_str(&line(r));
    }
    s
}

/// Print the comparison and write it as Markdown when asked.
fn show(rows: &[Comparison], names: &[String], table: Option<&Target>, host: &str) -> Result<(), CliError> {
    let (head, body) = comparison_rows(rows, names);
    crate::term::out(&format!("\nmeasured on {host} vs predicted (µs; ERR = predicted/measured − 1; target: held-out p50 within ±30 %, p99 within ×2)\n"))?;
    crate::term::out(&report::table::render_grid(&head, &body, 3))?;
    let held: Vec<&Comparison> = rows.iter().filter(|c| !c.train && c.on_target().is_some()).collect();
    let ok = held.iter().filter(|c| c.on_target() == Some(true)).count();
    crate::term::out(&format!("held-out paths on target: {ok} of {}\n", held.len()))?;
    if let Some(t) = table {
        let text = format!("Measured on {host}; predicted: {}. Times in µs.\n\n{}", names.join(", "), markdown(&head, &body));
        crate::output::file::write(t, text.as_bytes())?;
        crate::term::note(&format!("wrote {}\n", t.path.display()));
    }
    Ok(())
}

pub fn run(a: CalibrateArgs) -> Result<Outcome, CliError> {
    let inputs: Vec<PathBuf> = a.measured.iter().chain(&a.against).cloned().collect();
    let table = a.table.as_deref().map(|p| a.target("--table", p, &inputs, Artefact::Table));
    if let Some(t) = &table {
        crate::output::file::check(t)?;
    }
    let ms = load(&a.measured)?;
    let host = same_host(&ms)?;
    if a.primitives.is_some() && !a.against.is_empty() {
        return Err(CliError("calibrate: --primitives composes a profile to fit; --against compares results already predicted (give the profile to `irqlab sim` instead)".into()));
    }
    if !a.against.is_empty() {
        return against(&a, &ms, table.as_ref(), &host);
    }
    let out = a.out.as_ref().ok_or_else(|| CliError("calibrate: -o FILE (where to write the profile) is required unless --against is given".into()))?;
    let out_target = a.target("-o", out, &inputs, Artefact::Profile);
    crate::output::file::check(&out_target)?;
    let prims = a.primitives.as_ref().map(|pf| load(std::slice::from_ref(pf))).transpose()?;
    let (train, command) = (a.train(), std::env::args().collect::<Vec<_>>().join(" "));
    let job = Job {
        measured: &ms,
        host: &host,
        primitives: prims.as_ref().and_then(|p| p.first()),
        scenario: &a.scenario,
        train: &train,
        free: &a.free,
        fit_samples: a.fit_samples,
        max_iters: a.max_iters,
        restarts: a.restarts,
        loo: !a.no_loo,
        command: &command,
    };
    let mut nothing_fitted = false;
    let text = calibrate(&job, &mut |step| print_step(step, &a, &host, table.as_ref(), &mut nothing_fitted))?;
    crate::output::file::write(&out_target, text.as_bytes())?;
    crate::term::note(&format!("wrote {} (run any scenario on it: irqlab sim SCENARIO --profile {})\n", out.display(), out.display()));
    Ok(Outcome::Ok)
}

/// `--against`: measured vs predicted, nothing fitted.
fn against(a: &CalibrateArgs, ms: &[Measured], table: Option<&Target>, host: &str) -> Result<Outcome, CliError> {
    let (paths, skipped) = session::against_paths(ms, &a.train, &a.train())?;
    for s in &skipped {
        crate::term::note(&format!("irqlab calibrate: left out {s}\n"));
    }
    let predicted: Vec<RunResult> = a.against.iter().map(|p| results::read_json(p)).collect::<Result<_, _>>()?;
    let names: Vec<String> = a.against.iter().map(|p| column_name(p)).collect();
    show(&compare(&paths, &predicted), &names, table, host)?;
    Ok(Outcome::Ok)
}

/// Print a stage of the calibration as it comes (the fit's note on stderr, the rest on stdout).
fn print_step(step: Step, a: &CalibrateArgs, host: &str, table: Option<&Target>, nothing_fitted: &mut bool) -> Result<(), CliError> {
    let out = crate::term::out;
    match step {
        Step::Primitives(pr, result) => {
            out(&format!("primitives ({}), composed into the paths:\n", pr.file))?;
            for (cost, f, _) in primitives::MAPPING {
                let v = pr.values(*f);
                let q = |x: f64| v[((x * v.len() as f64) as usize).min(v.len() - 1)];
                out(&format!("  {cost:<24} ← {:<60} p50 {:>8.2} µs  p99 {:>8.2} µs\n", f.describe(), q(0.5) / 1e3, q(0.99) / 1e3))?;
            }
            for (check, what) in primitives::CHECKS {
                if let Some(c) = result.configs.iter().find_map(|c| c.classes.get(*check)) {
                    out(&format!("  check {check:<18} p50 {:>8.2} µs  p99 {:>8.2} µs  ({what})\n", c.summary.p50 as f64 / 1e3, c.summary.p99 as f64 / 1e3))?;
                }
            }
        }
        Step::Planned(p) => {
            out(&format!("host: {host}\n"))?;
            for (path, target) in &p.paths {
                out(&format!("  {:<16} {:<9} {} `{}` → model `{target}`\n", path.label, if path.train { "fit" } else { "held out" }, path.file, path.config))?;
            }
            for s in &p.skipped {
                out(&format!("  left out: {s}\n"))?;
            }
        }
        Step::FreeChosen(choice) => {
            out(&format!("free costs (per training path, the guess/derived cost it depends on most): {}\n", choice.chosen.join(", ")))?;
            for (list, why) in choice.unidentified() {
                out(&format!("not identified ({why}): {}\n", list.join(", ")))?;
            }
        }
        Step::NothingToFit => out("nothing left to fit: every cost on the training paths comes from a primitive, so every path is a prediction\n")?,
        Step::Fitting(free) => {
            crate::term::note(&format!("fitting {} (Nelder–Mead, ≤ {} iterations, {} model samples per configuration)…\n", free.join(", "), a.max_iters, a.fit_samples))
        }
        Step::Fitted(rep) => {
            *nothing_fitted = rep.free.is_empty();
            out("\nFREE                          START        FITTED   FACTOR\n")?;
            for (f, x) in rep.free.iter().zip(&rep.fit.factors) {
                out(&format!("{:<24} {:>11.1} {:>13.1} {:>8.4}\n", f.key(), f.shown(1.0), f.shown(*x), x))?;
            }
            out(&format!("objective (sum of squared relative errors over fit references): {:.3e} after {} model runs\n", rep.fit.objective, rep.fit.evaluations))?;
            out(&crate::cmd_fit::leave_one_out(rep))?;
        }
        Step::Compared(rows) => {
            show(rows, &["calibrated".into()], table, host)?;
            if *nothing_fitted {
                out("nothing was fitted: the `fit` rows are predictions too (device-irqfd is the wake_halt_polled primitive measured again, not a test)\n")?;
            }
        }
    }
    Ok(())
}

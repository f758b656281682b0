//! # irqlab — measure, explain and predict how fast interrupts reach virtual CPUs
//!
//! Subcommands:
//! - `sim`: run a scenario through the deterministic model (`sweep` is an alias);
//! - `run`: measure on this host's KVM with the micro-VMM (module `cmd_run`, owned by the kvm crate's authors);
//! - `scenarios`: list the shipped scenarios;
//! - `compare`: two results side by side with ratios, intervals, verdicts and the gate (JUnit XML,
//!   a Markdown summary), A from a file or from the history;
//! - `history`: a results history per commit (SQLite file or PostgreSQL server);
//! - `import`: another tool's output (fio, cyclictest, rtla, …) as a result;
//! - `report`: one self-contained HTML file with plots;
//! - `its-check`: check an ITS command stream against the GICv3/v4 model (exit 1 = violations).
//! - `fit` / `calibrate`: fit costs to references / a host's profile to measured results;
//! - `report`: one self-contained HTML file with plots.
//!
//! Exit status: 0 on success, 1 when some configurations failed (the others' results are still
//! written), 2 on unusable input (bad flags, bad scenario file, unreadable result), 3 when
//! `irqlab run --stop-above` stopped a measurement at a sample above its threshold, 4 when
//! `irqlab compare --fail-on slower` finds B resolvably slower, 5 when that gate could not check
//! something it covers (a failed configuration, a class in one side only, nothing paired).
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd_calibrate;
mod cmd_compare;
mod cmd_compare_by;
mod cmd_fit;
mod cmd_history;
mod cmd_import;
mod cmd_its_check;
mod cmd_merge;
mod cmd_report;
mod cmd_run;
mod cmd_run_prims;
mod cmd_run_show;
mod cmd_scenarios;
mod cmd_sim;
mod inputs;
mod output;
mod progress;
mod provenance;
mod run_breakdown;
mod term;

#[derive(Parser)]
#[command(name = "irqlab", version, about = "Measure, explain and predict how fast interrupts reach virtual CPUs")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process; boxing the flags would only add noise
enum Cmd {
    /// Simulate a scenario (a file, or the name of a shipped scenario) and write its results.
    #[command(visible_alias = "sweep")]
    Sim(cmd_sim::SimArgs),
    /// Measure interrupt latency on this host's KVM with the irqlab micro-VMM.
    Run(cmd_run::RunArgs),
    /// List the shipped scenarios with a rough run time, or print one (`scenarios show NAME`).
    Scenarios(cmd_scenarios::ScenariosArgs),
    /// Compare two result files side by side, with ratios B/A; or, with --by PARAM=A,B, answer
    /// what changing PARAM does within one result.
    Compare(cmd_compare::CompareArgs),
    /// Calibrate named costs against a scenario's `fit` references, with a leave-one-out check.
    Fit(cmd_fit::FitArgs),
    /// Fit this host's platform profile to measured results of `irqlab run`, or compare
    /// measured results with predicted ones (--against).
    Calibrate(cmd_calibrate::CalibrateArgs),
    /// A results history per commit (SQLite file or PostgreSQL): `history add`, `history show`.
    History(cmd_history::HistoryArgs),
    /// Merge the shards of a sweep (`sim --shard I/N`) into the result the unsharded run writes.
    Merge(cmd_merge::MergeArgs),
    /// Write one self-contained HTML report with CDFs and histograms.
    Report(cmd_report::ReportArgs),
    /// Import another tool's output (fio, cyclictest, rtla, kvm-unit-tests, ipi_benchmark, tbm)
    /// as an irqlab result; several files are repetitions.
    Import(cmd_import::ImportArgs),
    /// Check an ITS command stream against the GICv3/GICv4 model (exit 1 when it has violations).
    ItsCheck(cmd_its_check::ItsCheckArgs),
}

/// How a subcommand ended.
pub enum Outcome {
    Ok,
    /// Some configurations failed; results were written.
    Partial,
    /// `irqlab run --stop-above` stopped a run at a sample above the threshold.
    Stopped,
    /// `irqlab compare --fail-on slower` found B resolvably slower.
    Regression,
    /// `irqlab compare --fail-on` could not check something it gates (a failed configuration, a
    /// class in one side only, nothing paired): exit 5, never a pass.
    Unchecked,
}

/// A subcommand error: printed as `irqlab: <message>`, exit status 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Sim(a) => cmd_sim::run(a),
        Cmd::Run(a) => cmd_run::run(a),
        Cmd::Scenarios(a) => cmd_scenarios::run(a),
        Cmd::Compare(a) => cmd_compare::run(a),
        Cmd::Report(a) => cmd_report::run(a),
        Cmd::Import(a) => cmd_import::run(a),
        Cmd::Merge(a) => cmd_merge::run(a),
        Cmd::History(a) => cmd_history::run(a),
        Cmd::Fit(a) => cmd_fit::run(a),
        Cmd::ItsCheck(a) => cmd_its_check::run(a),
        Cmd::Calibrate(a) => cmd_calibrate::run(a),
    };
    match r {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Partial) => ExitCode::from(1),
        Ok(Outcome::Stopped) => ExitCode::from(3),
        Ok(Outcome::Regression) => ExitCode::from(4),
        Ok(Outcome::Unchecked) => ExitCode::from(5),
        Err(CliError(msg)) => {
            term::note(&format!("irqlab: {msg}\n"));
            ExitCode::from(2)
        }
    }
}

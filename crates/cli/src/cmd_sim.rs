//! `irqlab sim SCENARIO`: run the model, print the table, write result.json and result.csv. The
//! loading and running is [`sim::session`]'s; this module parses the flags, writes and prints.
use std::path::PathBuf;

use clap::Args;
use sim::engine::TracePick;
use sim::scenario::{Scenario, DEFAULT_MAX_POINTS};
use sim::session::{self, Selection};

use crate::cmd_report::UnitArg;
use crate::output::{check_output_dir, print_in, safe_dir_name, write_files, Format};
use crate::progress::Progress;
use crate::term::{self, note};
use crate::{CliError, Outcome};

#[derive(Args)]
pub struct SimArgs {
    /// Scenario file, or the name of a shipped scenario (see `irqlab scenarios`).
    pub scenario: String,
    /// Seed (default: the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output directory for result.json and result.csv (default: out/<scenario name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also print the number of simulated events and events per wall-clock second.
    #[arg(long)]
    pub stats: bool,
    /// Print the delivery path of N sample interrupts per class and configuration (kept in
    /// result.json and the HTML report too). Which ones: see --trace-at.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub trace: usize,
    /// Which sample paths --trace keeps: `first` (default; the first rounds are the cold-cache
    /// ones), `slowest`, a percentile such as `p99` or `p50` (the paths nearest that percentile of
    /// their class; the scenario then runs twice), or round numbers from 0 as the paths are labelled
    /// (`0,17,250`: `timer #17` is round 17).
    /// Without --trace it keeps one path (or one per listed round).
    #[arg(long, value_name = "WHICH", value_parser = parse_trace_at)]
    pub trace_at: Option<TracePick>,
    /// Print where the time went (per-segment breakdown) and counters.
    #[arg(long)]
    pub breakdown: bool,
    /// Override one scenario value, KEY=VALUE with a dotted key as in [sweep]
    /// (e.g. `--set workload.samples=100000`, `--set hypervisor.vwfi=native`). Repeatable.
    /// Typed and validated like the file; an unknown key is an error.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Run on another platform profile: a shipped profile's name or a profile file (.toml), e.g.
    /// one written by `irqlab calibrate`. Replaces the scenario's `platform.profile`; its
    /// `[platform.costs.*]` overrides still apply.
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,
    /// Run only the named configuration (a `[[configs]]` name). Repeatable.
    #[arg(long = "config", value_name = "NAME")]
    pub configs: Vec<String>,
    /// Run only shard I of N of the points (1-based, e.g. `--shard 2/8`); seeds do not depend on
    /// the sharding, and `irqlab merge` puts the parts back together.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Refuse scenarios that expand to more points than this (at most 1,000,000: each point
    /// holds its own resolved scenario document in memory).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_POINTS, value_parser = parse_max_points)]
    pub max_points: usize,
    /// Exit with status 1 when any published reference is out of tolerance (for CI of scenarios).
    #[arg(long)]
    pub check: bool,
    /// Run every point with N seeds (the first is the point's own) and print each statistic's
    /// median and range over them (default: the scenario's `seeds`, usually 1).
    #[arg(long, value_name = "N")]
    pub seeds: Option<u64>,
    /// Latency unit of what is printed: the table, or the CSV of `--format csv` (µs like
    /// cyclictest and rtla, or ns). The files written do not change with it: result.json holds
    /// ns, result.csv µs.
    #[arg(long, value_enum, default_value_t = UnitArg::Us)]
    pub unit: UnitArg,
}

impl SimArgs {
    /// The arguments `irqlab fit` loads its scenario with.
    pub fn for_fit(scenario: &str, sets: &[String]) -> SimArgs {
        SimArgs {
            scenario: scenario.into(),
            seed: None,
            out: None,
            format: Format::Table,
            stats: false,
            trace: 0,
            trace_at: None,
            breakdown: false,
            sets: sets.to_vec(),
            profile: None,
            configs: Vec::new(),
            shard: None,
            max_points: DEFAULT_MAX_POINTS,
            check: false,
            seeds: None,
            unit: UnitArg::Us,
        }
    }
}

/// "the 2 slowest per class" and the like, for the header of the printed paths.
fn trace_choice_words(pick: &TracePick, n: usize) -> String {
    match pick {
        TracePick::First => format!("the first {n} per class"),
        TracePick::Slowest => format!("the {n} slowest per class, slowest first"),
        TracePick::Percentile(p) => format!("the {n} nearest to each class's p{p}, nearest first"),
        TracePick::Rounds(_) => format!("rounds {} of each class", pick.describe().trim_start_matches("rounds ")),
    }
}

/// The ceiling of `--max-points`: a million points of a small scenario are a few GB.
pub const MAX_POINTS_CEILING: usize = 1_000_000;

/// A flag value clap could not take; clap prints it after the flag's name.
#[derive(Debug, thiserror::Error)]
enum FlagError {
    #[error("expected a whole number from 1 to {MAX_POINTS_CEILING} (a bigger sweep needs sharding: --shard I/N)")]
    MaxPoints,
    #[error("{0}")]
    TraceAt(String),
}

/// `--max-points N`, 1 to [`MAX_POINTS_CEILING`].
fn parse_max_points(s: &str) -> Result<usize, FlagError> {
    match s.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_POINTS_CEILING as u64).contains(&n) => Ok(n as usize),
        _ => Err(FlagError::MaxPoints),
    }
}

/// `--trace-at WHICH`.
fn parse_trace_at(s: &str) -> Result<TracePick, FlagError> {
    TracePick::parse(s).map_err(|e| FlagError::TraceAt(e.to_string()))
}

/// Load a scenario and apply the command line's selection and overrides.
pub fn load(a: &SimArgs) -> Result<Scenario, CliError> {
    let sel =
        Selection { scenario: &a.scenario, max_points: a.max_points, sets: &a.sets, profile: a.profile.as_deref(), seeds: a.seeds, configs: &a.configs, shard: a.shard.as_deref() };
    Ok(sel.load()?)
}

pub fn run(a: SimArgs) -> Result<Outcome, CliError> {
    let sc = load(&a)?;
    // The scenario file (when it is one) is an input: never replaced by the results.
    let inputs: Vec<PathBuf> = std::path::Path::new(&a.scenario).is_file().then(|| PathBuf::from(&a.scenario)).into_iter().collect();
    let dir = a.out.clone().unwrap_or_else(|| PathBuf::from("out").join(safe_dir_name(&sc.name)));
    check_output_dir(&dir, &inputs)?;
    let progress = Progress::new(&sc.name);
    let opts = session::Options { seed: a.seed, trace: a.trace, trace_at: a.trace_at.clone(), on_start: &|n| progress.set_total(n), progress: &|n| progress.inc(n) };
    let ran = session::run(&sc, &opts);
    progress.finish();
    let mut ran = ran?;
    ran.result.provenance = Some(crate::provenance::current(std::mem::take(&mut ran.details)));
    let json = write_files(&dir, &ran.result, &inputs)?;
    print_run(&a, &sc, &ran)?;
    note(&format!("wrote {} and result.csv\n", json.display()));
    Ok(outcome(&a, &ran.result))
}

/// The answer, the table and the sections asked for: on stdout with the table, on stderr beside
/// JSON/CSV, so that `--format json` output stays machine-readable.
fn print_run(a: &SimArgs, sc: &Scenario, ran: &session::SimRun) -> Result<(), CliError> {
    let r = &ran.result;
    // The answer first (issue 28): on stdout above the table, on stderr beside JSON/CSV.
    let answers = report::answer_view::answers_text(r, a.unit.into());
    if !answers.is_empty() {
        if a.format == Format::Table {
            term::out(&answers)?;
        } else {
            note(&answers);
        }
    }
    print_in(r, a.format, a.unit.into())?;
    let mut extra = report::seed_spread::seed_spread_table(r, a.unit.into());
    let references = report::references::ReferenceTable::of_run(r, a.unit.into());
    extra.push_str(&references.text(|role| report::references::sim_title(role, &sc.header.reproduces)));
    if a.breakdown {
        for c in &r.configs {
            extra.push('\n');
            extra.push_str(&report::table::breakdown_table(c));
        }
        let counters = report::table::counters_table(r);
        if !counters.is_empty() {
            extra.push('\n');
            extra.push_str(&counters);
        }
    }
    if let TracePick::Rounds(rounds) = &ran.pick {
        note(&rounds_beyond(&rounds[..], r));
    }
    if ran.traces.iter().any(|t| !t.1.is_empty()) {
        extra.push_str(&format!("\nsample paths ({}):\n", trace_choice_words(&ran.pick, ran.keep_traces)));
    }
    for (name, traces) in &ran.traces {
        for t in traces {
            extra.push_str(&format!("\n[{name}] {}", t.render()));
        }
    }
    if a.stats {
        extra.push_str(&format!(
            "\nsimulated events: {}   wall: {:.3} s   events/s: {}   points: {}\n",
            report::format::thousands(ran.events),
            ran.wall_s,
            report::format::thousands((ran.events as f64 / ran.wall_s.max(1e-9)) as u64),
            r.configs.len()
        ));
    }
    if a.format == Format::Table {
        term::out(&extra)?;
    } else {
        note(&extra);
    }
    Ok(())
}

/// Exit status: 1 when some configurations failed, or under --check when a reference is out of
/// tolerance; each failure said on stderr.
fn outcome(a: &SimArgs, r: &results::RunResult) -> Outcome {
    let failed: Vec<_> = r.failures().collect();
    let out_of_tolerance: Vec<_> = r.references.iter().filter(|c| c.status() == results::ReferenceStatus::Out).collect();
    if failed.is_empty() {
        if a.check && !out_of_tolerance.is_empty() {
            note(&format!("irqlab: --check: {} of {} references out of tolerance\n", out_of_tolerance.len(), r.references.len()));
            return Outcome::Partial;
        }
        Outcome::Ok
    } else {
        for (name, e) in &failed {
            note(&format!("irqlab: configuration `{name}` failed: {e}\n"));
        }
        note(&format!("irqlab: {} of {} configurations failed; the others' results were written\n", failed.len(), r.configs.len()));
        Outcome::Partial
    }
}

/// `--trace-at 0,5000` on a 300-sample run: say which rounds no configuration reached, rather
/// than keeping no path for them without a word.
fn rounds_beyond(rounds: &[u64], r: &results::RunResult) -> String {
    let most = r.configs.iter().flat_map(|c| c.classes.values()).map(|l| l.summary.count).max().unwrap_or(0);
    let beyond: Vec<String> = rounds.iter().filter(|&&k| k >= most).map(|k| k.to_string()).collect();
    if beyond.is_empty() {
        return String::new();
    }
    format!("irqlab: --trace-at: round(s) {} beyond the {most} samples of every class and configuration: no path kept for them (rounds count from 0)\n", beyond.join(", "))
}

//! `irqlab report RESULT.json... -o report.html`.
//!
//! The output goes through [`crate::output::file`]: never over an input (directly or through a
//! link), never over a file irqlab did not write unless `--force`. Names given to `--stat`,
//! `--class` and `--scatter` must name something in the results (a typo would otherwise print
//! empty tables): exit 2 with a did-you-mean.
use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::term::{note, out_data};
use crate::{CliError, Outcome};

/// Latency unit of tables, CSV columns and plots (µs like cyclictest and rtla, or ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum UnitArg {
    #[default]
    Us,
    Ns,
}

impl From<UnitArg> for results::LatencyUnit {
    fn from(u: UnitArg) -> Self {
        match u {
            UnitArg::Us => results::LatencyUnit::Us,
            UnitArg::Ns => results::LatencyUnit::Ns,
        }
    }
}

#[derive(Args)]
pub struct ReportArgs {
    /// Result files (JSON written by `irqlab sim` or `irqlab run`).
    #[arg(required_unless_present = "history", conflicts_with = "history")]
    pub results: Vec<PathBuf>,
    /// Instead of results: the trend of --stat of --class per run stored in this results history
    /// (a SQLite file or `postgresql://…`, `irqlab history add`), one line per configuration.
    #[arg(long, value_name = "FILE|URL", requires = "class")]
    pub history: Option<String>,
    /// With --history: the label of the series.
    #[arg(long, default_value = "default", requires = "history")]
    pub label: String,
    /// Where to write the HTML file; `-` is stdout. A symlink is written through (the file it
    /// points to is replaced), a device or FIFO is written to in place, a directory is refused.
    /// An input is never written over; a file irqlab has no record of writing (as it is now) only
    /// with --force.
    #[arg(short, long, default_value = "report.html")]
    pub output: PathBuf,
    /// Replace an existing -o file irqlab has no record of writing (as it is now).
    #[arg(long)]
    pub force: bool,
    /// Latency unit of tables and plots.
    #[arg(long, value_enum, default_value_t = UnitArg::Us)]
    pub unit: UnitArg,
    /// Sweep axes of the summary pivot: the first across, the others down; axes left out are
    /// folded into ranges. Full keys or last parts (`vwfi,other`). Default: the first axis across,
    /// the rest down.
    #[arg(long, value_delimiter = ',', value_name = "AXIS,AXIS...")]
    pub pivot: Vec<String>,
    /// Statistic in the pivot and heatmap cells and on the scatter's y axis: mean, min, max,
    /// warm_max, p50, p90, p99, p99.9, p99.99, count, or a figure name.
    #[arg(long, default_value = "p99")]
    pub stat: String,
    /// Latency class for the pivot, heatmap and scatter (default: the first class).
    #[arg(long)]
    pub class: Option<String>,
    /// The heatmap's two axes, across and down (default: the first two sweep axes).
    #[arg(long, value_name = "X,Y", value_delimiter = ',', num_args = 1)]
    pub heatmap: Vec<String>,
    /// Figure on the scatter's x axis, e.g. `other.throughput`; `none` for no scatter
    /// (default: a figure that varies, preferring a throughput).
    #[arg(long, value_name = "FIGURE")]
    pub scatter: Option<String>,
    /// With two results: also compare the share of samples beyond this latency (`50us`, `2ms`,
    /// ns without a unit) in the verdicts section (repeatable).
    #[arg(long, value_name = "LATENCY", value_parser = |s: &str| results::stats::exceedance::parse_threshold(s).map_err(|e| e.to_string()))]
    pub share_above: Vec<u64>,
}

impl ReportArgs {
    fn options(&self) -> Result<report::ReportOptions, CliError> {
        let heatmap = match self.heatmap.as_slice() {
            [] => None,
            [x, y] => Some((x.clone(), y.clone())),
            _ => return Err(CliError(format!("--heatmap takes two axes X,Y; got `{}`", self.heatmap.join(",")))),
        };
        Ok(report::ReportOptions {
            unit: self.unit.into(),
            pivot: self.pivot.clone(),
            stat: Some(self.stat.clone()),
            class: self.class.clone(),
            heatmap,
            scatter: self.scatter.clone(),
            share_above: self.share_above.clone(),
        })
    }
}

/// Refuse a `--stat`, `--class` or `--scatter` name that matches nothing in `runs`.
fn check_names(a: &ReportArgs, runs: &[(String, results::RunResult)]) -> Result<(), CliError> {
    let configs = || runs.iter().flat_map(|r| r.1.configs.iter());
    let figures: BTreeSet<&str> = configs().flat_map(|c| c.figures.keys().map(String::as_str)).collect();
    let classes: BTreeSet<&str> = configs().flat_map(|c| c.classes.keys().map(String::as_str)).collect();
    let unknown = |flag: &str, got: &str, known: Vec<&str>| {
        CliError(format!(
            "{flag} `{got}`: no such name in the results{}; known: {}",
            sim::scenario::did_you_mean(got, known.iter().copied()),
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        ))
    };
    let stat = a.stat.strip_prefix("figure:").unwrap_or(&a.stat);
    let mut stats: Vec<&str> = report::sweep::LATENCY_STATS.to_vec();
    stats.extend(["count", "avg"]);
    stats.extend(figures.iter().copied());
    if !stats.contains(&stat) {
        return Err(unknown("--stat", &a.stat, stats));
    }
    if let Some(c) = &a.class {
        if !classes.contains(c.as_str()) {
            return Err(unknown("--class", c, classes.into_iter().collect()));
        }
    }
    if let Some(f) = a.scatter.as_deref().filter(|f| *f != "none") {
        if !figures.contains(f) {
            let mut known: Vec<&str> = vec!["none"];
            known.extend(figures.iter().copied());
            return Err(unknown("--scatter", f, known));
        }
    }
    Ok(())
}

pub fn run(a: ReportArgs) -> Result<Outcome, CliError> {
    if let Some(db) = &a.history {
        return history(&a, db);
    }
    let opts = a.options()?;
    let to_stdout = a.output.as_os_str() == "-";
    let target = crate::output::file::Target { flag: "-o", path: &a.output, inputs: &a.results, force: a.force, kind: crate::output::file::Artefact::Report };
    if !to_stdout {
        crate::output::file::check(&target)?;
    }
    let runs = a.results.iter().map(|p| crate::inputs::read_named(p).map(|r| (p.display().to_string(), r))).collect::<Result<Vec<_>, _>>()?;
    check_names(&a, &runs)?;
    let html = report::render_html_with(&runs, &opts)?;
    emit(&a.output, &target, &html)
}

/// The page to stdout (`-o -`) or to the checked target.
fn emit(output: &std::path::Path, target: &crate::output::file::Target, html: &str) -> Result<Outcome, CliError> {
    if output.as_os_str() == "-" {
        out_data(html)?;
    } else {
        crate::output::file::write(target, html.as_bytes())?;
        note(&format!("wrote {}\n", output.display()));
    }
    Ok(Outcome::Ok)
}

/// `report --history DB --class C [--stat S] [--label L]`: the trend page (report::trend).
fn history(a: &ReportArgs, db: &str) -> Result<Outcome, CliError> {
    let class = a.class.as_deref().unwrap_or_default();
    let target = crate::output::file::Target { flag: "-o", path: &a.output, inputs: &[], force: a.force, kind: crate::output::file::Artefact::Report };
    let to_stdout = a.output.as_os_str() == "-";
    if !to_stdout {
        crate::output::file::check(&target)?;
    }
    let mut h = crate::cmd_history::open(Some(db), std::path::Path::new("."))?;
    let points = h.points(&a.label, class, &a.stat, None).map_err(|e| CliError(crate::cmd_history::chain(&e)))?;
    let mut series: Vec<(String, Vec<report::trend::TrendPoint>)> = Vec::new();
    for p in points {
        let t = report::trend::TrendPoint { run: p.seq, commit: p.commit, accepted: p.accepted, value: p.value };
        match series.iter_mut().find(|(n, _)| *n == p.config) {
            Some((_, v)) => v.push(t),
            None => series.push((p.config, vec![t])),
        }
    }
    let title = format!("history {}, label {}, {class} {}", h.name(), a.label, a.stat);
    let html = report::trend::trend_html(&title, &a.stat, &series, a.unit.into());
    emit(&a.output, &target, &html)
}

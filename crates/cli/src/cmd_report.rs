//! `irqlab report RESULT.json... -o report.html`.
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
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Where to write the HTML file; `-` is stdout. A symlink is written through (the file it
    /// points to is replaced), a device or FIFO is written to in place, a directory is refused.
    #[arg(short, long, default_value = "report.html")]
    pub output: PathBuf,
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
        })
    }
}

pub fn run(a: ReportArgs) -> Result<Outcome, CliError> {
    let opts = a.options()?;
    let runs = a
        .results
        .iter()
        .map(|p| results::read_json(p).map(|r| (p.display().to_string(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    let html = report::render_html_with(&runs, &opts)?;
    if a.output.as_os_str() == "-" {
        out_data(&html)?;
    } else {
        results::write_atomic(&a.output, html.as_bytes())?;
        note(&format!("wrote {}\n", a.output.display()));
    }
    Ok(Outcome::Ok)
}

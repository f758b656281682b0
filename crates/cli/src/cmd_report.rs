//! `irqlab report RESULT.json... -o report.html`.
use std::path::PathBuf;

use clap::Args;

use crate::term::{note, out_data};
use crate::{CliError, Outcome};

#[derive(Args)]
pub struct ReportArgs {
    /// Result files (JSON written by `irqlab sim` or `irqlab run`).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Where to write the HTML file; `-` is stdout. A symlink is written through (the file it
    /// points to is replaced), a device or FIFO is written to in place, a directory is refused.
    #[arg(short, long, default_value = "report.html")]
    pub output: PathBuf,
}

pub fn run(a: ReportArgs) -> Result<Outcome, CliError> {
    let runs = a
        .results
        .iter()
        .map(|p| results::read_json(p).map(|r| (p.display().to_string(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    let html = report::render_html(&runs)?;
    if a.output.as_os_str() == "-" {
        out_data(&html)?;
    } else {
        results::write_atomic(&a.output, html.as_bytes())?;
        note(&format!("wrote {}\n", a.output.display()));
    }
    Ok(Outcome::Ok)
}

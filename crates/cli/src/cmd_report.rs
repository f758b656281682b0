//! `irqlab report RESULT.json... -o report.html`.
use std::path::PathBuf;

use clap::Args;

use crate::{CliError, Outcome};

#[derive(Args)]
pub struct ReportArgs {
    /// Result files (JSON written by `irqlab sim` or `irqlab run`).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Where to write the HTML file.
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
    results::write_atomic(&a.output, html.as_bytes())?;
    eprintln!("wrote {}", a.output.display());
    Ok(Outcome::Ok)
}

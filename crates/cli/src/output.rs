//! Writing a run's results: JSON and CSV files in the output directory, and the chosen format on
//! stdout.
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use results::RunResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// Write `result.json` and `result.csv` into `dir` (atomically). Returns the JSON path.
pub fn write_files(dir: &Path, r: &RunResult) -> Result<PathBuf, crate::CliError> {
    let json = dir.join("result.json");
    results::write_json(&json, r)?;
    results::write_atomic(&dir.join("result.csv"), results::to_csv(r).as_bytes())?;
    Ok(json)
}

/// Print the result in the chosen format.
pub fn print(r: &RunResult, format: Format) {
    match format {
        Format::Table => {
            print!("{}", report::table::latency_table(r));
            let figs = report::table::figures_table(r);
            if !figs.is_empty() {
                println!();
                print!("{figs}");
            }
        }
        Format::Json => print!("{}", results::to_json_string(r)),
        Format::Csv => print!("{}", results::to_csv(r)),
    }
}

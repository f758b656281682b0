//! Everything irqlab writes: the result directory ([`dir`]: `result.json` + `result.csv`
//! together, for `sim`, `run` and `merge`), single output files ([`file`]: `report -o`,
//! `run --samples-out`, `calibrate -o`, `fit -o`), directory names taken from files
//! ([`names`]), and the result printed on stdout. One module so that every command refuses the
//! same things: its own inputs, files irqlab did not write (unless `--force`), write-protected
//! targets, names that escape `out/`, and a second writer of one output directory ([`lock`]).
use clap::ValueEnum;
use results::RunResult;

use crate::term::{out, out_data};
use crate::CliError;

pub mod dir;
pub mod error;
pub mod file;
pub mod lock;
pub mod names;

pub use dir::{check_output_dir, check_output_dir_forced, write_files, write_files_forced};
pub use names::safe_dir_name;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// Print the result in the chosen format, latencies in µs.
pub fn print(r: &RunResult, format: Format) -> Result<(), CliError> {
    print_in(r, format, results::LatencyUnit::Us)
}

/// Print the result in the chosen format; `unit` applies to the table and the CSV (JSON is
/// always in ns).
pub fn print_in(r: &RunResult, format: Format, unit: results::LatencyUnit) -> Result<(), CliError> {
    match format {
        Format::Table => {
            out(&report::table::latency_table_in(r, unit))?;
            let figs = report::table::figures_table(r);
            if !figs.is_empty() {
                out("\n")?;
                out(&figs)?;
            }
            Ok(())
        }
        Format::Json => out_data(&results::to_json_string(r)),
        Format::Csv => out_data(&results::to_csv_in(r, unit)),
    }
}

//! `irqlab compare A.json B.json`.
use std::path::PathBuf;

use clap::Args;

use crate::term::out;
use crate::{CliError, Outcome};

#[derive(Args)]
pub struct CompareArgs {
    /// Baseline result (A).
    pub a: PathBuf,
    /// Result to compare against the baseline (B).
    pub b: PathBuf,
}

pub fn run(a: CompareArgs) -> Result<Outcome, CliError> {
    let ra = results::read_json(&a.a)?;
    let rb = results::read_json(&a.b)?;
    out(&report::compare_table::compare_table(&ra, &rb, &a.a.display().to_string(), &a.b.display().to_string()))?;
    Ok(Outcome::Ok)
}

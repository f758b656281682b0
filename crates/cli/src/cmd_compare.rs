//! `irqlab compare A.json B.json`: pair configurations (by name, then by the parameters both
//! runs have, `--map` renaming A's keys), print the statistics side by side with ratios B/A, and
//! list what did not pair. Exit status 1 when nothing pairs. `irqlab compare RESULT --by
//! PARAM=A,B` answers a question of one result instead (`cmd_compare_by`).
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use report::compare_table::{compare_output, CompareFormat};

use crate::term::{note, out, out_data};
use crate::cmd_report::UnitArg;
use crate::{CliError, Outcome};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Table,
    Csv,
    Json,
}

#[derive(Args)]
pub struct CompareArgs {
    /// Baseline result (A).
    pub a: PathBuf,
    /// Result to compare against the baseline (B). Not with --by.
    #[arg(required_unless_present = "by", conflicts_with = "by")]
    pub b: Option<PathBuf>,
    /// Answer a question of one result: pair its configurations that differ only in PARAM
    /// (BASELINE vs each VARIANT) and print the change per group, as `irqlab sim` opens with.
    #[arg(long, value_name = "PARAM=BASELINE,VARIANT[,…]", value_parser = crate::cmd_compare_by::parse_by)]
    pub by: Option<(String, Vec<String>)>,
    /// With --by: a statistic to answer (repeatable; default mean, p50, p99, p99.9), or
    /// `figure:NAME`.
    #[arg(long = "stat", value_name = "STAT", requires = "by")]
    pub stats: Vec<String>,
    /// Rename a parameter key of A to B's name before pairing, e.g.
    /// `--map workload.period_us=period_us` (repeatable).
    #[arg(long, value_name = "A_KEY=B_KEY", value_parser = parse_map)]
    pub map: Vec<(String, String)>,
    /// Latency unit.
    #[arg(long, value_enum, default_value_t = UnitArg::Us)]
    pub unit: UnitArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

fn parse_map(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_string(), b.to_string())),
        _ => Err(format!("expected A_KEY=B_KEY, got `{s}`")),
    }
}

pub fn run(a: CompareArgs) -> Result<Outcome, CliError> {
    let b = match (&a.by, &a.b) {
        (Some(by), _) => return crate::cmd_compare_by::run(&a.a, by, &a.stats, a.unit.into()),
        (None, Some(b)) => b.clone(),
        (None, None) => return Err(CliError("compare: give a second result B, or --by PARAM=A,B".into())),
    };
    let ra = crate::inputs::read_named(&a.a)?;
    let rb = crate::inputs::read_named(&b)?;
    let format = match a.format {
        FormatArg::Table => CompareFormat::Table,
        FormatArg::Csv => CompareFormat::Csv,
        FormatArg::Json => CompareFormat::Json,
    };
    let o = compare_output(&ra, &rb, &a.a.display().to_string(), &b.display().to_string(), &a.map, a.unit.into(), format);
    if format == CompareFormat::Table { out(&o.text)? } else { out_data(&o.text)? }
    if o.nothing_paired() {
        note(&format!("irqlab: compare: no configuration of {} pairs with one of {}\n", a.a.display(), b.display()));
        return Ok(Outcome::Partial);
    }
    Ok(Outcome::Ok)
}

//! `irqlab compare A.json B.json`: pair configurations (by name, then by the parameters both
//! runs have, `--map` renaming A's keys), print the statistics side by side with ratios B/A, and
//! list what did not pair; then the verdicts (issue 25): per statistic B/A with its interval at
//! `--confidence` and one word — faster, slower, no difference resolvable (tested: the interval
//! contains 1), or no interval (and why) — with what would resolve `--effect`, and for one run
//! per side the KS test on the whole distribution (`results::stats`, `report::verdict_table`).
//! Runs made alternately (A B A B: start times that interleave, or `--paired`) are compared
//! pair by pair. `--share-above T` adds the share of samples beyond T (B − A, Newcombe's
//! interval; `results::stats::exceedance`). Exit status 1 when nothing pairs. With
//! `--fail-on slower[:STAT]` (`results::stats::gate`, issues 36 and 45): 4 when B is resolvably
//! slower on a gated statistic (one-sided, Bonferroni over the k checks the gate can make at its
//! own level; `slower:share>T` gates the share beyond T); 5 when something the gate covers could
//! not be compared — nothing paired, a configuration without a partner or failed on either side,
//! a class in one side only, `slower:STAT` without an interval at the gate's level, or nothing at
//! all checkable — each named, so the gate never passes by accident; 0 only when everything gated
//! was checked. Statistics `slower` cannot check at its level are named on stderr. A one-run-per-side comparison
//! cannot see run-to-run variance, so the gate refuses it (exit 2) unless `--single-run` says
//! that is understood. `irqlab compare RESULT --by PARAM=A,B` answers a question of one result
//! instead (`cmd_compare_by`).
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use report::compare_table::{compare_output, CompareFormat};
use report::verdict_table::{verdict_json, verdict_text, VerdictOptions};
use results::stats::gate::GateOutcome;

use crate::cmd_report::UnitArg;
use crate::term::{note, out, out_data};
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
    /// `figure:NAME`. Validated always; refused without --by.
    #[arg(long = "stat", value_name = "STAT")]
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
    /// Confidence level of the intervals and verdicts, in (0, 1).
    #[arg(long, value_name = "LEVEL", default_value = "0.95", value_parser = parse_confidence, allow_hyphen_values = true)]
    pub confidence: f64,
    /// Effect to size experiments for where no difference is resolved: `5%` or `0.05`.
    #[arg(long, value_name = "EFFECT", default_value = "5%", value_parser = parse_effect, allow_hyphen_values = true)]
    pub effect: f64,
    /// Exit with status 4 when B is resolvably slower than A: `slower` (any statistic),
    /// `slower:p99` (that statistic: mean, min, p50, p90, p99, p99.9, p99.99, max, warm_max), or
    /// `slower:share>50us` (B has resolvably more samples beyond 50 µs: catches a change in a
    /// rare slow path that a percentile between modes cannot).
    #[arg(long, value_name = "slower[:STAT]", value_parser = parse_fail_on)]
    pub fail_on: Option<FailOn>,
    /// Also compare the share of samples beyond this latency (`50us`, `2ms`, ns without a unit),
    /// with Newcombe's interval of B − A (repeatable).
    #[arg(long, value_name = "LATENCY", value_parser = parse_threshold)]
    pub share_above: Vec<u64>,
    /// Let --fail-on gate a comparison with one run per side, knowing that it cannot see
    /// run-to-run variance (a host's boot-to-boot offset reads as a difference).
    #[arg(long, requires = "fail_on")]
    pub single_run: bool,
    /// A's run i and B's run i were made one after the other (A B A B …): compare per-pair
    /// ratios, so a drift that moves both runs of a pair cancels. Taken without the flag when the
    /// runs' recorded start times interleave; needs the same number of runs on each side.
    #[arg(long)]
    pub paired: bool,
}

/// `--fail-on slower[:STAT]`.
#[derive(Debug, Clone)]
pub struct FailOn {
    /// `None`: any statistic; `share>T` (T in ns): the share beyond T.
    pub stat: Option<String>,
}

fn parse_threshold(s: &str) -> Result<u64, String> {
    results::stats::exceedance::parse_threshold(s).map_err(|e| e.to_string())
}

fn parse_confidence(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("expected a confidence level in (0, 1) such as 0.95, got `{s}`"))?;
    results::stats::Confidence::new(v).map(|c| c.level()).map_err(|e| e.to_string())
}

fn parse_effect(s: &str) -> Result<f64, String> {
    results::stats::parse_effect(s).map_err(|e| format!("{e} (got `{s}`)"))
}

fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    let (word, stat) = match s.split_once(':') {
        Some((w, st)) => (w, Some(st.to_string())),
        None => (s, None),
    };
    if word != "slower" {
        return Err(format!("expected `slower` or `slower:STAT`, got `{s}`"));
    }
    if let Some(t) = stat.as_deref().and_then(|st| st.strip_prefix("share>")) {
        return Ok(FailOn { stat: Some(format!("share>{}", parse_threshold(t)?)) });
    }
    if let Some(st) = &stat {
        if !results::stats::verdict::VERDICT_STATS.contains(&st.as_str()) {
            return Err(format!("unknown statistic `{st}`; expected one of {}, or share>LATENCY (e.g. share>50us)", results::stats::verdict::VERDICT_STATS.join(", ")));
        }
    }
    Ok(FailOn { stat })
}

fn parse_map(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_string(), b.to_string())),
        _ => Err(format!("expected A_KEY=B_KEY, got `{s}`")),
    }
}

pub fn run(a: CompareArgs) -> Result<Outcome, CliError> {
    crate::cmd_compare_by::check_stats(&a.stats)?;
    if a.by.is_none() && !a.stats.is_empty() {
        return Err(CliError(format!("--stat {}: only answered with --by PARAM=A,B (the side-by-side table shows every statistic)", a.stats[0])));
    }
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
    let opts = VerdictOptions { confidence: results::stats::Confidence::new(a.confidence)?, effect: a.effect };
    let mut thresholds = a.share_above.clone();
    thresholds.extend(a.fail_on.as_ref().and_then(|f| f.stat.as_deref()?.strip_prefix("share>")?.parse::<u64>().ok()));
    thresholds.sort_unstable();
    thresholds.dedup();
    let verdicts = results::stats::pairs::verdicts_beyond(&ra, &rb, &o.comparison, opts.confidence, a.paired, &thresholds)?.recommend(opts.effect, opts.confidence);
    match format {
        CompareFormat::Table => {
            let census = report::census::census_compare_text(&ra, &rb, report::census::TOP).unwrap_or_default();
            out(&format!("{}{}{census}", o.text, verdict_text(&verdicts, &opts, a.unit.into())))?
        }
        CompareFormat::Json => {
            let mut v: serde_json::Value = serde_json::from_str(&o.text)?;
            v["verdicts"] = verdict_json(&verdicts, &opts);
            if let Some(c) = report::census::census_compare_json(&ra, &rb) {
                v["census"] = c;
            }
            out_data(&format!("{}\n", serde_json::to_string_pretty(&v)?))?
        }
        CompareFormat::Csv => out_data(&o.text)?,
    }
    if o.nothing_paired() {
        note(&format!("irqlab: compare: no configuration of {} pairs with one of {}\n", a.a.display(), b.display()));
        if a.fail_on.is_some() {
            note("irqlab: compare: --fail-on could not check anything (exit 5)\n");
            return Ok(Outcome::Unchecked);
        }
        return Ok(Outcome::Partial);
    }
    if let Some(f) = &a.fail_on {
        return gate(&a, f, &ra, &rb, &b, &o.comparison, &verdicts, opts.confidence);
    }
    Ok(Outcome::Ok)
}

/// `--fail-on slower[:STAT]`: exit 4 slower, 5 unchecked, 0 when all gated was checked.
#[allow(clippy::too_many_arguments)]
fn gate(
    a: &CompareArgs,
    f: &FailOn,
    ra: &results::RunResult,
    rb: &results::RunResult,
    b: &std::path::Path,
    comparison: &results::Comparison,
    verdicts: &results::stats::pairs::Verdicts,
    conf: results::stats::Confidence,
) -> Result<Outcome, CliError> {
    let single: Vec<&str> = verdicts.classes.iter().filter(|c| c.runs_a < 2 || c.runs_b < 2).map(|c| c.config.as_str()).collect();
    if !single.is_empty() && !a.single_run {
        let file = if verdicts.classes.iter().any(|c| c.runs_a < 2) { a.a.display().to_string() } else { b.display().to_string() };
        let why = if verdicts.classes.iter().any(|c| c.runs_a < 2 && c.runs_b < 2) {
            "a verdict from one run per side cannot see run-to-run variance (every host's state moves between runs)"
        } else {
            "its one run is judged by the other side's run-to-run spread, assumed to be its own"
        };
        return Err(CliError(format!(
            "--fail-on: {file} has one run of `{}`: {why}; repeat the runs (`run --repeat N`, `sim --seeds N`), or give --single-run to gate anyway",
            results::escape_control(single[0])
        )));
    }
    let g = results::stats::gate::gate(ra, rb, comparison, verdicts, f.stat.as_deref(), conf).map_err(|e| CliError(e.to_string()))?;
    let list = |v: &[String]| results::escape_control(&v.join("; "));
    let (not_checked, table_only) = (g.not_checked(), g.table_only());
    if !not_checked.is_empty() {
        note(&format!("irqlab: compare: --fail-on did not check (no interval at the gate's level {:.4}): {}\n", g.level, list(&not_checked)));
    }
    if !table_only.is_empty() {
        note(&format!(
            "irqlab: compare: slower in the table at {} but not at the gate's corrected level {:.4} (one-sided, {} checks): {}\n",
            conf.level(),
            g.level,
            g.checks,
            list(&table_only)
        ));
    }
    match g.outcome {
        GateOutcome::Unchecked => {
            note(&format!("irqlab: compare: --fail-on could not check everything it gates (exit 5): {}\n", list(&g.unchecked())));
            Ok(Outcome::Unchecked)
        }
        GateOutcome::Slower => {
            note(&format!(
                "irqlab: compare: B is resolvably slower ({} one-sided checks, each at {:.4} two-sided, {} overall): {}\n",
                g.checks,
                g.level,
                conf.level(),
                list(&g.slower())
            ));
            Ok(Outcome::Regression)
        }
        GateOutcome::Pass => Ok(Outcome::Ok),
    }
}

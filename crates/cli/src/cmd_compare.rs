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
//!
//! Everything printed or written comes from one compare document (`report::compare_doc`, also
//! what `irqlab-lab ab` prints): the table, the verdicts, the gate's lines, and with `--junit
//! FILE` / `--summary-md FILE` (issue 46) the gate as JUnit XML (one test case per check) and as
//! a Markdown step summary appended to FILE (`$GITHUB_STEP_SUMMARY`). `--against history:LABEL`
//! takes A from the results history (`cmd_history`): the runs of the last `--last N` accepted
//! commits, pooled as repetitions, so their spread is the run-to-run variance.
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use report::compare_doc::{Answer, CompareDoc, DocInputs};
use report::verdict_table::VerdictOptions;
use results::vocab::{parse_fail_on, FailOn, GateOutputs};

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
    /// Baseline result (A); with --against, the result to compare (B).
    pub a: PathBuf,
    /// Result to compare against the baseline (B). Not with --by or --against.
    #[arg(required_unless_present_any = ["by", "against"], conflicts_with_all = ["by", "against"])]
    pub b: Option<PathBuf>,
    /// Take A from the results history: `history:LABEL`, the runs of the last --last accepted
    /// commits stored under LABEL (`irqlab history add`).
    #[arg(long, value_name = "history:LABEL", value_parser = parse_against, conflicts_with = "by")]
    pub against: Option<String>,
    /// With --against: how many accepted commits form A.
    #[arg(long, value_name = "N", default_value_t = 5, requires = "against", value_parser = clap::value_parser!(u32).range(1..))]
    pub last: u32,
    /// With --against: the history (a SQLite file or `postgresql://…`); default
    /// irqlab-history.sqlite beside B.
    #[arg(long, value_name = "FILE|URL", requires = "against")]
    pub db: Option<String>,
    #[command(flatten)]
    pub outputs: GateOutputs,
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

fn parse_against(s: &str) -> Result<String, String> {
    match s.strip_prefix("history:") {
        Some(l) if !l.is_empty() => Ok(l.to_string()),
        _ => Err(format!("expected history:LABEL, got `{s}`")),
    }
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
    if let Some(by) = &a.by {
        return crate::cmd_compare_by::run(&a.a, by, &a.stats, a.unit.into());
    }
    let (ra, rb, a_name, b_path) = match (&a.against, &a.b) {
        (Some(label), _) => {
            let rb = crate::inputs::read_named(&a.a)?;
            let (ra, name) = from_history(&a, label)?;
            (ra, rb, name, a.a.clone())
        }
        (None, Some(b)) => (crate::inputs::read_named(&a.a)?, crate::inputs::read_named(b)?, a.a.display().to_string(), b.clone()),
        (None, None) => return Err(CliError("compare: give a second result B, or --by PARAM=A,B, or --against history:LABEL".into())),
    };
    let inputs = [a.a.clone(), b_path.clone()];
    if let Some(j) = &a.outputs.junit {
        crate::output::file::check(&junit_target(&a, j, &inputs))?;
    }
    let opts = VerdictOptions { confidence: results::stats::Confidence::new(a.confidence)?, effect: a.effect };
    let doc = CompareDoc::build(DocInputs {
        a: &ra,
        b: &rb,
        a_name: &a_name,
        b_name: &b_path.display().to_string(),
        map: &a.map,
        unit: a.unit.into(),
        opts,
        paired: a.paired,
        share_above: &a.share_above,
        fail_on: a.fail_on.clone(),
    })
    .map_err(|e| CliError(crate::cmd_history::chain(&e)))?;
    if a.fail_on.is_some() {
        check_single_run(&a, &doc.verdicts, &a_name, &b_path)?;
    }
    match a.format {
        FormatArg::Table => out(&doc.text())?,
        FormatArg::Json => out_data(&format!("{}\n", serde_json::to_string_pretty(&doc.json())?))?,
        FormatArg::Csv => out_data(&doc.csv)?,
    }
    if let Some(j) = &a.outputs.junit {
        crate::output::file::write(&junit_target(&a, j, &inputs), report::compare_doc::junit::render(&doc).as_bytes())?;
    }
    if let Some(p) = &a.outputs.summary_md {
        append_summary(p, &report::compare_doc::summary_md::render(&doc), &inputs)?;
    }
    if doc.answer() == Answer::NothingPaired {
        note(&format!("irqlab: compare: no configuration of {a_name} pairs with one of {}\n", b_path.display()));
        if a.fail_on.is_some() {
            note("irqlab: compare: --fail-on could not check anything (exit 5)\n");
            return Ok(Outcome::Unchecked);
        }
        return Ok(Outcome::Partial);
    }
    if a.fail_on.is_none() {
        return Ok(Outcome::Ok);
    }
    for line in doc.gate_lines() {
        note(&format!("irqlab: compare: {line}\n"));
    }
    Ok(match doc.answer() {
        Answer::Unchecked => Outcome::Unchecked,
        Answer::Slower => Outcome::Regression,
        Answer::Pass | Answer::NothingPaired => Outcome::Ok,
    })
}

/// A from the history: the stored runs of the last `--last` accepted commits of LABEL, pooled as
/// repetitions (as `irqlab import irqlab` pools separate runs); and A's name in the table.
fn from_history(a: &CompareArgs, label: &str) -> Result<(results::RunResult, String), CliError> {
    let dir = a.a.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut h = crate::cmd_history::open(a.db.as_deref(), dir)?;
    let runs = h.baseline(label, a.last as usize, "").map_err(|e| CliError(crate::cmd_history::chain(&e)))?;
    if runs.is_empty() {
        return Err(CliError(format!("--against history:{label}: {} has no accepted run under `{label}`", h.name())));
    }
    let mut commits: Vec<&str> = runs.iter().map(|(c, _)| c.as_str()).collect();
    commits.dedup();
    let name = format!("history:{label} ({} run(s) of {})", runs.len(), commits.join(", "));
    let texts: Vec<(String, String)> = runs.iter().enumerate().map(|(i, (c, r))| (format!("{}#{c}/{i}", h.name()), results::to_json_string(r))).collect();
    let ra = import::import_files("irqlab", &texts, &import::ImportOptions::default(), &format!("irqlab {}", sim::runner::TOOL_VERSION))
        .map_err(|e| CliError(format!("--against history:{label}: the stored runs do not pool: {e}")))?;
    Ok((ra, name))
}

fn junit_target<'a>(a: &CompareArgs, path: &'a Path, inputs: &'a [PathBuf]) -> crate::output::file::Target<'a> {
    crate::output::file::Target { flag: "--junit", path, inputs, force: a.outputs.force, kind: crate::output::file::Artefact::Junit }
}

/// Append `text` to `path` (created if missing), as `$GITHUB_STEP_SUMMARY` is written: never an
/// input of the command, never a directory.
fn append_summary(path: &Path, text: &str, inputs: &[PathBuf]) -> Result<(), CliError> {
    use std::io::Write;
    let same = |p: &Path| matches!((std::fs::canonicalize(p), std::fs::canonicalize(path)), (Ok(x), Ok(y)) if x == y);
    if inputs.iter().any(|i| same(i)) {
        return Err(CliError(format!("--summary-md {}: is an input of this command; give another file", path.display())));
    }
    let mut f = std::fs::OpenOptions::new().append(true).create(true).open(path).map_err(|e| CliError(format!("--summary-md {}: {e}", path.display())))?;
    f.write_all(text.as_bytes()).map_err(|e| CliError(format!("--summary-md {}: {e}", path.display())))
}

/// `--fail-on` on one run per side cannot see run-to-run variance: refused without --single-run
/// (A from the history brings its own spread).
fn check_single_run(a: &CompareArgs, v: &results::stats::pairs::Verdicts, a_name: &str, b: &Path) -> Result<(), CliError> {
    let Some(single) = v.classes.iter().find(|c| c.runs_a < 2 || c.runs_b < 2) else { return Ok(()) };
    let a1 = v.classes.iter().any(|c| c.runs_a < 2);
    if a.single_run || (a.against.is_some() && !a1) {
        return Ok(());
    }
    let file = if a1 { a_name.to_string() } else { b.display().to_string() };
    let why = if v.classes.iter().any(|c| c.runs_a < 2 && c.runs_b < 2) {
        "a verdict from one run per side cannot see run-to-run variance (every host's state moves between runs)"
    } else {
        "its one run is judged by the other side's run-to-run spread, assumed to be its own"
    };
    Err(CliError(format!(
        "--fail-on: {file} has one run of `{}`: {why}; repeat the runs (`run --repeat N`, `sim --seeds N`), or give --single-run to gate anyway",
        results::escape_control(&single.config)
    )))
}

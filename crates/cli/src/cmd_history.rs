//! `irqlab history add|show` (issue 46 item 3): a results history per commit, in one SQLite file
//! (`--db FILE`) or on a PostgreSQL server shared by a team's CI (`--db postgresql://…`); the
//! logic is the `history` crate's. `add` stores a result for a commit under a label (a branch, a
//! board) with its summaries, provenance and — with `--comparison` — the gate's verdicts that let
//! it in; a rejected commit is stored with `--rejected` and never becomes a baseline. `show`
//! prints one statistic of one class per run, oldest first (`--format csv` for a plot), and
//! `irqlab report --history` draws it. `irqlab compare B --against history:LABEL` takes A from
//! the history (`cmd_compare`). A database that is not irqlab's, or of a newer schema, is refused
//! (exit 2) naming it; nothing stored is ever changed.
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use history::{Added, History, Location, NewRun};

use crate::term::{note, out_data};
use crate::{CliError, Outcome};

/// The history file's name when `--db` is not given.
pub const DEFAULT_DB: &str = "irqlab-history.sqlite";

#[derive(Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub cmd: HistoryCmd,
}

#[derive(Subcommand)]
pub enum HistoryCmd {
    /// Store a result for a commit (its summaries, provenance, and the result itself).
    Add(AddArgs),
    /// Print one statistic of one class per stored run, oldest first.
    Show(ShowArgs),
}

#[derive(Args)]
pub struct AddArgs {
    /// The result to store (result.json).
    pub result: PathBuf,
    /// The commit it measured (any text: a hash, a tag).
    #[arg(long)]
    pub commit: String,
    /// The series it belongs to (a branch, a board).
    #[arg(long, default_value = "default")]
    pub label: String,
    /// The commit did not pass its gate: stored, but never taken as a baseline.
    #[arg(long)]
    pub rejected: bool,
    /// The compare document (`compare --format json`, `ab`'s comparison.json) that gated it.
    #[arg(long, value_name = "FILE")]
    pub comparison: Option<PathBuf>,
    /// The history: a SQLite file, or `postgresql://…`. Default: irqlab-history.sqlite beside RESULT.
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    Table,
    Csv,
}

#[derive(Args)]
pub struct ShowArgs {
    /// The latency class (e.g. timer).
    #[arg(long)]
    pub class: String,
    /// The statistic: count, mean, min, p50, p90, p99, p99.9, p99.99, max, warm_max.
    #[arg(long, default_value = "p99")]
    pub stat: String,
    #[arg(long, default_value = "default")]
    pub label: String,
    /// Only this configuration.
    #[arg(long)]
    pub config: Option<String>,
    #[arg(long, value_enum, default_value_t = ShowFormat::Table)]
    pub format: ShowFormat,
    /// The history. Default: irqlab-history.sqlite in the current directory.
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<String>,
}

/// An error and its causes, one after the other.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s += &format!(": {c}");
        cur = c.source();
    }
    s
}

/// Open the history `db` (or the default file in `dir`).
pub fn open(db: Option<&str>, dir: &Path) -> Result<History, CliError> {
    let loc = match db {
        Some(d) => Location::parse(d),
        None => Location::File(dir.join(DEFAULT_DB)),
    };
    History::open(&loc).map_err(|e| CliError(format!("--db {}", chain(&e))))
}

pub fn run(a: HistoryArgs) -> Result<Outcome, CliError> {
    match a.cmd {
        HistoryCmd::Add(a) => add(a),
        HistoryCmd::Show(a) => show(a),
    }
}

fn add(a: AddArgs) -> Result<Outcome, CliError> {
    let r = crate::inputs::read_named(&a.result)?;
    let verdicts = match &a.comparison {
        Some(p) => {
            let text = results::read_text_capped(p, results::MAX_RESULT_BYTES)?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| CliError(format!("--comparison {}: not JSON: {e}", p.display())))?;
            if v.get("verdicts").is_none() && v.get("verdict").is_none() {
                return Err(CliError(format!("--comparison {}: not a compare document (no `verdicts` or `verdict` key)", p.display())));
            }
            v.to_string()
        }
        None => String::new(),
    };
    let dir = a.result.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut h = open(a.db.as_deref(), dir)?;
    let added_at = crate::provenance::started();
    let run = NewRun { commit: &a.commit, label: &a.label, accepted: !a.rejected, added_at: &added_at, result: &r, verdicts: &verdicts };
    match h.add(&run).map_err(|e| CliError(chain(&e)))? {
        Added::Stored { seq, summaries, .. } => {
            note(&format!("irqlab: history: stored {} for {} `{}` as run {seq} ({summaries} summaries) in {}\n", a.result.display(), a.label, a.commit, h.name()))
        }
        Added::AlreadyStored { .. } => {
            note(&format!("irqlab: history: {} for {} `{}` is already stored in {}; nothing written\n", a.result.display(), a.label, a.commit, h.name()))
        }
    }
    Ok(Outcome::Ok)
}

fn show(a: ShowArgs) -> Result<Outcome, CliError> {
    let mut h = open(a.db.as_deref(), Path::new("."))?;
    let points = h.points(&a.label, &a.class, &a.stat, a.config.as_deref()).map_err(|e| CliError(chain(&e)))?;
    let (unit, col) = if a.stat == "count" { ("", a.stat.clone()) } else { ("(us)", format!("{}_us", a.stat)) };
    let value = |v: f64| if a.stat == "count" { format!("{v:.0}") } else { format!("{:.3}", v / 1000.0) };
    let mut s = String::new();
    match a.format {
        ShowFormat::Csv => {
            s += &format!("run,commit,config,accepted,{col}\n");
            for p in &points {
                s += &format!("{},{},{},{},{}\n", p.seq, csv_field(&p.commit), csv_field(&p.config), p.accepted, value(p.value));
            }
        }
        ShowFormat::Table => {
            s += &format!("{} {} {} per run, label {} ({})\n", a.class, a.stat, unit, a.label, h.name());
            s += &format!("{:>5}  {:<16} {:<20} {:>12}  {}\n", "run", "commit", "config", a.stat, "accepted");
            for p in &points {
                let commit = results::escape_control(&p.commit);
                s += &format!("{:>5}  {:<16} {:<20} {:>12}  {}\n", p.seq, commit, results::escape_control(&p.config), value(p.value), if p.accepted { "yes" } else { "no" });
            }
        }
    }
    out_data(&s)?;
    Ok(Outcome::Ok)
}

/// A CSV field (RFC 4180 quoting), control characters made visible.
fn csv_field(s: &str) -> String {
    let s = results::escape_control(s);
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

//! `irqlab import FORMAT FILE… [--out DIR]`: another tool's output as an irqlab result
//! (`import`; `irqlab import --list` names the formats). Several files are
//! repetitions of one experiment. The result is written like every other (`result.json` and
//! `result.csv`, together) into `--out` (default `out/import-FORMAT`), never over an earlier
//! result without `--force`, and never over an input file. Bad input exits 2 naming the file and
//! the line or key.
//!
//! Repetitions must be distinct runs (issue 36): the same content given twice (one file named
//! twice, or a copy) would count one run as several and make every between-run interval look
//! certain, so it is refused, naming both files — refused rather than counted once, because a
//! command line that repeats a file is a mistake whose intent cannot be guessed. irqlab results
//! of different kinds (predicted and measured) are not repetitions of one experiment either.
use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use import::{import_files, ImportOptions, FORMATS};

use crate::term::out;
use crate::{CliError, Outcome};

#[derive(Args)]
pub struct ImportArgs {
    /// The format (see --list): fio, cyclictest, rtla-timerlat, tscdeadline, ipi-bench, tbm.
    #[arg(required_unless_present = "list")]
    pub format: Option<String>,
    /// The tool's output files; several are repetitions of the same experiment.
    #[arg(required_unless_present = "list")]
    pub files: Vec<PathBuf>,
    /// Output directory (default out/import-FORMAT).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an earlier result in the output directory.
    #[arg(long)]
    pub force: bool,
    /// TSC frequency in GHz (tscdeadline: its samples are TSC cycles).
    #[arg(long, value_name = "GHZ")]
    pub tsc_ghz: Option<f64>,
    /// bench-console: the board the log came from (`qemu-tcg`, `qemu-icount` for the lab).
    #[arg(long, value_name = "NAME")]
    pub board: Option<String>,
    /// A setting the file does not state, recorded as a parameter (bench-console: scheduler,
    /// vwfi, xen_version, pinning, debug_build, keep_partial). Repeatable.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// The unit of a file that does not state it: `us` or `ns` (cyclictest's -h text: us by
    /// default, ns when cyclictest ran with -N). Refused when the file states another.
    #[arg(long, value_name = "ns|us")]
    pub unit: Option<String>,
    /// List the formats and what each reads.
    #[arg(long)]
    pub list: bool,
}

/// Refuse repetitions that are the same run: equal content, or (format `irqlab`) results of
/// different kinds. Errors name both files.
fn distinct_runs(format: &str, files: &[(String, String)]) -> Result<(), CliError> {
    let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::with_capacity(files.len());
    for (name, text) in files {
        if let Some(first) = seen.insert(text.as_str(), name.as_str()) {
            return Err(CliError(format!(
                "{name}: same content as {first}; repetitions must be distinct runs (one run given twice would count as two and make the between-run spread look smaller than it is)"
            )));
        }
    }
    if format == "irqlab" {
        let kind = |text: &str| serde_json::from_str::<serde_json::Value>(text).ok().and_then(|j| j["meta"]["kind"].as_str().map(str::to_string));
        let mut first: Option<(&str, String)> = None;
        for (name, text) in files {
            let Some(k) = kind(text) else { continue };
            match &first {
                None => first = Some((name, k)),
                Some((f, fk)) if *fk != k => {
                    return Err(CliError(format!("{name} is a {k} result but {f} is {fk}: a model's prediction and a measurement are not repetitions of one experiment; compare them with `irqlab compare` instead")));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

pub fn run(a: ImportArgs) -> Result<Outcome, CliError> {
    if a.list {
        let w = FORMATS.iter().map(|f| f.name.len()).max().unwrap_or(0);
        let text: String = FORMATS.iter().map(|f| format!("{:<w$}  {}\n", f.name, f.about)).collect();
        out(&text)?;
        return Ok(Outcome::Ok);
    }
    let format = a.format.expect("required unless --list");
    import::format(&format)?;
    let mut files = Vec::with_capacity(a.files.len());
    for p in &a.files {
        // Bounded and regular files only, like every reader (issue 27).
        let text = results::read_text_capped(p, results::MAX_RESULT_BYTES).map_err(|e| CliError(e.to_string()))?;
        files.push((p.display().to_string(), text));
    }
    distinct_runs(&format, &files)?;
    let mut params = Vec::new();
    for p in &a.params {
        let (k, v) = p.split_once('=').filter(|(k, _)| !k.is_empty()).ok_or_else(|| CliError(format!("--param {p}: expected KEY=VALUE")))?;
        params.push((k.to_string(), v.to_string()));
    }
    let unit = match a.unit.as_deref() {
        None => None,
        Some(u) => Some(import::LatencyUnit::parse(u).ok_or_else(|| CliError(format!("--unit {u}: expected ns or us")))?),
    };
    let opts = ImportOptions { tsc_ghz: a.tsc_ghz, board: a.board.clone(), params, unit };
    let mut r = import_files(&format, &files, &opts, sim::runner::TOOL_VERSION)?;
    let dir = a.out.unwrap_or_else(|| PathBuf::from(format!("out/import-{format}")));
    crate::output::check_output_dir_forced(&dir, &a.files, a.force)?;
    let target = dir.join("result.json");
    if !a.force && target.exists() {
        return Err(CliError(format!("{} already holds a result; give another --out, or --force to replace it", dir.display())));
    }
    for p in &a.files {
        let (Ok(input), Ok(d)) = (std::fs::canonicalize(p), std::fs::canonicalize(&dir)) else { continue };
        if input.parent() == Some(d.as_path()) && ["result.json", "result.csv"].iter().any(|n| input.file_name() == Some(std::ffi::OsStr::new(n))) {
            return Err(CliError(format!("{}: an input file would be replaced by the result; give another --out", p.display())));
        }
    }
    r.provenance = Some(crate::provenance::current(BTreeMap::from([("import.format".to_string(), format.clone())])));
    let json = crate::output::write_files_forced(&dir, &r, &a.files, a.force)?;
    out(&format!("imported {} file(s) of {} ({} configuration(s)) into {}\n", files.len(), format, r.configs.len(), json.display()))?;
    Ok(Outcome::Ok)
}

//! `irqlab-lab ab kvm|xen --a 'OPTS' --b 'OPTS' [--repeat N | --single-run] [--fail-on
//! slower[:STAT]] -- BENCH … --out DIR`: the lab as a patch gate (issue 34 item 2). One command
//! measures a base build (A) against a patched one (B) and says whether B is resolvably slower.
//!
//! - A side's options are an opaque string of that mode's own options (`--kernel …` for kvm; for
//!   xen whatever `irqlab-lab xen` takes, including options added later): they are parsed by the
//!   same `Cli` the mode uses, so a side is valid exactly when `irqlab-lab MODE OPTS -- BENCH`
//!   would be. Both sides are validated (flags, the mode's own checks: an own kernel's image and
//!   configuration, Debian Xen's refusals) before any boot; a bad side exits 2 naming it.
//! - The bench is given once, after `--`, so both sides run the same one; a side whose options
//!   carry their own `--`, `--out` or `--force` is refused.
//! - Runs interleave A B A B …, each repetition a fresh `irqlab-lab` process and so a fresh boot:
//!   a host whose load drifts loads both sides alike (import::irqlab's reason).
//! - Each run goes to DIR/a/run-N and DIR/b/run-N; each side is imported as repetitions
//!   (`import`, format `irqlab`) into DIR/a/result.json and DIR/b/result.json; the
//!   comparison and verdicts are `irqlab compare`'s (report::compare_table, report::verdict_table,
//!   results::stats::gate), written to DIR/comparison.txt and DIR/comparison.json and printed.
//! - A side that fails stops the A/B (no further boots): every result already taken is kept and
//!   imported, and the comparison says the verdict could not be given and why (exit 1).
//!
//! Exit: 0 a verdict (no resolvable regression, or no `--fail-on`); 4 with `--fail-on` and B
//! resolvably slower; 5 the gate could not check something it covers (named; as `irqlab compare`);
//! 2 bad input, nothing booted; 1 a side failed or nothing paired.
use std::path::{Path, PathBuf};

/// Why an A/B could not be started or finished.
#[derive(Debug, thiserror::Error)]
pub enum AbError {
    /// Bad input: nothing was booted.
    #[error("{0}")]
    Usage(String),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Results(#[from] results::ResultsError),
    #[error("{0}")]
    Compare(String),
    #[error("the comparison could not be made")]
    Doc(#[from] report::compare_doc::DocError),
}

impl AbError {
    pub fn exit_code(&self) -> i32 {
        if matches!(self, AbError::Usage(_)) {
            2
        } else {
            1
        }
    }
}

impl From<AbError> for crate::error::LabError {
    fn from(e: AbError) -> Self {
        crate::error::LabError::Part { code: e.exit_code(), source: Box::new(e) }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AbError + '_ {
    move |source| AbError::Io { path: path.to_path_buf(), source }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AbMode {
    Kvm,
    Xen,
}

impl AbMode {
    pub fn name(self) -> &'static str {
        match self {
            AbMode::Kvm => "kvm",
            AbMode::Xen => "xen",
        }
    }
}

pub use results::vocab::{parse_fail_on, FailOn};

/// An A/B: both sides' mode and options, the schedule and the gate (the shell's `ab` flags).
#[derive(Debug, Clone)]
pub struct AbConfig {
    pub mode: AbMode,
    /// Side A's (the base's) options for its mode, one string.
    pub a: String,
    /// Side B's (the patched build's) options.
    pub b: String,
    /// Boots per side (interleaved A B A B).
    pub repeat: u32,
    /// One boot per side, said explicitly.
    pub single_run: bool,
    pub fail_on: Option<FailOn>,
    /// Confidence level of the verdicts, in (0, 1).
    pub confidence: f64,
    /// --junit, --summary-md, --force: as `irqlab compare` takes them (cli.rs: `GateOutputs`).
    pub outputs: results::vocab::GateOutputs,
    /// The bench words after `--`, once for both sides, with `--out DIR`.
    pub bench: Vec<String>,
}

/// A side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }
    pub fn dir(self) -> &'static str {
        match self {
            Side::A => "a",
            Side::B => "b",
        }
    }
}

/// How one run ended: the lab's exit status and its last line on stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnd {
    pub code: i32,
    pub last_line: String,
}

/// Runs one side's lab command (`argv` after the program name); a fake in the tests.
pub trait Runner {
    fn run(&mut self, side: Side, rep: u32, argv: &[String]) -> RunEnd;
}

/// The real runner: this `irqlab-lab` again, one process (one QEMU boot) per run.
pub struct ProcessRunner;

impl Runner for ProcessRunner {
    fn run(&mut self, side: Side, rep: u32, argv: &[String]) -> RunEnd {
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("irqlab-lab"));
        eprintln!("irqlab-lab ab: side {} run {rep}: irqlab-lab {}", side.name(), argv.join(" "));
        match std::process::Command::new(exe).args(argv).stdin(std::process::Stdio::null()).output() {
            Ok(o) => {
                let err = String::from_utf8_lossy(&o.stderr);
                let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
                eprintln!("irqlab-lab ab: side {} run {rep}: exit {} — {last}", side.name(), o.status.code().unwrap_or(-1));
                RunEnd { code: o.status.code().unwrap_or(-1), last_line: last }
            }
            Err(e) => RunEnd { code: -1, last_line: format!("cannot start irqlab-lab: {e}") },
        }
    }
}

/// A side's option string that does not split into words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    #[error("unclosed '")]
    UnclosedSingle,
    #[error("unclosed \"")]
    UnclosedDouble,
    #[error("a trailing backslash")]
    TrailingBackslash,
}

/// Shell-like splitting of a side's option string: whitespace, '…', "…" and backslash.
pub fn split_words(s: &str) -> Result<Vec<String>, SplitError> {
    let (mut out, mut cur, mut has) = (Vec::new(), String::new(), false);
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match c {
            '\'' => {
                has = true;
                loop {
                    match it.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err(SplitError::UnclosedSingle),
                    }
                }
            }
            '"' => {
                has = true;
                loop {
                    match it.next() {
                        Some('"') => break,
                        Some('\\') => cur.push(it.next().ok_or(SplitError::TrailingBackslash)?),
                        Some(ch) => cur.push(ch),
                        None => return Err(SplitError::UnclosedDouble),
                    }
                }
            }
            '\\' => {
                has = true;
                cur.push(it.next().ok_or(SplitError::TrailingBackslash)?);
            }
            c if c.is_whitespace() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                has = true;
                cur.push(c);
            }
        }
    }
    if has {
        out.push(cur);
    }
    Ok(out)
}

/// The bench words with `--out DIR` taken out.
pub fn take_out(words: &[String]) -> Result<(Vec<String>, PathBuf), AbError> {
    let (mut rest, mut out) = (Vec::new(), None);
    let mut it = words.iter();
    while let Some(w) = it.next() {
        if w == "--out" {
            out = Some(it.next().ok_or_else(|| AbError::Usage("--out: needs a directory".into()))?.clone());
        } else if let Some(v) = w.strip_prefix("--out=") {
            out = Some(v.to_string());
        } else {
            rest.push(w.clone());
        }
    }
    let out = out.ok_or_else(|| AbError::Usage("the bench arguments after `--` need `--out DIR` (DIR/a, DIR/b and the comparison go there)".into()))?;
    Ok((rest, PathBuf::from(out)))
}

/// One side, validated: its lab command line without the `--out` of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub side: Side,
    pub opts: Vec<String>,
    pub argv_head: Vec<String>,
}

impl Plan {
    /// The lab command for one run: every bench, each with its `--out` (one boot in the KVM mode).
    pub fn argv(&self, benches: &[Vec<String>], dirs: &[PathBuf]) -> Vec<String> {
        let mut v = self.argv_head.clone();
        for (b, d) in benches.iter().zip(dirs) {
            v.push("--".into());
            v.extend(b.iter().cloned());
            v.extend(["--out".to_string(), d.display().to_string()]);
        }
        v
    }
}

/// Where each bench's files go under a run's (or a side's) directory: the directory itself for
/// one bench (the layout of a one-bench A/B), else a subdirectory named after the bench
/// (`timer`, `ipi`, `timer-2` for a second timer).
pub fn bench_dirs(benches: &[Vec<String>]) -> Vec<String> {
    if benches.len() == 1 {
        return vec![String::new()];
    }
    let mut names: Vec<String> = Vec::new();
    for b in benches {
        let base = crate::grammar::bench_of(b).unwrap_or("bench").to_string();
        let n = names.iter().filter(|x| **x == base || x.starts_with(&format!("{base}-"))).count();
        names.push(if n == 0 { base } else { format!("{base}-{}", n + 1) });
    }
    names
}

/// Checks one side's whole lab command line (`irqlab-lab MODE OPTS -- BENCH --out X`) without
/// booting anything: the shell's own parse and the mode's own checks (`route::check_argv`, the
/// same as a run of that mode makes before its first boot). The error is one line.
pub type SideCheck<'a> = &'a dyn Fn(&[String]) -> Result<(), String>;

/// Validates one side without booting: its options split, then [`SideCheck`] on its command line.
pub fn validate_side(mode: AbMode, side: Side, opts: &str, bench: &[String], check: SideCheck) -> Result<Plan, AbError> {
    let bad = |why: String| AbError::Usage(format!("side {} (--{} '{opts}'): {why}", side.name(), side.dir()));
    let words = split_words(opts).map_err(|e| bad(format!("cannot split the options: {e}")))?;
    if let Some(w) = words.iter().find(|w| *w == "--" || *w == "--force" || *w == "--out" || w.starts_with("--out=")) {
        return Err(bad(format!("`{w}` is not a side option: the bench and `--out` come once, after ab's `--`, for both sides (an A/B runs the same bench on both)")));
    }
    let mut argv = vec!["irqlab-lab".to_string(), mode.name().to_string()];
    argv.extend(words.iter().cloned());
    argv.push("--".into());
    argv.extend(bench.iter().cloned());
    argv.extend(["--out".to_string(), "/nonexistent/irqlab-lab-ab-check".to_string()]);
    check(&argv).map_err(bad)?;
    let argv_head = std::iter::once(mode.name().to_string()).chain(words.iter().cloned()).collect();
    Ok(Plan { side, opts: words, argv_head })
}

/// Everything checked before the first boot: the bench, the output directory, both sides.
pub fn prepare(a: &AbConfig, check: SideCheck) -> Result<(Vec<Vec<String>>, PathBuf, [Plan; 2]), AbError> {
    if a.repeat == 1 && !a.single_run {
        return Err(AbError::Usage(
            "--repeat 1: one boot per side cannot show boot-to-boot spread; give --single-run to accept a verdict within one run each, or --repeat 3 (the default)".into(),
        ));
    }
    if !(a.confidence > 0.0 && a.confidence < 1.0) {
        return Err(AbError::Usage(format!("--confidence {}: expected a level in (0, 1) such as 0.95", a.confidence)));
    }
    let (words, out) = take_out(&a.bench)?;
    let benches = crate::grammar::segments(&words);
    if let Some(b) = benches.iter().find(|b| crate::grammar::bench_of(b).is_none()) {
        return Err(AbError::Usage(format!("after `--`: expected a bench first ({}), got `{}`", crate::grammar::BENCHES.join(", "), b.first().map(String::as_str).unwrap_or(""))));
    }
    if benches.len() > 1 && a.mode == AbMode::Xen {
        return Err(AbError::Usage(
            "several benches after `--`: the Xen mode boots one guest image per bench; run one A/B per bench (the KVM mode runs several in one boot)".into(),
        ));
    }
    if let Some(p) = ["a", "b", "comparison.json", "comparison.txt"].iter().map(|n| out.join(n)).find(|p| p.exists()) {
        return Err(AbError::Usage(format!("--out: {} already exists; not replacing an earlier A/B (give another --out)", p.display())));
    }
    let mut plans = Vec::new();
    for (side, opts) in [(Side::A, &a.a), (Side::B, &a.b)] {
        let mut plan = None;
        for b in &benches {
            plan = Some(validate_side(a.mode, side, opts, b, check)?);
        }
        plans.push(plan.expect("one bench at least"));
    }
    let [pa, pb]: [Plan; 2] = plans.try_into().expect("two sides");
    Ok((benches, out, [pa, pb]))
}

/// What happened to each side.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideRecord {
    /// Result files of the runs that completed, per bench, in run order.
    pub results: Vec<Vec<PathBuf>>,
    pub failure: Option<String>,
}

/// One run of the schedule, in the order it ran (the A/B's own record of the interleaving).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRecord {
    pub side: &'static str,
    pub rep: u32,
    /// Seconds from the A/B's start to this run's start, and its wall time (one boot).
    pub start_s: f64,
    pub wall_s: f64,
    pub exit: i32,
}

/// Runs the interleaved schedule (every bench in each run); stops at the first failing run.
pub fn run_schedule(runner: &mut dyn Runner, plans: &[Plan; 2], benches: &[Vec<String>], out: &Path, repeat: u32) -> ([SideRecord; 2], Vec<RunRecord>) {
    let mut rec: [SideRecord; 2] = Default::default();
    for r in rec.iter_mut() {
        r.results = vec![Vec::new(); benches.len()];
    }
    let mut order = Vec::new();
    let names = bench_dirs(benches);
    let t0 = std::time::Instant::now();
    'reps: for rep in 1..=repeat {
        for (i, p) in plans.iter().enumerate() {
            let dir = out.join(p.side.dir()).join(format!("run-{rep}"));
            let dirs: Vec<PathBuf> = names.iter().map(|n| if n.is_empty() { dir.clone() } else { dir.join(n) }).collect();
            let start = t0.elapsed().as_secs_f64();
            let end = runner.run(p.side, rep, &p.argv(benches, &dirs));
            order.push(RunRecord { side: p.side.name(), rep, start_s: start, wall_s: t0.elapsed().as_secs_f64() - start, exit: end.code });
            let missing = dirs.iter().map(|d| d.join("result.json")).find(|r| !r.is_file());
            if (end.code == 0 || end.code == 3) && missing.is_none() {
                for (k, d) in dirs.iter().enumerate() {
                    rec[i].results[k].push(d.join("result.json"));
                }
            } else {
                let why = match missing {
                    Some(m) if end.code == 0 || end.code == 3 => format!("no {} written", m.display()),
                    _ => format!("exit {}: {}", end.code, end.last_line),
                };
                rec[i].failure = Some(format!("side {} failed at run {rep} of {repeat} ({}): {why}", p.side.name(), dir.display()));
                break 'reps;
            }
        }
    }
    (rec, order)
}

/// Figures that only some runs have (irqlab records some only when they occur) are left out of
/// every run before the import, which wants the same configurations, classes and figures in
/// each repetition; the names left out are returned, for a note.
pub fn common_figures(runs: &mut [results::RunResult]) -> Vec<String> {
    let mut dropped = std::collections::BTreeSet::new();
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let names: Vec<String> = first.configs.iter().map(|c| c.name.clone()).collect();
    for name in names {
        let keys =
            |r: &results::RunResult| r.configs.iter().find(|c| c.name == name).map(|c| c.figures.keys().cloned().collect::<std::collections::BTreeSet<_>>()).unwrap_or_default();
        let common = runs.iter().skip(1).fold(keys(&runs[0]), |acc, r| acc.intersection(&keys(r)).cloned().collect());
        for r in runs.iter_mut() {
            for c in r.configs.iter_mut().filter(|c| c.name == name) {
                c.figures.retain(|k, _| {
                    let keep = common.contains(k);
                    if !keep {
                        dropped.insert(k.clone());
                    }
                    keep
                });
            }
        }
    }
    dropped.into_iter().collect()
}

/// Imports one side's runs as repetitions into DIR/<side>/result.json.
fn import_side(dir: &Path, files: &[PathBuf]) -> Result<results::RunResult, AbError> {
    let mut runs = Vec::new();
    for f in files {
        runs.push(results::read_json(f)?);
    }
    let dropped = common_figures(&mut runs);
    let texts: Vec<(String, String)> = files.iter().zip(&runs).map(|(f, r)| (f.display().to_string(), results::to_json_string(r))).collect();
    let mut r = import::import_files("irqlab", &texts, &import::ImportOptions::default(), &format!("irqlab-lab {}", env!("CARGO_PKG_VERSION")))
        .map_err(|e| AbError::Compare(e.to_string()))?;
    // Each run's start time, so that compare pairs A and B runs that interleave (stats::pairs).
    for c in &mut r.configs {
        if let Some(reps) = c.repetitions.as_mut() {
            for (rep, run) in reps.runs.iter_mut().zip(&runs) {
                rep.started = run.provenance.as_ref().map(|p| p.started.clone());
            }
        }
    }
    if !dropped.is_empty() {
        for c in &mut r.configs {
            c.notes.push(format!("irqlab-lab ab: figures not in every run left out: {}", dropped.join(", ")));
        }
    }
    crate::census::pool_side(&runs, &mut r);
    results::write_json(&dir.join("result.json"), &r)?;
    Ok(r)
}

/// The whole A/B with a given runner; returns the exit status.
pub fn run_with(a: &AbConfig, runner: &mut dyn Runner, check: SideCheck, command: Vec<String>) -> Result<i32, AbError> {
    let (benches, out, plans) = prepare(a, check)?;
    crate::ab_report::check_junit(a)?;
    std::fs::create_dir_all(&out).map_err(io(&out))?;
    let repeat = if a.single_run { 1 } else { a.repeat };
    let t0 = std::time::Instant::now();
    let (rec, order) = run_schedule(runner, &plans, &benches, &out, repeat);
    let wall = t0.elapsed().as_secs_f64();
    let names = bench_dirs(&benches);
    let failure = rec.iter().filter_map(|r| r.failure.clone()).next();
    let runs = |i: usize| rec[i].results.first().map_or(0, Vec::len);
    let mut doc = serde_json::json!({
        "ab": {
            "mode": a.mode.name(),
            "a": plans[0].opts, "b": plans[1].opts,
            "bench": if benches.len() == 1 { serde_json::json!(benches[0]) } else { serde_json::json!(benches) },
            "repeat": repeat,
            "order": "interleaved A B A B, each run a fresh boot (every bench in one boot per run)",
            "runs": order,
            "runs_a": runs(0), "runs_b": runs(1),
            "wall_s": wall,
            "command": command,
        }
    });
    let mut text = format!(
        "irqlab-lab ab {}: A = `{}`, B = `{}`, {} run(s) each, interleaved, {:.0} s{}\n",
        a.mode.name(),
        plans[0].opts.join(" "),
        plans[1].opts.join(" "),
        repeat,
        wall,
        if benches.len() > 1 { format!(", {} benches per boot ({})", benches.len(), names.join(", ")) } else { String::new() }
    );
    let mut codes = Vec::new();
    let mut docs = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let sub = |side: Side| if name.is_empty() { out.join(side.dir()) } else { out.join(side.dir()).join(name) };
        let mut sides = Vec::new();
        for (p, r) in plans.iter().zip(&rec) {
            let dir = sub(p.side);
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            sides.push(if r.results[k].is_empty() { None } else { Some(import_side(&dir, &r.results[k])?) });
        }
        if !name.is_empty() {
            text += &format!("\n== bench {name}: {}\n", benches[k].join(" "));
        }
        let (code, t, cj, vj) = match (&sides[0], &sides[1], &failure) {
            (Some(ra), Some(rb), None) => {
                let v = crate::ab_verdict::verdict(a, ra, rb, &sub(Side::A).join("result.json"), &sub(Side::B).join("result.json"), repeat)?;
                let (cj, vj) = (v.doc.json(), v.doc.gate_json());
                docs.push((name.clone(), v.doc));
                (v.code, v.text, cj, vj)
            }
            (_, _, why) => {
                let why = why.clone().unwrap_or_else(|| "a side has no result".into());
                let t = format!(
                    "verdict: not given: {why}; the results taken are kept (A: {} run(s) in {}, B: {} run(s) in {})\n",
                    rec[0].results[k].len(),
                    sub(Side::A).display(),
                    rec[1].results[k].len(),
                    sub(Side::B).display()
                );
                (1, t, serde_json::Value::Null, serde_json::json!({"given": false, "why": why}))
            }
        };
        text += &t;
        codes.push(code);
        if name.is_empty() {
            if !cj.is_null() {
                doc["comparison"] = cj;
            }
            doc["verdict"] = vj;
        } else {
            doc["benches"][name] = serde_json::json!({"comparison": cj, "verdict": vj});
        }
    }
    // Several benches: a side that failed (1) first, then a regression (4), then a gate that could
    // not check (5), then nothing paired (1); else 0.
    let code = [1, 4, 5].into_iter().find(|c| codes.contains(c)).unwrap_or(0);
    if names.len() > 1 {
        text += &format!("\nverdicts per bench: {}\n", names.iter().zip(&codes).map(|(n, c)| format!("{n} exit {c}")).collect::<Vec<_>>().join(", "));
    }
    let why = failure.clone().unwrap_or_else(|| "a side has no result".into());
    crate::ab_report::write(a, &docs, &names, &why)?;
    results::write_atomic(&out.join("comparison.json"), format!("{}\n", serde_json::to_string_pretty(&doc).expect("json")).as_bytes())?;
    results::write_atomic(&out.join("comparison.txt"), text.as_bytes())?;
    print!("{text}");
    Ok(code)
}

/// `irqlab-lab ab …`, each side checked by `check` before the first boot.
pub fn run(a: &AbConfig, check: SideCheck, command: Vec<String>) -> Result<i32, AbError> {
    run_with(a, &mut ProcessRunner, check, command)
}

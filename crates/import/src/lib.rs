//! # import — the field's own benchmark outputs as irqlab results
//!
//! Most users' numbers come from fio, cyclictest, rtla, kvm-unit-tests and similar tools (issue
//! 25). Each importer here reads one tool's output into configurations of the result format,
//! recording the tool, its version, the command line and the host where the file says them, so
//! imported results work with `report`, `compare` (with verdicts) and `fit` like measured ones.
//!
//! One file per format; [`FORMATS`] is the one dispatch table, so adding a format is one line.
//! Several files of one format are repetitions of the same experiment: their configurations must
//! match by name and classes, and each becomes one configuration with its repetitions (per-file
//! summaries and the pooled distribution) — five fio runs, say, for `compare` to judge.
//!
//! Bad input is an error naming the file, the line or key, and what was expected; an importer
//! never returns a result with a class silently missing. Whether the numbers can describe a set
//! of samples is checked once for every format, in [`validate`] (issue 36).
#![forbid(unsafe_code)]
use std::collections::BTreeMap;

use results::{ConfigResult, ResultKind, RunMeta, RunResult};

mod bench_console;
mod cyclictest;
mod fio;
mod ipi_bench;
mod irqlab;
mod rtla;
mod tbm;
mod tscdeadline;
mod validate;

pub use results::LatencyUnit;
pub(crate) use validate::{class_from_buckets, finite, insert_class, strict_json, unique, Exact};

/// Options some formats need.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// TSC frequency in GHz, to turn TSC cycles (tscdeadline_latency) into ns.
    pub tsc_ghz: Option<f64>,
    /// bench-console: the board (or `qemu-tcg` / `qemu-icount`) the log came from.
    pub board: Option<String>,
    /// `--param KEY=VALUE`: settings the file does not state (Xen's scheduler, vwfi…).
    pub params: Vec<(String, String)>,
    /// `--unit ns|us`: the unit of a file that does not state it (cyclictest's `-h` text: µs,
    /// or ns with `-N`). Given for a file that states its unit, it must agree.
    pub unit: Option<LatencyUnit>,
}

/// ns per unit of `u`.
pub(crate) fn unit_ns(u: LatencyUnit) -> u64 {
    match u {
        LatencyUnit::Us => 1000,
        LatencyUnit::Ns => 1,
    }
}

/// Refuses `--unit` when the file states another (`stated`: ns per unit the file says).
pub(crate) fn unit_agrees(file: &str, opts: &ImportOptions, stated: u64, where_: &str) -> Result<(), ImportError> {
    match opts.unit {
        Some(u) if unit_ns(u) != stated => {
            Err(ImportError::other(file, format!("--unit {} contradicts the file: {where_} says {}", u.ascii(), if stated == 1 { "ns" } else { "µs" })))
        }
        _ => Ok(()),
    }
}

/// What one file says about where it came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Origin {
    pub tool: String,
    pub version: Option<String>,
    pub command: Option<String>,
    /// Host facts the file states (`host`, `kernel`, `machine`, …).
    pub host: BTreeMap<String, String>,
}

/// One file parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub origin: Origin,
    pub configs: Vec<ConfigResult>,
    /// Measured for every tool; an irqlab result keeps its own.
    pub kind: ResultKind,
}

/// A format: its name on the command line, one line on what it reads, and its parser.
pub struct Format {
    pub name: &'static str,
    pub about: &'static str,
    pub parse: fn(text: &str, file: &str, opts: &ImportOptions) -> Result<Parsed, ImportError>,
}

/// Every format `irqlab import` reads — one line each.
pub const FORMATS: &[Format] = &[
    Format { name: "fio", about: "fio --output-format=json or json+ (completion latency per job and direction, IOPS, bandwidth)", parse: fio::parse },
    Format {
        name: "cyclictest",
        about: "cyclictest --json=FILE (with -h N for percentiles), or its -h/--histogram text (needs --unit us|ns; one class per thread)",
        parse: cyclictest::parse,
    },
    Format { name: "rtla-timerlat", about: "rtla timerlat hist output (IRQ and thread latency per CPU as separate classes)", parse: rtla::parse },
    Format { name: "tscdeadline", about: "kvm-unit-tests x86/tscdeadline_latency `latency: N` lines (TSC cycles; needs --tsc-ghz)", parse: tscdeadline::parse },
    Format { name: "ipi-bench", about: "the IPI benchmark module's kernel log lines (Dry-run, Self-IPI, Normal IPI, Broadcast IPI, Broadcast lock)", parse: ipi_bench::parse },
    Format { name: "tbm", about: "a tbm-style report: `latency (ns): max= warm_max= min= avg=`", parse: tbm::parse },
    Format { name: "bench-console", about: "the arm64 benchmark guest's `@irqlab v1` console lines (Xen lab or a board's serial log; needs --board)", parse: bench_console::parse },
    Format { name: "irqlab", about: "irqlab results of separate runs (e.g. A and B measured alternately) as repetitions", parse: irqlab::parse },
];

/// Why a file could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error("unknown import format `{0}`; expected one of {1}")]
    UnknownFormat(String, String),
    /// `at` is `line N` or `key K`.
    #[error("{file}: {at}: expected {expected}, found {found}")]
    Bad { file: String, at: String, expected: String, found: String },
    #[error("{file}: {message}")]
    Other { file: String, message: String },
    #[error("{file}: does not repeat {first}: {what}")]
    Mismatch { file: String, first: String, what: String },
}

impl ImportError {
    pub(crate) fn line(file: &str, line: usize, expected: impl Into<String>, found: impl Into<String>) -> ImportError {
        ImportError::Bad { file: file.into(), at: format!("line {line}"), expected: expected.into(), found: shorten(&found.into()) }
    }

    pub(crate) fn key(file: &str, key: &str, expected: impl Into<String>, found: impl Into<String>) -> ImportError {
        ImportError::Bad { file: file.into(), at: format!("key `{key}`"), expected: expected.into(), found: shorten(&found.into()) }
    }

    pub(crate) fn other(file: &str, message: impl Into<String>) -> ImportError {
        ImportError::Other { file: file.into(), message: message.into() }
    }
}

fn shorten(s: &str) -> String {
    let s = results::escape_control(s);
    if s.chars().count() > 80 {
        format!("`{}…`", s.chars().take(80).collect::<String>())
    } else {
        format!("`{s}`")
    }
}

/// The format named `name`.
pub fn format(name: &str) -> Result<&'static Format, ImportError> {
    FORMATS.iter().find(|f| f.name == name).ok_or_else(|| ImportError::UnknownFormat(name.into(), FORMATS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")))
}

/// Largest latency an import accepts: 2^50 ns (13 days). Anything above is a damaged or foreign
/// file, and refusing it keeps every later sum and scaling free of overflow (issue 27).
pub(crate) const MAX_NS: u64 = 1 << 50;
/// Largest number of samples one class may hold (2^48): far above any real run.
pub(crate) const MAX_COUNT: u64 = 1 << 48;

/// `v` tool units times `scale` ns per unit, or an error naming `at` when the product is not a
/// latency (above [`MAX_NS`]).
pub(crate) fn scaled(file: &str, at: &str, v: u64, scale: u64) -> Result<u64, ImportError> {
    v.checked_mul(scale).filter(|ns| *ns <= MAX_NS).ok_or_else(|| bad_at(file, at, "a latency below 13 days", format!("{v} × {scale} ns")))
}

/// The float `v` tool units times `scale` ns per unit, rounded down (cyclictest and rtla print
/// fractional µs): finite, not negative, below [`MAX_NS`].
pub(crate) fn scaled_f(file: &str, at: &str, v: f64, scale: f64) -> Result<u64, ImportError> {
    let ns = v * scale;
    if ns.is_finite() && ns >= 0.0 && ns <= MAX_NS as f64 {
        Ok(ns as u64)
    } else {
        Err(bad_at(file, at, "a latency from 0 to 13 days", format!("{v}")))
    }
}

/// The sum of sample counts, or an error naming `at` above [`MAX_COUNT`].
pub(crate) fn count_sum(file: &str, at: &str, counts: impl IntoIterator<Item = u64>) -> Result<u64, ImportError> {
    let mut total = 0u64;
    for c in counts {
        total = total.checked_add(c).filter(|t| *t <= MAX_COUNT).ok_or_else(|| bad_at(file, at, format!("at most {MAX_COUNT} samples"), "more"))?;
    }
    Ok(total)
}

pub(crate) fn bad_at(file: &str, at: &str, expected: impl Into<String>, found: impl Into<String>) -> ImportError {
    ImportError::Bad { file: file.into(), at: at.into(), expected: expected.into(), found: shorten(&found.into()) }
}

/// Import `files` (name, text) of one format. One file: its configurations. Several: the same
/// configurations repeated, each with its repetitions over the files.
pub fn import_files(format_name: &str, files: &[(String, String)], opts: &ImportOptions, tool_version: &str) -> Result<RunResult, ImportError> {
    let f = format(format_name)?;
    let mut parsed = Vec::with_capacity(files.len());
    for (name, text) in files {
        // A UTF-8 byte-order mark (an editor's re-save) is no part of any tool's output (issue 45:
        // cyclictest JSON with one was reported as a missing unit).
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let p = (f.parse)(text, name, opts)?;
        if p.configs.is_empty() {
            return Err(ImportError::other(name, format!("no {} results in this file", f.name)));
        }
        parsed.push(p);
    }
    let (first_name, first) = (&files[0].0, &parsed[0]);
    for ((name, _), p) in files.iter().zip(&parsed).skip(1) {
        let names = |p: &Parsed| {
            p.configs.iter().map(|c| (c.name.clone(), c.classes.keys().cloned().collect::<Vec<_>>(), c.figures.keys().cloned().collect::<Vec<_>>())).collect::<Vec<_>>()
        };
        if names(p) != names(first) {
            let (a, b) = (names(first), names(p));
            let what =
                format!("configurations and classes {:?}, expected {:?}", b.iter().map(|x| (&x.0, &x.1)).collect::<Vec<_>>(), a.iter().map(|x| (&x.0, &x.1)).collect::<Vec<_>>());
            return Err(ImportError::Mismatch { file: name.clone(), first: first_name.clone(), what });
        }
    }
    // A repetition is another run: the same samples in another file (a re-saved copy, CRLF,
    // re-serialised JSON) is the same run counted twice (issue 45), found on content, not bytes.
    // The figures count too: two boots of the lab under -icount can take the very same samples,
    // but not the same wall times (`lab.session_wall`, …), while a copy repeats those as well.
    type Content<'a> = (&'a BTreeMap<String, results::LatencyClass>, &'a BTreeMap<String, results::Figure>);
    fn samples(p: &Parsed) -> Vec<Content<'_>> {
        p.configs.iter().map(|c| (&c.classes, &c.figures)).collect()
    }
    for (j, pj) in parsed.iter().enumerate() {
        if let Some(i) = parsed[..j].iter().position(|pi| samples(pi) == samples(pj) && pj.configs.iter().any(|c| !c.classes.is_empty())) {
            return Err(ImportError::other(
                &files[j].0,
                format!("holds the same samples as {} (every class, every histogram bucket): the same run twice, not a repetition; give each run once", files[i].0),
            ));
        }
    }
    let o = &first.origin;
    let mut knobs = BTreeMap::from([("import.format".to_string(), f.name.to_string()), ("import.tool".to_string(), o.tool.clone())]);
    if let Some(v) = &o.version {
        knobs.insert("import.tool_version".into(), v.clone());
    }
    if let Some(c) = &o.command {
        knobs.insert("import.command".into(), c.clone());
    }
    for (i, (name, _)) in files.iter().enumerate() {
        knobs.insert(format!("import.file.{}", i + 1), name.clone());
    }
    for (i, p) in parsed.iter().enumerate().skip(1) {
        if p.origin != *o {
            knobs.insert(format!("import.file.{}.origin", i + 1), format!("{:?}", p.origin));
        }
    }
    let mut platform = o.host.clone();
    if platform.is_empty() {
        platform.insert("host".into(), "not stated in the imported file".into());
    }
    let meta = RunMeta {
        description: format!("imported from {} output ({} file(s))", o.tool, files.len()),
        platform,
        knobs,
        ..RunMeta::named(tool_version, &format!("import-{}", f.name), 0, first.kind)
    };
    let mut r = RunResult::new(meta);
    for (i, c) in first.configs.iter().enumerate() {
        let mut c = c.clone();
        if parsed.len() > 1 {
            let reps: Vec<&ConfigResult> = parsed.iter().map(|p| &p.configs[i]).collect();
            c.repetitions = Some(results::Repetitions::over(&reps).map_err(|e| ImportError::other(first_name, e.to_string()))?);
            c.seed_spread = Some(results::SeedSpread::over(&reps));
            c.notes.push(format!("{} repetitions (one per file); the classes and figures above are the first file's", parsed.len()));
        }
        r.configs.push(c);
    }
    Ok(r)
}

/// Parse a number, or an error naming the line.
pub(crate) fn num<T: std::str::FromStr>(file: &str, line: usize, what: &str, s: &str) -> Result<T, ImportError> {
    s.trim().parse::<T>().map_err(|_| ImportError::line(file, line, what, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_format_lists_the_known_ones() {
        let e = format("iperf").err().unwrap().to_string();
        assert!(e.contains("iperf") && e.contains("fio, cyclictest, rtla-timerlat"), "{e}");
    }

    #[test]
    fn exact_values_override_and_percentiles_stay_inside() {
        let c = class_from_buckets(
            "f",
            "c",
            &[(1000, 10), (2000, 80), (9000, 10)],
            Exact { min: Some(1200), max: Some(8500), mean: Some(2500.5), resolution: 1000, ..Default::default() },
        )
        .unwrap();
        let s = c.summary;
        assert_eq!((s.count, s.min, s.max, s.mean), (100, 1200, 8500, 2500.5));
        assert!(s.p50 >= 1999 && s.p50 <= 2001 && s.p9999 == 8500, "{s:?}");
    }
}

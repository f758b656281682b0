//! What `irqlab run` measures, planned before anything runs: the points of a run, from a
//! benchmark subcommand's flags or from a matrix file, with `--set` overrides and `--config`
//! selection. Pure (reads one file, touches no VM), so it builds and tests on every target.
//!
//! Every source of settings is a `[run]`-style table, merged in this order (later wins): the
//! command-line flags, the matrix file's `[run]`, one value of each `[sweep]` list, `--set`. The
//! merged table is read once, strictly ([`RunTable`], unknown keys refused), so a typo in a file
//! or in `--set` is an error naming the key, with a did-you-mean, never a silently ignored knob.
//!
//! Matrix file format (`irqlab run --matrix FILE`):
//! ```toml
//! name = "device-paths"        # optional: the output directory is out/<name> (default: file stem)
//! [run]                        # any key of RUN_KEYS, as the flags spell them with `_`
//! bench = "device"             # timer | ipi | device
//! samples = 10000
//! period_us = 100
//! [sweep]                      # each key: a list; every combination is one point
//! via = ["irqfd", "msi", "line", "level"]
//! ```
//! A point is named after its sweep values (`via=msi`), or after the file when there is no sweep;
//! a value given twice in one sweep list is refused (two points of one name). The file is read
//! with the bounded reader ([`results::read_text_capped`]); the plan's name is returned as the
//! file wrote it (the CLI makes it a directory name, as it does for a scenario's name).
//!
//! The sweep is expanded by the one sweep engine of the shared vocabulary
//! ([`results::vocab::sweep::Axes`], which `sim`'s scenarios use too: the same order, first axis
//! slowest, and the same `key=value` names as a scenario's points); what a combination is applied
//! to is a `[run]` table here, read strictly, not a scenario document (whose points drop the
//! document keys `sweep`, `configs`, `reference`, `question` and derive per-point seeds a
//! measured run has no use for). The value parser and the did-you-mean are the vocabulary's too,
//! so `kvm` does not depend on the simulator.
//!
//! Layer: contracts and data (it reads only [`crate::config`] and [`crate::abi`]).
use std::collections::BTreeMap;

use results::vocab::sweep::{did_you_mean, parse_value, show, Axes};
use serde::{Deserialize, Serialize};

use crate::config::BenchConfig;

/// Bound on a matrix file (a scenario file's bound, `sim::scenario::MAX_SCENARIO_BYTES`: a
/// matrix is a few hundred bytes).
pub const MAX_MATRIX_BYTES: u64 = 4 << 20;

/// Most points one matrix file may make: each is at least one VM boot, and a sweep whose product
/// is larger was a typo, not a plan (checked before any point is built).
pub const MAX_POINTS: usize = 10_000;

/// The keys a `[run]` table, a `[sweep]` and `--set` may name.
pub const RUN_KEYS: &[&str] = &[
    "bench",
    "samples",
    "duration",
    "warmup",
    "period_us",
    "period_cycles",
    "wait",
    "via",
    "pv_ipi",
    "halt_poll_ns",
    "disable_hlt_exits",
    "vcpus",
    "pin",
    "stall_timeout_s",
    "stop_above_us",
    "priority",
    "mlock",
    "gicv4",
    "vfio_device",
    "vfio_trigger",
    "ipi_target",
];

/// Samples kept when neither `samples` nor `duration` is given.
pub const DEFAULT_SAMPLES: u64 = 10_000;

/// The benchmark vocabulary (one definition, `results::vocab`, with serde and clap on it).
pub use results::vocab::{Bench, OnOff, Via, Wait};

/// Why a run cannot be planned, or why one of its points cannot run; the text names the flag,
/// the file and the key.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A `--set KEY=VALUE` that is not a run setting or not a value.
    #[error("--set {0}")]
    Set(String),
    /// A merged `[run]` table with an unknown key or a value of the wrong type.
    #[error("{0}")]
    Table(String),
    /// A value that reads but does not make a configuration (`--pin`, `--duration`, …).
    #[error("{0}")]
    Config(String),
    /// A point of a matrix file that cannot run: the file, then why.
    #[error("{file}: {source}")]
    Point { file: String, source: Box<PlanError> },
    /// The matrix file cannot be read.
    #[error(transparent)]
    Read(#[from] results::ResultsError),
    /// The matrix file, its `[sweep]` or `--config` are wrong (the message names the key).
    #[error("{0}")]
    Matrix(String),
}

/// Host CPUs: a list (`[0, 1]`) or a cpuset string (`"0-1,3"`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum PinSpec {
    List(Vec<usize>),
    Text(String),
}

/// One point's settings; every field optional (defaults apply when building the config).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunTable {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bench: Option<Bench>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
    /// `30s`, `10m`, `1h` (humantime).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_cycles: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<Wait>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pv_ipi: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halt_poll_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_hlt_exits: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vcpus: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<PinSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_timeout_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_above_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mlock: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gicv4: Option<OnOff>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vfio_device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vfio_trigger: Option<results::vocab::VfioTrigger>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipi_target: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    #[serde(default)]
    name: Option<String>,
    run: toml::Table,
    #[serde(default)]
    sweep: toml::Table,
}

/// A point: its name and its configuration, or why it cannot run.
pub type Point = (String, Result<BenchConfig, PlanError>);

/// `0-1,3` → [0, 1, 3]: the cpuset list syntax of `taskset -c` and cyclictest `-a`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, PlanError> {
    let bad = || PlanError::Config(format!("`{s}` is not a CPU list (e.g. 0-1, 0,2 or 0-1,3)"));
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
        if a > b || b - a > 4096 {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    Ok(out)
}

/// Parse `--set KEY=VALUE` for a run: KEY is a `[run]` key (optionally written `run.KEY`), the
/// value is read as `irqlab sim --set` reads it.
pub fn parse_run_set(arg: &str) -> Result<(String, toml::Value), PlanError> {
    let err = PlanError::Set;
    let (key, raw) = arg.split_once('=').ok_or_else(|| err(format!("`{arg}`: expected KEY=VALUE (e.g. samples=1000)")))?;
    let key = key.trim();
    let key = key.strip_prefix("run.").unwrap_or(key);
    if !RUN_KEYS.contains(&key) {
        return Err(err(format!("`{key}`: not a run setting{}; expected one of {}", did_you_mean(key, RUN_KEYS.iter().copied()), RUN_KEYS.join(", "))));
    }
    let value = parse_value(key, raw).map_err(|e| err(e.to_string()))?;
    Ok((key.to_string(), value))
}

/// Read a merged table strictly: unknown keys and wrong types are errors naming the key.
fn read_table(t: toml::Table) -> Result<RunTable, PlanError> {
    if let Some(k) = t.keys().find(|k| !RUN_KEYS.contains(&k.as_str())) {
        return Err(PlanError::Table(format!("[run]: unknown key `{k}`{}; expected one of {}", did_you_mean(k, RUN_KEYS.iter().copied()), RUN_KEYS.join(", "))));
    }
    for (k, v) in &t {
        let one = toml::Table::from_iter([(k.clone(), v.clone())]);
        if RunTable::deserialize(toml::Value::Table(one)).is_err() {
            return Err(PlanError::Table(format!("[run] `{k}`: expected {}, got {}", expected(k), v)));
        }
    }
    RunTable::deserialize(toml::Value::Table(t)).map_err(|e| PlanError::Table(format!("[run]: {}", e.message().trim())))
}

/// What a `[run]` key takes, in words.
fn expected(key: &str) -> &'static str {
    match key {
        "bench" => "timer, ipi or device",
        "wait" => "hlt (or its arm64 name wfi) or busy",
        "gicv4" => "on or off",
        "via" => "irqfd, msi, line, level, vfio-msi or vfio-intx",
        "vfio_trigger" => "raise or dma",
        "vfio_device" => "a PCI address such as \"0000:00:02.0\" or its /sys/bus/pci/devices path",
        "duration" => "a duration such as \"30s\" or \"10m\"",
        "pin" => "host CPUs, as \"0-1,3\" or [0, 1]",
        "pv_ipi" | "disable_hlt_exits" | "mlock" => "true or false",
        "period_us" | "stall_timeout_s" | "stop_above_us" => "a number",
        "priority" => "a whole number (SCHED_FIFO priority)",
        _ => "a whole number ≥ 0",
    }
}

/// The benchmark configuration a merged table describes (defaults for what it leaves out).
pub fn config_from(t: &RunTable) -> Result<BenchConfig, PlanError> {
    let kind = t.bench.unwrap_or(Bench::Timer);
    let duration = match &t.duration {
        None => None,
        Some(d) => Some(humantime::parse_duration(d).map_err(|e| PlanError::Config(format!("--duration: `{d}`: {e} (expected e.g. 30s, 10m, 1h)")))?),
    };
    let stop_above_ns = match t.stop_above_us {
        None => None,
        Some(us) if us.is_finite() && us > 0.0 && us <= 1e8 => Some((us * 1000.0).round() as u64),
        Some(us) => return Err(PlanError::Config(format!("--stop-above: expected a latency above 0 and at most 100 s, in µs; got {us}"))),
    };
    let pin = match &t.pin {
        None => Vec::new(),
        Some(PinSpec::List(v)) => v.clone(),
        Some(PinSpec::Text(s)) => parse_cpu_list(s).map_err(|e| PlanError::Config(format!("--pin: {e}")))?,
    };
    let default = BenchConfig::default();
    Ok(BenchConfig {
        kind,
        samples: t.samples.unwrap_or(if duration.is_some() { crate::abi::MAX_SAMPLES } else { DEFAULT_SAMPLES }),
        warmup: t.warmup.unwrap_or(default.warmup),
        period_us: t.period_us.unwrap_or(default.period_us),
        period_cycles: t.period_cycles,
        wait: t.wait.unwrap_or(Wait::Hlt),
        via: t.via.unwrap_or(Via::Irqfd),
        pv_ipi: t.pv_ipi.unwrap_or(false),
        halt_poll_ns: t.halt_poll_ns,
        disable_hlt_exits: t.disable_hlt_exits.unwrap_or(false),
        vcpus: t.vcpus.unwrap_or(if kind == Bench::Ipi { 2 } else { 1 }),
        pin,
        stall_timeout: crate::config::stall_timeout_from_secs(t.stall_timeout_s.unwrap_or(5.0)).map_err(|e| PlanError::Config(e.to_string()))?,
        duration,
        stop_above_ns,
        priority: t.priority,
        mlock: t.mlock.unwrap_or(false),
        gicv4: t.gicv4.map(|g| g == OnOff::On),
        vfio_device: t.vfio_device.clone(),
        vfio_trigger: t.vfio_trigger.unwrap_or_default(),
        ipi_target: t.ipi_target,
    })
}

fn to_table(t: &RunTable) -> toml::Table {
    toml::Table::try_from(t).expect("a RunTable serialises to a table")
}

/// The points of a run. `flags`: the command line's settings (the benchmark subcommand's, or the
/// defaults under `--matrix`); `matrix`: the matrix file; `sets`: `--set` overrides; `configs`:
/// `--config` names to keep. Returns the run's name (the matrix file's `name` as written, its stem,
/// or `run-<bench>`) and its points.
pub fn points(flags: &RunTable, matrix: Option<&std::path::Path>, sets: &[String], configs: &[String]) -> Result<(String, Vec<Point>), PlanError> {
    let sets = sets.iter().map(|s| parse_run_set(s)).collect::<Result<Vec<_>, _>>()?;
    let Some(path) = matrix else {
        let mut t = to_table(flags);
        t.extend(sets);
        let bench = match flags.bench {
            Some(Bench::Ipi) => "ipi",
            Some(Bench::Device) => "device",
            _ => "timer",
        };
        let cfg = read_table(t).and_then(|t| config_from(&t));
        return Ok((format!("run-{bench}"), vec![(bench.to_string(), cfg)]));
    };
    let file = path.display().to_string();
    let text = results::read_text_capped(path, MAX_MATRIX_BYTES)?;
    let m: MatrixFile = toml::from_str(&text).map_err(|e| PlanError::Matrix(format!("{file}: {}{}", at_line(&text, e.span()), e.message().trim())))?;
    if let Some((k, _)) = sets.iter().find(|(k, _)| m.sweep.contains_key(k)) {
        return Err(PlanError::Matrix(format!("--set {k}: {file} sweeps `{k}`; pick its points with --config instead")));
    }
    let mut axes: Vec<(String, Vec<toml::Value>)> = Vec::with_capacity(m.sweep.len());
    for (k, v) in &m.sweep {
        let vals = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| PlanError::Matrix(format!("{file}: key `sweep.{k}`: expected a non-empty array")))?;
        if !RUN_KEYS.contains(&k.as_str()) {
            return Err(PlanError::Matrix(format!("{file}: key `sweep.{k}`: not a run setting{}", did_you_mean(k, RUN_KEYS.iter().copied()))));
        }
        if let Some(dup) = vals.iter().enumerate().find_map(|(i, v)| vals[..i].iter().any(|w| show(w) == show(v)).then(|| show(v))) {
            return Err(PlanError::Matrix(format!(
                "{file}: key `sweep.{k}`: value `{dup}` appears twice; each value of a sweep is one point, and two points with one name cannot be told apart"
            )));
        }
        axes.push((k.clone(), vals.clone()));
    }
    let axes = Axes(&axes);
    let n = axes.combos().filter(|n| *n <= MAX_POINTS).ok_or_else(|| PlanError::Matrix(format!("{file}: `[sweep]` makes more than {MAX_POINTS} points")))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let mut pts: Vec<Point> = (0..n)
        .map(|i| {
            let combo = axes.combo(i);
            let mut table = to_table(flags);
            table.extend(m.run.clone());
            let label = Axes::label(&combo);
            table.extend(combo.into_iter().map(|(k, v)| (k.to_string(), v.clone())));
            table.extend(sets.iter().cloned());
            let name = if label.is_empty() { stem.clone() } else { label.join(", ") };
            let cfg = read_table(table).and_then(|t| config_from(&t)).map_err(|e| PlanError::Point { file: file.clone(), source: Box::new(e) });
            (name, cfg)
        })
        .collect();
    if !configs.is_empty() {
        let names: Vec<String> = pts.iter().map(|p| p.0.clone()).collect();
        if let Some(c) = configs.iter().find(|c| !names.contains(c)) {
            return Err(PlanError::Matrix(format!(
                "--config `{c}`: {file} has no such point{}; its points: {}",
                did_you_mean(c, names.iter().map(String::as_str)),
                names.join(" | ")
            )));
        }
        pts.retain(|p| configs.contains(&p.0));
    }
    Ok((m.name.unwrap_or(stem), pts))
}

/// "line 3 (`samples = 9223372036854775808`): " for a TOML error's span, so that a value the
/// parser rejects (an integer above i64::MAX) is shown with its key.
fn at_line(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(start) = span.map(|s| s.start.min(text.len())) else { return String::new() };
    let line = text[..start].matches('\n').count() + 1;
    let content = text.lines().nth(line - 1).unwrap_or("").trim();
    let content: String = content.chars().take(80).collect();
    format!("line {line} (`{content}`): ")
}

/// The settings recorded with a run's provenance: each `--set`, by key.
pub fn set_details(sets: &[String]) -> BTreeMap<String, String> {
    sets.iter().filter_map(|s| parse_run_set(s).ok()).map(|(k, v)| (format!("set.{k}"), show(&v))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_take_ranges_and_lists() {
        assert_eq!(parse_cpu_list("0-1").unwrap(), [0, 1]);
        assert_eq!(parse_cpu_list("0,2").unwrap(), [0, 2]);
        assert_eq!(parse_cpu_list("0-2, 5").unwrap(), [0, 1, 2, 5]);
        for bad in ["", "a", "1-0", "0-", "-1", "0-99999"] {
            assert!(parse_cpu_list(bad).unwrap_err().to_string().contains("is not a CPU list"), "{bad}");
        }
    }

    #[test]
    fn every_run_key_is_a_field() {
        // A value of the wrong type for each key must be refused for its type, not as unknown.
        for k in RUN_KEYS {
            let mut t = toml::Table::new();
            t.insert(k.to_string(), toml::Value::Table(toml::Table::new()));
            let e = read_table(t).unwrap_err().to_string();
            assert!(e.starts_with(&format!("[run] `{k}`: expected ")), "{k}: {e}");
        }
        let round = to_table(&RunTable { bench: Some(Bench::Ipi), pin: Some(PinSpec::Text("0-1".into())), ..Default::default() });
        assert_eq!(round.len(), 2);
    }

    #[test]
    fn set_keys_are_checked_typed_and_suggested() {
        assert_eq!(parse_run_set("samples=100").unwrap(), ("samples".into(), toml::Value::Integer(100)));
        assert_eq!(parse_run_set("run.via=msi").unwrap().1, toml::Value::String("msi".into()));
        let e = parse_run_set("sampels=100").unwrap_err().to_string();
        assert!(e.starts_with("--set `sampels`: not a run setting, did you mean `samples`?"), "{e}");
        let flags = RunTable { bench: Some(Bench::Timer), ..Default::default() };
        let (_, pts) = points(&flags, None, &["samples=\"many\"".into()], &[]).unwrap();
        assert_eq!(pts[0].1.as_ref().unwrap_err().to_string(), "[run] `samples`: expected a whole number ≥ 0, got \"many\"");
        assert_eq!(expected("gicv4"), "on or off", "each key's message names what it takes");
        let (_, pts) = points(&flags, None, &["pin=0-1".into(), "duration=30s".into()], &[]).unwrap();
        let c = pts[0].1.as_ref().unwrap();
        assert_eq!((c.pin.clone(), c.duration, c.samples), (vec![0, 1], Some(std::time::Duration::from_secs(30)), crate::abi::MAX_SAMPLES));
    }

    #[test]
    fn matrix_points_sets_and_config_selection() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("m.toml");
        std::fs::write(&f, "[run]\nbench = \"device\"\nsamples = 100\n[sweep]\nvia = [\"msi\", \"line\"]\n").unwrap();
        let flags = RunTable::default();
        let (name, pts) = points(&flags, Some(&f), &["samples=7".into()], &[]).unwrap();
        assert_eq!(name, "m");
        assert_eq!(pts.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(), ["via=msi", "via=line"]);
        assert!(pts.iter().all(|p| p.1.as_ref().unwrap().samples == 7), "--set beats [run]");
        let (_, pts) = points(&flags, Some(&f), &[], &["via=line".into()]).unwrap();
        assert_eq!(pts.len(), 1);
        assert_eq!(pts[0].1.as_ref().unwrap().via, Via::Line);
        let e = points(&flags, Some(&f), &[], &["via=lin".into()]).unwrap_err().to_string();
        assert!(e.contains("no such point, did you mean `via=line`?") && e.contains("via=msi | via=line"), "{e}");
        let e = points(&flags, Some(&f), &["via=msi".into()], &[]).unwrap_err().to_string();
        assert!(e.contains("sweeps `via`"), "{e}");
        std::fs::write(&f, "[run]\nbench = \"timer\"\nperiod = 5\n").unwrap();
        let (_, pts) = points(&flags, Some(&f), &[], &[]).unwrap();
        let e = pts[0].1.as_ref().unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}: [run]: unknown key", f.display())), "{e}");
        assert!(e.contains("unknown key `period`, did you mean `period_us`?"), "{e}");
    }

    #[test]
    fn matrix_names_as_written_duplicates_and_huge_integers_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("m.toml");
        let flags = RunTable::default();
        // The name as the file wrote it (the CLI sanitises it into a directory name), else the stem.
        std::fs::write(&f, "name = \"../x\"\n[run]\nbench = \"timer\"\n").unwrap();
        assert_eq!(points(&flags, Some(&f), &[], &[]).unwrap().0, "../x");
        std::fs::write(&f, "[run]\nbench = \"timer\"\n").unwrap();
        assert_eq!(points(&flags, Some(&f), &[], &[]).unwrap().0, "m");
        assert_eq!(points(&RunTable { bench: Some(Bench::Ipi), ..Default::default() }, None, &[], &[]).unwrap().0, "run-ipi");
        std::fs::write(&f, "[run]\nbench = \"device\"\n[sweep]\nvia = [\"msi\", \"line\", \"msi\"]\n").unwrap();
        let e = points(&flags, Some(&f), &[], &[]).unwrap_err().to_string();
        assert!(e.contains("key `sweep.via`: value `msi` appears twice"), "{e}");
        std::fs::write(&f, "[run]\nbench = \"device\"\n[sweep]\nvias = [\"msi\"]\n").unwrap();
        let e = points(&flags, Some(&f), &[], &[]).unwrap_err().to_string();
        assert!(e.contains("key `sweep.vias`: not a run setting, did you mean `via`?"), "{e}");
        std::fs::write(&f, "[run]\nbench = \"device\"\n[sweep]\nvia = []\n").unwrap();
        let e = points(&flags, Some(&f), &[], &[]).unwrap_err().to_string();
        assert!(e.contains("key `sweep.via`: expected a non-empty array"), "{e}");
        std::fs::write(&f, "[run]\nbench = \"timer\"\nsamples = 9223372036854775808\n").unwrap();
        let e = points(&flags, Some(&f), &[], &[]).unwrap_err().to_string();
        assert!(e.contains("line 3 (`samples = 9223372036854775808`)"), "{e}");
        // 101 × 100 points: refused before any is built (each would be a VM boot).
        let many = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        std::fs::write(&f, format!("[run]\nbench = \"timer\"\n[sweep]\nsamples = [{}]\nwarmup = [{}]\n", many(101), many(100))).unwrap();
        let e = points(&flags, Some(&f), &[], &[]).unwrap_err().to_string();
        assert!(e.contains("`[sweep]` makes more than 10000 points"), "{e}");
    }

    /// A matrix's points come in the order and with the names of `sim`'s expansion of the same
    /// axes (one sweep engine): the first axis slowest.
    #[test]
    fn matrix_points_follow_the_shared_sweep_engine() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("m.toml");
        std::fs::write(&f, "[run]\nbench = \"device\"\n[sweep]\nvia = [\"msi\", \"line\"]\nwait = [\"hlt\", \"busy\"]\n").unwrap();
        let names: Vec<String> = points(&RunTable::default(), Some(&f), &[], &[]).unwrap().1.into_iter().map(|p| p.0).collect();
        assert_eq!(names, ["via=msi, wait=hlt", "via=msi, wait=busy", "via=line, wait=hlt", "via=line, wait=busy"]);
        let axes = [("via".to_string(), vec!["msi".into(), "line".into()]), ("wait".to_string(), vec!["hlt".into(), "busy".into()])];
        let shared: Vec<String> = (0..4).map(|i| Axes::label(&Axes(&axes).combo(i)).join(", ")).collect();
        assert_eq!(names, shared);
    }

    #[test]
    fn the_shipped_example_matrix_is_valid() {
        let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-matrix.toml");
        // A matrix of two axes: the first key varies slowest, as in `sim`'s sweeps.
        let (name, pts) = points(&RunTable::default(), Some(&f), &[], &[]).unwrap();
        assert_eq!(name, "device-paths");
        assert_eq!(pts.len(), 8);
        for (n, c) in &pts {
            let c = c.as_ref().unwrap_or_else(|e| panic!("{n}: {e}"));
            assert!(c.validate(&[0]).is_ok() && c.kind == Bench::Device, "{n}");
        }
        assert_eq!(pts[0].0, "via=irqfd, halt_poll_ns=0", "named in the file's order");
    }
}

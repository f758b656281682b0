//! `irqlab run`: real measurements on this host's KVM with the micro-VMM (crate `kvm`).
//!
//! Two forms: flags (`irqlab run timer --samples 10000 --period-us 77`) or a matrix file
//! (`irqlab run matrix.toml`) whose `[run]` table sets the flags and whose `[sweep]` lists values
//! per flag; its points run one after another (measurements must not disturb each other), and a
//! point that fails keeps its error while the others' results are written.
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use kvm::{BenchConfig, BenchKind, DeviceVia, WaitMode};
use results::{ConfigResult, ResultKind, RunMeta, RunResult};
use serde::Deserialize;

use crate::output::{check_output_dir, print, write_files, Format};
use crate::term::{note, out};
use crate::progress::Progress;
use crate::{CliError, Outcome};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bench {
    Timer,
    Ipi,
    Device,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Wait {
    Hlt,
    Busy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    Irqfd,
    Msi,
    Line,
    Level,
}

#[derive(Args)]
pub struct RunArgs {
    /// timer, ipi, device — or a matrix file (.toml) with [run] and [sweep] tables.
    pub what: String,
    #[arg(long, default_value_t = 10_000)]
    pub samples: u64,
    /// Samples excluded from warm max.
    #[arg(long, default_value_t = 1)]
    pub warmup: u64,
    /// Period between samples (timer: how far ahead the deadline is), µs.
    #[arg(long, default_value_t = 77.0)]
    pub period_us: f64,
    /// Period in TSC cycles (overrides --period-us), as tscdeadline_latency's `delta`.
    #[arg(long)]
    pub period_cycles: Option<u64>,
    #[arg(long, value_enum, default_value_t = Wait::Hlt)]
    pub wait: Wait,
    #[arg(long, value_enum, default_value_t = Via::Irqfd)]
    pub via: Via,
    /// Also probe the PV IPI hypercall (ipi).
    #[arg(long)]
    pub pv_ipi: bool,
    /// KVM_CAP_HALT_POLL for this VM, ns (default: the host's).
    #[arg(long)]
    pub halt_poll_ns: Option<u64>,
    /// Ask KVM to stop HLT exits (KVM_CAP_X86_DISABLE_EXITS); the result says whether it worked.
    #[arg(long)]
    pub disable_hlt_exits: bool,
    /// vCPUs (ipi needs 2).
    #[arg(long)]
    pub vcpus: Option<u32>,
    /// Host CPU per vCPU thread, comma-separated (e.g. 0,1).
    #[arg(long, value_delimiter = ',')]
    pub pin: Vec<usize>,
    /// Watchdog: stop a run that makes no progress for this many seconds.
    #[arg(long, default_value_t = 5.0)]
    pub stall_timeout_s: f64,
    /// Split each sample into host-side segments from KVM/timer/sched trace events (needs tracefs;
    /// as root irqlab mounts it). Also runs once untraced to state the tracing overhead.
    #[arg(long)]
    pub breakdown: bool,
    /// With --breakdown: print this many sample paths.
    #[arg(long, default_value_t = 0, requires = "breakdown")]
    pub trace: usize,
    /// Output directory (default: out/run-<bench>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// The `[run]` table of a matrix file: the same knobs as the flags.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RunTable {
    bench: Option<Bench>,
    samples: Option<u64>,
    warmup: Option<u64>,
    period_us: Option<f64>,
    period_cycles: Option<u64>,
    wait: Option<Wait>,
    via: Option<Via>,
    pv_ipi: Option<bool>,
    halt_poll_ns: Option<u64>,
    disable_hlt_exits: Option<bool>,
    vcpus: Option<u32>,
    pin: Option<Vec<usize>>,
    stall_timeout_s: Option<f64>,
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

fn config_from(t: &RunTable, flags: &RunArgs) -> Result<BenchConfig, kvm::ConfigError> {
    let kind = match t.bench {
        Some(Bench::Timer) | None => BenchKind::Timer,
        Some(Bench::Ipi) => BenchKind::Ipi,
        Some(Bench::Device) => BenchKind::Device,
    };
    Ok(BenchConfig {
        kind,
        samples: t.samples.unwrap_or(flags.samples),
        warmup: t.warmup.unwrap_or(flags.warmup),
        period_us: t.period_us.unwrap_or(flags.period_us),
        period_cycles: t.period_cycles.or(flags.period_cycles),
        wait: match t.wait.unwrap_or(flags.wait) {
            Wait::Hlt => WaitMode::Hlt,
            Wait::Busy => WaitMode::Busy,
        },
        via: match t.via.unwrap_or(flags.via) {
            Via::Irqfd => DeviceVia::Irqfd,
            Via::Msi => DeviceVia::Msi,
            Via::Line => DeviceVia::Line,
            Via::Level => DeviceVia::Level,
        },
        pv_ipi: t.pv_ipi.unwrap_or(flags.pv_ipi),
        halt_poll_ns: t.halt_poll_ns.or(flags.halt_poll_ns),
        disable_hlt_exits: t.disable_hlt_exits.unwrap_or(flags.disable_hlt_exits),
        vcpus: t.vcpus.or(flags.vcpus).unwrap_or(if kind == BenchKind::Ipi { 2 } else { 1 }),
        pin: t.pin.clone().unwrap_or_else(|| flags.pin.clone()),
        stall_timeout: kvm::config::stall_timeout_from_secs(t.stall_timeout_s.unwrap_or(flags.stall_timeout_s))?,
    })
}

/// (point name, config or the error that makes it impossible).
fn points(a: &RunArgs) -> Result<(String, Vec<(String, Result<BenchConfig, String>)>), CliError> {
    if !a.what.ends_with(".toml") {
        let bench = Bench::from_str(&a.what, true).map_err(|_| {
            CliError(format!("irqlab run: `{}` is neither timer, ipi, device nor a .toml matrix file", a.what))
        })?;
        let t = RunTable { bench: Some(bench), ..Default::default() };
        let cfg = config_from(&t, a)?;
        return Ok((format!("run-{}", a.what), vec![(a.what.clone(), Ok(cfg))]));
    }
    let file = &a.what;
    let text = std::fs::read_to_string(file).map_err(|e| CliError(format!("{file}: cannot read: {e}")))?;
    let m: MatrixFile = toml::from_str(&text).map_err(|e| CliError(format!("{file}: {e}")))?;
    let mut combos: Vec<Vec<(String, toml::Value)>> = vec![vec![]];
    for (k, v) in &m.sweep {
        let vals = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| CliError(format!("{file}: key `sweep.{k}`: expected a non-empty array")))?;
        combos = combos
            .into_iter()
            .flat_map(|c| vals.iter().map(move |x| {
                let mut c = c.clone();
                c.push((k.clone(), x.clone()));
                c
            }))
            .collect();
    }
    let stem = std::path::Path::new(file).file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let pts = combos
        .into_iter()
        .map(|combo| {
            let mut table = m.run.clone();
            let mut label = Vec::new();
            for (k, v) in &combo {
                table.insert(k.clone(), v.clone());
                label.push(format!("{k}={}", v.as_str().map(String::from).unwrap_or_else(|| v.to_string())));
            }
            let name = if label.is_empty() { stem.clone() } else { label.join(", ") };
            let cfg = parse_run_table(table)
                .and_then(|t| config_from(&t, a).map_err(|e| format!("[run]: {e}")))
                .map_err(|e| format!("{file}: {e}"));
            (name, cfg)
        })
        .collect();
    Ok((m.name.unwrap_or(stem), pts))
}

fn parse_run_table(t: toml::Table) -> Result<RunTable, String> {
    RunTable::deserialize(toml::Value::Table(t)).map_err(|e| format!("[run]: {e}"))
}

pub fn run(a: RunArgs) -> Result<Outcome, CliError> {
    let (scenario, pts) = points(&a)?;
    let cpus = kvm::config::allowed_cpus();
    // Impossible combinations are usage errors before anything runs: in the flag form, and when
    // no point of a matrix file could run. Nothing is written then.
    let pts: Vec<(String, Result<BenchConfig, String>)> = pts
        .into_iter()
        .map(|(n, c)| (n, c.and_then(|c| c.validate(&cpus).map(|_| c).map_err(|e| e.to_string()))))
        .collect();
    if pts.iter().all(|p| p.1.is_err()) {
        let mut reasons: Vec<&str> = pts.iter().filter_map(|p| p.1.as_ref().err().map(String::as_str)).collect();
        reasons.dedup();
        return Err(CliError(reasons.join("\n  ")));
    }
    let dir = a.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&scenario));
    check_output_dir(&dir)?;
    if let Err(why) = kvm::kvm_available() {
        return Err(CliError(format!("irqlab run needs KVM: {why}")));
    }
    if a.breakdown {
        crate::run_breakdown::check(pts.iter().find_map(|p| p.1.as_ref().ok()))?;
    }
    let dir = a.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&scenario));
    let host = kvm::host_description();
    let mut result = RunResult::new(RunMeta {
        tool_version: sim::runner::TOOL_VERSION.into(),
        scenario: scenario.clone(),
        description: format!("measured with the irqlab micro-VMM on {}", host.get("host.hostname").cloned().unwrap_or_default()),
        seed: 0,
        kind: ResultKind::Measured,
        platform: host,
        knobs: BTreeMap::new(),
    });
    let progress = Progress::new(&scenario);
    progress.set_total(pts.iter().map(|p| p.1.as_ref().map_or(0, |c| c.samples)).sum());
    for (name, cfg) in pts {
        let cr = match cfg {
            Err(e) => ConfigResult::failed(name.clone(), BTreeMap::new(), e),
            Ok(cfg) => {
                let mut cr = if a.breakdown {
                    crate::run_breakdown::measure(&cfg, &name, &|n| progress.inc(n), a.trace, &dir)
                } else {
                    match kvm::run_bench(&cfg, &|n| progress.inc(n)) {
                        Ok(m) => m.to_config_result(&name),
                        Err(e) => ConfigResult::failed(name.clone(), BTreeMap::new(), e.to_string()),
                    }
                };
                if cfg.pv_ipi {
                    let verdict = kvm::probe_pv_ipi(Duration::from_secs(2)).unwrap_or_else(|e| format!("probe failed: {e}"));
                    cr.notes.push(format!("PV IPI: {verdict}"));
                }
                cr
            }
        };
        result.configs.push(cr);
    }
    progress.finish();
    let json = write_files(&dir, &result)?;
    print(&result, a.format)?;
    let notes: Vec<String> = result.configs.iter().flat_map(|c| c.notes.iter().map(move |n| format!("[{}] {n}", c.name))).collect();
    let extra = format!(
        "\nhost: {} | kernel {} | KVM {} | guest ring 0: {}\n{}\n",
        result.meta.platform.get("host.cpu_model").cloned().unwrap_or_default(),
        result.meta.platform.get("host.kernel").cloned().unwrap_or_default(),
        result.meta.platform.get("host.kvm_modules").cloned().unwrap_or_default(),
        result.meta.platform.get("host.guest_ring0").cloned().unwrap_or_default(),
        notes.join("\n")
    );
    if a.format == Format::Table {
        out(&extra)?;
        let counters = report::table::counters_table(&result);
        if !counters.is_empty() {
            out(&format!("\n{counters}\n"))?;
        }
    } else {
        note(&extra);
    }
    note(&format!("wrote {} and result.csv\n", json.display()));
    let failed: Vec<_> = result.failures().collect();
    for (n, e) in &failed {
        note(&format!("irqlab: run `{n}` failed: {e}\n"));
    }
    if failed.is_empty() {
        Ok(Outcome::Ok)
    } else if failed.len() == result.configs.len() && result.configs.iter().all(|c| c.classes.is_empty()) {
        Err(CliError("every run failed".into()))
    } else {
        Ok(Outcome::Partial)
    }
}

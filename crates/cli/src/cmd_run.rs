//! `irqlab run`: real measurements on this host's KVM with the micro-VMM (crate `kvm`), with the
//! conventions of cyclictest and rtla (µs by default, `--duration`, `--stop-above` like `-b`,
//! `-h`-style histogram, `--priority`/`--mlock`, per-sample output).
//!
//! Two forms: a benchmark subcommand (`irqlab run timer --samples 10000`) or a matrix file
//! (`irqlab run --matrix FILE`, format in [`kvm::plan`]) whose points run one after
//! another (measurements must not disturb each other); a point that fails keeps its error while
//! the others' results are written. An existing output directory with results is not replaced
//! without `--force`. The measuring is [`kvm::session`]'s; this module parses the flags, checks
//! and writes the output files, drives the progress bar and prints.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use results::{ResultKind, RunMeta, RunResult};

use crate::cmd_run_show::{self as show, RunUnit};
use crate::output::file::{Artefact, Target};
use crate::output::{check_output_dir_forced, print, write_files_forced, Format};
use crate::progress::Progress;
use crate::term::{note, out};
use crate::{CliError, Outcome};
use kvm::plan::{Bench, OnOff, PinSpec, RunTable, Via, Wait};
use kvm::session;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, arg_required_else_help = true)]
pub struct RunArgs {
    #[command(subcommand)]
    pub bench: Option<RunCmd>,
    /// Run every point of a matrix file: a `[run]` table of settings (the flags' names with `_`,
    /// plus `bench`, `wait`, `via`, `pv_ipi`) and a `[sweep]` table of lists; see the README.
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
    /// With --matrix: run only these points, by name (`via=msi`; repeatable).
    #[arg(long = "config", value_name = "NAME", requires = "matrix")]
    pub configs: Vec<String>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Subcommand)]
pub enum RunCmd {
    /// TSC-deadline timer latency: the guest arms its LAPIC timer (TSC-deadline mode) one period
    /// ahead and records arrival − deadline in its handler, as kvm-unit-tests'
    /// tscdeadline_latency does. Negative values are early arrivals (lapic_timer_advance).
    Timer {
        /// How the guest waits for the interrupt.
        #[arg(long, value_enum, default_value_t = Wait::Hlt)]
        wait: Wait,
        #[command(flatten)]
        common: Common,
    },
    /// Inter-processor interrupt latency: vCPU 0 sends an x2APIC IPI to vCPU 1, which records the
    /// arrival and replies. ipi_one_way = arrival − send; ipi_round_trip = reply seen on vCPU 0 −
    /// send. Between round trips vCPU 0 pauses one period (--period-us, its TSC deadline) so that
    /// vCPU 1 is back in HLT: each IPI measures a wake-up from halt, not a running receiver.
    Ipi {
        /// Also probe the KVM PV IPI hypercall (KVM_HC_SEND_IPI), bounded by a timeout.
        #[arg(long)]
        pv_ipi: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Device interrupt latency: a host thread raises an interrupt every period and the guest's
    /// handler records its arrival; latency = guest TSC at the handler − host TSC at the trigger
    /// (the guest's TSC offset is checked first). arm64 only: `--via vfio-msi|vfio-intx` assigns a
    /// PCI device bound to vfio-pci (`--vfio-device`) and the guest raises its interrupt itself;
    /// latency = guest counter at the handler − guest counter before its register write, and the
    /// result counts how each MSI was delivered (GICv4 direct, doorbell, KVM's software path).
    Device {
        /// How the host raises the interrupt.
        #[arg(long, value_enum, default_value_t = Via::Irqfd)]
        via: Via,
        /// How the guest waits for the interrupt; `busy` only with --via vfio-msi|vfio-intx (the
        /// guest triggers the device itself, so it can spin while the interrupt comes).
        #[arg(long, value_enum)]
        wait: Option<Wait>,
        #[command(flatten)]
        common: Common,
    },
    /// The pieces the paths above are made of, each its own class [default: 2000 samples each]:
    /// guest-timed exit round trips (CPUID, WRMSR, ICR write to no one, port write to the VMM)
    /// and one emulated guest instruction; host-timed KVM_SIGNAL_MSI, KVM_IRQ_LINE and irqfd
    /// calls that deliver to no one; a halted vCPU woken by irqfd with halt polling off and on;
    /// eventfd and spin wake-ups of a host thread; hrtimer expiry (timerfd polled, nanosleep).
    /// `irqlab calibrate --primitives` composes the paths from them.
    Primitives {
        #[command(flatten)]
        common: Common,
    },
}

/// Flags every form of `irqlab run` takes.
#[derive(Args, Clone)]
pub struct Common {
    /// Samples to keep [default: 10000]. One more interrupt is taken first and discarded (its
    /// deadline was armed while the VM started), as kvm-unit-tests does.
    #[arg(long, conflicts_with = "duration", value_parser = whole)]
    pub samples: Option<u64>,
    /// Run for this long instead of a sample count (`30s`, `10m`, `1h`; at most 24h and
    /// 10,000,000 samples).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub duration: Option<Duration>,
    /// Kept samples left out of WARM_MAX (tbm's warm max) [default: 1].
    #[arg(long, value_parser = whole)]
    pub warmup: Option<u64>,
    /// Period between samples in µs: timer, how far ahead the deadline is; ipi, the pause between
    /// round trips; device, the gap between triggers [default: 77]. 77 µs takes 10,000 samples in
    /// about a second and does not divide the host's 1 or 4 ms tick, so samples drift across
    /// periodic host work instead of locking to it.
    #[arg(long)]
    pub period_us: Option<f64>,
    /// The period in TSC cycles instead (overrides --period-us), as tscdeadline_latency's `delta`.
    #[arg(long, value_parser = whole)]
    pub period_cycles: Option<u64>,
    /// KVM_CAP_HALT_POLL for this VM, ns [default: the host's halt_poll_ns].
    #[arg(long, value_parser = whole)]
    pub halt_poll_ns: Option<u64>,
    /// Ask KVM to stop HLT exits (KVM_CAP_X86_DISABLE_EXITS; x86 only); the result says whether
    /// it worked.
    #[arg(long)]
    pub disable_hlt_exits: bool,
    /// arm64 only: GICv4 direct vLPI injection on or off for the device MSIs, where the host
    /// allows the choice; refused with the reason where it does not.
    #[arg(long, value_enum, value_name = "on|off")]
    pub gicv4: Option<OnOff>,
    /// `--via vfio-msi|vfio-intx`: the PCI device bound to vfio-pci that the guest is given
    /// (`0000:00:02.0` or its /sys/bus/pci/devices path) [default: the only device bound to
    /// vfio-pci, if there is exactly one].
    #[arg(long, value_name = "PCI-ADDRESS")]
    pub vfio_device: Option<String>,
    /// `--via vfio-*` with QEMU's edu device: `raise` (write its raise register: the interrupt
    /// comes with the write) or `dma` (a DMA completion interrupt 100 ms of QEMU virtual time
    /// later, when the guest is waiting) [default: raise].
    #[arg(long, value_enum, value_name = "raise|dma")]
    pub vfio_trigger: Option<results::vocab::VfioTrigger>,
    /// vCPUs [default: 2 for ipi, else 1].
    #[arg(long)]
    pub vcpus: Option<u32>,
    /// ipi (arm64): the vCPU index the pings go to [default: 1]; with `--vcpus N` up to N − 1
    /// (KVM walks the VM's vCPUs to find an SGI's target: vgic_v3_dispatch_sgi).
    #[arg(long, value_name = "N")]
    pub ipi_target: Option<u32>,
    /// Host CPU of each vCPU thread, in vCPU order: a list or ranges (`0-1`, `0,1`, `2-3,5`).
    /// Unpinned runs record the CPUs the threads were seen on.
    #[arg(long, value_name = "CPUS")]
    pub pin: Option<String>,
    /// SCHED_FIFO priority (1-99) for the vCPU threads, as cyclictest -p; fails if not permitted.
    #[arg(long)]
    pub priority: Option<i32>,
    /// Lock all memory (mlockall) before the VM starts, as cyclictest -m; fails if not permitted.
    #[arg(long)]
    pub mlock: bool,
    /// Stop at the first sample above this latency (µs, or with a unit: `50us`, `50µs`, `0.05ms`,
    /// `50000ns`), as cyclictest -b: the sample is kept as the last one, named in the result, and
    /// the exit status is 3 (ipi: the one-way latency).
    #[arg(long, value_name = "US", value_parser = parse_latency_us)]
    pub stop_above: Option<f64>,
    /// Watchdog: stop a run that makes no progress for this many seconds [default: 5].
    #[arg(long)]
    pub stall_timeout_s: Option<f64>,
    /// Set a run setting by key, typed as in a matrix file's [run] table (`samples=1000`,
    /// `via=msi`, `pin=0-1`); applied last. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Split each sample into host-side segments from KVM/timer/sched trace events (needs tracefs;
    /// as root irqlab mounts it). Also runs once untraced to state the tracing overhead.
    #[arg(long)]
    pub breakdown: bool,
    /// With --breakdown: print this many sample paths.
    #[arg(long, default_value_t = 0, requires = "breakdown")]
    pub trace: usize,
    /// Print a histogram with this many 1 µs buckets, in cyclictest -h's layout, on stderr
    /// (stdout keeps the table alone).
    #[arg(long, value_name = "US_BUCKETS", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub histogram: Option<u32>,
    /// Write every kept sample to this file: `index<TAB>latency_ns` per line (ipi: one-way and
    /// round trip), the index counting arrivals from 0.
    #[arg(long, value_name = "FILE")]
    pub samples_out: Option<PathBuf>,
    /// Output directory [default: out/run-<bench>, or out/<matrix name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the results already in the output directory. Applies to --out only: a
    /// --samples-out file irqlab did not write (another run's result.csv, say) is never
    /// replaced. A run in which every point fails replaces nothing, --force or not.
    #[arg(long)]
    pub force: bool,
    /// Run every point N times, each in a fresh VM, in N rounds over the points (a matrix's A and
    /// B alternate): the row is the first run; the result keeps every run's summary and the pooled
    /// distribution (`compare` judges the between-run spread). --histogram, --samples-out and
    /// --breakdown describe the first run.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// What to print on stdout: a table, or the result as JSON or CSV (ns).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Latency unit of the table: µs (cyclictest, rtla), ns, or TSC cycles (kvm-unit-tests).
    #[arg(long, value_enum, default_value_t = RunUnit::Us)]
    pub unit: RunUnit,
}

/// A whole-number flag: 0 to i64::MAX, the range a `[run]` table (TOML) can hold, so that the
/// flag and the matrix key accept the same values and neither panics on a bigger one.
fn whole(s: &str) -> Result<u64, ArgError> {
    match s.trim().parse::<u64>() {
        Ok(n) if n <= i64::MAX as u64 => Ok(n),
        _ => Err(ArgError::Whole),
    }
}

/// A flag value clap hands to this module's parsers that they refuse (clap prints the text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("expected a whole number from 0 to {}", i64::MAX)]
    Whole,
    #[error("`{0}`: expected a latency such as 50, 50us, 0.05ms or 50000ns")]
    Latency(String),
    #[error("`{0}`: unknown unit `{1}`, expected us, µs, ns, ms or s")]
    LatencyUnit(String, String),
}

impl Common {
    /// The flags' settings as a `[run]` table (only what was given).
    pub(crate) fn table(&self, bench: Option<Bench>) -> RunTable {
        RunTable {
            bench,
            samples: self.samples,
            duration: self.duration.map(|d| humantime::format_duration(d).to_string()),
            warmup: self.warmup,
            period_us: self.period_us,
            period_cycles: self.period_cycles,
            halt_poll_ns: self.halt_poll_ns,
            disable_hlt_exits: self.disable_hlt_exits.then_some(true),
            vcpus: self.vcpus,
            ipi_target: self.ipi_target,
            pin: self.pin.clone().map(PinSpec::Text),
            stall_timeout_s: self.stall_timeout_s,
            stop_above_us: self.stop_above,
            priority: self.priority,
            mlock: self.mlock.then_some(true),
            gicv4: self.gicv4,
            vfio_device: self.vfio_device.clone(),
            vfio_trigger: self.vfio_trigger,
            ..Default::default()
        }
    }
}

/// The flags, as a `[run]` table, and the common options.
fn settings(a: &RunArgs) -> (RunTable, &Common) {
    match &a.bench {
        Some(RunCmd::Timer { wait, common }) => (RunTable { wait: Some(*wait), ..common.table(Some(Bench::Timer)) }, common),
        Some(RunCmd::Ipi { pv_ipi, common }) => (RunTable { pv_ipi: pv_ipi.then_some(true), ..common.table(Some(Bench::Ipi)) }, common),
        Some(RunCmd::Device { via, wait, common }) => (RunTable { via: Some(*via), wait: *wait, ..common.table(Some(Bench::Device)) }, common),
        Some(RunCmd::Primitives { common }) => (common.table(Some(Bench::Device)), common),
        None => (a.common.table(None), &a.common),
    }
}

/// Refuse to replace earlier results without --force.
pub(crate) fn check_fresh(dir: &std::path::Path, force: bool, inputs: &[PathBuf]) -> Result<(), CliError> {
    if !force && dir.join("result.json").exists() {
        return Err(CliError(format!("{} already holds the results of an earlier run; give another --out, or --force to replace them", dir.display())));
    }
    Ok(check_output_dir_forced(dir, inputs, force)?)
}

/// Nothing was measured: every point failed before it took a sample. Such a run writes nothing
/// (an earlier good result stays, even with --force), as `sim` does.
fn nothing_measured(result: &RunResult) -> bool {
    result.configs.iter().all(|c| c.error.is_some() && c.classes.is_empty())
}

pub fn run(a: RunArgs) -> Result<Outcome, CliError> {
    if let Some(RunCmd::Primitives { common }) = &a.bench {
        return crate::cmd_run_prims::run(common);
    }
    let (flags, c) = settings(&a);
    if a.bench.is_none() && a.matrix.is_none() {
        return Err(CliError("run: give a benchmark (timer, ipi, device, primitives) or --matrix FILE".into()));
    }
    let plan = session::Plan::new(&flags, a.matrix.as_deref(), &c.sets, &a.configs)?;
    // The name becomes a directory under out/: the same sanitising as a scenario's name.
    let scenario = crate::output::safe_dir_name(&plan.name);
    let dir = c.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&scenario));
    let inputs: Vec<PathBuf> = a.matrix.iter().cloned().collect();
    let samples_target = check_outputs(&dir, c, &inputs)?;
    if let Err(why) = kvm::kvm_available() {
        return Err(CliError(format!("this needs KVM: {why}")));
    }
    if c.breakdown {
        crate::run_breakdown::check(plan.first_runnable())?;
    }
    let host = kvm::host_description();
    let progress = Progress::new(&scenario);
    progress.set_total(plan.expected_samples() * c.repeat as u64);
    let mut shown = Shown::default();
    let opts = session::Options { repeat: c.repeat, trace: c.breakdown.then_some(session::Trace { keep_paths: c.trace, dir: &dir }), sets: &c.sets };
    let measured = session::run(plan, &opts, &|n| progress.inc(n), &mut |name, m| shown.add(name, m, c, samples_target.is_some()));
    progress.finish();
    let result = result_of(scenario, host, measured);
    write_and_print(&result, c, &dir, &inputs, samples_target.as_ref(), &shown)
}

/// Refuse to replace earlier results without --force, and a --samples-out file irqlab may not
/// replace; the --samples-out target when there is one.
fn check_outputs<'a>(dir: &Path, c: &'a Common, inputs: &'a [PathBuf]) -> Result<Option<Target<'a>>, CliError> {
    check_fresh(dir, c.force, inputs)?;
    let samples_target = c.samples_out.as_deref().map(|p| Target {
        flag: "--samples-out",
        path: p,
        inputs,
        // --force is for --out (issue 36): it must not let the samples overwrite a file of
        // another run; an earlier samples file of irqlab's is replaced without it.
        force: false,
        kind: Artefact::Samples,
    });
    if let Some(t) = &samples_target {
        crate::output::file::check(t)?;
    }
    Ok(samples_target)
}

/// What the first runs of the points leave for the output: --histogram's text and
/// --samples-out's lines (--breakdown's paths and table are printed as each point ends).
#[derive(Default)]
struct Shown {
    histograms: String,
    samples: String,
}

impl Shown {
    fn add(&mut self, name: &str, m: &kvm::Measurement, c: &Common, samples: bool) {
        if c.breakdown {
            crate::run_breakdown::show(name, m);
        }
        if let Some(b) = c.histogram {
            self.histograms.push_str(&show::histogram(name, &m.classes, b as usize));
        }
        if samples {
            self.samples.push_str(&show::samples_text(name, &m.classes));
        }
    }
}

/// The result of a measured session on this host.
fn result_of(scenario: String, host: BTreeMap<String, String>, measured: session::Session) -> RunResult {
    let mut result = RunResult::new(RunMeta {
        tool_version: sim::runner::TOOL_VERSION.into(),
        scenario,
        description: format!("measured with the irqlab micro-VMM on {}", crate::provenance::hostname()),
        seed: 0,
        kind: ResultKind::Measured,
        platform: host,
        knobs: BTreeMap::new(),
    });
    result.configs.extend(measured.configs);
    result.provenance = Some(crate::provenance::current(measured.details));
    result
}

/// Write result.json/.csv (and --samples-out), print the summary; the exit status.
fn write_and_print(result: &RunResult, c: &Common, dir: &Path, inputs: &[PathBuf], samples_target: Option<&Target>, shown: &Shown) -> Result<Outcome, CliError> {
    if nothing_measured(result) {
        // Say why, and write nothing: an earlier result (and samples file) stays whole.
        let _ = outcome(result);
        return Err(CliError(format!("every run failed; nothing was written ({} is unchanged)", dir.display())));
    }
    let json = write_files_forced(dir, result, inputs, c.force)?;
    if let Some(t) = samples_target {
        crate::output::file::write(t, shown.samples.as_bytes())?;
    }
    summarize(result, c, &shown.histograms)?;
    note(&format!("wrote {} and result.csv\n", json.display()));
    if let Some(t) = samples_target {
        note(&format!("wrote {}\n", t.path.display()));
    }
    outcome(result)
}

/// Print the table (or JSON/CSV), warnings, host line, counters and histograms.
pub(crate) fn summarize(result: &RunResult, c: &Common, histograms: &str) -> Result<(), CliError> {
    let notes: Vec<String> = result.configs.iter().flat_map(|c| c.notes.iter().map(move |n| format!("[{}] {n}", c.name))).collect();
    let tsc = result.configs.iter().find_map(|c| c.figures.get("tsc_khz")).map(|f| show::tsc_mhz(f.value)).unwrap_or_default();
    let p = &result.meta.platform;
    let get = |k: &str| p.get(k).cloned().unwrap_or_default();
    let host = if get("host.arch") == "aarch64" {
        format!("host: {} | counter {tsc} | kernel {} | irqchips {} | {}", get("host.cpu_model"), get("host.kernel"), get("host.irqchips"), get("host.kvm_arm_cmdline"))
    } else {
        format!("host: {} | TSC {tsc} | kernel {} | KVM {} | guest ring 0: {}", get("host.cpu_model"), get("host.kernel"), get("host.kvm_modules"), get("host.guest_ring0"))
    };
    let extra = format!("\n{host}{}\n{}\n", p.get("lab").map(|l| format!("\nlab: {l}")).unwrap_or_default(), notes.join("\n"));
    let warnings = show::early_warnings(result, c.unit);
    if c.format == Format::Table {
        out(&show::table(result, c.unit))?;
        for w in &warnings {
            out(&format!("{w}\n"))?;
        }
        let figs = report::table::figures_table(result);
        if !figs.is_empty() {
            out(&format!("\n{figs}"))?;
        }
        out(&extra)?;
        let counters = report::table::counters_table(result);
        if !counters.is_empty() {
            out(&format!("\n{counters}\n"))?;
        }
        // The histogram goes to stderr, apart from the table a script reads from stdout.
        crate::term::note(histograms);
        let spread = report::seed_spread::seed_spread_table(result, results::LatencyUnit::Us);
        if !spread.is_empty() {
            out(&spread.replacen("seeds per configuration", "--repeat runs per configuration", 1))?;
        }
    } else {
        print(result, c.format)?;
        for w in &warnings {
            note(&format!("{w}\n"));
        }
        note(&extra);
        note(histograms);
    }
    Ok(())
}

/// Exit status: 0, 1 when some points failed, 3 when --stop-above stopped a run, 2 when all failed.
fn outcome(result: &RunResult) -> Result<Outcome, CliError> {
    for c in &result.configs {
        if let Some(i) = c.figures.get("stop_above.index") {
            let v = c.figures.get("stop_above.latency").map(|f| format!(" ({} µs)", report::format::group(f.value / 1000.0, 2))).unwrap_or_default();
            note(&format!("irqlab: [{}] stopped by --stop-above at sample {}{v}\n", c.name, i.value));
        }
    }
    let failed: Vec<_> = result.failures().collect();
    for (n, e) in &failed {
        note(&format!("irqlab: run `{n}` failed: {e}\n"));
    }
    if failed.len() == result.configs.len() && result.configs.iter().all(|c| c.classes.is_empty()) {
        Err(CliError("every run failed".into()))
    } else if !failed.is_empty() {
        Ok(Outcome::Partial)
    } else if result.configs.iter().any(|c| c.figures.contains_key("stop_above.index")) {
        Ok(Outcome::Stopped)
    } else {
        Ok(Outcome::Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::ConfigResult;

    #[test]
    fn a_run_in_which_every_point_failed_measured_nothing() {
        let mut r = RunResult::new(RunMeta::named("t", "run-timer", 0, ResultKind::Measured));
        r.configs.push(ConfigResult::failed("a", BTreeMap::new(), "--priority 50: EPERM".to_string()));
        assert!(nothing_measured(&r));
        let mut ok = ConfigResult::new("b");
        let mut rec = results::LatencyRecorder::new(0);
        rec.record(5);
        ok.classes.insert("timer".into(), rec.finish());
        r.configs.push(ok);
        assert!(!nothing_measured(&r), "one point measured: the result is written (exit 1)");
    }

    #[test]
    fn whole_number_flags_stop_at_i64_max() {
        assert_eq!(whole("9223372036854775807"), Ok(i64::MAX as u64));
        assert!(whole("9223372036854775808").unwrap_err().to_string().contains("0 to 9223372036854775807"));
        assert!(whole("-1").is_err() && whole("x").is_err());
    }
}

/// A latency as cyclictest users type it, in µs: `50`, `50us`, `50µs`, `0.05ms`, `50000ns`.
pub fn parse_latency_us(s: &str) -> Result<f64, ArgError> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| ArgError::Latency(s.to_string()))?;
    let factor = match unit.trim() {
        "" | "us" | "µs" | "usec" => 1.0,
        "ns" => 1e-3,
        "ms" => 1e3,
        "s" => 1e6,
        other => return Err(ArgError::LatencyUnit(s.to_string(), other.to_string())),
    };
    // Whether the value is usable (above 0) is the run's own check, with its own message.
    Ok(v * factor)
}

#[cfg(test)]
mod latency_arg_tests {
    use super::parse_latency_us;

    #[test]
    fn units_as_cyclictest_users_type_them() {
        for (s, us) in [("50", 50.0), ("50us", 50.0), ("50µs", 50.0), ("0.05ms", 50.0), ("50000ns", 50.0), ("1.5 us", 1.5)] {
            assert_eq!(parse_latency_us(s), Ok(us), "{s}");
        }
        assert_eq!(parse_latency_us("-1"), Ok(-1.0), "a negative value reaches the run's own check");
        for bad in ["", "us", "50 parsecs", "nan"] {
            assert!(parse_latency_us(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_latency_us("5 parsecs").unwrap_err().to_string(), "`5 parsecs`: unknown unit `parsecs`, expected us, µs, ns, ms or s");
        assert_eq!(parse_latency_us("x").unwrap_err().to_string(), "`x`: expected a latency such as 50, 50us, 0.05ms or 50000ns");
    }
}

//! The lab's outer shell: its flags (clap), turned into a [`Request`] of plain configuration
//! structs (`config.rs`, `ab::AbConfig`) that the modes take. Nothing below this module knows a
//! flag; `route.rs` runs a request. Bad flags exit 2 with clap's message, which names the flag.
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use results::vocab::{Bench, Wait};

use crate::ab::{parse_fail_on, AbConfig, AbMode, FailOn};
use crate::config::{BenchConfig, Cpu, FioConfig, Gic, GuestConfig, ItsConvertConfig, Job, KvmConfig, LabDevice, Neighbour, Sched, Vwfi, XenConfig};

#[derive(Debug, Parser)]
#[command(name = "irqlab-lab", about = "irqlab's Arm lab: Debian's Xen (dom0less) or arm64 KVM under QEMU TCG", version)]
pub struct Cli {
    #[command(subcommand)]
    pub mode: Mode,
}

#[derive(Debug, Subcommand)]
pub enum Mode {
    /// Boot Debian's Xen 4.17 with the benchmark guest as a dom0less domU:
    /// `xen [options] -- timer|ipi --out DIR [--samples N] [--warmup N] [--period-us U] [--wait wfi|busy]`
    Xen(XenArgs),
    /// Write the benchmark guest with its parameters patched in, for a real board (dom0less or
    /// `xl create`): `guest [--force] -- timer|ipi --out DIR [--samples N] [--warmup N]
    /// [--period-us U] [--counter-hz F] [--wait wfi|busy]` writes DIR/armguest-<bench>.bin
    Guest(GuestArgs),
    /// Boot Debian's arm64 kernel with KVM under QEMU and run `irqlab <args>` inside; the files
    /// irqlab writes to its `--out` come back to that directory on this machine:
    /// `kvm [--gic v3|v4] [--icount] [--kernel IMAGE|PKG.deb [--modules DIR]] -- timer|ipi|device
    /// [irqlab run's flags] --out DIR` (the bench first, as in xen; `-- run BENCH …` is accepted
    /// as an alias, and other irqlab commands such as `-- sim …` pass through); several benches
    /// run in one boot: `-- timer … --out D1 -- ipi … --out D2`
    Kvm(KvmArgs),
    /// Convert a QEMU ITS trace (`-trace events=…` with gicv3_its_cmd_*, gicv3_redist_*,
    /// gicv3_its_translation_write; what `kvm --trace-its` captures) into an `irqlab its-check`
    /// script at TRACE.its: `its-convert [--gic v3|v4] [--cpus N] [--force] TRACE`
    ItsConvert(ItsConvertArgs),
    /// A against B in one command (the patch gate, issue 34): `ab kvm|xen --a 'OPTS' --b 'OPTS'
    /// [--repeat N | --single-run] [--fail-on slower[:STAT]] -- BENCH … --out DIR` runs both sides
    /// interleaved (a fresh boot each), imports each as repetitions and prints `irqlab compare`'s
    /// verdicts; exit 4 with --fail-on on a resolvable regression (see docs/patch-gate.md).
    Ab(AbArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct ItsConvertArgs {
    /// The GIC QEMU emulated (`gic-version=4` is GICv4.0 in QEMU 7.2): v3 or v4.0.
    #[arg(long, default_value = "v4.0", value_parser = Gic::parse)]
    pub gic: Gic,
    /// Redistributors (QEMU's -smp).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=512))]
    pub cpus: u32,
    /// Replace an existing TRACE.its.
    #[arg(long)]
    pub force: bool,
    pub trace: PathBuf,
}

#[derive(Debug, Clone, Default, clap::Args)]
pub struct KvmArgs {
    /// The host's GIC: v3, or v4 (v4.0: QEMU 7.2's GICv4, with KVM's direct vLPI injection on).
    /// Every GIC generation word is read (2, v3, 4, v4.1, …); what the lab cannot boot is refused.
    #[arg(long, default_value = "v3", value_parser = Gic::parse)]
    pub gic: Gic,
    /// The host's CPU (default max; neoverse-n1 for the Neoverse-N1 class with GICv3).
    #[arg(long, value_enum)]
    pub cpu: Option<Cpu>,
    /// An assignable device: `edu` (QEMU's edu behind an SMMUv3, bound to vfio-pci in the lab).
    #[arg(long, value_enum)]
    pub device: Option<LabDevice>,
    /// Start a busy loop pinned to this CPU of the lab's (2-CPU) host before irqlab: with irqlab's
    /// `--pin N` the vCPU then shares its CPU, and KVM traps its WFI (kvm_arch_vcpu_load).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..2))]
    pub busy_cpu: Option<u32>,
    /// Run QEMU with -icount shift=2,sleep=off: times become instruction counts.
    #[arg(long)]
    pub icount: bool,
    /// An aarch64 (static) irqlab to run instead of cross-building this workspace's.
    #[arg(long)]
    pub irqlab: Option<PathBuf>,
    /// Replace existing files in --out.
    #[arg(long)]
    pub force: bool,
    /// Bound on the whole QEMU session, seconds (default 600; ×5 under --icount).
    #[arg(long)]
    pub timeout_s: Option<u64>,
    /// Write QEMU's ITS trace (the L1 kernel's ITS commands, redistributor accesses, TRANSLATER
    /// writes) to FILE, and its-check's script of it to FILE.its (docs/its-check.md, "Real streams").
    #[arg(long, value_name = "FILE")]
    pub trace_its: Option<PathBuf>,
    /// Move irqlab's threads (the VM's vCPU threads) between the lab's two CPUs every MS
    /// milliseconds with taskset while it runs, to provoke vPE moves (VMOVP).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub move_vcpus_ms: Option<u64>,
    /// Trace the lab kernel's KVM events while irqlab runs and write their counts (kvm_exit by
    /// exception class and guest PC, every event by name) to kvm-exit-reasons.txt in --out.
    #[arg(long)]
    pub exit_reasons: bool,
    /// Boot your own kernel instead of Debian's: an arm64 `Image` (or `Image.gz`), or a Debian
    /// kernel package `.deb` (its `boot/vmlinuz-*`, `config-*` and `lib/modules`). Checked before
    /// booting: arm64 Image header, release, the CONFIG_* the lab needs (own_kernel.rs).
    #[arg(long, value_name = "IMAGE|PKG.deb")]
    pub kernel: Option<PathBuf>,
    /// The `lib/modules/<release>` tree of --kernel IMAGE (vfio modules for --device edu).
    #[arg(long, value_name = "DIR", requires = "kernel")]
    pub modules: Option<PathBuf>,
    /// The .config of --kernel, when it is not embedded (IKCONFIG) nor beside the image.
    #[arg(long, value_name = "FILE", requires = "kernel")]
    pub kernel_config: Option<PathBuf>,
    /// Also run kvm-unit-tests' arm micro-bench (ipi, lpi, timer_10ms) under kvmtool's lkvm in
    /// the same boot, before irqlab: the kvm-unit-tests source (a tree or a tarball); built into
    /// the lab cache; its console comes back as micro-bench.txt (peers.rs).
    #[arg(long, value_name = "TREE|TARBALL", requires = "peer_kvmtool")]
    pub peer_kvm_unit_tests: Option<PathBuf>,
    /// kvmtool's source (a tree or a tarball), with --peer-kvm-unit-tests.
    #[arg(long, value_name = "TREE|TARBALL", requires = "peer_kvm_unit_tests")]
    pub peer_kvmtool: Option<PathBuf>,
    /// Count what the kernel (KVM) and the guest executed on each interrupt's path (QEMU TCG
    /// plugin; one bench per boot; the kernel's symbols are taken in a short boot, once per kernel;
    /// docs/path-census.md).
    #[arg(long, conflicts_with = "peer_kvm_unit_tests")]
    pub census: bool,
    /// The irqlab arguments, after `--` (must include `--out DIR`).
    #[arg(last = true, required = true)]
    pub args: Vec<String>,
}

#[derive(Debug, Clone, Default, clap::Args)]
pub struct GuestArgs {
    /// Replace an existing image.
    #[arg(long)]
    pub force: bool,
    /// The board's counter frequency (CNTFRQ_EL0) in Hz, to turn --period-us into ticks
    /// (default: QEMU's 62.5 MHz; the guest prints the real one in its start line).
    #[arg(long, default_value_t = 62_500_000)]
    pub counter_hz: u64,
    /// The board's GIC: v3 (and the v4s: system registers) or 2 (GICC at Xen's 0x03002000, e.g. a GIC-400).
    #[arg(long, default_value = "v3", value_parser = Gic::parse)]
    pub gic: Gic,
    /// The bench arguments, after `--`.
    #[arg(last = true, required = true)]
    pub bench: Vec<String>,
}

#[derive(Debug, Clone, Default, clap::Args)]
pub struct XenArgs {
    #[arg(long, value_enum, default_value_t = Sched::Credit2)]
    pub sched: Sched,
    /// The board's CPU (default cortex-a57; cortex-a53 with `--gic 2` is S3's Zynq UltraScale+ class).
    #[arg(long, value_enum)]
    pub cpu: Option<Cpu>,
    /// The board's GIC generation: 2, 3 (default) or 4 (v4.0).
    #[arg(long, value_parser = Gic::parse)]
    pub gic: Option<Gic>,
    #[arg(long, value_enum, default_value_t = Vwfi::Trap)]
    pub vwfi: Vwfi,
    /// vCPUs of the benchmark domain (default 1 for timer, 2 for ipi).
    #[arg(long)]
    pub vcpus: Option<u32>,
    #[arg(long, value_enum, default_value_t = Neighbour::Idle)]
    pub neighbour: Neighbour,
    /// Run QEMU with -icount: times become instruction counts.
    #[arg(long)]
    pub icount: bool,
    /// The -icount suboptions (default `shift=2,sleep=off`: 4 ns of virtual time per instruction, deterministic; `shift=auto` follows the host speed and is not).
    #[arg(long, requires = "icount")]
    pub icount_opts: Option<String>,
    /// Replace an existing result.json / console.log / xen.dts in --out.
    #[arg(long)]
    pub force: bool,
    /// Build Xen from this tree (or a .tar.xz/.tar.gz/.tar of one) for arm64 and boot it instead
    /// of Debian's Xen 4.17; cached by (tree, patches, config) in the lab cache (src/xen_build.rs).
    #[arg(long, value_name = "DIR|TARBALL", conflicts_with = "xen")]
    pub xen_src: Option<PathBuf>,
    /// Patches to apply to --xen-src in order (`patch -p1`); a directory gives its *.patch in name order.
    #[arg(long, value_name = "DIR|FILE", num_args = 1.., requires = "xen_src")]
    pub patches: Vec<PathBuf>,
    /// Kconfig settings for --xen-src (after defconfig), e.g. `UNSUPPORTED=y HAS_ITS=y GICV4=y`.
    #[arg(long, value_name = "KEY=VALUE", num_args = 1.., requires = "xen_src")]
    pub xen_config: Vec<String>,
    /// A prebuilt arm64 Xen binary to boot instead of Debian's Xen 4.17.
    #[arg(long, value_name = "FILE")]
    pub xen: Option<PathBuf>,
    /// fio mode: dom0's vCPUs (Xen's dom0_max_vcpus; default 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub dom0_vcpus: Option<u32>,
    /// fio mode: pin dom0's vCPUs to the pCPUs of the same number (Xen's dom0_vcpus_pin).
    #[arg(long)]
    pub dom0_pin: bool,
    /// Bound on the whole QEMU session, seconds (default: 60 s + samples × (period + 200 ms); 5× under --icount).
    #[arg(long)]
    pub timeout_s: Option<u64>,
    /// Count what the code executed on each interrupt's path (QEMU TCG plugin; docs/path-census.md).
    #[arg(long)]
    pub census: bool,
    /// Xen's symbol map (`xen-syms.map`) for the census, with --xen FILE (Debian's Xen and
    /// --xen-src builds bring theirs).
    #[arg(long, value_name = "FILE", requires = "census")]
    pub xen_syms: Option<PathBuf>,
    /// The bench arguments, after `--`.
    #[arg(last = true, required = true)]
    pub bench: Vec<String>,
}

/// A bench word clap hands to [`xen_bench`] that the Xen guest cannot run (clap prints the text
/// after the argument's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("the Xen guest runs `timer` or `ipi`; `device` is measured on KVM (`irqlab run device`)")]
    DeviceOnXen,
    #[error("expected `timer` or `ipi`")]
    NotABench,
}

/// The bench of the Xen guest: the benchmark vocabulary (`results::vocab::Bench`) without
/// `device`, which has no Xen guest program.
fn xen_bench(s: &str) -> Result<Bench, ArgError> {
    match s {
        "timer" => Ok(Bench::Timer),
        "ipi" => Ok(Bench::Ipi),
        "device" => Err(ArgError::DeviceOnXen),
        _ => Err(ArgError::NotABench),
    }
}

/// The bench arguments after `--`.
#[derive(Debug, Clone, Parser)]
#[command(name = "bench arguments", no_binary_name = true)]
pub struct BenchArgs {
    /// `timer` or `ipi`.
    #[arg(value_parser = xen_bench)]
    pub bench: Bench,
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub samples: u64,
    #[arg(long, default_value_t = 4)]
    pub warmup: u64,
    #[arg(long, default_value_t = 1000.0, value_parser = parse_period)]
    pub period_us: f64,
    #[arg(long, value_enum, default_value_t = Wait::Hlt)]
    pub wait: Wait,
    /// Directory for result.json, console.log and xen.dts.
    #[arg(long)]
    pub out: PathBuf,
}

fn parse_period(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number of microseconds"))?;
    if !(1.0..=1_000_000.0).contains(&v) {
        return Err(format!("{v} µs is outside 1..=1000000"));
    }
    Ok(v)
}

impl BenchArgs {
    /// Parses the words after `--`; the error names the flag (clap's message).
    pub fn parse_words(words: &[String]) -> Result<BenchArgs, clap::Error> {
        let b = BenchArgs::try_parse_from(words)?;
        if b.warmup >= b.samples {
            return Err(clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("--warmup {} must be below --samples {}\n", b.warmup, b.samples)));
        }
        Ok(b)
    }
}

/// A `--runtime` clap hands to [`parse_runtime`] that it refuses (clap prints the text after the
/// flag's name).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeArgError {
    #[error("{text}: {source} (e.g. 5s)")]
    NotADuration { text: String, source: humantime::DurationError },
    #[error("{0}: whole seconds between 1 s and 600 s")]
    OutOfRange(String),
}

fn parse_runtime(s: &str) -> Result<u64, RuntimeArgError> {
    let d = humantime::parse_duration(s).map_err(|source| RuntimeArgError::NotADuration { text: s.into(), source })?;
    let n = d.as_secs();
    if n == 0 || n > 600 || d.subsec_nanos() != 0 {
        return Err(RuntimeArgError::OutOfRange(s.into()));
    }
    Ok(n)
}

/// The words after `--` in fio mode.
#[derive(Debug, Clone, Parser)]
#[command(name = "fio arguments", no_binary_name = true)]
pub struct FioArgs {
    #[arg(value_parser = ["fio"])]
    pub what: String,
    #[arg(long, value_enum)]
    pub job: Job,
    /// fio's runtime per repetition (whole seconds).
    #[arg(long, default_value = "5s", value_parser = parse_runtime)]
    pub runtime: u64,
    /// Repetitions, each a fresh boot.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub repeat: u32,
    /// Do not log QEMU's exceptions and GIC events (no delivery counts; the log slows TCG down).
    #[arg(long)]
    pub no_counts: bool,
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Clone, clap::Args)]
pub struct AbArgs {
    /// The mode both sides run in.
    #[arg(value_enum)]
    pub mode: AbMode,
    /// Side A (the base): that mode's options, one string, e.g. `--kernel base/Image --gic v4`.
    #[arg(long, value_name = "OPTS", allow_hyphen_values = true)]
    pub a: String,
    /// Side B (the patched build): that mode's options, one string.
    #[arg(long, value_name = "OPTS", allow_hyphen_values = true)]
    pub b: String,
    /// Boots per side (interleaved A B A B); the verdict uses the spread between boots.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// One boot per side: the verdict rests on the samples of one run each and cannot see
    /// boot-to-boot spread (say so explicitly; `--repeat 1` alone is refused).
    #[arg(long, conflicts_with = "repeat")]
    pub single_run: bool,
    /// Exit 4 when B is resolvably slower: `slower` (any statistic) or `slower:p99`.
    #[arg(long, value_name = "slower[:STAT]", value_parser = parse_fail_on)]
    pub fail_on: Option<FailOn>,
    /// Confidence level of the verdicts, in (0, 1).
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// --junit, --summary-md, --force: as `irqlab compare` takes them.
    #[command(flatten)]
    pub outputs: results::vocab::GateOutputs,
    /// The bench and its options, once for both sides, with `--out DIR`.
    #[arg(last = true, required = true)]
    pub bench: Vec<String>,
}

/// What the command line asks for, as the modes take it.
#[derive(Debug, Clone)]
pub enum Request {
    /// A domU bench under Xen.
    Xen(XenConfig, BenchConfig),
    /// fio in dom0 (`xen … -- fio …`).
    XenFio(XenConfig, FioConfig),
    Guest(GuestConfig, BenchConfig),
    Kvm(KvmConfig),
    ItsConvert(ItsConvertConfig),
    Ab(AbConfig),
}

/// A command line that does not parse: clap's own error (its exit status: 0 for `--help`), or
/// the words after `--` of a mode (exit 2), named.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("{0}")]
    Flags(clap::Error),
    #[error("irqlab-lab {mode}: {what} arguments: {source}")]
    Words { mode: &'static str, what: &'static str, source: clap::Error },
    #[error("irqlab-lab xen: several benches after `--`: the Xen mode boots one guest image per bench (a boot is ~1–5 s); give one bench per command (the KVM mode runs several in one boot)")]
    SeveralXenBenches,
}

impl ParseError {
    pub fn exit_code(&self) -> i32 {
        match self {
            ParseError::Flags(e) if !e.use_stderr() => 0,
            _ => 2,
        }
    }
}

/// Parses a whole command line (program name first) into a [`Request`], and the note for the
/// older `-- run BENCH` form when it was used.
pub fn parse(argv: &[String]) -> Result<(Request, Option<String>), ParseError> {
    let cli = Cli::try_parse_from(argv).map_err(ParseError::Flags)?;
    let note = match &cli.mode {
        Mode::Xen(x) => crate::grammar::alias_note(&x.bench),
        Mode::Kvm(k) => crate::grammar::alias_note(&k.args),
        _ => None,
    };
    let req = match cli.mode {
        Mode::Xen(x) => xen_request(x)?,
        Mode::Guest(g) => {
            let b = bench_config(&g.bench, "guest")?;
            Request::Guest(GuestConfig { force: g.force, counter_hz: g.counter_hz, gic: g.gic }, b)
        }
        Mode::Kvm(k) => Request::Kvm(k.into()),
        Mode::ItsConvert(a) => Request::ItsConvert(ItsConvertConfig { gic: a.gic, cpus: a.cpus, force: a.force, trace: a.trace }),
        Mode::Ab(a) => Request::Ab(a.into()),
    };
    Ok((req, note))
}

fn xen_request(x: XenArgs) -> Result<Request, ParseError> {
    if crate::grammar::segments(&x.bench).len() > 1 {
        return Err(ParseError::SeveralXenBenches);
    }
    let words = crate::grammar::xen_words(&x.bench);
    if words.first().map(String::as_str) == Some("fio") {
        let f = FioArgs::try_parse_from(&words).map_err(|source| ParseError::Words { mode: "xen", what: "fio", source })?;
        let fio = FioConfig { job: f.job, runtime: f.runtime, repeat: f.repeat, no_counts: f.no_counts, out: f.out };
        return Ok(Request::XenFio(x.into(), fio));
    }
    let b = bench_config(&x.bench, "xen")?;
    Ok(Request::Xen(x.into(), b))
}

fn bench_config(words: &[String], mode: &'static str) -> Result<BenchConfig, ParseError> {
    let b = BenchArgs::parse_words(&crate::grammar::xen_words(words)).map_err(|source| ParseError::Words { mode, what: "bench", source })?;
    Ok(BenchConfig { bench: b.bench, samples: b.samples, warmup: b.warmup, period_us: b.period_us, wait: b.wait, out: b.out })
}

impl From<KvmArgs> for KvmConfig {
    fn from(k: KvmArgs) -> KvmConfig {
        KvmConfig {
            gic: k.gic,
            cpu: k.cpu,
            device: k.device,
            busy_cpu: k.busy_cpu,
            icount: k.icount,
            irqlab: k.irqlab,
            force: k.force,
            timeout_s: k.timeout_s,
            trace_its: k.trace_its,
            move_vcpus_ms: k.move_vcpus_ms,
            exit_reasons: k.exit_reasons,
            kernel: k.kernel,
            modules: k.modules,
            kernel_config: k.kernel_config,
            peer_kvm_unit_tests: k.peer_kvm_unit_tests,
            peer_kvmtool: k.peer_kvmtool,
            census: k.census,
            args: k.args,
            instrument: Default::default(),
        }
    }
}

impl From<XenArgs> for XenConfig {
    fn from(x: XenArgs) -> XenConfig {
        XenConfig {
            sched: x.sched,
            cpu: x.cpu,
            gic: x.gic,
            vwfi: x.vwfi,
            vcpus: x.vcpus,
            neighbour: x.neighbour,
            icount: x.icount,
            icount_opts: x.icount_opts,
            force: x.force,
            xen_src: x.xen_src,
            patches: x.patches,
            xen_config: x.xen_config,
            xen: x.xen,
            dom0_vcpus: x.dom0_vcpus,
            dom0_pin: x.dom0_pin,
            timeout_s: x.timeout_s,
            instrument: Default::default(),
            census: x.census,
            xen_syms: x.xen_syms,
        }
    }
}

impl From<AbArgs> for AbConfig {
    fn from(a: AbArgs) -> AbConfig {
        AbConfig { mode: a.mode, a: a.a, b: a.b, repeat: a.repeat, single_run: a.single_run, fail_on: a.fail_on, confidence: a.confidence, outputs: a.outputs, bench: a.bench }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn xen_flags_and_bench_words() {
        let c = Cli::try_parse_from(words("irqlab-lab xen --sched credit --vwfi native --neighbour busy -- ipi --samples 8 --out /tmp/o")).unwrap();
        let Mode::Xen(x) = c.mode else { panic!("not xen") };
        assert_eq!((x.sched, x.vwfi, x.neighbour, x.icount), (Sched::Credit, Vwfi::Native, Neighbour::Busy, false));
        let b = BenchArgs::parse_words(&x.bench).unwrap();
        assert_eq!((b.bench, b.samples, b.warmup, b.wait), (Bench::Ipi, 8, 4, Wait::Hlt));
        assert_eq!(b.out, PathBuf::from("/tmp/o"));
    }

    #[test]
    fn cpu_and_gic_are_the_boards_words() {
        let c = Cli::try_parse_from(words("irqlab-lab xen --cpu cortex-a53 --gic 2 -- timer --out /tmp/o")).unwrap();
        let Mode::Xen(x) = c.mode else { panic!() };
        assert_eq!((x.cpu, x.gic), (Some(Cpu::CortexA53), Some(Gic::V2)));
        let c = Cli::try_parse_from(words("irqlab-lab kvm --cpu neoverse-n1 --gic v4 -- timer --out /tmp/o")).unwrap();
        let Mode::Kvm(k) = c.mode else { panic!() };
        assert_eq!((k.cpu, k.gic), (Some(Cpu::NeoverseN1), Gic::V4_0));
        let e = Cli::try_parse_from(words("irqlab-lab xen --gic v5 -- timer --out o")).unwrap_err().to_string();
        assert!(e.contains("--gic") && e.contains("not a GIC generation"), "{e}");
        let e = Cli::try_parse_from(words("irqlab-lab xen --cpu cortex-a72 -- timer --out o")).unwrap_err().to_string();
        assert!(e.contains("--cpu") && e.contains("cortex-a53"), "{e}");
    }

    #[test]
    fn bad_flags_name_the_flag() {
        let e = Cli::try_parse_from(words("irqlab-lab xen --sched rtds -- timer --out o")).unwrap_err();
        assert!(e.to_string().contains("--sched"), "{e}");
        let e = BenchArgs::parse_words(&words("timer --period-us 0 --out o")).unwrap_err();
        assert!(e.to_string().contains("--period-us"), "{e}");
        let e = BenchArgs::parse_words(&words("timer --samples 4 --warmup 4 --out o")).unwrap_err();
        assert!(e.to_string().contains("--warmup"), "{e}");
        let e = BenchArgs::parse_words(&words("timer")).unwrap_err();
        assert!(e.to_string().contains("--out"), "{e}");
        let e = BenchArgs::parse_words(&words("device --out o")).unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
    }

    #[test]
    fn the_xen_guest_refuses_the_device_bench_naming_the_argument() {
        let e = BenchArgs::parse_words(&words("device --out o")).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        let text = e.to_string();
        assert!(text.contains("'device' for '<BENCH>'") && text.contains("`irqlab run device`"), "{text}");
        let e = BenchArgs::parse_words(&words("spin --out o")).unwrap_err();
        assert!(e.to_string().contains("expected `timer` or `ipi`"), "{e}");
        assert_eq!(BenchArgs::parse_words(&words("timer --out o")).unwrap().bench, Bench::Timer);
        assert!(Cli::try_parse_from(words("irqlab-lab xen --icount-opts shift=2 -- timer --out o")).is_err(), "--icount-opts needs --icount");
    }

    #[test]
    fn fio_words() {
        let w = words;
        let fio = |s: &str| parse(&w(&format!("irqlab-lab xen -- {s}")));
        let Ok((Request::XenFio(_, a), _)) = fio("fio --job 4k-qd1-nj4 --runtime 3s --repeat 2 --out /tmp/o") else { panic!("not fio") };
        assert_eq!((a.job, a.runtime, a.repeat), (Job::K4Qd1Nj4, 3, 2));
        assert!(fio("fio --job 8k-qd9 --out o").unwrap_err().to_string().contains("--job"));
        assert!(fio("fio --job 4k-qd1 --runtime 0s --out o").unwrap_err().to_string().contains("--runtime"));
        assert!(fio("fio --job 4k-qd1").unwrap_err().to_string().contains("--out"));
    }
}

//! The lab's flags (clap). Bad flags exit 2 with clap's message, which names the flag.
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use results::vocab::Bench;

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
    Ab(crate::ab::AbArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct ItsConvertArgs {
    /// The GIC QEMU emulated (`gic-version=4` is GICv4.0 in QEMU 7.2).
    #[arg(long, value_enum, default_value_t = Gic::V4)]
    pub gic: Gic,
    /// Redistributors (QEMU's -smp).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=512))]
    pub cpus: u32,
    /// Replace an existing TRACE.its.
    #[arg(long)]
    pub force: bool,
    pub trace: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Gic {
    #[default]
    V3,
    /// GICv4 with the ITS (`kvm-arm.vgic_v4_enable=1`).
    V4,
}

/// A PCI device the lab's KVM host gets to assign with VFIO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LabDevice {
    /// QEMU's `edu` behind an SMMUv3, bound to vfio-pci (for `run device --via vfio-msi|vfio-intx`).
    Edu,
}

#[derive(Debug, Clone, Default, clap::Args)]
pub struct KvmArgs {
    #[arg(long, value_enum, default_value_t = Gic::V3)]
    pub gic: Gic,
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
    /// The bench arguments, after `--`.
    #[arg(last = true, required = true)]
    pub bench: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Sched {
    Credit,
    #[default]
    Credit2,
    /// Refused with Debian's Xen (no null scheduler); allowed with `--xen-src` built with SCHED_NULL=y, or `--xen FILE`.
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Vwfi {
    #[default]
    Trap,
    Native,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Neighbour {
    #[default]
    Idle,
    /// A second domU spinning on every pCPU.
    Busy,
}

#[derive(Debug, Clone, Default, clap::Args)]
pub struct XenArgs {
    #[arg(long, value_enum, default_value_t = Sched::Credit2)]
    pub sched: Sched,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaitArg {
    Wfi,
    Busy,
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
    #[arg(long, value_enum, default_value_t = WaitArg::Wfi)]
    pub wait: WaitArg,
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
        assert_eq!((b.bench, b.samples, b.warmup, b.wait), (Bench::Ipi, 8, 4, WaitArg::Wfi));
        assert_eq!(b.out, PathBuf::from("/tmp/o"));
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
}

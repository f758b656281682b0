//! What each lab mode is asked to do, as plain data: the modes (`kvm`, `xen`, the dom0 fio mode,
//! `guest`, `its-convert`) take these structs, and only the outer shell (`cli.rs`) knows flags.
//! A test, the A/B (which validates each side through the same shell) or a future front end
//! builds them directly. The few word enums carry `clap::ValueEnum` so the shell can take them
//! as flag values without a mirror type; nothing here parses or checks.
//!
//! Why apart: the flags used to own the modes (every mode took its clap struct from `cli.rs`,
//! and `cli.rs` embedded the A/B's), which held 11 of the lab's files in one import cycle
//! (issue 44). This is a leaf, as the kvm crate's `config` is.
use std::path::PathBuf;

use clap::ValueEnum;
use results::vocab::{Bench, Wait};

/// The GIC generation: the shared vocabulary's word (`results::vocab::Gic`: v2, v3, v4.0, v4.1);
/// QEMU's `gic-version=` comes from it (`Gic::qemu_gic_version`).
pub use results::vocab::Gic;

/// The CPU QEMU emulates (`-cpu`): the boards of the seeds as closely as QEMU 7.2 allows. Each
/// of the four has EL2 in QEMU 7.2's TCG (target/arm/cpu64.c sets ARM_FEATURE_EL2 for
/// cortex-a53, cortex-a57, neoverse-n1 and max), so each can run a hypervisor with
/// `virtualization=on`; only `neoverse-n1` and `max` have FEAT_VHE (ARMv8.1), so KVM/arm64 runs
/// nVHE on the Cortex-As.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Cpu {
    /// The Zynq UltraScale+ and S3's class of board (with GICv2, a GIC-400).
    #[value(name = "cortex-a53")]
    CortexA53,
    /// The Xen domU lab's default.
    #[value(name = "cortex-a57")]
    CortexA57,
    /// A Neoverse-N1 server class core (AWS Graviton2, Ampere Altra), with GICv3.
    #[value(name = "neoverse-n1")]
    NeoverseN1,
    /// QEMU's `max` (every feature it emulates): the KVM and dom0 labs' default.
    Max,
}

impl Cpu {
    /// QEMU's `-cpu` value.
    pub fn qemu_name(self) -> &'static str {
        match self {
            Cpu::CortexA53 => "cortex-a53",
            Cpu::CortexA57 => "cortex-a57",
            Cpu::NeoverseN1 => "neoverse-n1",
            Cpu::Max => "max",
        }
    }

    /// MIDR_EL1.PartNum (Arm's TRMs; QEMU 7.2 target/arm/cpu64.c), which Xen prints at boot:
    /// how a run checks the CPU it asked for is the one that ran. `max` has none of its own.
    pub fn midr_part(self) -> Option<u32> {
        match self {
            Cpu::CortexA53 => Some(0xd03),
            Cpu::CortexA57 => Some(0xd07),
            Cpu::NeoverseN1 => Some(0xd0c),
            Cpu::Max => None,
        }
    }
}

/// A PCI device the lab's KVM host gets to assign with VFIO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LabDevice {
    /// QEMU's `edu` behind an SMMUv3, bound to vfio-pci (for `run device --via vfio-msi|vfio-intx`).
    Edu,
}

/// Xen's scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Sched {
    Credit,
    #[default]
    Credit2,
    /// Refused with Debian's Xen (no null scheduler); allowed with `--xen-src` built with SCHED_NULL=y, or `--xen FILE`.
    Null,
}

impl Sched {
    /// Xen's `sched=` value.
    pub fn name(self) -> &'static str {
        match self {
            Sched::Credit => "credit",
            Sched::Credit2 => "credit2",
            Sched::Null => "null",
        }
    }
}

/// Xen's `vwfi=`: trap a guest's WFI, or let it run natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Vwfi {
    #[default]
    Trap,
    Native,
}

impl Vwfi {
    /// Xen's `vwfi=` value.
    pub fn name(self) -> &'static str {
        match self {
            Vwfi::Trap => "trap",
            Vwfi::Native => "native",
        }
    }
}

/// What shares the pCPUs with the benchmark domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Neighbour {
    #[default]
    Idle,
    /// A second domU spinning on every pCPU.
    Busy,
}

/// The dom0 fio mode's S1 job set (randread on the whole emulated NVMe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Job {
    #[value(name = "4k-qd1")]
    K4Qd1,
    #[value(name = "16k-qd1")]
    K16Qd1,
    #[value(name = "4k-qd4")]
    K4Qd4,
    #[value(name = "4k-qd1-nj4")]
    K4Qd1Nj4,
}

/// Arguments the lab adds to every QEMU it starts, after its own (`QemuCmd::finish`): the hook
/// for instrumentation (`-plugin …`, `-d …`, `-D …`) that applies to every mode alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instrument {
    pub extra_args: Vec<String>,
}

/// `irqlab-lab kvm`: Debian's (or the user's) arm64 kernel with KVM, `irqlab` run inside.
#[derive(Debug, Clone, Default)]
pub struct KvmConfig {
    pub gic: Gic,
    /// The host's CPU (default `max`).
    pub cpu: Option<Cpu>,
    pub device: Option<LabDevice>,
    /// A busy loop pinned to this CPU of the lab's host before irqlab.
    pub busy_cpu: Option<u32>,
    pub icount: bool,
    /// The aarch64 (static) irqlab to run inside.
    pub irqlab: Option<PathBuf>,
    pub force: bool,
    pub timeout_s: Option<u64>,
    pub trace_its: Option<PathBuf>,
    pub move_vcpus_ms: Option<u64>,
    pub exit_reasons: bool,
    pub kernel: Option<PathBuf>,
    pub modules: Option<PathBuf>,
    pub kernel_config: Option<PathBuf>,
    pub peer_kvm_unit_tests: Option<PathBuf>,
    pub peer_kvmtool: Option<PathBuf>,
    /// Count what ran on each interrupt's path (the path census, docs/path-census.md).
    pub census: bool,
    /// The words after `--`: one or more benches (`grammar::segments`), each with `--out DIR`.
    pub args: Vec<String>,
    pub instrument: Instrument,
}

/// `irqlab-lab xen` (a domU bench or the dom0 fio mode): which Xen, how it is configured.
#[derive(Debug, Clone, Default)]
pub struct XenConfig {
    pub sched: Sched,
    /// The board's CPU and GIC (default: cortex-a57 with GICv3 for the domU benches).
    pub cpu: Option<Cpu>,
    pub gic: Option<Gic>,
    pub vwfi: Vwfi,
    /// vCPUs of the benchmark domain (default 1 for timer, 2 for ipi).
    pub vcpus: Option<u32>,
    pub neighbour: Neighbour,
    pub icount: bool,
    /// The -icount suboptions (default `qemu::ICOUNT_DEFAULT`).
    pub icount_opts: Option<String>,
    pub force: bool,
    /// Build Xen from this tree or tarball (`xen_build`), with these patches and Kconfig settings.
    pub xen_src: Option<PathBuf>,
    pub patches: Vec<PathBuf>,
    pub xen_config: Vec<String>,
    /// A prebuilt arm64 Xen binary.
    pub xen: Option<PathBuf>,
    pub dom0_vcpus: Option<u32>,
    pub dom0_pin: bool,
    pub timeout_s: Option<u64>,
    pub instrument: Instrument,
    /// Count what ran on each interrupt's path (the path census, docs/path-census.md).
    pub census: bool,
    /// Xen's `xen-syms.map` for the census of a prebuilt `xen`.
    pub xen_syms: Option<PathBuf>,
}

/// The benchmark guest's run (the Xen domU, or `guest` for a board).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    /// `timer` or `ipi` (the shell refuses `device`: no Xen guest program).
    pub bench: Bench,
    pub samples: u64,
    pub warmup: u64,
    pub period_us: f64,
    /// How the guest waits (the shared vocabulary's word: `hlt`, named `wfi` on arm64, or `busy`).
    pub wait: Wait,
    /// Directory for result.json, console.log and xen.dts.
    pub out: PathBuf,
}

/// The dom0 fio mode's job.
#[derive(Debug, Clone, PartialEq)]
pub struct FioConfig {
    pub job: Job,
    /// fio's runtime per repetition (whole seconds).
    pub runtime: u64,
    /// Repetitions, each a fresh boot.
    pub repeat: u32,
    /// No QEMU exception/GIC log (no delivery counts).
    pub no_counts: bool,
    pub out: PathBuf,
}

/// `irqlab-lab guest`: the patched guest image for a real board.
#[derive(Debug, Clone, Default)]
pub struct GuestConfig {
    pub force: bool,
    /// The board's counter frequency (CNTFRQ_EL0), Hz.
    pub counter_hz: u64,
    /// The board's GIC (GICv2: the guest's GICC at Xen's GUEST_GICC_BASE).
    pub gic: Gic,
}

/// `irqlab-lab its-convert`: a QEMU ITS trace into an its-check script.
#[derive(Debug, Clone)]
pub struct ItsConvertConfig {
    pub gic: Gic,
    /// Redistributors (QEMU's -smp).
    pub cpus: u32,
    pub force: bool,
    pub trace: PathBuf,
}

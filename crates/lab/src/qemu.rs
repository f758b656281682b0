//! QEMU command lines for every lab mode (qemu-system-aarch64 7.2, TCG), built in one place as
//! data so they are unit-tested: a [`Machine`] (`virt` with EL2, `virtualization=on`; the GIC,
//! the CPU model, CPUs, memory, `-icount`) and a [`QemuCmd`] builder for what each mode boots.
//! arm-lab.md has the verified commands: Xen's domU lab on cortex-a57 with GICv3, the KVM host
//! and Xen's dom0 on `-cpu max` with the ITS. [`QemuCmd::finish`] appends the
//! [`Instrument`]'s arguments after the lab's own: the one hook through which every mode's QEMU
//! gets instrumentation (plugins, `-d`, `-D`). [`check_board`] refuses, before any boot, a
//! board QEMU 7.2 cannot build (`--cpu`/`--gic`, issue 42 item 3).
use std::path::Path;

use crate::config::{Cpu, Gic, Instrument};
/// Where QEMU's `-device loader` puts the domU images (above QEMU's DTB at 0x48000000), 16 MiB apart.
pub const MODULE_BASE: u64 = 0x4c00_0000;
pub const MODULE_STRIDE: u64 = 0x0100_0000;

/// `-icount` choices tried for Xen (see docs/xen-arm-lab.md for which worked).
pub const ICOUNT_DEFAULT: &str = "shift=2,sleep=off";

/// The emulated board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub gic: Gic,
    /// The ITS (`its=on`), for MSIs as LPIs.
    pub its: bool,
    pub cpu: Cpu,
    pub smp: u32,
    pub mem_mb: u32,
    pub icount: Option<String>,
    /// An IOMMU model (`iommu=smmuv3`) for a device assigned with VFIO.
    pub iommu: Option<&'static str>,
}

impl Machine {
    /// The Xen domU lab's board: without the ITS, 2 GiB; by default cortex-a57 with GICv3
    /// (`--cpu`, `--gic` choose others, e.g. S3's cortex-a53 with GICv2).
    pub fn xen(smp: u32, icount: Option<String>) -> Machine {
        Machine { gic: Gic::V3, its: false, cpu: Cpu::CortexA57, smp, mem_mb: 2048, icount, iommu: None }
    }

    /// The KVM lab's host: the GIC asked for with the ITS, `-cpu max` (EL2 with FEAT_VHE) unless
    /// `--cpu` says otherwise, 2 CPUs, 1 GiB.
    pub fn kvm_host(gic: Gic, icount: Option<String>) -> Machine {
        Machine { gic, its: true, cpu: Cpu::Max, smp: 2, mem_mb: 1024, icount, iommu: None }
    }

    /// The dom0 fio lab's board: GICv4 with the ITS (the NVMe's MSIs become LPIs), `-cpu max`, 2 GiB.
    pub fn xen_dom0(smp: u32, icount: Option<String>) -> Machine {
        Machine { gic: Gic::V4_0, its: true, cpu: Cpu::Max, smp, mem_mb: 2048, icount, iommu: None }
    }

    /// `-M`'s value, with `extra` (`,dumpdtb=…`) at its end. A GIC QEMU 7.2 cannot emulate is
    /// written as its own name, which QEMU refuses: [`check_board`] refuses it first.
    fn machine_opt(&self, extra: &str) -> String {
        let its = if self.its { ",its=on" } else { "" };
        let iommu = self.iommu.map(|i| format!(",iommu={i}")).unwrap_or_default();
        let gic = self.gic.qemu_gic_version().map(|v| v.to_string()).unwrap_or_else(|_| self.gic.name().to_string());
        format!("virt,virtualization=on,gic-version={gic}{its}{iommu}{extra}")
    }

    /// How results name the board: `QEMU virt, GICv2, cortex-a53, 1 CPUs, TCG -icount`.
    pub fn describe(&self) -> String {
        let its = if self.its { " (ITS)" } else { "" };
        let tcg = if self.icount.is_some() { "TCG -icount" } else { "TCG" };
        format!("QEMU virt, {}{its}, {}, {} CPUs, {tcg}", self.gic.title(), self.cpu.qemu_name(), self.smp)
    }

    /// Dumps the machine's DTB to `out` and exits.
    pub fn dumpdtb_args(&self, out: &Path) -> Vec<String> {
        let mut c = QemuCmd::with_machine_opt(self, &format!(",dumpdtb={}", out.display()));
        c.args.extend(["-display".into(), "none".into()]);
        c.args
    }
}

/// One QEMU command line, built step by step; [`QemuCmd::finish`] gives the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QemuCmd {
    args: Vec<String>,
}

impl QemuCmd {
    /// The machine, headless, its serial console on stdio, no monitor, no reboot (a guest's
    /// reset ends QEMU).
    pub fn new(m: &Machine) -> QemuCmd {
        let mut c = QemuCmd::with_machine_opt(m, "");
        c.args.extend(["-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot"].map(String::from));
        c
    }

    fn with_machine_opt(m: &Machine, extra: &str) -> QemuCmd {
        let mut args = vec!["-M".to_string(), m.machine_opt(extra), "-cpu".into(), m.cpu.qemu_name().into(), "-smp".into(), m.smp.to_string(), "-m".into(), m.mem_mb.to_string()];
        if let Some(ic) = &m.icount {
            args.extend(["-icount".to_string(), ic.clone()]);
        }
        QemuCmd { args }
    }

    /// Any further arguments (a trace, a log).
    pub fn args(mut self, more: impl IntoIterator<Item = String>) -> QemuCmd {
        self.args.extend(more);
        self
    }

    /// `-kernel FILE` (a Linux Image or Xen).
    pub fn kernel(self, p: &Path) -> QemuCmd {
        self.args(["-kernel".into(), p.display().to_string()])
    }

    pub fn initrd(self, p: &Path) -> QemuCmd {
        self.args(["-initrd".into(), p.display().to_string()])
    }

    /// `-append TEXT`: the kernel's (or Xen's) command line.
    pub fn append(self, cmdline: &str) -> QemuCmd {
        self.args(["-append".into(), cmdline.into()])
    }

    pub fn dtb(self, p: &Path) -> QemuCmd {
        self.args(["-dtb".into(), p.display().to_string()])
    }

    /// `-device SPEC`.
    pub fn device(self, spec: String) -> QemuCmd {
        self.args(["-device".into(), spec])
    }

    /// A raw image loaded at `addr` (`-device loader`), as the dom0less domUs are.
    pub fn loader(self, file: &Path, addr: u64) -> QemuCmd {
        self.device(format!("loader,file={},addr={addr:#x},force-raw=on", file.display()))
    }

    /// The arguments: the lab's own, then the instrumentation's.
    pub fn finish(mut self, instrument: &Instrument) -> Vec<String> {
        self.args.extend(instrument.extra_args.iter().cloned());
        self.args
    }
}

/// A board QEMU 7.2 cannot build, refused before anything boots (exit 2).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BoardError {
    #[error("--gic {gic}: {why}")]
    NotEmulated { gic: Gic, why: &'static str },
    #[error("--gic {gic}: GICv2 addresses at most 8 CPUs (the 8-bit target lists of GICD_ITARGETSR and GICD_SGIR), this board has {smp}")]
    TooManyCpus { gic: Gic, smp: u32 },
    #[error("--gic {gic}: {what} needs the ITS, and the ITS (LPIs) needs GICv3 or later")]
    NoIts { gic: Gic, what: &'static str },
}

impl From<BoardError> for crate::error::LabError {
    fn from(e: BoardError) -> Self {
        crate::error::LabError::Part { code: 2, source: Box::new(e) }
    }
}

/// What QEMU 7.2's `virt` cannot build from `m`: a GIC it does not emulate (GICv4.1), GICv2
/// with more than 8 CPUs, an ITS (`what` needs it) on GICv2.
pub fn check_board(m: &Machine, what: &'static str) -> Result<(), BoardError> {
    m.gic.qemu_gic_version().map_err(|why| BoardError::NotEmulated { gic: m.gic, why })?;
    if m.gic.max_cpus().is_some_and(|n| m.smp > n) {
        return Err(BoardError::TooManyCpus { gic: m.gic, smp: m.smp });
    }
    if m.its && !m.gic.lpis() {
        return Err(BoardError::NoIts { gic: m.gic, what });
    }
    Ok(())
}

/// Xen's command line for a scheduler and vwfi mode. Under `-icount` Xen's interrupt-driven
/// serial transmit stalls (the boot stops printing after "Initializing Credit2 scheduler", seen
/// with shift=auto, shift=2 and align=off,sleep=on); `sync_console` (Xen's synchronous console,
/// xen/drivers/char/console.c) makes it work, so the lab adds it there. `bootscrub=0` always:
/// scrubbing 2 GiB in the idle loop takes minutes under -icount and, without it, keeps the idle
/// pCPUs busy during the first samples (a board that has been up a while is past that).
pub fn xen_bootargs(uart: &str, sched: &str, vwfi: &str, icount: bool) -> String {
    let sync = if icount { " sync_console" } else { "" };
    format!("console=dtuart dtuart={uart} sched={sched} vwfi={vwfi} bootscrub=0{sync}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xen_command_line() {
        let m = Machine::xen(2, None);
        let c = QemuCmd::new(&m).dtb(Path::new("/o/xen.dtb")).kernel(Path::new("/c/xen"));
        let a = c.loader(Path::new("/o/g1.bin"), MODULE_BASE).loader(Path::new("/o/g2.bin"), MODULE_BASE + MODULE_STRIDE).finish(&Instrument::default());
        let s = a.join(" ");
        assert!(s.starts_with("-M virt,virtualization=on,gic-version=3 -cpu cortex-a57 -smp 2 -m 2048 "), "{s}");
        assert!(s.contains("-dtb /o/xen.dtb -kernel /c/xen"));
        assert!(s.contains("-device loader,file=/o/g1.bin,addr=0x4c000000,force-raw=on -device loader,file=/o/g2.bin,addr=0x4d000000,force-raw=on"));
        assert!(!s.contains("-icount"));
        assert!(s.contains("-serial stdio -monitor none"));
    }

    #[test]
    fn icount_and_dumpdtb() {
        let m = Machine::xen(2, Some(ICOUNT_DEFAULT.into()));
        let a = m.dumpdtb_args(Path::new("/t/virt.dtb"));
        assert_eq!(a[1], "virt,virtualization=on,gic-version=3,dumpdtb=/t/virt.dtb");
        let i = a.iter().position(|x| x == "-icount").unwrap();
        assert_eq!(a[i + 1], "shift=2,sleep=off");
        assert_eq!(xen_bootargs("/pl011@9000000", "credit", "native", false), "console=dtuart dtuart=/pl011@9000000 sched=credit vwfi=native bootscrub=0");
        assert!(xen_bootargs("/pl011@9000000", "credit2", "trap", true).ends_with(" vwfi=trap bootscrub=0 sync_console"));
    }

    #[test]
    fn every_machine_and_the_instrumentation_hook() {
        let k = Machine { iommu: Some("smmuv3"), ..Machine::kvm_host(Gic::V4_0, None) };
        assert_eq!(QemuCmd::new(&k).finish(&Instrument::default())[1], "virt,virtualization=on,gic-version=4,its=on,iommu=smmuv3");
        let d = QemuCmd::new(&Machine::xen_dom0(1, Some(ICOUNT_DEFAULT.into()))).finish(&Instrument::default()).join(" ");
        assert!(d.starts_with("-M virt,virtualization=on,gic-version=4,its=on -cpu max -smp 1 -m 2048 -icount shift=2,sleep=off -display none"), "{d}");
        // The instrumentation comes last, after everything the mode added.
        let i = Instrument { extra_args: vec!["-d".into(), "in_asm".into()] };
        let a = QemuCmd::new(&Machine::xen(2, None)).kernel(Path::new("/x")).finish(&i);
        assert_eq!(a[a.len() - 4..], ["-kernel", "/x", "-d", "in_asm"]);
    }

    #[test]
    fn the_board_asked_for_is_the_one_on_the_command_line() {
        let m = Machine { gic: Gic::V2, cpu: Cpu::CortexA53, ..Machine::xen(1, Some(ICOUNT_DEFAULT.into())) };
        let a = QemuCmd::new(&m).finish(&Instrument::default()).join(" ");
        assert!(a.starts_with("-M virt,virtualization=on,gic-version=2 -cpu cortex-a53 -smp 1 "), "{a}");
        assert_eq!(m.describe(), "QEMU virt, GICv2, cortex-a53, 1 CPUs, TCG -icount");
        let n = Machine { cpu: Cpu::NeoverseN1, ..Machine::kvm_host(Gic::V3, None) };
        assert!(QemuCmd::new(&n).finish(&Instrument::default()).join(" ").starts_with("-M virt,virtualization=on,gic-version=3,its=on -cpu neoverse-n1 "));
        assert_eq!(check_board(&m, "x"), Ok(()));
    }

    #[test]
    fn boards_qemu_cannot_build_are_refused_naming_why() {
        let v2 = Machine { gic: Gic::V2, ..Machine::xen(2, None) };
        let e = check_board(&Machine { smp: 9, ..v2.clone() }, "x").unwrap_err();
        assert!(e.to_string().starts_with("--gic v2: GICv2 addresses at most 8 CPUs") && e.to_string().contains("has 9"), "{e}");
        assert!(check_board(&Machine { smp: 8, ..v2.clone() }, "x").is_ok());
        let e = check_board(&Machine { its: true, ..v2 }, "the KVM host (MSIs as LPIs)").unwrap_err().to_string();
        assert!(e.contains("the KVM host (MSIs as LPIs) needs the ITS") && e.contains("GICv3 or later"), "{e}");
        let e = check_board(&Machine::kvm_host(Gic::V4_1, None), "x").unwrap_err().to_string();
        assert!(e.starts_with("--gic v4.1: QEMU 7.2 emulates GICv4.0"), "{e}");
        // Exit 2: bad input, nothing started.
        assert_eq!(crate::error::LabError::from(check_board(&Machine::kvm_host(Gic::V4_1, None), "x").unwrap_err()).exit_code(), 2);
    }
}

//! QEMU command lines for the lab (qemu-system-aarch64 7.2, TCG), built as data so they are
//! unit-tested; the machine is the one arm-lab.md verified: `virt` with EL2
//! (`virtualization=on`), GICv3, cortex-a57, 2 CPUs.
use std::path::{Path, PathBuf};

/// Where QEMU's `-device loader` puts the domU images (above QEMU's DTB at 0x48000000), 16 MiB apart.
pub const MODULE_BASE: u64 = 0x4c00_0000;
pub const MODULE_STRIDE: u64 = 0x0100_0000;

/// `-icount` choices tried for Xen (see docs/xen-arm-lab.md for which worked).
pub const ICOUNT_DEFAULT: &str = "shift=2,sleep=off";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub gic: &'static str,
    pub cpu: &'static str,
    pub smp: u32,
    pub mem_mb: u32,
    pub icount: Option<String>,
}

impl Machine {
    pub fn xen(smp: u32, icount: Option<String>) -> Machine {
        Machine { gic: "3", cpu: "cortex-a57", smp, mem_mb: 2048, icount }
    }

    fn base(&self, extra_m: &str) -> Vec<String> {
        let mut a = vec![
            "-M".to_string(),
            format!("virt,virtualization=on,gic-version={}{extra_m}", self.gic),
            "-cpu".into(),
            self.cpu.into(),
            "-smp".into(),
            self.smp.to_string(),
            "-m".into(),
            self.mem_mb.to_string(),
        ];
        if let Some(ic) = &self.icount {
            a.push("-icount".into());
            a.push(ic.clone());
        }
        a
    }

    /// Dumps the machine's DTB to `out` and exits.
    pub fn dumpdtb_args(&self, out: &Path) -> Vec<String> {
        let mut a = self.base(&format!(",dumpdtb={}", out.display()));
        a.extend(["-display".into(), "none".into()]);
        a
    }

    /// Boots `xen` with `dtb`, each module loaded at its address; the serial console on stdout.
    pub fn xen_args(&self, xen: &Path, dtb: &Path, modules: &[(PathBuf, u64)]) -> Vec<String> {
        let mut a = self.base("");
        a.extend(["-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot"].map(String::from));
        a.extend(["-dtb".into(), dtb.display().to_string(), "-kernel".into(), xen.display().to_string()]);
        for (p, addr) in modules {
            a.push("-device".into());
            a.push(format!("loader,file={},addr={addr:#x},force-raw=on", p.display()));
        }
        a
    }
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
        let a = m.xen_args(Path::new("/c/xen"), Path::new("/o/xen.dtb"), &[(PathBuf::from("/o/g1.bin"), MODULE_BASE), (PathBuf::from("/o/g2.bin"), MODULE_BASE + MODULE_STRIDE)]);
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
}

//! The boards of the seeds (issue 42 item 3): `--cpu` and `--gic` refused before anything boots
//! where QEMU 7.2 or the hypervisor cannot, and S3's class of board — a Cortex-A53 with a GICv2 —
//! booted under Xen 4.17 dom0less with the path census: the guest takes its timer through the
//! GICv2 path and Xen drives its GIC through GICC/GICH by MMIO, no ICC/ICH system register.
use std::path::Path;
use std::process::{Command, Output};

fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).args(args).output().unwrap()
}

fn refused(args: &[&str], why: &str) {
    let o = lab(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(why), "{args:?} should say {why:?}: {err}");
}

#[test]
fn boards_qemu_or_the_hypervisor_cannot_boot_are_refused_before_booting() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let out = out.to_str().unwrap();
    refused(&["xen", "--gic", "4.1", "--", "timer", "--out", out], "QEMU 7.2 emulates GICv4.0");
    refused(&["xen", "--gic", "v5", "--", "timer", "--out", out], "not a GIC generation");
    refused(&["xen", "--cpu", "cortex-a72", "--", "timer", "--out", out], "--cpu");
    refused(&["kvm", "--gic", "2", "--", "timer", "--out", out], "vGICv3");
    refused(&["kvm", "--gic", "v4.1", "--", "timer", "--out", out], "GICv4.0");
    refused(&["xen", "--cpu", "cortex-a53", "--", "fio", "--job", "4k-qd1", "--out", out], "the fio mode's board is fixed");
    refused(&["xen", "--sched", "null", "--", "timer", "--out", out], "EXPERT=y");
    assert!(!Path::new(out).exists(), "nothing written for a refused board");
}

mod needs_qemu_arm {
    use super::*;

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the guest image: scripts/test.sh runs it where they are"]
    fn xen_on_a_cortex_a53_with_gicv2_delivers_the_timer_through_the_gicv2_path() {
        testkit::require(testkit::Resource::QemuArm);
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("a53v2");
        let o = lab(&["xen", "--icount", "--census", "--cpu", "cortex-a53", "--gic", "2", "--vwfi", "native", "--", "timer", "--samples", "20", "--out", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let r = results::read_json(&dir.join("result.json")).unwrap();
        let c = &r.configs[0];
        assert_eq!(c.error, None);
        assert_eq!((c.params["cpu"].as_str(), c.params["gic"].as_str()), ("cortex-a53", "v2"));
        assert!(r.meta.platform["machine"].starts_with("QEMU virt, GICv2, cortex-a53"), "{:?}", r.meta.platform);
        assert_eq!((c.classes["timer"].summary.count, c.counters["guest.spurious"]), (20, 0));
        // Xen booted on the board asked for, and the guest ran its GICv2 build of the ABI.
        let log = std::fs::read_to_string(dir.join("console.log")).unwrap();
        assert!(log.contains("GICv2 initialization") && log.contains(", part 0xd03,"), "Xen's banner: the A53 and its GICv2");
        assert!(log.contains(&format!(" abi={} ", armguest::abi::ABI_VERSION)), "the guest's start line");

        let census = c.census.as_ref().expect("a census");
        let timer = &census.classes["timer"];
        assert_eq!(timer.paths, 20);
        let per_path = |block: &str, reg: &str, rw: &str| timer.gic.iter().find(|g| g.block == block && g.register == reg && g.rw == rw).map(|g| g.count / timer.paths);
        // Xen's GICv2 driver on the GIC-400 path: acknowledge, drop and deactivate the physical
        // PPI 27 at GICC, inject the virtual one through a GICH list register (xen/arch/arm/gic-v2.c).
        assert_eq!(per_path("GICC", "IAR", "r"), Some(2), "the PPI, then the spurious 1023 that ends Xen's loop: {:?}", timer.gic);
        assert_eq!((per_path("GICC", "EOIR", "w"), per_path("GICC", "DIR", "w")), (Some(1), Some(1)));
        assert_eq!(per_path("GICH", "GICH_LR0", "w"), Some(1));
        for class in census.classes.values() {
            let sysreg_gic: Vec<_> = class.gic.iter().filter(|g| g.kind == "sysreg" && (g.block == "ICC" || g.block == "ICH")).collect();
            assert!(sysreg_gic.is_empty(), "a GICv2 board has no GIC system registers: {sysreg_gic:?}");
        }
    }
}

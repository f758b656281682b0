//! The path census on the smallest boot (Debian's Xen 4.17, credit2, vwfi=trap, 20 timer samples
//! under -icount, about 10 s a boot here): two boots of the same build count the same paths, and
//! the trapped-WFI path is led by Xen's WFI trap handling (docs/path-census.md).
use std::path::Path;
use std::process::Command;

fn census_run(dir: &Path) -> results::census::Census {
    let out = Command::new(env!("CARGO_BIN_EXE_irqlab-lab"))
        .args(["xen", "--icount", "--census", "--sched", "credit2", "--vwfi", "trap", "--", "timer", "--samples", "20", "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "irqlab-lab xen --census failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let r = results::read_json(&dir.join("result.json")).unwrap();
    assert!(dir.join("census.txt").is_file(), "the plugin's raw counts are kept beside the result");
    r.configs[0].census.clone().expect("a census in result.json")
}

/// Xen 4.17's handling of a trapped WFI (xen/arch/arm/traps.c `do_trap_wfi_wfe`, inlined into
/// `do_trap_guest_sync` in Debian's build; common/sched/core.c): block the vCPU, then the
/// schedule softirq runs the scheduler and switches to idle; the wake runs it again.
const WFI_TRAP_HANDLING: [&str; 8] = [
    "do_trap_guest_sync",
    "vcpu_block_unless_event_pending",
    "vcpu_block",
    "core.c#schedule",
    "core.c#do_schedule",
    "credit2.c#csched2_schedule",
    "credit.c#csched_schedule",
    "context_switch",
];

mod needs_qemu_arm {
    use super::*;

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the guest image: scripts/test.sh runs it where they are"]
    fn xen_timer_census_is_deterministic_and_led_by_the_wfi_trap() {
        testkit::require(testkit::Resource::QemuArm);
        let d = tempfile::tempdir().unwrap();
        let a = census_run(&d.path().join("a"));
        let b = census_run(&d.path().join("b"));
        assert_eq!(a.classes, b.classes, "the same build and bench under -icount count the same paths");

        let timer = &a.classes["timer"];
        assert_eq!(timer.paths, 20);
        assert_eq!(timer.insns.min, timer.insns.max, "every timer path the same under -icount");
        assert!(timer.by_el["EL2"] > 20 * 1000, "Xen's part of the path: {:?}", timer.by_el);
        // The vCPU is blocked when its timer fires: Xen's own timer for it expires
        // (xen/arch/arm/vtimer.c virt_timer_expired) and injects the virtual PPI.
        for f in ["vtimer.c#virt_timer_expired", "vgic_inject_irq"] {
            assert!(timer.functions.iter().any(|x| x.name == f), "{f} on the timer path");
        }
        assert!(timer.gic.iter().any(|g| g.register == "ICC_IAR1_EL1" && g.rw == "r"), "Xen acknowledges the physical PPI");

        let trap = &a.classes["timer.from-wfi"];
        assert_eq!(trap.exceptions.get("EL2 sync from lower EL"), Some(&trap.paths), "one trapped WFI per path: {:?}", trap.exceptions);
        let top = &trap.functions[0].name;
        assert!(WFI_TRAP_HANDLING.contains(&top.as_str()), "the trap path's top function {top} is not in Xen's WFI trap handling");
        for f in ["do_trap_guest_sync", "vcpu_block_unless_event_pending", "vcpu_block"] {
            assert!(trap.functions.iter().any(|x| x.name == f), "{f} on the trapped-WFI path");
        }
        assert!(a.symbols["hyp"].ends_with("xen-syms-4.17-arm64.map"), "Debian's -dbg symbols: {:?}", a.symbols);
    }
}

/// The census in the KVM mode (Debian's arm64 KVM, VHE: the host kernel at EL2): the kernel's
/// symbols come from its own /proc/kallsyms (the symbol boot), and the sender's trapped SGI
/// write is handled by KVM's `vgic_v3_dispatch_sgi`, which walks the VM's vCPUs to the target.
mod needs_arm_lab {
    use super::*;

    #[test]
    #[ignore = "needs QEMU, the aarch64 cross toolchain and the cross-built irqlab: scripts/test.sh runs it where they are"]
    fn kvm_ipi_census_names_the_sgi_dispatch() {
        testkit::require(testkit::Resource::ArmLab);
        let irqlab = std::env::var_os("IRQLAB_LAB_IRQLAB").expect("scripts/test.sh sets IRQLAB_LAB_IRQLAB");
        let d = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_irqlab-lab"))
            .args(["kvm", "--icount", "--census", "--irqlab"])
            .arg(&irqlab)
            .args(["--", "ipi", "--samples", "8", "--vcpus", "4", "--ipi-target", "3", "--pin", "0,1,1,1", "--out"])
            .arg(d.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let r = results::read_json(&d.path().join("result.json")).unwrap();
        assert_eq!(r.configs[0].params.get("ipi_target").map(String::as_str), Some("3"));
        let c = r.configs[0].census.clone().expect("a census in result.json");
        assert!(c.symbols["hyp"].starts_with("/proc/kallsyms of the lab kernel"), "{:?}", c.symbols);
        let send = c.classes.iter().find(|(k, _)| k.starts_with("ipi.send.from-ipi_loop")).map(|(_, p)| p).expect("the sender's trapped write");
        assert!(send.paths >= 8, "{}", send.paths);
        for f in ["vgic_v3_dispatch_sgi", "emulate_sys_reg"] {
            assert!(send.functions.iter().any(|x| x.name == f && x.side == "hyp"), "{f} on the send path: {:?}", send.functions.iter().take(10).collect::<Vec<_>>());
        }
        assert!(send.exceptions.keys().any(|k| k.contains("sync from lower EL")), "the write traps to EL2: {:?}", send.exceptions);
        assert!(c.classes.keys().any(|k| k.starts_with("ipi.receive")), "{:?}", c.classes.keys());
    }
}

#[test]
fn xen_syms_without_census_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).args(["xen", "--xen-syms", "/nonexistent", "--", "timer", "--out", "/tmp/never"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--census"), "{}", String::from_utf8_lossy(&out.stderr));
}

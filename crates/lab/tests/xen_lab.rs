//! Boots Debian's Xen under QEMU for real with small sample counts (about 10 s per run here).
//! The boots need QEMU and the guest image (`needs_qemu_arm`, `needs_arm_guest`): ignored with the
//! reason, run by scripts/test.sh where they are, a failure with CI set where they are not.
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// One QEMU at a time: the machine has 2 cores.
static SERIAL: Mutex<()> = Mutex::new(());

fn lab(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn run_one(dir: &Path, flags: &[&str], bench: &[&str]) -> results::RunResult {
    let out = dir.to_str().unwrap();
    let mut args = vec!["xen"];
    args.extend_from_slice(flags);
    args.push("--");
    args.extend_from_slice(bench);
    args.extend_from_slice(&["--out", out]);
    let (code, err) = lab(&args);
    assert_eq!(code, 0, "irqlab-lab {args:?} failed:\n{err}");
    let r = results::read_json(&dir.join("result.json")).unwrap();
    let log = std::fs::read_to_string(dir.join("console.log")).unwrap();
    assert!(log.contains("@irqlab v1 0 start bench="), "raw console kept beside the result");
    assert!(std::fs::read_dir(dir).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().starts_with(".irqlab-lab")), "scratch removed");
    r
}

mod needs_qemu_arm {
    use super::*;

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the guest image: scripts/test.sh runs it where they are"]
    fn xen_timer_and_ipi_credit2_trap_and_native() {
        testkit::require(testkit::Resource::QemuArm);
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().unwrap();
        for (bench, classes) in [("timer", &["timer"][..]), ("ipi", &["ipi", "ipi_rtt"][..])] {
            for vwfi in ["trap", "native"] {
                let dir = d.path().join(format!("{bench}-{vwfi}"));
                let r = run_one(&dir, &["--sched", "credit2", "--vwfi", vwfi], &[bench, "--samples", "8", "--warmup", "1", "--period-us", "500"]);
                let c = &r.configs[0];
                assert_eq!(c.error, None);
                assert_eq!((c.params["sched"].as_str(), c.params["vwfi"].as_str(), c.params["bench"].as_str()), ("credit2", vwfi, bench));
                assert!(c.params["xen_cmdline"].contains(&format!("vwfi={vwfi}")));
                assert_eq!(r.meta.platform["host"], "QEMU TCG emulation (not hardware latency)");
                assert_eq!(c.params["xen_version"], "4.17.7", "from Xen's boot banner");
                for class in classes {
                    let s = &c.classes[*class].summary;
                    assert_eq!(s.count, 8, "{bench} {vwfi} {class}");
                    assert!(s.min > 0 && s.max >= s.min);
                }
                if bench == "ipi" {
                    assert!(c.classes["ipi_rtt"].summary.min > c.classes["ipi"].summary.min, "the reply comes after the ping");
                }
                assert!(c.figures["lab.qemu_start_to_first_sample"].value > 0.0);
            }
        }
        // The same --out again: refused, the earlier result untouched.
        let dir = d.path().join("timer-trap");
        let before = std::fs::read(dir.join("result.json")).unwrap();
        let (code, err) = lab(&["xen", "--", "timer", "--samples", "2", "--warmup", "0", "--out", dir.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("already exists"), "{err}");
        assert_eq!(std::fs::read(dir.join("result.json")).unwrap(), before);
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the guest image: scripts/test.sh runs it where they are"]
    fn busy_neighbour_runs_beside_the_guest() {
        testkit::require(testkit::Resource::QemuArm);
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().unwrap();
        let r = run_one(d.path(), &["--neighbour", "busy", "--timeout-s", "240"], &["timer", "--samples", "4", "--warmup", "1"]);
        let c = &r.configs[0];
        assert_eq!(c.classes["timer"].summary.count, 4);
        assert_eq!(c.params["neighbour"], "busy");
        assert!(c.notes.iter().any(|n| n.contains("DOM2")), "{:?}", c.notes);
        let dts = std::fs::read_to_string(d.path().join("xen.dts")).unwrap();
        assert!(dts.contains("domU2 {"));
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the guest image: scripts/test.sh runs it where they are"]
    fn a_guest_that_never_reports_is_ended_by_the_bound() {
        testkit::require(testkit::Resource::QemuArm);
        let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().unwrap();
        // Not a hypervisor: QEMU executes zeroes and prints nothing. Zeroes alone are refused
        // before booting (not Xen: exit 2); with the arm64 Image header and Xen's banner format
        // they pass that check and boot, to be ended by the bound.
        let fake = d.path().join("not-xen");
        let mut bytes = vec![0u8; 4096];
        std::fs::write(&fake, &bytes).unwrap();
        let out = d.path().join("o");
        let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).env("IRQLAB_LAB_XEN", &fake).args(["xen", "--", "timer", "--out", out.to_str().unwrap()]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("IRQLAB_LAB_XEN") && err.contains("not a Xen/arm64 hypervisor binary"), "{err}");
        assert!(!out.exists(), "refused before anything was written");
        bytes[0x38..0x3c].copy_from_slice(b"ARM\x64");
        bytes[1024..1024 + 18].copy_from_slice(b"Xen version %d.%d\0");
        std::fs::write(&fake, &bytes).unwrap();
        let t = std::time::Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab"))
            .args(["xen", "--xen", fake.to_str().unwrap(), "--timeout-s", "4", "--", "timer", "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("console log:") && err.contains("longer than 4 s"), "{err}");
        assert!(t.elapsed().as_secs() < 60);
        assert!(!out.join("result.json").exists(), "no result from a guest that never reported");
    }
}

#[test]
fn null_scheduler_and_bad_flags_exit_2_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let (code, err) = lab(&["xen", "--sched", "null", "--", "timer", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("null scheduler") && err.contains("CONFIG_SCHED_NULL"), "{err}");
    assert!(!out.exists(), "nothing created");
    let (code, err) = lab(&["xen", "--vwfi", "sometimes", "--", "timer", "--out", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--vwfi"), "{err}");
    let (code, err) = lab(&["xen", "--", "timer", "--wait", "poll", "--out", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--wait"), "{err}");
}

mod needs_arm_guest {
    use super::*;

    #[test]
    #[ignore = "needs the aarch64 cross binutils (the guest image): scripts/test.sh runs it where they are"]
    fn guest_image_for_a_board_is_patched_and_never_replaced() {
        testkit::require(testkit::Resource::ArmGuest);
        let d = tempfile::tempdir().unwrap();
        let out = d.path().to_str().unwrap();
        let (code, err) = lab(&["guest", "--counter-hz", "100000000", "--", "ipi", "--samples", "10", "--warmup", "2", "--period-us", "50", "--out", out]);
        assert_eq!(code, 0, "{err}");
        let img = std::fs::read(d.path().join("armguest-ipi.bin")).unwrap();
        let p = armguest::read_params(&img).unwrap();
        assert_eq!((p.bench, p.samples, p.warmup, p.period_ticks), (armguest::Program::Ipi, 10, 2, 5000));
        assert_eq!(p.uart_base, 0x2200_0000, "Xen's vpl011 by default");
        let (code, err) = lab(&["guest", "--", "ipi", "--out", out]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(std::fs::read(d.path().join("armguest-ipi.bin")).unwrap(), img);
    }
}

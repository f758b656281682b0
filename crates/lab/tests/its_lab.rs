//! `irqlab-lab kvm --trace-its FILE [--move-vcpus-ms MS] [--exit-reasons]`: the ITS command
//! stream and KVM's exit reasons captured in the Arm lab (issue 23 items 3 and 4).
use std::process::Command;

#[test]
fn an_existing_trace_or_script_is_not_replaced_and_nothing_starts() {
    let d = tempfile::tempdir().unwrap();
    for existing in ["its.trace", "its.trace.its"] {
        let t = d.path().join("its.trace");
        let _ = std::fs::remove_file(&t);
        let _ = std::fs::remove_file(d.path().join("its.trace.its"));
        std::fs::write(d.path().join(existing), "earlier\n").unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab"))
            .args(["kvm", "--gic", "v4", "--trace-its"])
            .arg(&t)
            .args(["--", "run", "timer", "--out"])
            .arg(d.path().join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--trace-its") && err.contains(existing) && err.contains("--force"), "{err}");
        assert_eq!(std::fs::read_to_string(d.path().join(existing)).unwrap(), "earlier\n");
        assert!(!d.path().join("out").exists(), "nothing was started");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).args(["kvm", "--move-vcpus-ms", "0", "--", "run", "--out", "x"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--move-vcpus-ms"));
}

#[test]
fn its_convert_writes_the_script_next_to_the_trace_and_names_a_garbled_line() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("q.trace");
    std::fs::write(&t, "gicv3_its_cmd_mapc GICv3 ITS: command MAPC ICID 0x1 RDbase 0x1 V 1\ngicv3_its_cmd_invall GICv3 ITS: command INVALL\n").unwrap();
    let run = |extra: &[&str]| Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).arg("its-convert").args(extra).arg(&t).output().unwrap();
    let o = run(&["--cpus", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let script = std::fs::read_to_string(d.path().join("q.trace.its")).unwrap();
    assert!(script.contains("\ngic v4.0\ncpus 4\n"), "{script}");
    assert!(script.contains("0x0000000000000009 0x0000000000000000 0x8000000000010001 0x0000000000000000   # trace 1: MAPC"), "{script}");
    // Not replaced without --force; replaced with it.
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    assert_eq!(run(&["--force"]).status.code(), Some(0));
    let script = std::fs::read_to_string(d.path().join("q.trace.its")).unwrap();
    assert!(script.contains("\ncpus 2\n"), "replaced: {script}");
    // A garbled line: exit 2 naming the file and the line; the earlier script stays.
    std::fs::write(&t, "gicv3_its_cmd_sync GICv3 ITS: command SYNC\ngicv3_its_cmd_mapc GICv3 ITS: command MAPC ICID zz\n").unwrap();
    let o = run(&["--force"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("q.trace: trace line 2:") && err.contains("ICID"), "{err}");
    assert_eq!(std::fs::read_to_string(d.path().join("q.trace.its")).unwrap(), script);
}

/// Issue 36: its-convert read `/dev/zero` until memory ran out and blocked on a FIFO. Now a
/// trace is a regular file of at most `MAX_TRACE_BYTES`, like every other reader: each is
/// refused at once with exit 2 naming it, and nothing is written.
#[test]
fn its_convert_refuses_devices_fifos_and_oversized_traces_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo.trace");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let big = d.path().join("big.trace");
    std::fs::File::create(&big).unwrap().set_len(lab::its_script::MAX_TRACE_BYTES + 1).unwrap();
    for (t, says) in [(std::path::PathBuf::from("/dev/zero"), "regular file"), (fifo, "regular file"), (big.clone(), "")] {
        let start = std::time::Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).arg("its-convert").arg(&t).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if start.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("{}: its-convert still running after 20 s", t.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let err = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
        assert_eq!(status.code(), Some(2), "{}: {err}", t.display());
        assert!(err.contains(&t.display().to_string()) && err.contains(says), "{err}");
        assert!(!lab::its_script::script_path(&t).exists());
    }
}

/// One QEMU boot with everything on; needs QEMU and the cross-built irqlab
/// (`IRQLAB_LAB_IRQLAB`, as scripts/test.sh runs `needs_arm_lab::`). Counts only, never times.
mod needs_arm_lab {
    use std::path::PathBuf;
    use std::process::Command;

    use sim::arch::arm::gicv4::{check, script};

    #[test]
    #[ignore = "needs QEMU, the aarch64 cross toolchain and the cross-built irqlab: scripts/test.sh runs it where they are"]
    fn trace_its_moves_and_exit_reasons_in_one_boot() {
        testkit::require(testkit::Resource::ArmLab);
        let irqlab = std::env::var_os("IRQLAB_LAB_IRQLAB").map(PathBuf::from).expect("IRQLAB_LAB_IRQLAB: the aarch64 irqlab");
        let d = tempfile::tempdir().unwrap();
        let (t, out) = (d.path().join("its.trace"), d.path().join("out"));
        let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab"))
            .args(["kvm", "--gic", "v4", "--icount", "--exit-reasons", "--move-vcpus-ms", "20", "--trace-its"])
            .arg(&t)
            .arg("--irqlab")
            .arg(&irqlab)
            .args(["--", "run", "timer", "--samples", "100", "--period-us", "1000", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        // The stream: vPE 0 mapped at VM start, moved at least once, clean on GICv4.0.
        let text = std::fs::read_to_string(d.path().join("its.trace.its")).unwrap();
        assert!(text.contains("\ngic v4.0\ncpus 2\n"), "{text:.400}");
        let s = script::parse(&text).unwrap();
        let r = check::run(&s);
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        let decoded: Vec<&str> = r.steps.iter().map(|s| s.decoded.as_str()).collect();
        assert!(decoded.iter().any(|d| d.starts_with("VMAPP vPE 0 -> redistributor")), "VMAPP at VM start");
        assert!(decoded.iter().any(|d| d.starts_with("VMOVP vPE 0")), "a vCPU move made KVM move the vPE: {err}");
        // Exit reasons: every timer interrupt costs one exit, a WFI trap (the vCPU waited) or an
        // IRQ exit (it arrived while the vCPU ran: with the mover, a few do); every event present.
        let reasons = std::fs::read_to_string(out.join("kvm-exit-reasons.txt")).unwrap();
        let n = |what: &str| -> u64 { reasons.lines().find(|l| l.contains(what)).and_then(|l| l.split_whitespace().next()?.parse().ok()).unwrap_or(0) };
        let (wfx, irq) = (n("TRAP: HSR_EC: 0x0001 (WFx)"), n("IRQ: HSR_EC: 0x0000"));
        assert!(wfx >= 50 && wfx + irq >= 101, "{reasons}");
        assert!(!reasons.contains("missing "), "{reasons}");
        let log = std::fs::read_to_string(out.join("kvm-console.log")).unwrap();
        assert!(log.contains("@irqlab-lab mover every 20 ms"), "the mover ran");
    }
}

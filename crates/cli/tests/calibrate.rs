//! `irqlab calibrate` and `irqlab sim --profile` end to end, on measured results recorded on this
//! project's KVM host (crates/cli/tests/data/measured-*.json, `irqlab run … --samples 300`), and
//! the whole loop (`scripts/validate-host.sh`) where /dev/kvm opens.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sim::platform::{Basis, Platform};

testkit::irqlab_fn!();

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn data() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("measured-"))
        // measured-timer.json is the report tests' fixture (another host run), not a calibration input.
        .filter(|p| p.file_name().unwrap() != "measured-timer.json")
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

const FAST: &[&str] = &["--fit-samples", "400", "--max-iters", "25", "--restarts", "1", "--no-loo"];

#[test]
fn calibrates_on_recorded_measurements_and_the_profile_runs_any_scenario() {
    let d = tempfile::tempdir().unwrap();
    let files = data();
    assert_eq!(files.len(), 8);
    let mut args: Vec<&str> = vec!["calibrate"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", "host.toml", "--table", "fit.md"]);
    args.extend(FAST);
    let o = irqlab(&args, d.path());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for label in ["timer-hlt", "timer-hlt-poll0", "timer-busy", "device-irqfd", "device-msi", "device-line", "device-level", "ipi-oneway", "ipi-roundtrip"] {
        assert!(out.lines().any(|l| l.trim_start().starts_with(&format!("{label} "))), "no row for {label}:\n{out}");
    }
    assert!(out.contains("not identified") && out.contains("held out"), "{out}");
    let profile = std::fs::read_to_string(d.path().join("host.toml")).unwrap();
    let p = Platform::parse(&profile, "host.toml").unwrap();
    let base = Platform::shipped("kvm-pvm-nested-host").unwrap();
    let fitted: Vec<&String> = p.costs.iter().filter(|(_, c)| c.source.contains("fitted by irqlab calibrate")).map(|(k, _)| k).collect();
    assert!(!fitted.is_empty(), "{profile}");
    for (k, c) in &p.costs {
        if fitted.contains(&k) {
            assert_eq!(c.basis, Basis::Measured, "{k}");
            assert!(c.source.contains("measured-timer-hlt.json") && c.source.contains("vm (AMD EPYC"), "{k}: {}", c.source);
        } else {
            assert_eq!(c, &base.costs[k], "{k} must be kept as it was");
        }
    }
    assert_eq!(p.params["host_halt_poll_ns"].basis, Basis::Measured);
    assert!(std::fs::read_to_string(d.path().join("fit.md")).unwrap().contains("| timer-busy | held out |"));

    // The profile runs another scenario, and the result says which profile it ran on.
    let o = irqlab(&["sim", "kvm-apic-timer-virt", "--profile", "host.toml", "--set", "workload.samples=200", "--out", "whatif", "--format", "json"], d.path());
    assert!(o.status.success(), "{:?}", text(&o));
    let r = results::read_json(&d.path().join("whatif/result.json")).unwrap();
    assert_eq!(r.meta.platform["profile"], "kvm-pvm-nested-host-calibrated-vm");

    // --against pairs by parameters: every measured path finds its prediction.
    let o = irqlab(&["sim", "kvm-x86-host", "--profile", "host.toml", "--set", "workload.samples=400", "--out", "predicted", "--format", "json"], d.path());
    assert!(o.status.success(), "{:?}", text(&o));
    let mut args: Vec<&str> = vec!["calibrate"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--against", "predicted/result.json"]);
    let o = irqlab(&args, d.path());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("timer-") || l.starts_with("device-") || l.starts_with("ipi-")).collect();
    assert_eq!(rows.len(), 9, "{out}");
    assert!(rows.iter().all(|l| !l.contains("n/a")), "{out}");
}

#[test]
fn mixed_hosts_and_simulated_results_are_refused_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let files = data();
    let mut other = results::read_json(Path::new(&files[0])).unwrap();
    other.meta.platform.insert("host.hostname".into(), "otherbox".into());
    let other_path: PathBuf = d.path().join("other.json");
    results::write_json(&other_path, &other).unwrap();
    let o = irqlab(&["calibrate", &files[1], other_path.to_str().unwrap(), "-o", "h.toml"], d.path());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&files[1]) && err.contains("other.json") && err.contains("otherbox") && err.contains("vm ("), "{err}");
    assert!(!d.path().join("h.toml").exists());

    let o = irqlab(&["sim", "kvm-x86-host", "--set", "workload.samples=100", "--out", "sim", "--format", "json"], d.path());
    assert!(o.status.success());
    let o = irqlab(&["calibrate", &files[1], "sim/result.json", "-o", "h.toml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("calibrate takes measured results"), "{:?}", text(&o));

    let o = irqlab(&["calibrate", &files[1], "--train", "timer-sleep", "-o", "h.toml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--train `timer-sleep`"), "{:?}", text(&o));

    let o = irqlab(&["sim", "kvm-x86-host", "--profile", "missing.toml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--profile missing.toml"));
}

mod needs_kvm {
    use super::*;

    extern "C" {
        #[link_name = "geteuid"]
        fn libc_geteuid() -> u32;
    }

    #[test]
    #[ignore = "needs /dev/kvm: scripts/test.sh runs it where /dev/kvm opens"]
    fn whole_loop_on_this_hosts_kvm() {
        testkit::require(testkit::Resource::Kvm);
        kvm::kvm_available().unwrap_or_else(|why| panic!("this test needs /dev/kvm: {why}"));
        let d = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/validate-host.sh");
        // A shared host can make two wake-up primitives trade places (a blocked wake measured below
        // a polled one): calibrate then refuses, naming the primitive — the behaviour issue 26 asks
        // for. Such a refusal is measured again, at most three times in all, each one printed; any
        // other failure, or three refusals, fails the test.
        let mut attempt = 0;
        let (o, out, err) = loop {
            attempt += 1;
            let _ = std::fs::remove_dir_all(d.path().join("vh"));
            let o = Command::new("bash")
                .arg(&script)
                .arg(d.path().join("vh"))
                .arg("300")
                .env("IRQLAB", env!("CARGO_BIN_EXE_irqlab"))
                // SCHED_FIFO keeps the other work of a shared host off the primitives' tails (root only).
                // SAFETY: geteuid takes no arguments and cannot fail.
                .env("RUN_FLAGS", if unsafe { libc_geteuid() } == 0 { "--priority 50" } else { "" })
                .output()
                .unwrap();
            let (out, err) = text(&o);
            if !o.status.success() && err.contains("too noisy to identify") && attempt < 3 {
                eprintln!(
                    "attempt {attempt}: calibrate refused the primitives as too noisy on this shared host; measuring again:\n{}",
                    err.lines().filter(|l| l.contains("too noisy")).collect::<Vec<_>>().join("\n")
                );
                continue;
            }
            break (o, out, err);
        };
        assert!(o.status.success(), "{out}\n{err}");
        let table = std::fs::read_to_string(d.path().join("vh/comparison.md")).unwrap();
        assert_eq!(table.lines().filter(|l| l.starts_with("| ") && l.contains("held out")).count(), 6, "{table}");
        assert!(table.contains("apic-timer-virt p50") && table.contains("posted-interrupts p50"), "{table}");
        Platform::parse(&std::fs::read_to_string(d.path().join("vh/host.toml")).unwrap(), "host.toml").unwrap();
    }
}

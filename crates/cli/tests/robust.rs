//! Hostile input and hostile output targets, end to end: every reader against the malformed
//! corpus, stdout that fails, output files that must not be replaced, `irqlab run` flag abuse.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irqlab"))
}

testkit::irqlab_fn!();

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn corpus(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/malformed").join(kind);
    let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    assert!(v.len() >= 5, "{kind} corpus");
    v
}

/// Exit 2, no panic, and the message names the file.
fn assert_rejected(o: &Output, file: &Path) {
    let e = err(o);
    let name = file.file_name().unwrap().to_str().unwrap();
    assert_eq!(o.status.code(), Some(2), "{name}: {e}");
    assert!(!e.contains("panicked"), "{name}: {e}");
    assert!(e.contains(name), "{name}: message must name the file: {e}");
}

const DEMO: &str = include_str!("../../../scenarios/demo-timer-inject.toml");

#[test]
fn malformed_scenarios_are_rejected_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    for f in corpus("scenario") {
        let o = irqlab(&["sim", f.to_str().unwrap(), "--out", "o"], d.path());
        assert_rejected(&o, &f);
    }
}

#[test]
fn malformed_profiles_are_rejected_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    for f in corpus("profile") {
        let sc = d.path().join("uses-profile.toml");
        let text = DEMO.replace("profile = \"demo-arm64-a53\"", &format!("profile = {:?}", f.to_str().unwrap()));
        std::fs::write(&sc, text.replace("samples = 20000", "samples = 100")).unwrap();
        let o = irqlab(&["sim", sc.to_str().unwrap(), "--out", "o"], d.path());
        assert_rejected(&o, &f);
    }
}

#[test]
fn malformed_results_are_rejected_by_report_and_compare_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    for f in corpus("result") {
        let p = f.to_str().unwrap();
        assert_rejected(&irqlab(&["report", p, "-o", "r.html"], d.path()), &f);
        assert_rejected(&irqlab(&["compare", p, p], d.path()), &f);
        assert!(!d.path().join("r.html").exists());
    }
}

fn small_demo(dir: &Path) -> String {
    let p = dir.join("demo.toml");
    std::fs::write(&p, DEMO.replace("samples = 20000", "samples = 500")).unwrap();
    p.display().to_string()
}

#[test]
fn broken_pipe_ends_quietly_and_full_disk_is_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    for args in [vec!["scenarios"], vec!["sim", &sc, "--out", "o"], vec!["sim", &sc, "--out", "o", "--format", "json"]] {
        let (r, w) = std::io::pipe().unwrap();
        drop(r);
        let o = bin().args(&args).current_dir(d.path()).stdout(w).stderr(Stdio::piped()).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
        assert!(!err(&o).contains("panicked"), "{}", err(&o));

        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = bin().args(&args).current_dir(d.path()).stdout(full).stderr(Stdio::piped()).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(err(&o).contains("cannot write to stdout: No space left on device"), "{}", err(&o));
    }
}

/// A result whose configuration name and figure carry terminal escapes and a non-finite value.
fn hostile_result(dir: &Path) -> PathBuf {
    let d = tempfile::tempdir_in(dir).unwrap();
    let sc = small_demo(d.path());
    let o = irqlab(&["sim", &sc, "--out", "o"], d.path());
    assert!(o.status.success(), "{}", err(&o));
    let mut r = results::read_json(&d.path().join("o/result.json")).unwrap();
    r.configs[0].name = "evil\x1b]0;owned\x07\x1b[2J".into();
    r.configs[0].set_figure("ratio", f64::INFINITY, "x");
    let p = dir.join("hostile.json");
    results::write_json(&p, &r).unwrap();
    p
}

#[test]
fn compare_and_report_escape_control_characters_and_read_non_finite_figures() {
    let d = tempfile::tempdir().unwrap();
    let p = hostile_result(d.path());
    let p = p.to_str().unwrap();
    let o = irqlab(&["compare", p, p], d.path());
    assert!(o.status.success(), "{}", err(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "raw escape printed: {out:?}");
    assert!(out.contains("evil\\u{1b}]0;owned"), "{out}");
    let o = irqlab(&["report", p, "-o", "r.html"], d.path());
    assert!(o.status.success(), "{}", err(&o));
}

#[test]
fn report_output_writes_through_links_and_devices_refuses_directories() {
    let d = tempfile::tempdir().unwrap();
    let p = hostile_result(d.path());
    let p = p.to_str().unwrap();
    // A symlink stays a link; the file it points to gets the report (--force: it is no report yet).
    std::fs::write(d.path().join("real.html"), "old").unwrap();
    std::os::unix::fs::symlink("real.html", d.path().join("link.html")).unwrap();
    let o = irqlab(&["report", p, "-o", "link.html", "--force"], d.path());
    assert!(o.status.success(), "{}", err(&o));
    assert!(std::fs::symlink_metadata(d.path().join("link.html")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(d.path().join("real.html")).unwrap().contains("<html"));
    // A device stays a device (this matters when run as root).
    let o = irqlab(&["report", p, "-o", "/dev/null"], d.path());
    assert!(o.status.success(), "{}", err(&o));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    // `-o -` is stdout.
    let o = irqlab(&["report", p, "-o", "-"], d.path());
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("<html"), "{}", err(&o));
    assert!(!d.path().join("-").exists());
    // A directory is refused and nothing is left next to it.
    std::fs::create_dir(d.path().join("dir")).unwrap();
    let o = irqlab(&["report", p, "-o", "dir"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("is a directory"), "{}", err(&o));
    let leftovers: Vec<_> = std::fs::read_dir(d.path()).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().contains(".tmp")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn result_json_and_csv_are_replaced_together_and_keep_other_files() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    assert!(irqlab(&["sim", &sc, "--seed", "1", "--out", "o"], d.path()).status.success());
    std::fs::write(d.path().join("o/notes.txt"), "mine").unwrap();
    let o = irqlab(&["sim", &sc, "--seed", "2", "--out", "o"], d.path());
    assert!(o.status.success(), "{}", err(&o));
    let r = results::read_json(&d.path().join("o/result.json")).unwrap();
    assert_eq!(r.meta.seed, 2);
    assert_eq!(std::fs::read(d.path().join("o/result.csv")).unwrap(), results::to_csv(&r).into_bytes(), "CSV of the same run");
    assert_eq!(std::fs::read_to_string(d.path().join("o/notes.txt")).unwrap(), "mine");
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
    // An output directory holding directories is not irqlab's to replace: refused before running.
    std::fs::create_dir(d.path().join("o/sub")).unwrap();
    let o = irqlab(&["sim", &sc, "--out", "o"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("holds `sub`"), "{}", err(&o));
    let o = irqlab(&["sim", &sc, "--out", "."], d.path());
    assert!(err(&o).contains("current directory"), "{}", err(&o));
}

mod needs_strace {
    use super::*;

    /// Fault injection with strace: failures at fsync (EIO), write (ENOSPC) and rename (EXDEV) leave
    /// the previous results whole and no temporary file or directory behind. Needs strace and ptrace.
    #[test]
    #[ignore = "needs strace with ptrace permitted: scripts/test.sh runs it where they are"]
    fn injected_write_failures_leave_old_results_and_no_temporaries() {
        testkit::require(testkit::Resource::Strace);
        assert!(Command::new("strace").arg("-V").output().map(|o| o.status.success()).unwrap_or(false), "this test needs strace (apt-get install strace)");
        let d = tempfile::tempdir().unwrap();
        let sc = small_demo(d.path());
        assert!(irqlab(&["sim", &sc, "--seed", "1", "--out", "o"], d.path()).status.success());
        let before = std::fs::read(d.path().join("o/result.json")).unwrap();
        for inject in ["fsync:error=EIO", "rename,renameat,renameat2:error=EXDEV", "write:error=ENOSPC"] {
            let o = Command::new("strace")
                .args(["-f", "-qq", "-o", "/dev/null", "-e", &format!("inject={inject}")])
                .arg(env!("CARGO_BIN_EXE_irqlab"))
                .args(["sim", &sc, "--seed", "2", "--out", "o", "--format", "csv"])
                .current_dir(d.path())
                .output()
                .unwrap();
            assert!(!err(&o).contains("ptrace"), "this test needs ptrace: {}", err(&o));
            assert_eq!(o.status.code(), Some(2), "{inject}: {}", err(&o));
            assert!(!err(&o).contains("panicked"), "{inject}: {}", err(&o));
            assert!(std::fs::read(d.path().join("o/result.json")).unwrap() == before, "{inject}: previous result replaced");
            // The one writer's lock file (cli/src/output/lock.rs) stays beside `o` by design; it is not a temporary.
            let mut names: Vec<_> =
                std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| !n.starts_with(".irqlab-lock-")).collect();
            names.sort();
            assert_eq!(names, ["demo.toml", "o"], "{inject}: temporaries left");
        }
    }
}

#[test]
fn run_rejects_non_finite_stall_timeouts_before_kvm() {
    let d = tempfile::tempdir().unwrap();
    for bad in ["nan", "inf", "-5", "0"] {
        let o = irqlab(&["run", "timer", &format!("--stall-timeout-s={bad}")], d.path());
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", err(&o));
        assert!(err(&o).contains("--stall-timeout-s: expected 0.1 to 3600 s"), "{bad}: {}", err(&o));
    }
    std::fs::write(d.path().join("m.toml"), "[run]\nbench = \"timer\"\nstall_timeout_s = nan\n").unwrap();
    let o = irqlab(&["run", "--matrix", "m.toml"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("m.toml") && err(&o).contains("--stall-timeout-s"), "{}", err(&o));
    assert!(!d.path().join("out").exists(), "unusable matrix writes nothing");
}

mod needs_two_cpus {
    use super::*;

    #[test]
    #[ignore = "needs taskset and 2 CPUs: scripts/test.sh runs it where they are"]
    fn run_pins_against_the_allowed_cpu_ids() {
        testkit::require(testkit::Resource::TwoCpus);
        assert!(
            Command::new("taskset").arg("-V").output().is_ok() && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2),
            "this test needs taskset (util-linux) and 2 CPUs"
        );
        let d = tempfile::tempdir().unwrap();
        let run = |pin: &str| {
            let o = Command::new("taskset")
                .args(["-c", "1", env!("CARGO_BIN_EXE_irqlab"), "run", "timer", "--pin", pin, "--set", "pv_ipi=true"])
                .current_dir(d.path())
                .output()
                .unwrap();
            err(&o)
        };
        // pv_ipi on timer is refused after the pins are checked: the error shows which check failed.
        assert!(run("1").contains("--pv-ipi does not apply"), "CPU 1 is allowed under taskset -c 1: {}", run("1"));
        assert!(run("0").contains("--pin: host CPU 0 is not one this process may run on (allowed: 1)"), "{}", run("0"));
    }
}

mod needs_kvm {
    use super::*;

    #[test]
    #[ignore = "needs /dev/kvm: scripts/test.sh runs it where /dev/kvm opens"]
    fn run_watchdog_allows_a_period_longer_than_the_stall_timeout() {
        testkit::require(testkit::Resource::Kvm);
        kvm::kvm_available().unwrap_or_else(|why| panic!("this test needs /dev/kvm: {why}"));
        let d = tempfile::tempdir().unwrap();
        let o = irqlab(&["run", "timer", "--samples", "2", "--warmup", "1", "--period-us", "1500000", "--stall-timeout-s", "0.5", "--out", "o"], d.path());
        assert!(o.status.success(), "{}", err(&o));
        let r = results::read_json(&d.path().join("o/result.json")).unwrap();
        assert_eq!(r.configs[0].classes["timer"].summary.count, 2);
    }
}

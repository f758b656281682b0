//! Issue 27, "nothing lost, nothing mislabelled": one test per class of defect found by the
//! hostile-user attack. Each was written first and seen to fail on the main of 2026-11-25.
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irqlab"))
}

testkit::irqlab_fn!();

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), err(&o));
    o
}

/// Exit 2, no panic, and the message holds every one of `words`.
fn refused(o: &Output, words: &[&str]) {
    let e = err(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    for w in words {
        assert!(e.contains(w), "message must hold `{w}`: {e}");
    }
}

const DEMO: &str = include_str!("../../../scenarios/demo-timer-inject.toml");

fn small_demo(dir: &Path) -> String {
    let p = dir.join("demo.toml");
    std::fs::write(&p, DEMO.replace("samples = 20000", "samples = 300")).unwrap();
    p.display().to_string()
}

/// The entries of `d`, without the output directories' lock files (`.irqlab-lock-HASH`, issue 36).
fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| !n.starts_with(".irqlab-lock-")).collect();
    v.sort();
    v
}

fn sim_result(d: &Path, out: &str) -> PathBuf {
    let sc = small_demo(d);
    ok(irqlab(&["sim", &sc, "--out", out, "--format", "csv"], d));
    d.join(out).join("result.json")
}

// ---- data loss -------------------------------------------------------------------------------

#[test]
fn report_output_refuses_its_inputs_links_into_them_and_foreign_files() {
    let d = tempfile::tempdir().unwrap();
    let r = sim_result(d.path(), "R");
    let before = std::fs::read(&r).unwrap();
    // Its own input, directly and through a symlink.
    refused(&irqlab(&["report", "R/result.json", "-o", "R/result.json"], d.path()), &["R/result.json", "input"]);
    std::os::unix::fs::symlink("R/result.json", d.path().join("link.html")).unwrap();
    refused(&irqlab(&["report", "R/result.json", "-o", "link.html"], d.path()), &["link.html", "input"]);
    refused(&irqlab(&["report", "R/result.json", "-o", "R/result.json", "--force"], d.path()), &["input"]);
    assert_eq!(std::fs::read(&r).unwrap(), before, "the only copy of the result is intact");
    // A file that is not an irqlab report: refused, kept; --force replaces it.
    std::fs::write(d.path().join("notes.html"), "my notes").unwrap();
    refused(&irqlab(&["report", "R/result.json", "-o", "notes.html"], d.path()), &["notes.html", "no record of writing this report", "--force"]);
    assert_eq!(std::fs::read_to_string(d.path().join("notes.html")).unwrap(), "my notes");
    ok(irqlab(&["report", "R/result.json", "-o", "notes.html", "--force"], d.path()));
    // An earlier irqlab report is replaced without --force, keeping its mode.
    std::fs::set_permissions(d.path().join("notes.html"), std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(irqlab(&["report", "R/result.json", "-o", "notes.html"], d.path()));
    assert_eq!(std::fs::metadata(d.path().join("notes.html")).unwrap().mode() & 0o7777, 0o640);
    // A write-protected report is respected.
    std::fs::set_permissions(d.path().join("notes.html"), std::fs::Permissions::from_mode(0o444)).unwrap();
    refused(&irqlab(&["report", "R/result.json", "-o", "notes.html"], d.path()), &["notes.html", "write-protected"]);
    assert!(names(d.path()).iter().all(|n| !n.contains("tmp")), "{:?}", names(d.path()));
}

#[test]
fn merge_refuses_to_write_over_its_parts() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    for (i, out) in [(1, "s1"), (2, "s2")] {
        ok(irqlab(&["sim", &sc, "--shard", &format!("{i}/2"), "--out", out, "--format", "csv"], d.path()));
    }
    let before = std::fs::read(d.path().join("s1/result.json")).unwrap();
    refused(&irqlab(&["merge", "s1/result.json", "s1/result.json", "s2/result.json"], d.path()), &["s1", "input"]);
    assert_eq!(std::fs::read(d.path().join("s1/result.json")).unwrap(), before);
}

#[test]
fn replacing_an_output_directory_keeps_its_mode_and_group_and_respects_write_protection() {
    let d = tempfile::tempdir().unwrap();
    let r = sim_result(d.path(), "o");
    let o = r.parent().unwrap();
    std::fs::set_permissions(o, std::fs::Permissions::from_mode(0o2750)).unwrap();
    // As root: another owner and group (a shared setgid directory); otherwise the user's own.
    let _ = std::os::unix::fs::chown(o, Some(4243), Some(4242));
    let (uid, gid) = (std::fs::metadata(o).unwrap().uid(), std::fs::metadata(o).unwrap().gid());
    let sc = small_demo(d.path());
    ok(irqlab(&["sim", &sc, "--out", "o", "--seed", "9", "--format", "csv"], d.path()));
    let m = std::fs::metadata(o).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o2750, uid, gid), "mode, owner and group kept");
    assert_eq!(results::read_json(&r).unwrap().meta.seed, 9);
    // Write-protected: refused before running, nothing changes, nothing is left behind.
    std::fs::set_permissions(o, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = std::fs::read(&r).unwrap();
    refused(&irqlab(&["sim", &sc, "--out", "o", "--seed", "10", "--format", "csv"], d.path()), &["o", "write-protected"]);
    assert_eq!(std::fs::read(&r).unwrap(), before);
    assert_eq!(names(d.path()), ["demo.toml", "o"]);
    std::fs::set_permissions(o, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_legal_250_character_output_name_works_and_leaves_no_temporaries() {
    let d = tempfile::tempdir().unwrap();
    let long = "x".repeat(250);
    let sc = small_demo(d.path());
    ok(irqlab(&["sim", &sc, "--out", &long, "--format", "csv"], d.path()));
    ok(irqlab(&["sim", &sc, "--out", &long, "--format", "csv", "--seed", "3"], d.path()));
    assert_eq!(names(d.path()), ["demo.toml".to_string(), long]);
}

#[test]
fn concurrent_first_writes_to_a_new_output_directory_succeed_or_are_refused_whole() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    let kids: Vec<_> = (0..4)
        .map(|i| {
            bin()
                .args(["sim", &sc, "--out", "new/o", "--format", "csv", "--seed", &i.to_string()])
                .current_dir(d.path())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // One writer at a time (issue 36): each succeeds, or is refused naming the other writer.
    let mut wrote = 0;
    for k in kids {
        let o = k.wait_with_output().unwrap();
        assert!(o.status.success() || (o.status.code() == Some(2) && err(&o).contains("another irqlab")), "{}", err(&o));
        wrote += usize::from(o.status.success());
    }
    assert!(wrote >= 1);
    let r = results::read_json(&d.path().join("new/o/result.json")).unwrap();
    let csv = std::fs::read_to_string(d.path().join("new/o/result.csv")).unwrap();
    assert_eq!(csv, results::to_csv(&r), "JSON and CSV of the same run");
    assert_eq!(names(&d.path().join("new")), ["o"]);
}

// ---- silent wrong results --------------------------------------------------------------------

#[test]
fn merge_refuses_shards_of_an_edited_scenario_or_other_seeds() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    ok(irqlab(&["sim", &sc, "--shard", "1/2", "--out", "a1", "--format", "csv"], d.path()));
    // The sweep reordered between the two shard runs.
    let text = std::fs::read_to_string(&sc).unwrap().replace("[\"trap\", \"native\"]", "[\"native\", \"trap\"]");
    std::fs::write(&sc, &text).unwrap();
    ok(irqlab(&["sim", &sc, "--shard", "2/2", "--out", "a2", "--format", "csv"], d.path()));
    refused(&irqlab(&["merge", "m/result.json", "a1/result.json", "a2/result.json"], d.path()), &["a1/result.json", "a2/result.json", "point list"]);
    // Same scenario, other --seeds.
    ok(irqlab(&["sim", &sc, "--shard", "1/2", "--out", "b1", "--format", "csv", "--seeds", "3"], d.path()));
    ok(irqlab(&["sim", &sc, "--shard", "2/2", "--out", "b2", "--format", "csv", "--seeds", "2"], d.path()));
    refused(&irqlab(&["merge", "m/result.json", "b1/result.json", "b2/result.json"], d.path()), &["seeds"]);
    assert!(!d.path().join("m").exists());
}

#[test]
fn duplicate_sweep_values_and_duplicate_configuration_names_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    let text = std::fs::read_to_string(&sc).unwrap().replace("[\"trap\", \"native\"]", "[\"trap\", \"trap\", \"native\"]");
    std::fs::write(d.path().join("dup.toml"), text).unwrap();
    refused(&irqlab(&["sim", "dup.toml", "--out", "o"], d.path()), &["dup.toml", "sweep.hypervisor.idle", "trap", "twice"]);
    let r = sim_result(d.path(), "ok");
    let mut res = results::read_json(&r).unwrap();
    res.configs[1].name = res.configs[0].name.clone();
    results::write_json(&d.path().join("dups.json"), &res).unwrap();
    let first = res.configs[0].name.clone();
    refused(&irqlab(&["compare", "dups.json", "ok/result.json"], d.path()), &["dups.json", &first]);
    refused(&irqlab(&["report", "dups.json", "-o", "r.html"], d.path()), &["dups.json", &first]);
    assert!(!d.path().join("r.html").exists());
}

#[test]
fn sim_warmup_at_or_above_samples_is_refused_not_shown_as_zero() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    let o = irqlab(&["sim", &sc, "--out", "o", "--set", "workload.samples=5", "--set", "workload.warmup=5"], d.path());
    refused(&o, &["warmup", "WARM_MAX"]);
    assert!(!d.path().join("o").exists());
}

#[test]
fn report_name_typos_are_exit_2_with_a_suggestion() {
    let d = tempfile::tempdir().unwrap();
    sim_result(d.path(), "R");
    refused(&irqlab(&["report", "R/result.json", "-o", "r.html", "--stat", "p999"], d.path()), &["--stat", "p999", "did you mean"]);
    refused(&irqlab(&["report", "R/result.json", "-o", "r.html", "--class", "timr"], d.path()), &["--class", "timr", "did you mean `timer`"]);
    refused(&irqlab(&["report", "R/result.json", "-o", "r.html", "--scatter", "simulated_tme"], d.path()), &["--scatter", "simulated_tme", "did you mean"]);
    assert!(!d.path().join("r.html").exists());
    ok(irqlab(&["report", "R/result.json", "-o", "r.html", "--stat", "p99.9", "--class", "timer", "--scatter", "none"], d.path()));
}

#[test]
fn sim_trace_rounds_beyond_the_sample_count_are_reported() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    let o = ok(irqlab(&["sim", &sc, "--out", "o", "--trace-at", "0,5000"], d.path()));
    let e = err(&o);
    assert!(e.contains("5000") && e.contains("beyond"), "{e}");
}

#[test]
fn its_check_refuses_repeated_headers_and_vpes_beyond_the_table() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.its");
    std::fs::write(&f, "gic v4.1\ngic v3\n").unwrap();
    refused(&irqlab(&["its-check", "s.its"], d.path()), &["s.its", "line 2", "gic"]);
    std::fs::write(&f, "cpus 2\ncpus 4\n").unwrap();
    refused(&irqlab(&["its-check", "s.its"], d.path()), &["s.its", "line 2", "cpus"]);
    std::fs::write(&f, "gic v4.1\nack-vlpi 5000 8192\n").unwrap();
    refused(&irqlab(&["its-check", "s.its"], d.path()), &["s.its", "5000"]);
}

// ---- crashes and memory ----------------------------------------------------------------------

#[test]
fn a_huge_sweep_with_an_unknown_key_is_refused_in_bounded_memory() {
    let d = tempfile::tempdir().unwrap();
    let junk: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
    let values: Vec<String> = (0..10_000).map(|i| (100 + i).to_string()).collect();
    let text = DEMO
        .replace("[sweep]", &format!("junk_key = [{}]\n[sweep]", junk.join(",")))
        .replace("\"hypervisor.idle\" = [\"trap\", \"native\"]", &format!("\"workload.period_us\" = [{}]", values.join(",")));
    std::fs::write(d.path().join("big.toml"), text).unwrap();
    // 1 GiB of address space is far more than validation needs and far less than 10,000 copies.
    let o = Command::new("bash").args(["-c", &format!("ulimit -v 1048576; exec {} sim big.toml --out o", env!("CARGO_BIN_EXE_irqlab"))]).current_dir(d.path()).output().unwrap();
    refused(&o, &["big.toml", "junk_key"]);
}

#[test]
fn numeric_flags_above_i64_max_are_exit_2_naming_the_flag_or_key() {
    let d = tempfile::tempdir().unwrap();
    let big = "9223372036854775808";
    for flag in ["--samples", "--warmup", "--period-cycles", "--halt-poll-ns"] {
        refused(&irqlab(&["run", "timer", flag, big], d.path()), &[flag]);
    }
    std::fs::write(d.path().join("m.toml"), format!("[run]\nbench = \"timer\"\nsamples = {big}\n")).unwrap();
    refused(&irqlab(&["run", "--matrix", "m.toml"], d.path()), &["m.toml", "samples"]);
    refused(&irqlab(&["sim", "demo-timer-inject", "--max-points", "18446744073709551615"], d.path()), &["--max-points"]);
}

#[test]
fn result_readers_refuse_devices_and_oversized_files() {
    let d = tempfile::tempdir().unwrap();
    let r = sim_result(d.path(), "R");
    let r = r.to_str().unwrap();
    for args in [
        vec!["report", "/dev/zero", "-o", "r.html"],
        vec!["compare", "/dev/zero", r],
        vec!["compare", r, "/dev/zero"],
        vec!["merge", "m/result.json", "/dev/zero"],
        vec!["calibrate", "/dev/zero", "-o", "p.toml"],
        vec!["its-check", "/dev/zero"],
    ] {
        let o = irqlab(&args, d.path());
        refused(&o, &["/dev/zero", "not a regular file"]);
    }
    // Profiles too, given on the command line or named by a scenario.
    std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.toml")).unwrap();
    refused(&irqlab(&["sim", "demo-timer-inject", "--profile", "zero.toml", "--out", "z"], d.path()), &["zero.toml", "not a regular file"]);
    std::fs::write(d.path().join("uses.toml"), DEMO.replace("profile = \"demo-arm64-a53\"", "profile = \"zero.toml\"")).unwrap();
    refused(&irqlab(&["sim", "uses.toml", "--out", "z"], d.path()), &["zero.toml", "not a regular file"]);
    // A sparse file far above the cap is refused from its size, without reading it.
    let f = std::fs::File::create(d.path().join("huge.json")).unwrap();
    f.set_len(8 << 30).unwrap();
    refused(&irqlab(&["report", "huge.json", "-o", "r.html"], d.path()), &["huge.json", "bytes"]);
}

// ---- messages --------------------------------------------------------------------------------

#[test]
fn a_closed_stdout_is_exit_2_when_output_would_be_lost() {
    let d = tempfile::tempdir().unwrap();
    sim_result(d.path(), "R");
    let sc = small_demo(d.path());
    for cmd in ["report R/result.json -o -".to_string(), format!("sim {sc} --out o2 --format json")] {
        let o = Command::new("bash").args(["-c", &format!("exec {} {cmd} >&-", env!("CARGO_BIN_EXE_irqlab"))]).current_dir(d.path()).output().unwrap();
        refused(&o, &["stdout"]);
        // A shell's `>/dev/null` is a choice, not a loss.
        let o = Command::new("bash").args(["-c", &format!("exec {} {cmd} >/dev/null", env!("CARGO_BIN_EXE_irqlab"))]).current_dir(d.path()).output().unwrap();
        assert!(o.status.success(), "{}", err(&o));
        // `/dev/null` opened read-write, as Python's `subprocess.DEVNULL`, daemon(3) and CI
        // runners give it, is a working stdout too (issue 36: it was taken for a closed one).
        let o = Command::new("bash").args(["-c", &format!("exec {} {cmd} 1<>/dev/null", env!("CARGO_BIN_EXE_irqlab"))]).current_dir(d.path()).output().unwrap();
        assert!(o.status.success(), "1<>/dev/null: {}", err(&o));
    }
}

/// `irqlab run ARGS` with SCHED_FIFO forbidden (RLIMIT_RTPRIO 0, and for root CAP_SYS_NICE
/// dropped from the bounding set), so that `--priority 50` fails every point at run time.
fn run_without_rt(args: &str, cwd: &Path) -> Output {
    let drop_cap = if unsafe_free_is_root() { "setpriv --bounding-set -sys_nice --inh-caps -sys_nice " } else { "" };
    Command::new("bash").args(["-c", &format!("ulimit -r 0; exec {drop_cap}{} run {args}", env!("CARGO_BIN_EXE_irqlab"))]).current_dir(cwd).output().unwrap()
}

fn unsafe_free_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").unwrap().lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

#[test]
fn calibrate_against_does_not_complain_about_default_training_paths_that_were_not_measured() {
    let d = tempfile::tempdir().unwrap();
    let msi = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/measured-device-msi.json");
    let msi = msi.to_str().unwrap();
    ok(irqlab(&["sim", "kvm-x86-host", "--set", "workload.samples=100", "--out", "p", "--format", "csv"], d.path()));
    // Only a device path was measured: the default training paths (timer-hlt, ipi-one-way) do not apply.
    let o = ok(irqlab(&["calibrate", msi, "--against", "p/result.json"], d.path()));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l.starts_with("device-msi")), "{out}");
    assert!(!err(&o).contains("--train"), "{}", err(&o));
    // A path named on purpose must still exist.
    refused(&irqlab(&["calibrate", msi, "--against", "p/result.json", "--train", "timer-sleep"], d.path()), &["--train `timer-sleep`"]);
}

#[test]
fn an_output_directory_holding_someone_elses_result_json_is_refused_untouched() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("mine")).unwrap();
    std::fs::write(d.path().join("mine/result.json"), "{\"my\": \"data\"}").unwrap();
    let sc = small_demo(d.path());
    refused(&irqlab(&["sim", &sc, "--out", "mine"], d.path()), &["--out mine", "`result.json` that irqlab did not write"]);
    assert_eq!(std::fs::read_to_string(d.path().join("mine/result.json")).unwrap(), "{\"my\": \"data\"}");
    assert_eq!(names(&d.path().join("mine")), ["result.json"]);
}

mod needs_kvm {
    use super::*;

    #[test]
    #[ignore = "needs /dev/kvm: scripts/test.sh runs it where /dev/kvm opens"]
    fn run_force_keeps_the_old_result_and_samples_when_every_point_fails() {
        testkit::require(testkit::Resource::Kvm);
        kvm::kvm_available().unwrap_or_else(|why| panic!("this test needs /dev/kvm: {why}"));
        let d = tempfile::tempdir().unwrap();
        ok(irqlab(&["run", "timer", "--samples", "200", "--out", "t", "--samples-out", "s.tsv", "--format", "csv"], d.path()));
        let (json, samples) = (std::fs::read(d.path().join("t/result.json")).unwrap(), std::fs::read(d.path().join("s.tsv")).unwrap());
        assert!(samples.starts_with(b"# config: timer\n"));
        let o = run_without_rt("timer --samples 200 --priority 50 --out t --force --samples-out s.tsv --format csv", d.path());
        refused(&o, &["--priority 50", "every run failed", "nothing was written"]);
        assert_eq!(std::fs::read(d.path().join("t/result.json")).unwrap(), json, "the good result stays");
        assert_eq!(std::fs::read(d.path().join("s.tsv")).unwrap(), samples, "the samples file stays");
        let names = names(d.path());
        assert!(names.iter().any(|n| n.starts_with(".irqlab-owned-")), "irqlab's record of what it wrote at s.tsv: {names:?}");
        assert_eq!(names.iter().filter(|n| !n.starts_with(".irqlab-owned-")).collect::<Vec<_>>(), ["s.tsv", "t"]);
    }

    #[test]
    #[ignore = "needs /dev/kvm: scripts/test.sh runs it where /dev/kvm opens"]
    fn run_samples_out_refuses_a_foreign_file_and_the_matrix_file_before_measuring() {
        testkit::require(testkit::Resource::Kvm);
        kvm::kvm_available().unwrap_or_else(|why| panic!("this test needs /dev/kvm: {why}"));
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("mine.tsv"), "precious").unwrap();
        refused(&irqlab(&["run", "timer", "--samples", "100", "--out", "t", "--samples-out", "mine.tsv"], d.path()), &["--samples-out", "mine.tsv", "--out only"]);
        assert_eq!(std::fs::read_to_string(d.path().join("mine.tsv")).unwrap(), "precious");
        assert!(!d.path().join("t").exists(), "refused before measuring");
        std::fs::write(d.path().join("m.toml"), "[run]\nbench = \"timer\"\nsamples = 100\n").unwrap();
        refused(&irqlab(&["run", "--matrix", "m.toml", "--out", "t", "--samples-out", "m.toml", "--force"], d.path()), &["m.toml", "input"]);
        assert!(std::fs::read_to_string(d.path().join("m.toml")).unwrap().starts_with("[run]"));
    }
}

mod needs_chattr {
    use super::*;

    /// A file irqlab may not link (immutable here; another user's file under
    /// fs.protected_hardlinks for a non-root user) gives a message naming the directory, the file and
    /// what to do, not a bare "Operation not permitted"; the old results stay, no temporary is left.
    #[test]
    #[ignore = "needs chattr +i (root, a filesystem with the immutable flag): scripts/test.sh runs it where it works"]
    fn a_file_that_cannot_be_carried_across_is_named_with_what_to_do() {
        testkit::require(testkit::Resource::Chattr);
        let d = tempfile::tempdir().unwrap();
        let r = sim_result(d.path(), "o");
        std::fs::write(d.path().join("o/notes.txt"), "theirs").unwrap();
        let chattr = Command::new("chattr").args(["+i", "o/notes.txt"]).current_dir(d.path()).output();
        assert!(chattr.as_ref().is_ok_and(|o| o.status.success()), "this test needs chattr +i: {chattr:?}");
        let before = std::fs::read(&r).unwrap();
        let sc = small_demo(d.path());
        let o = irqlab(&["sim", &sc, "--out", "o", "--seed", "5", "--format", "csv"], d.path());
        let _ = Command::new("chattr").args(["-i", "o/notes.txt"]).current_dir(d.path()).output();
        refused(&o, &["--out o", "`notes.txt`", "Operation not permitted", "give another output"]);
        assert_eq!(std::fs::read(&r).unwrap(), before);
        assert_eq!(names(d.path()), ["demo.toml", "o"]);
    }
}

//! The A/B orchestration with a fake runner: no QEMU, the runner writes a made-up measured
//! result where the lab would, so the schedule, validation, import, verdict and failure paths
//! are tested in milliseconds (the live A/B is tests/kvm_lab.rs `needs_arm_lab::ab_…`).
use std::path::{Path, PathBuf};

use lab::ab::{run_with, split_words, AbConfig, RunEnd, Runner, Side};

/// Writes `result.json` into the run's `--out` with latencies around `base[side]` (a few per
/// cent apart between runs), or fails at `fail_at`.
struct Fake {
    base: [u64; 2],
    fail_at: Option<(Side, u32)>,
    calls: Vec<(Side, u32, Vec<String>)>,
}

impl Fake {
    fn new(a: u64, b: u64) -> Fake {
        Fake { base: [a, b], fail_at: None, calls: Vec::new() }
    }
}

fn made_up(base: u64, rep: u32, call: usize) -> results::RunResult {
    let mut rec = results::LatencyRecorder::new(0);
    let centre = base + base * (rep as u64 % 3) / 100;
    (0..2000u64).for_each(|i| rec.record(centre + (i * 7919) % (base / 10)));
    let mut c = results::ConfigResult::new("run-timer");
    c.classes.insert("timer".into(), rec.finish());
    let mut r = results::RunResult::new(results::RunMeta::named("irqlab 0.1.0", "run-timer", 1, results::ResultKind::Measured));
    r.meta.platform.insert("lab.kernel".into(), format!("side-{base}"));
    // A start time per boot, in the order the runner was called (what irqlab records).
    r.provenance = Some(results::Provenance { started: format!("2026-01-01T00:{call:02}:00Z"), ..Default::default() });
    // irqlab records some figures only when they occur: the A/B must still import the runs.
    if rep == 2 {
        c.set_figure("kvm.sometimes", 1.0, "count");
    }
    r.configs.push(c);
    r
}

impl Runner for Fake {
    fn run(&mut self, side: Side, rep: u32, argv: &[String]) -> RunEnd {
        self.calls.push((side, rep, argv.to_vec()));
        if self.fail_at == Some((side, rep)) {
            return RunEnd { code: 1, last_line: "irqlab-lab: the kernel did not reach /init within 120 s (console log: x)".into() };
        }
        // Every bench of the run has its --out (one boot runs them all in the KVM mode).
        let outs: Vec<PathBuf> = argv.windows(2).filter(|w| w[0] == "--out").map(|w| PathBuf::from(&w[1])).collect();
        assert!(!outs.is_empty(), "--out");
        let base = self.base[if side == Side::A { 0 } else { 1 }];
        for out in outs {
            std::fs::create_dir_all(&out).expect("mkdir");
            results::write_json(&out.join("result.json"), &made_up(base, rep, self.calls.len())).expect("write");
        }
        RunEnd { code: 0, last_line: String::new() }
    }
}

/// The A/B's configuration from `irqlab-lab ab …` as the shell parses it.
fn args(s: &str) -> AbConfig {
    let v = split_words(&format!("irqlab-lab {s}")).expect("words");
    match lab::cli::parse(&v).expect("parses").0 {
        lab::cli::Request::Ab(a) => a,
        _ => unreachable!(),
    }
}

/// `route::check_argv` (the shell's parse and each mode's own checks), as `irqlab-lab ab` uses;
/// KVM sides get an aarch64 irqlab to name (any file: nothing boots here).
fn run(a: &AbConfig, f: &mut Fake, command: Vec<String>) -> Result<i32, lab::ab::AbError> {
    run_with(a, f, &lab::route::check_argv, command)
}

/// A file to name as the aarch64 irqlab of a KVM side (nothing boots in these tests).
const IRQLAB: &str = env!("CARGO_BIN_EXE_irqlab-lab");

fn ab(dir: &Path, extra: &str) -> AbConfig {
    args(&format!("ab kvm --a '--gic v3 --irqlab {IRQLAB}' --b '--gic v4 --irqlab {IRQLAB}' {extra} -- timer --samples 64 --out {}", dir.display()))
}

#[test]
fn interleaves_fresh_runs_imports_and_gives_a_verdict() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("ab");
    let mut f = Fake::new(100_000, 100_000);
    assert_eq!(run(&ab(&out, ""), &mut f, vec!["t".into()]).unwrap(), 0);
    let order: Vec<(Side, u32)> = f.calls.iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(order, [(Side::A, 1), (Side::B, 1), (Side::A, 2), (Side::B, 2), (Side::A, 3), (Side::B, 3)]);
    assert_eq!(f.calls[1].2, split_words(&format!("kvm --gic v4 --irqlab {IRQLAB} -- timer --samples 64 --out {}", out.join("b/run-1").display())).unwrap());
    let a = results::read_json(&out.join("a/result.json")).unwrap();
    assert_eq!(a.configs[0].repetitions.as_ref().unwrap().len(), 3);
    assert_eq!(a.meta.platform["lab.kernel"], "side-100000", "what ran is kept through the import");
    assert!(a.configs[0].notes.iter().any(|n| n.contains("not in every run left out: kvm.sometimes")), "{:?}", a.configs[0].notes);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("comparison.json")).unwrap()).unwrap();
    assert_eq!(doc["verdict"]["given"], true);
    assert_eq!(doc["ab"]["runs_b"], 3);
    assert!(doc["comparison"]["verdicts"].is_object() || doc["comparison"]["verdicts"].is_array(), "{doc}");
    let text = std::fs::read_to_string(out.join("comparison.txt")).unwrap();
    assert!(text.contains("B is not resolvably slower"), "{text}");
    // The runs' start times go through the import, so the interleaved runs are compared in pairs.
    assert_eq!(a.configs[0].repetitions.as_ref().unwrap().started(), Some(vec!["2026-01-01T00:01:00Z", "2026-01-01T00:03:00Z", "2026-01-01T00:05:00Z"]));
    assert!(text.contains("paired over 3 A B pairs"), "{text}");
    // An existing A/B is never replaced.
    let e = run(&ab(&out, ""), &mut Fake::new(1, 1), vec![]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("already exists"), "{e}");
}

#[test]
fn fail_on_slower_exits_4_only_on_a_resolvable_regression() {
    let d = tempfile::tempdir().unwrap();
    let mut f = Fake::new(100_000, 200_000);
    assert_eq!(run(&ab(&d.path().join("x"), "--fail-on slower"), &mut f, vec![]).unwrap(), 4);
    let text = std::fs::read_to_string(d.path().join("x/comparison.txt")).unwrap();
    assert!(text.contains("B is resolvably slower"), "{text}");
    // The same regression without --fail-on: reported, exit 0.
    assert_eq!(run(&ab(&d.path().join("y"), ""), &mut Fake::new(100_000, 200_000), vec![]).unwrap(), 0);
    // B faster: no gate trips.
    assert_eq!(run(&ab(&d.path().join("z"), "--fail-on slower:p50"), &mut Fake::new(200_000, 100_000), vec![]).unwrap(), 0);
}

#[test]
fn a_side_failing_mid_run_keeps_the_other_results_and_gives_no_verdict() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("ab");
    let mut f = Fake::new(100_000, 100_000);
    f.fail_at = Some((Side::B, 2));
    assert_eq!(run(&ab(&out, "--fail-on slower"), &mut f, vec![]).unwrap(), 1);
    assert_eq!(f.calls.len(), 4, "no boot after the failure");
    assert!(out.join("a/run-1/result.json").is_file() && out.join("a/run-2/result.json").is_file() && out.join("b/run-1/result.json").is_file());
    let a = results::read_json(&out.join("a/result.json")).unwrap();
    assert_eq!(a.configs[0].repetitions.as_ref().unwrap().len(), 2);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("comparison.json")).unwrap()).unwrap();
    assert_eq!(doc["verdict"]["given"], false);
    let why = doc["verdict"]["why"].as_str().unwrap();
    assert!(why.contains("side B failed at run 2 of 3") && why.contains("did not reach /init"), "{why}");
    // Side A failing at its first run: B never ran, A has nothing; still no verdict, exit 1.
    let mut f = Fake::new(1000, 1000);
    f.fail_at = Some((Side::A, 1));
    assert_eq!(run(&ab(&d.path().join("first"), ""), &mut f, vec![]).unwrap(), 1);
    assert_eq!(f.calls.len(), 1);
}

#[test]
fn bad_sides_are_refused_before_any_boot_naming_the_side() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().display().to_string();
    let img = d.path().join("Image");
    std::fs::write(&img, b"\x7fELF not an arm64 Image at all, just some bytes to be long enough to read").unwrap();
    let cases = [
        (format!("ab kvm --a '--gic v3 --irqlab {IRQLAB}' --b '--gic v5' -- timer --out {o}/1"), "side B"),
        (format!("ab kvm --a '--gic v3 -- ipi' --b '' -- timer --out {o}/2"), "the bench and `--out` come once"),
        (format!("ab kvm --a '--out x' --b '' -- timer --out {o}/3"), "side A"),
        (format!("ab kvm --a '--kernel {}' --b '' -- timer --out {o}/4", img.display()), "side A (--a '--kernel"),
        (format!("ab kvm --a '--kernel {}' --b '' -- timer --out {o}/4", img.display()), "not an arm64 Linux Image"),
        (format!("ab kvm --a '' --b '' -- sim demo --out {o}/5"), "expected a bench first"),
        (format!("ab kvm --a '' --b '' --repeat 1 -- timer --out {o}/6"), "--single-run"),
        (format!("ab kvm --a '--device edu --irqlab {IRQLAB}' --b '--irqlab {IRQLAB}' -- device --via vfio-msi --out {o}/7"), "side B (--b '--irqlab"),
        (format!("ab xen --a '' --b '--vcpus 1' -- ipi --out {o}/8"), "side B"),
        (format!("ab xen --a '' --b '' -- device --out {o}/9"), "device"),
        (format!("ab kvm --a \"--gic 'v3\" --b '' -- timer --out {o}/10"), "unclosed"),
        ("ab kvm --a '' --b '' -- timer".to_string(), "--out DIR"),
    ];
    let mut cases = cases.to_vec();
    if std::env::var_os("IRQLAB_LAB_IRQLAB").is_none() {
        // The lab builds nothing at run time: a KVM side without an aarch64 irqlab is refused.
        cases.push((format!("ab kvm --a '' --b '' -- timer --out {o}/7b"), "no aarch64 irqlab to run inside"));
    }
    for (cmd, says) in cases {
        let mut f = Fake::new(1, 1);
        let e = run(&args(&cmd), &mut f, vec![]).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{cmd}: {e}");
        assert!(e.to_string().contains(says), "{cmd}: {e}");
        assert!(f.calls.is_empty(), "{cmd}: booted");
    }
    assert!(std::fs::read_dir(d.path()).unwrap().all(|e| e.unwrap().file_name() == "Image"), "nothing created");
}

#[test]
fn single_run_is_one_boot_per_side_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    let mut f = Fake::new(100_000, 100_000);
    assert_eq!(run(&ab(&d.path().join("s"), "--single-run"), &mut f, vec![]).unwrap(), 0);
    assert_eq!(f.calls.len(), 2);
    let text = std::fs::read_to_string(d.path().join("s/comparison.txt")).unwrap();
    assert!(text.contains("--single-run: one boot per side"), "{text}");
}

#[test]
fn side_options_split_like_a_shell() {
    assert_eq!(split_words(r#"--kernel 'my dir/Image' --x "a\"b" c\ d"#).unwrap(), ["--kernel", "my dir/Image", "--x", "a\"b", "c d"]);
    assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
    assert_eq!(split_words("''").unwrap(), [""]);
    assert!(split_words("'x").is_err() && split_words("x\\").is_err());
}

#[test]
fn several_benches_share_each_boot_and_get_a_verdict_each() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("ab");
    let mut f = Fake::new(100_000, 130_000);
    let a = args(&format!(
        "ab kvm --a '--gic v3 --irqlab {IRQLAB}' --b '--gic v4 --irqlab {IRQLAB}' --fail-on slower -- timer --samples 64 -- ipi --samples 64 -- timer --period-us 500 --out {}",
        out.display()
    ));
    assert_eq!(run(&a, &mut f, vec!["t".into()]).unwrap(), 4, "B is slower on every bench");
    assert_eq!(f.calls.len(), 6, "one boot per run, not per bench");
    let run = out.join("b/run-1");
    let want =
        format!("kvm --gic v4 --irqlab {IRQLAB} -- timer --samples 64 --out {0}/timer -- ipi --samples 64 --out {0}/ipi -- timer --period-us 500 --out {0}/timer-2", run.display());
    assert_eq!(f.calls[1].2, split_words(&want).unwrap());
    for n in ["timer", "ipi", "timer-2"] {
        let r = results::read_json(&out.join("a").join(n).join("result.json")).unwrap();
        assert_eq!(r.configs[0].repetitions.as_ref().unwrap().len(), 3, "{n}");
    }
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("comparison.json")).unwrap()).unwrap();
    assert_eq!(j["benches"]["ipi"]["verdict"]["given"], true);
    assert_eq!(
        j["ab"]["runs"].as_array().unwrap().iter().map(|r| format!("{}{}", r["side"].as_str().unwrap(), r["rep"])).collect::<Vec<_>>(),
        ["A1", "B1", "A2", "B2", "A3", "B3"]
    );
    let t = std::fs::read_to_string(out.join("comparison.txt")).unwrap();
    assert!(t.contains("3 benches per boot (timer, ipi, timer-2)") && t.contains("== bench ipi: ipi --samples 64"), "{t}");
    assert!(t.contains("verdicts per bench: timer exit 4, ipi exit 4, timer-2 exit 4"), "{t}");
}

#[test]
fn several_benches_in_xen_are_refused_before_any_boot() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("ab");
    let a = args(&format!("ab xen --a '--icount' --b '--vwfi native' -- timer -- ipi --out {}", out.display()));
    let mut f = Fake::new(1, 1);
    let e = run(&a, &mut f, vec![]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("one A/B per bench"), "{e}");
    assert!(f.calls.is_empty() && !out.exists());
}

#[test]
fn a_side_whose_xen_series_or_settings_cannot_build_is_refused_before_any_boot() {
    // Issue 45: a patch that does not apply, or a --xen-config symbol no Kconfig declares, passed
    // the A/B's validation and failed at run 1 with exit 1.
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("xen-fake");
    std::fs::create_dir_all(tree.join("xen/arch/arm")).unwrap();
    std::fs::write(tree.join("xen/Kconfig"), "config UNSUPPORTED\n\tbool \"u\"\n").unwrap();
    std::fs::write(tree.join("xen/arch/arm/Kconfig"), "config HAS_ITS\n\tbool \"its\"\n").unwrap();
    std::fs::write(tree.join("xen/arch/arm/gic.c"), "int a;\n").unwrap();
    let bad = d.path().join("0001-bad.patch");
    std::fs::write(&bad, "Subject: [PATCH] nope\n---\n--- a/xen/arch/arm/gic.c\n+++ b/xen/arch/arm/gic.c\n@@ -1 +1 @@\n-int b;\n+int c;\n").unwrap();
    let text = d.path().join("xen.txt");
    std::fs::write(&text, "not a hypervisor\n").unwrap();
    let (t, o) = (tree.display(), d.path().join("ab").display().to_string());
    let cases = [
        (format!("ab xen --a '--xen-src {t}' --b '--xen-src {t} --patches {}' -- timer --out {o}", bad.display()), "side B (--b '--xen-src", "0001-bad.patch does not apply"),
        (format!("ab xen --a '--xen-src {t}' --b '--xen-src {t} --xen-config GICV4=y' -- timer --out {o}"), "side B", "--xen-config GICV4=y: no `config GICV4`"),
        (format!("ab xen --a '--xen {}' --b '' -- timer --out {o}", text.display()), "side A", "not a Xen/arm64 hypervisor binary"),
    ];
    for (cmd, side, says) in cases {
        let mut f = Fake::new(1, 1);
        let e = run(&args(&cmd), &mut f, vec![]).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{cmd}: {e}");
        assert!(e.to_string().contains(side) && e.to_string().contains(says), "{cmd}: {e}");
        assert!(f.calls.is_empty(), "{cmd}: booted");
    }
    assert_eq!(std::fs::read_to_string(tree.join("xen/arch/arm/gic.c")).unwrap(), "int a;\n", "the tree is never patched in place");
}

#[test]
fn junit_has_a_suite_per_bench_and_the_summary_is_appended() {
    let d = tempfile::tempdir().unwrap();
    let (j, s) = (d.path().join("gate.xml"), d.path().join("summary.md"));
    std::fs::write(&s, "earlier step\n").unwrap();
    let out = d.path().join("ab");
    let a = args(&format!(
        "ab kvm --a '--irqlab {IRQLAB}' --b '--irqlab {IRQLAB}' --fail-on slower --junit {} --summary-md {} -- timer --samples 64 -- ipi --samples 64 --out {}",
        j.display(),
        s.display(),
        out.display()
    ));
    assert_eq!(run(&a, &mut Fake::new(100_000, 130_000), vec![]).unwrap(), 4);
    let x = std::fs::read_to_string(&j).unwrap();
    assert!(x.starts_with("<?xml") && x.contains("<testsuites"), "{x}");
    assert_eq!(x.matches("<testsuite name=\"timer: ").count() + x.matches("<testsuite name=\"ipi: ").count(), 2, "{x}");
    assert!(x.matches("<failure type=\"slower\"").count() >= 2, "{x}");
    let md = std::fs::read_to_string(&s).unwrap();
    assert!(md.starts_with("earlier step\n**bench timer**\n\n## ❌"), "{md}");
    assert!(md.contains("**bench ipi**"), "{md}");
    // a side that fails: the JUnit file still says so, as an error, not as nothing
    let mut f = Fake::new(100_000, 100_000);
    f.fail_at = Some((Side::B, 1));
    let a = args(&format!("ab kvm --a '--irqlab {IRQLAB}' --b '--irqlab {IRQLAB}' --fail-on slower --junit {} -- timer --out {}", j.display(), d.path().join("ab2").display()));
    assert_eq!(run(&a, &mut f, vec![]).unwrap(), 1);
    let x = std::fs::read_to_string(&j).unwrap();
    assert!(x.contains("<error type=\"unchecked\"") && x.contains("side B failed at run 1"), "{x}");
    // a --junit file irqlab did not write: refused before any boot
    let mine = d.path().join("mine.xml");
    std::fs::write(&mine, "<testsuites/>").unwrap();
    let mut f = Fake::new(1, 1);
    let a = args(&format!("ab kvm --a '--irqlab {IRQLAB}' --b '--irqlab {IRQLAB}' --fail-on slower --junit {} -- timer --out {}", mine.display(), d.path().join("ab3").display()));
    let e = run(&a, &mut f, vec![]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("mine.xml") && e.to_string().contains("--force"), "{e}");
    assert!(f.calls.is_empty());
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "<testsuites/>");
}

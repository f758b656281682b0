//! End-to-end tests of the `irqlab` binary: determinism, error handling, and the report path.
use std::path::Path;
use std::process::{Command, Output};

fn irqlab(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irqlab")).args(args).current_dir(cwd).output().expect("irqlab runs")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

const DEMO: &str = include_str!("../../../scenarios/demo-timer-inject.toml");

fn small_demo(dir: &Path) -> String {
    let p = dir.join("demo.toml");
    std::fs::write(&p, DEMO.replace("samples = 20000", "samples = 3000")).unwrap();
    p.display().to_string()
}

#[test]
fn same_seed_gives_identical_bytes_and_other_seed_differs() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    for (out, seed) in [("a", "5"), ("b", "5"), ("c", "6")] {
        let o = irqlab(&["sim", &sc, "--seed", seed, "--out", out], d.path());
        assert!(o.status.success(), "{:?}", text(&o));
    }
    let a = std::fs::read(d.path().join("a/result.json")).unwrap();
    let b = std::fs::read(d.path().join("b/result.json")).unwrap();
    let c = std::fs::read(d.path().join("c/result.json")).unwrap();
    assert_eq!(a, b, "same scenario + seed must give byte-identical JSON");
    assert_ne!(a, c, "a different seed must change the samples");
    assert_eq!(std::fs::read(d.path().join("a/result.csv")).unwrap(), std::fs::read(d.path().join("b/result.csv")).unwrap());
    let r = results::read_json(&d.path().join("a/result.json")).unwrap();
    assert_eq!(r.configs.len(), 2);
    assert_eq!(r.meta.seed, 5);
}

#[test]
fn table_has_the_source_columns_and_stats() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    let o = irqlab(&["sim", &sc, "--stats", "--trace", "1", "--out", "o"], d.path());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    for col in ["AVG", "MIN", "MAX", "WARM_MAX", "p50", "p90", "p99", "p99.9", "p99.99"] {
        assert!(out.contains(col), "missing column {col}: {out}");
    }
    assert!(out.contains("idle=trap") && out.contains("idle=native"));
    assert!(out.contains("simulated events: ") && out.contains("events/s"));
    assert!(out.contains("pcpu-idle-wakeup"), "trace printed: {out}");
}

#[test]
fn json_and_csv_formats_go_to_stdout() {
    let d = tempfile::tempdir().unwrap();
    let sc = small_demo(d.path());
    let o = irqlab(&["sim", &sc, "--format", "json", "--out", "o"], d.path());
    let (out, _) = text(&o);
    let r = results::from_json_str(&out, "stdout").unwrap();
    assert_eq!(r.configs.len(), 2);
    let o = irqlab(&["sim", &sc, "--format", "csv", "--out", "o"], d.path());
    assert!(text(&o).0.starts_with("scenario,kind,seed,config,"));
}

#[test]
fn bad_scenario_is_exit_2_naming_file_and_key() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("bad.toml");
    std::fs::write(&p, DEMO.replace("[workload]", "[workload]\ncolour = 3")).unwrap();
    let o = irqlab(&["sim", p.to_str().unwrap(), "--out", "o"], d.path());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "every point fails → bad input: {err}");
    assert!(err.contains("bad.toml") && err.contains("workload") && err.contains("colour"), "{err}");
    assert_eq!(err.matches("unknown field `colour`").count(), 1, "said once, not once per point: {err}");

    std::fs::write(&p, "[scenario]\nmodel = 3\n[platform]\nprofile = \"x\"\n").unwrap();
    let o = irqlab(&["sim", p.to_str().unwrap()], d.path());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("bad.toml") && err.contains("scenario.model") && err.contains("invalid type"), "{err}");

    let o = irqlab(&["sim", "no-such-scenario"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("no scenario `no-such-scenario`"));
}

#[test]
fn failing_point_keeps_the_others() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("sweep.toml");
    std::fs::write(
        &p,
        DEMO.replace("samples = 20000", "samples = 500").replace("[\"trap\", \"native\"]", "[\"trap\", \"bogus\", \"native\"]"),
    )
    .unwrap();
    let o = irqlab(&["sim", p.to_str().unwrap(), "--out", "o"], d.path());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("configuration `idle=bogus` failed") && err.contains("hypervisor.idle"), "{err}");
    assert!(out.contains("idle=bogus  FAILED"), "{out}");
    let r = results::read_json(&d.path().join("o/result.json")).unwrap();
    assert_eq!(r.configs.len(), 3);
    assert_eq!(r.configs[0].classes["timer"].summary.count, 500);
    assert!(r.configs[1].error.is_some());
    assert_eq!(r.configs[2].classes["timer"].summary.count, 500);
}

#[test]
fn bad_flags_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "demo-timer-inject", "--format", "xml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("xml"));
    let o = irqlab(&["sim", "demo-timer-inject", "--seed", "-1"], d.path());
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn scenarios_compare_and_report() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["scenarios"], d.path());
    assert!(text(&o).0.contains("demo-timer-inject"));
    let sc = small_demo(d.path());
    assert!(irqlab(&["sim", &sc, "--seed", "1", "--out", "a"], d.path()).status.success());
    assert!(irqlab(&["sim", &sc, "--seed", "2", "--out", "b"], d.path()).status.success());
    let o = irqlab(&["compare", "a/result.json", "b/result.json"], d.path());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("B/A") && out.contains("idle=trap") && out.contains("p99"), "{out}");
    let o = irqlab(&["report", "a/result.json", "b/result.json", "-o", "r.html"], d.path());
    assert!(o.status.success(), "{:?}", text(&o));
    let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("timer latency CDF") && html.contains("idle=native"));
    std::fs::write(d.path().join("old.json"), "{\"schema_version\": 0}").unwrap();
    let o = irqlab(&["compare", "a/result.json", "old.json"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("old.json: result schema version 0"));
}

#[test]
fn run_rejects_impossible_flags_before_touching_kvm() {
    let d = tempfile::tempdir().unwrap();
    for (args, want) in [
        (vec!["run", "timer", "--samples", "0"], "--samples"),
        (vec!["run", "ipi", "--vcpus", "1"], "at least 2 for ipi"),
        (vec!["run", "timer", "--pv-ipi"], "--pv-ipi does not apply to `timer`"),
        (vec!["run", "device", "--wait", "busy"], "--wait busy"),
        (vec!["run", "timer", "--pin", "0,1"], "--pin"),
        (vec!["run", "warp"], "neither timer, ipi, device"),
    ] {
        let o = irqlab(&args, d.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o).1.contains(want), "{args:?}: {}", text(&o).1);
    }
}

#[test]
fn run_measures_on_kvm_and_matrix_keeps_good_points() {
    if let Err(why) = kvm::kvm_available() {
        println!("SKIP: {why}");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["run", "timer", "--samples", "300", "--out", "t", "--format", "json"], d.path());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let r = results::from_json_str(&out, "stdout").unwrap();
    assert_eq!(r.meta.kind, results::ResultKind::Measured);
    assert!(r.meta.platform.contains_key("host.kernel") && r.meta.platform.contains_key("host.guest_ring0"));
    assert_eq!(r.configs[0].classes["timer"].summary.count, 300);
    assert!(r.configs[0].counters["kvm.vcpu.exits"] > 0);
    // A measurement and a model result open side by side.
    let sc = small_demo(d.path());
    assert!(irqlab(&["sim", &sc, "--out", "m"], d.path()).status.success());
    let o = irqlab(&["report", "t/result.json", "m/result.json", "-o", "both.html"], d.path());
    assert!(o.status.success(), "{:?}", text(&o));

    std::fs::write(
        d.path().join("matrix.toml"),
        "[run]\nbench = \"device\"\nsamples = 100\nperiod_us = 100\n[sweep]\nvia = [\"msi\", \"bogus\", \"line\"]\n",
    )
    .unwrap();
    let o = irqlab(&["run", "matrix.toml", "--out", "mx"], d.path());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("via=bogus") && err.contains("unknown variant `bogus`"), "{err}");
    let r = results::read_json(&d.path().join("mx/result.json")).unwrap();
    assert_eq!(r.configs.len(), 3);
    assert_eq!(r.configs[0].classes["device_msi"].summary.count, 100);
    assert!(r.configs[1].error.is_some());
    assert_eq!(r.configs[2].classes["device_line"].summary.count, 100);
}

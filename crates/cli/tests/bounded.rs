//! Issue 36, "no panic, hang or unbounded memory on any input": a stored question without
//! variants is refused naming the key (it panicked `report`), and profile parameters the model
//! cannot compute in bounded time — `counter_mhz = 1e-300` (sim ran forever), a lognormal cost
//! with median 1e-300 (an infinite figure) — are refused by validation, naming the key.
use std::path::Path;
use std::process::{Command, Output};

fn irqlab(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irqlab")).args(args).current_dir(cwd).output().expect("irqlab runs")
}

fn refused(o: &Output, words: &[&str]) {
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    for w in words {
        assert!(e.contains(w), "message must hold `{w}`: {e}");
    }
}

#[test]
fn a_stored_question_without_variants_is_refused_not_a_panic() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "demo-timer-inject", "--out", "R", "--format", "json"], d.path());
    assert!(o.status.success());
    let mut j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("R/result.json")).unwrap()).unwrap();
    j["questions"][0]["variants"] = serde_json::json!([]);
    std::fs::write(d.path().join("q.json"), serde_json::to_string(&j).unwrap()).unwrap();
    refused(&irqlab(&["report", "q.json", "-o", "r.html"], d.path()), &["q.json", "questions[0]", "variants"]);
    assert!(!d.path().join("r.html").exists());
}

#[test]
fn profile_parameters_the_model_cannot_compute_in_bounded_time_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let t = std::time::Instant::now();
    let o = irqlab(
        &[
            "sim",
            "xen-arm-zynq-timer",
            "--out",
            "z",
            "--set",
            "platform.params.counter_mhz.value=1e-300",
            "--set",
            "platform.params.counter_mhz.source=\"t\"",
            "--set",
            "platform.params.counter_mhz.basis=\"guess\"",
        ],
        d.path(),
    );
    refused(&o, &["platform.params.counter_mhz"]);
    assert!(t.elapsed().as_secs() < 60);
    let o = irqlab(
        &[
            "sim",
            "demo-timer-inject",
            "--out",
            "l",
            "--set",
            "platform.costs.lr_inject.median_ns=1e-300",
            "--set",
            "platform.costs.lr_inject.p99_ns=300",
            "--set",
            "platform.costs.lr_inject.source=\"t\"",
            "--set",
            "platform.costs.lr_inject.basis=\"guess\"",
        ],
        d.path(),
    );
    refused(&o, &["platform.costs.lr_inject", "p99_ns / median_ns"]);
}

/// Issue 45: a cold-cache factor far outside physics (`platform.params.cold_factor = 1e6`) passed
/// validation and `sim xen-wfi-policy` ran for minutes (1e12: hours) on its busy-neighbour points.
/// It is refused by validation, naming the key and the bound; the bound itself runs.
#[test]
fn a_cold_cache_factor_beyond_physics_is_refused_and_the_bound_runs() {
    let d = tempfile::tempdir().unwrap();
    let set = |v: &str| ["--set".to_string(), format!("platform.params.cold_factor.value={v}")];
    for (scenario, value, shown) in [("xen-wfi-policy", "1e6", "got 1000000"), ("xen-wfi-policy", "100.5", "got 100.5"), ("xen-arm-a53-dom0less", "1e12", "got 1000000000000")] {
        let mut args: Vec<String> = ["sim", scenario, "--out", "c"].iter().map(|s| s.to_string()).collect();
        args.extend(set(value));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = irqlab(&args, d.path());
        refused(&o, &[&format!("{scenario}.toml"), "platform.params.cold_factor", "at most 100", shown]);
        assert!(!d.path().join("c").exists());
    }
    let mut args: Vec<String> = ["sim", "xen-wfi-policy", "--out", "ok"].iter().map(|s| s.to_string()).collect();
    args.extend(set("100"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = irqlab(&args, d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

//! `irqlab compare` verdicts from the command line: the flags' bad values exit 2 naming the flag,
//! `--fail-on slower` exits 4 on a real slow-down and 0 on a rerun of the same configuration, and
//! the JSON output carries the verdicts.
use std::path::Path;

testkit::irqlab_fn!(no_cwd);

fn sim(dir: &Path, name: &str, seed: &str, extra: &[&str]) -> String {
    let out = dir.join(name);
    let mut args = vec!["sim", "demo-timer-inject", "--seed", seed, "--seeds", "3", "--out", out.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let o = irqlab(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("result.json").display().to_string()
}

#[test]
fn verdicts_flags_and_the_gate() {
    let t = tempfile::tempdir().unwrap();
    let a = sim(t.path(), "a", "1", &[]);
    let a2 = sim(t.path(), "a2", "2", &[]);
    // every sample's list-register write 150 → 400 ns: B is slower
    let b = sim(t.path(), "b", "3", &["--set", "platform.costs.lr_inject.ns=400", "--set", "platform.costs.lr_inject.source=\"test\"", "--set", "platform.costs.lr_inject.basis=\"guess\""]);

    let o = irqlab(&["compare", &a, &b, "--fail-on", "slower:p50"]);
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("resolvably slower") && err.contains("p50"), "{err}");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("Verdicts at 95% confidence") && table.lines().any(|l| l.starts_with("slower") && l.contains(" p50 ")), "{table}");

    let o = irqlab(&["compare", &a, &a2, "--fail-on", "slower"]);
    assert_eq!(o.status.code(), Some(0), "same configuration, other seeds: {}", String::from_utf8_lossy(&o.stderr));

    let o = irqlab(&["compare", &a, &b, "--format", "json", "--confidence", "0.9", "--effect", "2%"]);
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["verdicts"]["confidence"], 0.9);
    assert_eq!(j["verdicts"]["effect"], 0.02);
    let p50 = j["verdicts"]["classes"][0]["stats"].as_array().unwrap().iter().find(|s| s["stat"] == "p50").unwrap();
    assert_eq!(p50["verdict"], "slower");
    assert_eq!(j["verdicts"]["classes"][0]["runs_a"], 3);

    for (flag, value, says) in [("--confidence", "1.5", "outside (0, 1)"), ("--confidence", "0", "outside (0, 1)"), ("--effect", "0", "greater than 0"), ("--effect", "-5%", "greater than 0"), ("--fail-on", "faster", "slower"), ("--fail-on", "slower:p42", "unknown statistic")] {
        let o = irqlab(&["compare", &a, &b, flag, value]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(flag) && err.contains(says), "{flag} {value}: {err}");
    }
}

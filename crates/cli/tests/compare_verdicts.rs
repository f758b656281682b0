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
    let b = sim(
        t.path(),
        "b",
        "3",
        &["--set", "platform.costs.lr_inject.ns=400", "--set", "platform.costs.lr_inject.source=\"test\"", "--set", "platform.costs.lr_inject.basis=\"guess\""],
    );

    let o = irqlab(&["compare", &a, &b, "--fail-on", "slower:p50"]);
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("resolvably slower") && err.contains("p50"), "{err}");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("Verdicts at 95% confidence") && table.lines().any(|l| l.starts_with("slower") && l.contains(" p50 ")), "{table}");

    let o = irqlab(&["compare", &a, &a2, "--fail-on", "slower"]);
    assert_eq!(o.status.code(), Some(0), "same configuration, other seeds: {}", String::from_utf8_lossy(&o.stderr));
    // issue 45 item 5: the share beyond a threshold, in the table and as the gate
    let o = irqlab(&["compare", &a, &a2, "--fail-on", "slower:share>1ms"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("share>1,000.00µs"), "{}", String::from_utf8_lossy(&o.stdout));

    let o = irqlab(&["compare", &a, &b, "--format", "json", "--confidence", "0.9", "--effect", "2%"]);
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["verdicts"]["confidence"], 0.9);
    assert_eq!(j["verdicts"]["effect"], 0.02);
    let p50 = j["verdicts"]["classes"][0]["stats"].as_array().unwrap().iter().find(|s| s["stat"] == "p50").unwrap();
    assert_eq!(p50["verdict"], "slower");
    assert_eq!(j["verdicts"]["classes"][0]["runs_a"], 3);
    // sim's seeds carry no start times: unpaired (Welch) unless --paired says the runs alternated
    assert!(j["verdicts"]["classes"][0]["paired"].is_null());
    assert!(p50["analysis"].as_str().unwrap().starts_with("Welch over 3 + 3 runs"), "{p50}");
    let o = irqlab(&["compare", &a, &b, "--paired"]);
    assert!(o.status.success());
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("paired analysis over 3 A B pairs (--paired)") && table.contains("paired over 3 A B pairs"), "{table}");
    // repetitions: no KS over the pooled runs, and the first runs above are labelled
    assert!(table.contains("not tested") && table.contains("KS over pooled runs ignores run-to-run variance"), "{table}");
    assert!(table.contains("each side's first run"), "{table}");

    for (flag, value, says) in [
        ("--confidence", "1.5", "outside (0, 1)"),
        ("--confidence", "0", "outside (0, 1)"),
        ("--effect", "0", "greater than 0"),
        ("--effect", "-5%", "greater than 0"),
        ("--fail-on", "faster", "slower"),
        ("--fail-on", "slower:p42", "unknown statistic"),
        ("--fail-on", "slower:share>fast", "threshold `fast`"),
        ("--share-above", "0", "threshold `0`"),
    ] {
        let o = irqlab(&["compare", &a, &b, flag, value]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(flag) && err.contains(says), "{flag} {value}: {err}");
    }
}

/// Issue 36: `--fail-on` exits 5, naming what it could not check, when B failed, lost its class
/// or nothing pairs; one run per side needs `--single-run`; `--stat`, `--by` values and
/// `figure:` are validated whether or not they are used.
#[test]
fn the_gate_cannot_pass_by_accident_and_every_flag_is_validated() {
    let t = tempfile::tempdir().unwrap();
    let a = sim(t.path(), "a", "1", &[]);
    let text = std::fs::read_to_string(&a).unwrap();
    let edit = |name: &str, f: &dyn Fn(&mut serde_json::Value)| {
        let mut j: serde_json::Value = serde_json::from_str(&text).unwrap();
        f(&mut j);
        let p = t.path().join(name);
        std::fs::write(&p, serde_json::to_string(&j).unwrap()).unwrap();
        p.display().to_string()
    };
    let failed = edit("failed.json", &|j| {
        let c = &mut j["configs"][0];
        c["error"] = "guest did not boot".into();
        c["classes"] = serde_json::json!({});
        c.as_object_mut().unwrap().remove("repetitions");
    });
    let no_class = edit("noclass.json", &|j| {
        let c = &mut j["configs"][0];
        c["classes"] = serde_json::json!({});
        c.as_object_mut().unwrap().remove("repetitions");
    });
    let renamed = edit("renamed.json", &|j| {
        let c = &mut j["configs"][0];
        let classes = c["classes"].as_object().unwrap().clone();
        let (k, v) = classes.iter().next().unwrap();
        c["classes"] = serde_json::json!({ format!("{k}-other"): v });
        c.as_object_mut().unwrap().remove("repetitions");
        j["configs"][0]["name"] = "something else".into();
        j["configs"][0]["params"] = serde_json::json!({"x": "1"});
    });
    for (b, why) in [(&failed, "did not boot"), (&no_class, "no latency class"), (&renamed, "only in")] {
        for gate in ["slower", "slower:p50"] {
            let o = irqlab(&["compare", &a, b, "--fail-on", gate, "--single-run"]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(5), "{b} {gate}: {err}");
            assert!(err.contains("could not check") && err.contains(why), "{b} {gate}: {err}");
        }
    }
    // one run per side: the gate needs repetitions or an explicit --single-run
    let single = t.path().join("single");
    let o = irqlab(&["sim", "demo-timer-inject", "--out", single.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success());
    let s = single.join("result.json").display().to_string();
    let o = irqlab(&["compare", &s, &s, "--fail-on", "slower"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--single-run"));
    let o = irqlab(&["compare", &s, &s, "--fail-on", "slower", "--single-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // --stat validated without --by; repeated --by values and unknown figures refused
    for (args, says) in [
        (vec!["compare", &a, &a, "--stat", "bogus"], "--stat"),
        (vec!["compare", &a, &a, "--stat", "p99"], "--by"),
        (vec!["compare", &a, "--by", "idle=trap,native,trap"], "twice"),
        (vec!["compare", &a, "--by", "idle=trap,native", "--stat", "p99", "--stat", "p99"], "twice"),
        (vec!["compare", &a, "--by", "idle=trap,native", "--stat", "figure:bogus"], "figure"),
    ] {
        let o = irqlab(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

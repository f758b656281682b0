//! examples/ci/*.yml (issue 34 item 4): the CI recipes a hypervisor project pastes. Their YAML is
//! parsed (python3's yaml, which CI machines here have; skipped with the reason elsewhere unless
//! `CI` is set), and each must run `arm-lab.sh ab` with a `--fail-on slower` gate whose A/B
//! options the lab itself accepts — so a renamed flag breaks this test, not a user's pipeline.
//! Since issue 46 each also writes JUnit XML and a summary and keeps the results history, and
//! the job script for Xen's own CI (xen-automation/) is checked the same way.
use std::path::Path;
use std::process::Command;

fn examples() -> Vec<std::path::PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ci");
    let mut v: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "yml")).collect();
    v.sort();
    v
}

#[test]
fn ci_recipes_are_valid_yaml() {
    let files = examples();
    assert_eq!(files.len(), 2, "{files:?}");
    let py = Command::new("python3").args(["-c", "import yaml"]).output();
    // scripts/ensure-deps.sh installs python3-yaml: a missing module fails, never skips as if passed.
    assert!(py.as_ref().is_ok_and(|o| o.status.success()), "this test needs python3 with the yaml module (python3-yaml; scripts/ensure-deps.sh installs it)");
    for f in files {
        let code = "import sys, yaml\nd = yaml.safe_load(open(sys.argv[1]))\nassert isinstance(d, dict), 'not a mapping'\nprint(' '.join(sorted(map(str, d))))";
        let o = Command::new("python3").args(["-c", code]).arg(&f).output().unwrap();
        assert!(o.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&o.stderr));
        let keys = String::from_utf8_lossy(&o.stdout).to_string();
        let want = if f.ends_with("github-actions.yml") { "jobs" } else { "irq-latency-gate" };
        assert!(keys.split_whitespace().any(|k| k == want), "{}: top-level keys {keys}", f.display());
    }
}

/// Every `arm-lab.sh ab MODE --a "…" --b "…" … -- BENCH … --out DIR` of a recipe, with the
/// shell's variables replaced by made-up paths: (mode, a, b, bench words).
fn gates(text: &str) -> Vec<(String, String, String, Vec<String>)> {
    let flat = text.replace("\\\n", " ").replace('\n', " ");
    let subst = |s: &str| {
        s.replace("$(rel base)", "6.9.0")
            .replace("$(rel patched)", "6.9.0")
            .replace("$A_MODS", "/nonexistent/lib/modules/6.9.0")
            .replace("$B_MODS", "/nonexistent/lib/modules/6.9.0")
            .replace("$PWD", "/nonexistent")
            .replace("$icount", "--icount")
    };
    let quoted = |s: &str, flag: &str| -> String {
        let i = s.find(&format!("{flag} \"")).unwrap_or_else(|| panic!("no {flag} \"…\" in {s}")) + flag.len() + 2;
        subst(&s[i..i + s[i..].find('"').unwrap()])
    };
    let mut out = Vec::new();
    for part in flat.split("scripts/arm-lab.sh ab ").skip(1) {
        let mode = part.split_whitespace().next().unwrap().to_string();
        let bench_at = part.find(" -- ").unwrap() + 4;
        let bench_end = bench_at + part[bench_at..].find("--out").unwrap();
        let words = part[bench_at..bench_end].replace("$bench", "timer --samples 64 --period-us 1000");
        let bench: Vec<String> = words.split_whitespace().map(String::from).collect();
        out.push((mode, quoted(part, "--a"), quoted(part, "--b"), bench));
    }
    out
}

#[test]
fn ci_recipes_run_the_gate_with_options_the_lab_accepts() {
    let mut modes = Vec::new();
    for f in examples() {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.contains("--fail-on slower"), "{}", f.display());
        assert!(!text.contains("if: ${{ false }}") && !text.contains("example.org"), "{}: a job switched off or a placeholder URL", f.display());
        assert!(text.contains("IRQLAB_REPO is not set"), "{}: an unset IRQLAB_REPO must stop the job with a message", f.display());
        // issue 46: the gate reaches the CI's test widget and step summary, and the history is kept
        assert!(text.contains("--junit junit-") && text.contains("--summary-md "), "{}: JUnit and summary outputs", f.display());
        assert!(text.contains("history add gate/b/result.json") && text.contains("--against history:"), "{}: the results history", f.display());
        let found = gates(&text);
        assert!(found.iter().any(|g| g.0 == "kvm") && found.iter().any(|g| g.0 == "xen"), "{}: a KVM and a Xen gate: {found:?}", f.display());
        for (mode, a, b, bench) in found {
            lab_checks_the_sides(&f, &mode, &a, &b, &bench);
            modes.push(format!("{mode} {}", bench[0]));
        }
    }
    for want in ["kvm timer", "xen timer", "xen fio"] {
        assert!(modes.iter().any(|m| m == want), "no `{want}` gate in the recipes: {modes:?}");
    }
}

/// Each gate's side options and bench, as written, with made-up paths: the lab parses them (a
/// renamed flag would exit 2 naming the flag); the first missing file is then refused, before any
/// boot, by the option that names it.
fn lab_checks_the_sides(f: &Path, mode: &str, a: &str, b: &str, bench: &[String]) {
    let out = tempfile::tempdir().unwrap();
    let gate = out.path().join("gate");
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab"))
        .args(["ab", mode, "--a", a, "--b", b, "--repeat", "3", "--fail-on", "slower", "--junit", "gate.xml", "--"])
        .args(bench)
        .arg("--out")
        .arg(&gate)
        .current_dir(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}: {mode} {bench:?}: {err}", f.display());
    let want = if mode == "kvm" { "--kernel /nonexistent" } else { "/nonexistent/xen" };
    assert!(err.contains("side A") && err.contains(want) && !err.contains("unexpected argument"), "{}: {mode} {bench:?}: {err}", f.display());
    assert!(!gate.exists() && !out.path().join("gate.xml").exists(), "nothing is written before the sides are checked");
}

/// The job script for Xen's own CI (examples/ci/xen-automation/): shaped like Xen's
/// automation/scripts (bash, `set -ex -o pipefail`, the variant as $1), valid shell, and its gate
/// is one the lab accepts, with the JUnit and summary outputs.
#[test]
fn the_xen_automation_script_runs_a_gate_the_lab_accepts() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ci/xen-automation/irqlab-gate-arm64.sh");
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(text.starts_with("#!/bin/bash\n") && text.contains("\nset -ex -o pipefail\n") && text.contains("variant=$1"), "{text}");
    let o = Command::new("bash").arg("-n").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("--junit \"irqlab-$variant.xml\"") && text.contains("--summary-md \"irqlab-$variant.md\""));
    let found = gates(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    let (mode, a, b, bench) = &found[0];
    assert_eq!(mode, "xen");
    lab_checks_the_sides(&f, mode, a, b, bench);
    // the GitLab recipe runs it
    let gl = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ci/gitlab-ci.yml")).unwrap();
    assert!(gl.contains("irqlab/examples/ci/xen-automation/irqlab-gate-arm64.sh timer"));
}

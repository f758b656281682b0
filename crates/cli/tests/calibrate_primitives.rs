//! `irqlab calibrate --primitives` on results recorded on this project's KVM host
//! (crates/cli/tests/data/host2-*.json: the eight path benchmarks and `irqlab run primitives`,
//! `--samples 300 --priority 50`; host2-primitives-noisy.json: 2000 samples without --priority
//! while the host was loaded), and `irqlab run primitives`'s refusals. The live run is in
//! crates/kvm/tests/kvm_guests.rs (`needs_kvm::primitives_*`).
use std::path::{Path, PathBuf};
use std::process::Output;

use sim::platform::{Basis, Platform};

testkit::irqlab_fn!();

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name).display().to_string()
}

fn paths() -> Vec<String> {
    ["timer-hlt", "timer-hlt-poll0", "timer-busy", "device-irqfd", "device-msi", "device-line", "device-level", "ipi"].iter().map(|n| data(&format!("host2-{n}.json"))).collect()
}

fn calibrate(extra: &[&str], cwd: &Path) -> Output {
    let files = paths();
    let mut args: Vec<&str> = vec!["calibrate"];
    args.extend(files.iter().map(String::as_str));
    args.extend(extra);
    irqlab(&args, cwd)
}

#[test]
fn paths_are_composed_from_primitives_and_nothing_is_fitted() {
    let d = tempfile::tempdir().unwrap();
    let prims = data("host2-primitives.json");
    let o = calibrate(&["--primitives", &prims, "-o", "host.toml"], d.path());
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("nothing left to fit"), "{out}");
    for label in ["timer-hlt", "timer-hlt-poll0", "timer-busy", "device-irqfd", "device-msi", "device-line", "device-level", "ipi-oneway", "ipi-roundtrip"] {
        assert!(out.lines().any(|l| l.trim_start().starts_with(&format!("{label} "))), "no row for {label}:\n{out}");
    }
    let profile = std::fs::read_to_string(d.path().join("host.toml")).unwrap();
    let p = Platform::parse(&profile, "host.toml").unwrap();
    let base = Platform::shipped("kvm-pvm-nested-host").unwrap();
    for (cost, _, _) in sim::calibrate::primitives::MAPPING {
        let c = &p.costs[*cost];
        assert_eq!(c.basis, Basis::Measured, "{cost}");
        assert!(c.source.contains("host2-primitives.json") && c.source.contains("irqlab run primitives") && c.source.contains("vm (AMD EPYC"), "{cost}: {}", c.source);
    }
    // What no primitive measures is kept as it was.
    assert_eq!(p.costs["ioapic_route"], base.costs["ioapic_route"]);
    assert_eq!(p.costs["handle_hlt"], base.costs["handle_hlt"]);
    // The profile runs (any scenario).
    let o = irqlab(&["sim", "kvm-x86-host", "--profile", "host.toml", "--set", "workload.samples=300", "--out", "pred", "--format", "json"], d.path());
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_too_noisy_primitive_is_named_with_why_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let noisy = data("host2-primitives-noisy.json");
    let o = calibrate(&["--primitives", &noisy, "-o", "host.toml"], d.path());
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains(&format!("--primitives {noisy}: primitive `")), "{out}");
    assert!(out.contains("too noisy to identify") && out.contains("hrtimer_spin") && out.contains("measure on a quieter host"), "{out}");
    assert!(!d.path().join("host.toml").exists(), "no profile from unusable primitives");
}

#[test]
fn wrong_primitives_files_and_flags_exit_2_naming_them() {
    let d = tempfile::tempdir().unwrap();
    // A path result is not a primitives result.
    let timer = data("host2-timer-hlt.json");
    let o = calibrate(&["--primitives", &timer, "-o", "host.toml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains(&format!("--primitives {timer}: no configuration with bench = primitives")), "{}", text(&o));
    // Primitives of another host than the paths.
    let prims = data("host2-primitives.json");
    let older = data("measured-timer-hlt.json");
    let o = irqlab(&["calibrate", &older, "--primitives", &prims, "-o", "host.toml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("results from different hosts") && text(&o).contains("host2-primitives.json"), "{}", text(&o));
    // A missing file is named.
    let o = calibrate(&["--primitives", "nope.json", "-o", "host.toml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("nope.json"), "{}", text(&o));
    // --primitives composes a profile; --against compares finished predictions.
    let o = calibrate(&["--primitives", &prims, "--against", &prims], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--primitives") && text(&o).contains("--against"), "{}", text(&o));
    assert!(!d.path().join("host.toml").exists());
}

#[test]
fn run_primitives_refuses_flags_that_do_not_apply() {
    let d = tempfile::tempdir().unwrap();
    for (flag, args) in [("--duration", &["--duration", "10s"][..]), ("--vcpus", &["--vcpus", "2"]), ("--stop-above", &["--stop-above", "50"]), ("--repeat", &["--repeat", "3"])] {
        let mut a = vec!["run", "primitives", "--out", "p"];
        a.extend(args);
        let o = irqlab(&a, d.path());
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", text(&o));
        assert!(text(&o).contains(&format!("run primitives: {flag}")) && text(&o).contains("does not apply"), "{flag}: {}", text(&o));
        assert!(!d.path().join("p").exists(), "{flag}: nothing written");
    }
    let o = irqlab(&["run", "primitives", "--samples", "0", "--out", "p"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--samples"), "{}", text(&o));
}

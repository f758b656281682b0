//! `irqlab sim --shard I/N` + `irqlab merge`: the merged result is byte-identical to the
//! unsharded run (provenance aside) for any sharding, and bad sets of parts are refused.
use std::path::Path;
use std::process::Output;

testkit::irqlab_fn!();

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    o
}

fn json_without_provenance(p: &Path) -> String {
    results::to_json_string(&results::read_json(p).unwrap().without_provenance())
}

const SMALL: [&str; 4] = ["--set", "workload.samples=60", "--set", "workload.period_us=1100"];

fn sharded(d: &Path, n: usize, extra: &[&str]) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let out = format!("s{n}-{i}");
            let shard = format!("{i}/{n}");
            let mut a = vec!["sim", "xen-wfi-policy", "--shard", &shard, "--out", &out, "--format", "csv"];
            a.extend_from_slice(&SMALL);
            a.extend_from_slice(extra);
            ok(irqlab(&a, d));
            format!("{out}/result.json")
        })
        .collect()
}

#[test]
fn merged_shards_equal_the_unsharded_run() {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec!["sim", "xen-wfi-policy", "--out", "whole", "--format", "csv"];
    a.extend_from_slice(&SMALL);
    ok(irqlab(&a, d.path()));
    let whole = json_without_provenance(&d.path().join("whole/result.json"));
    for n in [1, 4, 7] {
        let mut parts = sharded(d.path(), n, &[]);
        parts.reverse(); // order of the parts does not matter
        let out = format!("m{n}/result.json");
        let mut args = vec!["merge", out.as_str()];
        args.extend(parts.iter().map(String::as_str));
        ok(irqlab(&args, d.path()));
        assert_eq!(json_without_provenance(&d.path().join(&out)), whole, "{n} shards");
        assert_eq!(std::fs::read(d.path().join(format!("m{n}/result.csv"))).unwrap(), std::fs::read(d.path().join("whole/result.csv")).unwrap());
    }
}

#[test]
fn merge_refuses_missing_duplicate_and_foreign_parts() {
    let d = tempfile::tempdir().unwrap();
    let parts = sharded(d.path(), 3, &[]);
    let err = |args: &[&str]| {
        let o = irqlab(args, d.path());
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = err(&["merge", "m/result.json", &parts[0], &parts[2]]);
    assert!(e.contains("missing shard(s) 2/3"), "{e}");
    let e = err(&["merge", "m/result.json", &parts[0], &parts[1], &parts[1], &parts[2]]);
    assert!(e.contains("shard 2/3 given twice"), "{e}");
    // A part from another seed.
    let mut a = vec!["sim", "xen-wfi-policy", "--shard", "2/3", "--seed", "9", "--out", "other", "--format", "csv"];
    a.extend_from_slice(&SMALL);
    ok(irqlab(&a, d.path()));
    let e = err(&["merge", "m/result.json", &parts[0], "other/result.json", &parts[2]]);
    assert!(e.contains("seed 9"), "{e}");
    // A part with other overrides.
    let mut a = vec!["sim", "xen-wfi-policy", "--shard", "2/3", "--out", "other2", "--format", "csv", "--set", "workload.samples=61", "--set", "workload.period_us=1100"];
    a.truncate(a.len());
    ok(irqlab(&a, d.path()));
    let e = err(&["merge", "m/result.json", &parts[0], "other2/result.json", &parts[2]]);
    assert!(e.contains("not parts of the same run"), "{e}");
    // An unsharded result is not a part.
    let mut a = vec!["sim", "xen-wfi-policy", "--out", "whole", "--format", "csv"];
    a.extend_from_slice(&SMALL);
    ok(irqlab(&a, d.path()));
    let e = err(&["merge", "m/result.json", "whole/result.json"]);
    assert!(e.contains("not a shard"), "{e}");
    assert!(!d.path().join("m").exists(), "nothing written on refusal");
}

#[test]
fn fit_separates_residuals_held_out_and_leave_one_out_and_writes_calibrated_overrides() {
    let d = tempfile::tempdir().unwrap();
    let o = ok(irqlab(
        &["fit", "xen-arm-zynq-timer", "--free", "xen_irq_handler", "context_restore", "params.cold_factor", "--set", "workload.samples=200", "-o", "fitted.toml"],
        d.path(),
    ));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("fit residuals") && out.contains("held-out errors") && out.contains("leave-one-out"), "{out}");
    let fitted: toml::Table = toml::from_str(&std::fs::read_to_string(d.path().join("fitted.toml")).unwrap()).unwrap();
    let h = &fitted["platform"]["costs"]["xen_irq_handler"];
    assert_eq!(h["basis"].as_str(), Some("calibrated"));
    assert!(h["source"].as_str().unwrap().contains("irqlab fit"));
    assert!(fitted["platform"]["params"]["cold_factor"]["value"].as_float().unwrap() > 1.0);
    // Unknown names and scenarios without fit references are usage errors.
    let o = irqlab(&["fit", "xen-arm-zynq-timer", "--free", "xen_irq_handlr"], d.path());
    assert_eq!(o.status.code(), Some(2));
    let o = irqlab(&["fit", "demo-timer-inject", "--free", "lr_inject"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no [[reference]] with role = \"fit\""));
}

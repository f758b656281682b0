//! scripts/load_results.py with pandas: the documented two-line use reads result.csv without
//! turning the scheduler `null` into NaN, and result.json into the same µs columns.
use std::process::Command;

#[test]
#[ignore = "needs python3 with pandas (apt-get install python3-pandas); run with --include-ignored"]
fn load_results_py_reads_null_schedulers_and_us_columns() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("fio");
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["sim", "xen-gicv4-fio", "--config", "xen", "--set", "workload.completions=3000", "--set", "workload.warmup=10", "--format", "json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new("python3").arg("scripts/test_load_results.py").arg(&out).current_dir(&root).output().expect("python3 runs");
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("schedulers ['credit2', 'null']"));
}

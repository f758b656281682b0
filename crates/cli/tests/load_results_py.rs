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
    // The first Python that has pandas: $IRQLAB_PYTHON, `python3` on the PATH (a pyenv shim may
    // lack it), then Debian's.
    let candidates = [std::env::var("IRQLAB_PYTHON").unwrap_or_default(), "python3".into(), "/usr/bin/python3".into()];
    let python = candidates
        .iter()
        .filter(|p| !p.is_empty())
        .find(|p| Command::new(p).args(["-c", "import pandas"]).output().is_ok_and(|o| o.status.success()))
        .expect("no python3 with pandas (apt-get install python3-pandas, or set IRQLAB_PYTHON)");
    let o = Command::new(python).arg("scripts/test_load_results.py").arg(&out).current_dir(&root).output().expect("python3 runs");
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("schedulers ['credit2', 'null']"));
}

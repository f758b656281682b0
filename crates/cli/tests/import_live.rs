//! `irqlab import` on output the real tools produce here and now (fio, cyclictest): the imported
//! percentiles must equal the tool's own printed ones within its rounding. Those tests need the
//! tools (`needs_fio`, `needs_cyclictest`; scripts/ensure-deps.sh installs them): ignored with the
//! reason, run by scripts/test.sh where the tools are, a failure with CI set where they are not.
use std::path::Path;
use std::process::Command;

use serde_json::Value;

testkit::irqlab_fn!(no_cwd);

fn result(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap()
}

mod needs_fio {
    use super::*;

    #[test]
    #[ignore = "needs fio: scripts/test.sh runs it where fio is"]
    fn fio_json_plus_from_a_fresh_run() {
        testkit::require(testkit::Resource::Fio);
        let t = tempfile::tempdir().unwrap();
        let data = t.path().join("data");
        std::fs::write(&data, vec![7u8; 1 << 20]).unwrap();
        let out = t.path().join("fio.json");
        let st = Command::new("fio")
            .args(["--name=live", "--ioengine=psync", "--rw=randread", "--bs=4k", "--size=1M", "--runtime=0.3", "--time_based", "--output-format=json+"])
            .arg(format!("--filename={}", data.display()))
            .arg(format!("--output={}", out.display()))
            .output()
            .unwrap();
        assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
        let dir = t.path().join("imported");
        let o = irqlab(&["import", "fio", out.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // fio may put notes (`fio: …`) before the JSON, as the importer allows
        let text = std::fs::read_to_string(&out).unwrap();
        let fio: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        let clat = &fio["jobs"][0]["read"]["clat_ns"];
        let r = result(&dir);
        let s = &r["configs"][0]["classes"]["io"]["summary"];
        assert_eq!(s["count"], clat["N"]);
        assert_eq!(s["min"], clat["min"]);
        assert_eq!(s["max"], clat["max"]);
        for (ours, theirs) in [("p50", "50.000000"), ("p99", "99.000000"), ("p99.9", "99.900000")] {
            let (a, b) = (s[ours].as_f64().unwrap(), clat["percentile"][theirs].as_f64().unwrap());
            // within one of fio's bins (64 per power of two: 1/64 of the value, fio's `stat.h`)
            assert!((a - b).abs() <= b / 64.0 + 1.0, "{ours}: irqlab {a}, fio {b}");
        }
        assert_eq!(r["meta"]["knobs"]["import.tool_version"], fio["fio version"]);
        // never over an earlier result without --force
        let again = irqlab(&["import", "fio", out.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
        assert_eq!(again.status.code(), Some(2));
    }
}

mod needs_cyclictest {
    use super::*;

    #[test]
    #[ignore = "needs cyclictest (rt-tests) allowed to run: scripts/test.sh runs it where it is"]
    fn cyclictest_json_from_a_fresh_run() {
        testkit::require(testkit::Resource::Cyclictest);
        let t = tempfile::tempdir().unwrap();
        let json = t.path().join("c.json");
        let st = Command::new("cyclictest").args(["-l", "500", "-i", "200", "-q", "-h", "200"]).arg(format!("--json={}", json.display())).output().unwrap();
        assert!(st.status.success() && json.exists(), "cyclictest could not run here: {}", String::from_utf8_lossy(&st.stderr).trim());
        let dir = t.path().join("imported");
        let o = irqlab(&["import", "cyclictest", json.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let c: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let th = &c["thread"]["0"];
        let s = &result(&dir)["configs"][0]["classes"]["timer"]["summary"];
        assert_eq!(s["count"], th["cycles"]);
        assert_eq!(s["min"].as_u64().unwrap(), th["min"].as_u64().unwrap() * 1000);
        assert_eq!(s["max"].as_u64().unwrap(), th["max"].as_u64().unwrap() * 1000);
    }

    /// Issue 36: `cyclictest --json` without `-h` (the obvious command) writes an empty histogram;
    /// the import states that no percentile was measured and names `-h`, instead of percentiles
    /// equal to the minimum.
    #[test]
    #[ignore = "needs cyclictest: scripts/test.sh runs it where rt-tests is"]
    fn cyclictest_json_without_h_imports_no_percentile() {
        testkit::require(testkit::Resource::Cyclictest);
        let t = tempfile::tempdir().unwrap();
        let json = t.path().join("c.json");
        let st = Command::new("cyclictest").args(["-l", "300", "-i", "200", "-q"]).arg(format!("--json={}", json.display())).output().unwrap();
        assert!(st.status.success() && json.exists(), "cyclictest did not run: {}", String::from_utf8_lossy(&st.stderr).trim());
        let dir = t.path().join("imported");
        let o = irqlab(&["import", "cyclictest", json.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let c = &result(&dir)["configs"][0];
        assert!(c["classes"].as_object().is_none_or(|m| m.is_empty()), "percentiles from an empty histogram: {}", c["classes"]);
        assert_eq!(c["figures"]["timer.count"]["value"], 300.0);
        let notes = c["notes"].to_string();
        assert!(notes.contains("percentiles not measured") && notes.contains("-h N"), "{notes}");
    }
}

#[test]
fn bad_input_exits_2_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("notfio.json");
    std::fs::write(&f, "{\"jobs\": []}").unwrap();
    let o = irqlab(&["import", "fio", f.to_str().unwrap(), "--out", t.path().join("o").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("notfio.json") && err.contains("fio version"), "{err}");
    assert!(!t.path().join("o").exists(), "nothing written");
    let o = irqlab(&["import", "nope", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 36: cyclictest's `-h` text does not say its unit (`-N` prints ns): `--unit` is
/// required, and a unit that contradicts a file that states one is refused; exit 2 naming the file.
#[test]
fn cyclictest_text_takes_its_unit_from_the_flag() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("hist.txt");
    std::fs::write(&f, "# Histogram\n000000 000000\n000001 000002\n000002 000001\n# Total: 000000003\n# Min Latencies: 00001\n# Avg Latencies: 00001\n# Max Latencies: 00002\n# Histogram Overflows: 00000\n").unwrap();
    let out = |n: &str| t.path().join(n).to_str().unwrap().to_string();
    let o = irqlab(&["import", "cyclictest", f.to_str().unwrap(), "--out", &out("a")]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("hist.txt") && err.contains("--unit"), "{err}");
    let o = irqlab(&["import", "cyclictest", f.to_str().unwrap(), "--unit", "ns", "--out", &out("b")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(result(&t.path().join("b"))["configs"][0]["classes"]["timer"]["summary"]["max"], 2);
    let o = irqlab(&["import", "cyclictest", f.to_str().unwrap(), "--unit", "ms", "--out", &out("c")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--unit ms"));
}

//! `irqlab sim` opens with the answer to the scenario's question, the report too, and
//! `irqlab compare RESULT --by PARAM=A,B` asks the same of any result.

testkit::irqlab_fn!();

#[test]
fn sim_and_report_open_with_the_answer() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "demo-timer-inject", "--out", "demo"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("QUESTION 1: What does running WFI natively"), "{out}");
    let first_lines: Vec<&str> = out.lines().take(2).collect();
    assert!(first_lines[1].starts_with("ANSWER: idle trap → native lowers mean timer latency by"), "{out}");
    assert!(out.find("ANSWER").unwrap() < out.find("CONFIG").unwrap_or(usize::MAX));
    // With --format json the answer goes to stderr and stdout stays JSON.
    let o = irqlab(&["sim", "demo-timer-inject", "--out", "demo2", "--format", "json"], d.path());
    assert!(serde_json::from_slice::<serde_json::Value>(&o.stdout).is_ok());
    assert!(String::from_utf8_lossy(&o.stderr).contains("ANSWER: idle trap → native"));
    let r = results::read_json(&d.path().join("demo/result.json")).unwrap();
    assert_eq!(r.questions.len(), 1, "the question is stored with the result");
    let o = irqlab(&["report", "demo/result.json", "-o", "demo/report.html"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(d.path().join("demo/report.html")).unwrap();
    let ans = html.find("<strong>Answer:</strong> idle trap → native lowers").expect("answer in the report");
    assert!(ans < html.find("id=\"runs\"").unwrap() && ans < html.find("id=\"summary\"").unwrap());
}

#[test]
fn compare_by_pairs_within_one_result() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "xen-arm-zynq-timer", "--seeds", "1", "--out", "z", "--format", "json"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = irqlab(&["compare", "z/result.json", "--by", "tbm_idle=wfi,spin", "--stat", "mean"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("ANSWER: tbm_idle wfi → spin lowers mean timer latency"), "{out}");
    assert!(out.contains("scheduler=credit1, vwfi=trap") && out.contains("scheduler=credit2, vwfi=trap"), "{out}");
    assert!(out.contains("not paired") && out.contains("vwfi=native"), "{out}");
    // Unknown parameter or value: exit 2 naming the flag.
    let o = irqlab(&["compare", "z/result.json", "--by", "tbm_idel=wfi,spin"], d.path());
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--by") && e.contains("did you mean `tbm_idle`"), "{e}");
    let o = irqlab(&["compare", "z/result.json", "--by", "tbm_idle=wfi,spinn"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`spinn`"));
    let o = irqlab(&["compare", "z/result.json", "--by", "tbm_idle=wfi,spin", "--stat", "p95"], d.path());
    assert_eq!(o.status.code(), Some(2));
    // Values that exist but never pair: exit 1 with a message.
    let o = irqlab(&["compare", "z/result.json", "--by", "vwfi=native,trap", "--stat", "mean"], d.path());
    assert!(o.status.success(), "native pairs with trap: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn published_latencies_print_in_the_tables_unit() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "xen-arm-zynq-timer", "--seeds", "1", "--config", "credit1, no WFI", "--out", "z"], d.path());
    let out = String::from_utf8_lossy(&o.stdout);
    // S3 publishes MIN 1,800 ns for this row: 1.80 µs under a µs table, never "1,800".
    let row = out.lines().find(|l| l.starts_with("credit1, no WFI") && l.contains(" min ")).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains(" µs ") && row.contains("1.80") && !row.contains("1,800"), "{row}");
    let o = irqlab(&["sim", "xen-arm-zynq-timer", "--seeds", "1", "--config", "credit1, no WFI", "--out", "n", "--unit", "ns"], d.path());
    let out = String::from_utf8_lossy(&o.stdout);
    let row = out.lines().find(|l| l.starts_with("credit1, no WFI") && l.contains(" min ")).unwrap();
    assert!(row.contains(" ns ") && row.contains("1,800"), "{row}");
}

#[test]
fn a_misspelt_scenario_gets_a_did_you_mean() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "xen-arm-zynq-timr"], d.path());
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("no scenario `xen-arm-zynq-timr`") && e.contains("did you mean `xen-arm-zynq-timer`?"), "{e}");
}

//! A measured result's page: no seed (a measurement has none), KVM counters explained.
use std::path::Path;

fn measured() -> results::RunResult {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/measured-timer.json");
    results::read_json(&p).unwrap()
}

#[test]
fn no_seed_and_explained_counters() {
    let mut r = measured();
    r.configs[0].counters.insert("kvm.insn_emulation_fail".into(), 0);
    let html = report::render_html(&[("m.json".into(), r)]).unwrap();
    assert!(!html.contains("seed 0") && !html.contains(", seed "), "a measured page shows no seed");
    assert!(html.contains("instructions KVM&#x27;s x86 emulator could not emulate") || html.contains("instructions KVM's x86 emulator could not emulate"));
    // A model's page keeps its seed.
    let mut m = measured();
    m.meta.kind = results::ResultKind::Predicted;
    assert!(report::render_html(&[("p.json".into(), m)]).unwrap().contains(", seed "));
}

/// One run: the summary table names it once above the table instead of in a column repeating the
/// same (often long, wrapping) path on every row; two runs keep the column to tell rows apart.
#[test]
fn the_summary_has_a_run_column_only_when_there_are_several_runs() {
    let one = report::render_html(&[("out/some/long/path/result.json".into(), measured())]).unwrap();
    assert!(!one.contains("<th>run</th>"), "one run: no run column");
    assert!(one.contains("Run: out&#x2f;some&#x2f;long&#x2f;path&#x2f;result.json") || one.contains("Run: out/some/long/path/result.json"), "one run: named above the table");
    let two = report::render_html(&[("a.json".into(), measured()), ("b.json".into(), measured())]).unwrap();
    assert!(two.contains("<th>run</th>") && two.contains("<td>b.json"), "two runs: the column");
}

//! `irqlab compare` and `irqlab report` end to end: pairing by parameters, `--map`, the exit
//! status when nothing pairs, output formats, escaping of hostile text, and report flags.
use std::path::Path;
use std::process::Output;

use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};

testkit::irqlab_fn!();

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A result with one configuration per (name, params, latency ns).
fn result(kind: ResultKind, configs: &[(&str, &[(&str, &str)], u64)]) -> RunResult {
    let mut r = RunResult::new(RunMeta::named("irqlab test", "s", 1, kind));
    for (name, params, v) in configs {
        let mut c = ConfigResult::new(*name);
        c.params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        c.seed = *v;
        let mut rec = LatencyRecorder::new(0);
        for i in 0..1000 {
            rec.record(v + i % 50);
        }
        c.classes.insert("timer".into(), rec.finish());
        c.set_figure("other.throughput", *v as f64 / 1000.0, "pCPU");
        r.configs.push(c);
    }
    r
}

fn write(dir: &Path, name: &str, r: &RunResult) {
    results::write_json(&dir.join(name), r).unwrap();
}

#[test]
fn model_and_measurement_pair_by_parameters_with_a_key_map() {
    let d = tempfile::tempdir().unwrap();
    let model = result(ResultKind::Predicted, &[("period=77", &[("workload.period_us", "77")], 4000), ("period=100", &[("workload.period_us", "100")], 5000)]);
    let measured = result(ResultKind::Measured, &[("timer", &[("period_us", "100"), ("wait", "hlt")], 9000)]);
    write(d.path(), "model.json", &model);
    write(d.path(), "host.json", &measured);

    let o = irqlab(&["compare", "model.json", "host.json"], d.path());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "nothing pairs without the map: {out}");
    assert!(out.contains("no configuration pairs") && err.contains("no configuration of model.json pairs"), "{out}{err}");

    let o = irqlab(&["compare", "model.json", "host.json", "--map", "workload.period_us=period_us"], d.path());
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("period=100 | timer") && out.contains("p99.99") && out.contains("µs"), "{out}");
    assert!(out.contains("SEED_A") && out.contains("9000"), "seeds shown: {out}");
    assert!(out.contains("only in A (1): period=77"), "{out}");

    let o = irqlab(&["compare", "model.json", "host.json", "--map", "workload.period_us=period_us", "--format", "csv", "--unit", "ns"], d.path());
    let (out, _) = text(&o);
    assert!(out.starts_with("config_a,config_b,paired_by,seed_a,seed_b,class,stat,unit,a,b,ratio\n"), "{out}");
    assert!(out.contains("period=100,timer,params:period_us,5000,9000,timer,p50,ns,"), "{out}");

    let o = irqlab(&["compare", "model.json", "host.json", "--map", "workload.period_us=period_us", "--format", "json"], d.path());
    let j: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(j["unpaired_a"][0], "period=77");
    assert_eq!(j["pairs"][0]["paired_by"], "params:period_us");

    let o = irqlab(&["compare", "model.json", "host.json", "--map", "nonsense"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("A_KEY=B_KEY"));
}

#[test]
fn hostile_text_is_escaped_and_huge_cells_do_not_panic() {
    let d = tempfile::tempdir().unwrap();
    let evil = format!("\u{1b}]0;owned\u{7}\u{1b}[2J{}", "x".repeat(70_000));
    let mut a = result(ResultKind::Predicted, &[(&evil, &[], 1000), ("ok", &[], 1000)]);
    a.configs[1].error = Some(format!("boom\n{}", "y".repeat(70_000)));
    let b = result(ResultKind::Predicted, &[(&evil, &[], 2000)]);
    write(d.path(), "a.json", &a);
    write(d.path(), "b.json", &b);
    for args in [&["compare", "a.json", "b.json"][..], &["compare", "a.json", "b.json", "--format", "csv"]] {
        let o = irqlab(args, d.path());
        let (out, err) = text(&o);
        assert!(o.status.success(), "{args:?}: {}", &err[..err.len().min(500)]);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{args:?}: control characters reach the terminal");
        assert!(out.contains("\\u{1b}]0;owned\\u{7}"), "{args:?}");
    }
    let o = irqlab(&["compare", "a.json", "b.json"], d.path());
    assert!(text(&o).0.lines().all(|l| l.chars().count() < 1000), "long cells are truncated");
    let o = irqlab(&["report", "a.json", "-o", "r.html"], d.path());
    assert!(o.status.success(), "{:?}", text(&o).1);
    let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
    for svg in html.split("<svg").skip(1) {
        assert!(!svg[..svg.find("</svg>").unwrap()].contains('\u{1b}'), "no raw control characters in plots");
    }
}

#[test]
fn report_flags_choose_pivot_heatmap_and_scatter() {
    let d = tempfile::tempdir().unwrap();
    let mut cfgs: Vec<(String, Vec<(String, String)>, u64)> = Vec::new();
    for (i, p) in ["trap", "native", "adaptive"].iter().enumerate() {
        for (j, o) in ["busy", "idle"].iter().enumerate() {
            cfgs.push((
                format!("vwfi={p}, other={o}"),
                vec![("hypervisor.vwfi".into(), p.to_string()), ("workload.other".into(), o.to_string())],
                1000 * (i as u64 + 1) + 500 * j as u64,
            ));
        }
    }
    let refs: Vec<(&str, Vec<(&str, &str)>, u64)> = cfgs.iter().map(|(n, p, v)| (n.as_str(), p.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect(), *v)).collect();
    let refs2: Vec<(&str, &[(&str, &str)], u64)> = refs.iter().map(|(n, p, v)| (*n, p.as_slice(), *v)).collect();
    write(d.path(), "sweep.json", &result(ResultKind::Predicted, &refs2));

    let o = irqlab(&["report", "sweep.json", "-o", "default.html"], d.path());
    assert!(o.status.success(), "{:?}", text(&o));
    let html = std::fs::read_to_string(d.path().join("default.html")).unwrap();
    assert!(html.contains("Summary: vwfi across, other down"), "default pivot");
    assert!(html.contains("Heatmap: timer p99 (µs) over vwfi × other"));
    assert!(html.contains("timer p99 (µs) against other.throughput (pCPU)"));

    let o =
        irqlab(&["report", "sweep.json", "-o", "flags.html", "--pivot", "other,vwfi", "--stat", "p50", "--heatmap", "other,vwfi", "--scatter", "none", "--unit", "ns"], d.path());
    assert!(o.status.success(), "{:?}", text(&o));
    let html = std::fs::read_to_string(d.path().join("flags.html")).unwrap();
    assert!(html.contains("Summary: other across, vwfi down") && html.contains("Heatmap: timer p50 (ns) over other × vwfi"));
    assert!(!html.contains("<circle") && html.contains("latency (ns"));

    let o = irqlab(&["report", "sweep.json", "-o", "bad.html", "--pivot", "vwfii"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("no sweep axis `vwfii`"), "{:?}", text(&o));
    assert!(!d.path().join("bad.html").exists());
    let o = irqlab(&["report", "sweep.json", "--heatmap", "vwfi"], d.path());
    assert_eq!(o.status.code(), Some(2));
}

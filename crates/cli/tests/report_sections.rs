//! What `irqlab sim` records reaches the HTML report: the "vs published" references (held-out
//! checks apart from fit residuals) and, with `--seeds N`, the spread over seeds; `--unit ns`
//! changes the printed table.
use std::path::Path;
use std::process::{Command, Output};

fn irqlab(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irqlab")).args(args).current_dir(cwd).output().expect("irqlab runs")
}

#[test]
fn references_and_seed_spread_are_in_the_html_report() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["sim", "xen-arm-zynq-timer", "--seeds", "3", "--out", "z"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("over 3 seeds per configuration"), "{stdout}");
    // References are judged on the median over the seeds, with the range beside it.
    assert!(stdout.contains("MODEL (median of 3 seeds)") && stdout.contains("SEED RANGE"), "{stdout}");
    let r = results::read_json(&d.path().join("z/result.json")).unwrap();
    assert!(r.configs.iter().all(|c| c.seed_spread.as_ref().is_some_and(|s| s.seeds.len() == 3)));
    let fits = r.references.iter().filter(|x| x.role == results::ReferenceRole::Fit).count();
    let checks = r.references.len() - fits;
    assert!(fits > 0 && checks > 0);

    let o = irqlab(&["report", "z/result.json", "-o", "z/report.html"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(d.path().join("z/report.html")).unwrap();
    let held = html.find(&format!("Held-out checks ({checks} of {checks} within tolerance)")).or_else(|| html.find("Held-out checks ("));
    let fit = html.find("Fit residuals (");
    assert!(held.is_some() && fit.is_some(), "both reference groups are in the report");
    // One table row per reference, in the two groups' tables.
    let refs_rows = html.matches("<td class=\"ok\">within</td>").count() + html.matches("<td class=\"out\">OUT</td>").count();
    assert_eq!(refs_rows, r.references.len());
    assert!(html.contains("over 3 seeds") && html.contains("class=\"spread\""));
    assert_eq!(html.matches("(median over seeds; range ").count(), r.references.iter().filter(|x| x.over_seeds.is_some()).count());
    assert!(r.references.iter().all(|x| x.over.is_some() || x.over_seeds.is_some_and(|s| x.model == Some(s.median))));

    // With one seed: no range column.
    let o = irqlab(&["sim", "xen-arm-zynq-timer", "--seeds", "1", "--out", "one"], d.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("MODEL") && !stdout.contains("SEED RANGE") && !stdout.contains("median of"), "{stdout}");
}

#[test]
fn unit_ns_prints_nanoseconds() {
    let d = tempfile::tempdir().unwrap();
    let us = irqlab(&["sim", "demo-timer-inject", "--set", "workload.samples=2000", "--out", "a"], d.path());
    let ns = irqlab(&["sim", "demo-timer-inject", "--set", "workload.samples=2000", "--out", "b", "--unit", "ns"], d.path());
    let (us, ns) = (String::from_utf8_lossy(&us.stdout).into_owned(), String::from_utf8_lossy(&ns.stdout).into_owned());
    assert!(us.contains("(latencies in µs)") && ns.contains("(latencies in ns)"), "{us}\n{ns}");
    let csv = irqlab(&["sim", "demo-timer-inject", "--set", "workload.samples=2000", "--out", "c", "--unit", "ns", "--format", "csv"], d.path());
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.lines().next().unwrap().contains("p99_ns"), "{csv}");
}

#[test]
fn chosen_sample_paths_reach_result_json_and_the_html_report() {
    let d = tempfile::tempdir().unwrap();
    let base = ["sim", "xen-arm-zynq-timer", "--config", "vwfi=trap", "--set", "workload.samples=300"];
    let o = irqlab(&[&base[..], &["--trace", "2", "--trace-at", "slowest", "--out", "p"]].concat(), d.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && stdout.contains("sample paths (the 2 slowest per class, slowest first)"), "{stdout}");
    let r = results::read_json(&d.path().join("p/result.json")).unwrap();
    let c = &r.configs[0];
    assert_eq!(c.traces.len(), 2);
    assert!(c.traces[0].total_ns >= c.traces[1].total_ns);
    assert!((c.traces[0].total_ns - c.classes["timer"].summary.max as f64).abs() <= 0.01 * c.traces[0].total_ns, "the slowest is the max");
    let o = irqlab(&["report", "p/result.json", "-o", "p/report.html"], d.path());
    assert!(o.status.success());
    let html = std::fs::read_to_string(d.path().join("p/report.html")).unwrap();
    assert!(html.contains("sample paths (slowest, 2 per class)") && html.matches("<table class=\"path\">").count() == 2);
    // A bad choice is refused up front, naming what is allowed.
    let o = irqlab(&[&base[..], &["--trace-at", "p100", "--out", "q"]].concat(), d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("0 < number < 100"));
    assert!(!d.path().join("q").exists());
}

//! What `irqlab sim` records reaches the HTML report: the "vs published" references (held-out
//! checks apart from fit residuals) and, with `--seeds N`, the spread over seeds; `--unit ns`
//! changes the printed table; `sim`, `fit` and the HTML report show one "vs published" table.

testkit::irqlab_fn!();

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
    let refs_rows = html.matches("<td class=\"ok\">ok</td>").count() + html.matches("<td class=\"out\">OUT</td>").count();
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
    // The numbers, not only the labels: every latency cell in ns is 1000 × the µs cell (the µs
    // table shows 2 decimals, so within 5 ns), row by row.
    let rows = |t: &str| -> Vec<Vec<f64>> {
        t.lines()
            .filter(|l| l.starts_with("idle=") && l.split_whitespace().nth(1) == Some("timer"))
            .map(|l| l.split_whitespace().skip(3).take(9).map(|c| c.replace(',', "").parse::<f64>().unwrap()).collect())
            .collect()
    };
    let (ru, rn) = (rows(&us), rows(&ns));
    assert_eq!((ru.len(), rn.len()), (2, 2), "{us}\n{ns}");
    for (u, n) in ru.iter().zip(&rn) {
        assert_eq!(u.len(), 9);
        for (u, n) in u.iter().zip(n) {
            assert!((n - 1000.0 * u).abs() <= 5.0, "{n} ns vs {u} µs\n{us}\n{ns}");
        }
    }
    assert!(rn[0][0] > 1000.0 && rn[0][0] != rn[1][0], "real latencies, not a constant: {ns}");
    let csv = irqlab(&["sim", "demo-timer-inject", "--set", "workload.samples=2000", "--out", "c", "--unit", "ns", "--format", "csv"], d.path());
    let csv = String::from_utf8_lossy(&csv.stdout).into_owned();
    assert!(csv.lines().next().unwrap().contains("p99_ns"), "{csv}");
    let csv_us = irqlab(&["sim", "demo-timer-inject", "--set", "workload.samples=2000", "--out", "e", "--format", "csv"], d.path());
    let csv_us = String::from_utf8_lossy(&csv_us.stdout).into_owned();
    // CSV: µs with 3 decimals, so ns = µs × 1000 exactly, column by column (min … warm_max).
    let cells = |t: &str, unit: &str| -> Vec<Vec<f64>> {
        let mut lines = t.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let cols: Vec<usize> = ["min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max", "warm_max"]
            .iter()
            .map(|c| head.iter().position(|h| *h == format!("{c}_{unit}")).unwrap_or_else(|| panic!("{c}_{unit}: {t}")))
            .collect();
        lines.map(|l| l.split(',').collect::<Vec<_>>()).map(|f| cols.iter().map(|&i| f[i].parse().unwrap()).collect()).collect()
    };
    let (cu, cn) = (cells(&csv_us, "us"), cells(&csv, "ns"));
    assert_eq!(cu.len(), 2);
    for (u, n) in cu.iter().flatten().zip(cn.iter().flatten()) {
        assert_eq!(*n, (u * 1000.0_f64).round(), "{n} ns vs {u} µs");
    }
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

/// A "vs published" row as every output shows it: role, configuration, statistic (class and
/// stat), published value with its unit, model value with its unit, verdict word.
type RefRow = (String, String, String, String, String, String);

/// The rows of the terminal tables of `sim` and `fit`: a title line naming the role, a header,
/// a rule, rows until a blank line. Columns are separated by two or more spaces.
fn text_rows(out: &str) -> Vec<RefRow> {
    let mut rows = Vec::new();
    let mut lines = out.lines();
    while let Some(l) = lines.next() {
        let role = if l.contains("held out") || l.starts_with("held-out errors") {
            "check"
        } else if l.contains("fitted (used to calibrate") || l.starts_with("fit residuals") {
            "fit"
        } else {
            continue;
        };
        let head: Vec<String> = lines.next().unwrap().split("  ").map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect();
        let col = |name: &str| head.iter().position(|h| h.starts_with(name)).unwrap_or_else(|| panic!("{name} in {head:?}"));
        lines.next();
        for l in lines.by_ref().take_while(|l| !l.trim().is_empty()) {
            let c: Vec<&str> = l.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
            assert_eq!(c.len(), head.len(), "{l}");
            let unit = c[col("UNIT")];
            rows.push((
                role.into(),
                c[col("CONFIG")].into(),
                format!("{} {}", c[col("CLASS")], c[col("STAT")]),
                format!("{} {unit}", c[col("PUBLISHED")]),
                format!("{} {unit}", c[col("MODEL")]),
                c[col("STATUS")].into(),
            ));
        }
    }
    rows
}

/// The rows of the HTML report's reference tables, each after its group's heading.
fn html_rows(html: &str) -> Vec<RefRow> {
    let mut rows = Vec::new();
    for (role, part) in html.split("<h3>").skip(1).filter_map(|p| {
        let role = if p.starts_with("Held-out checks") {
            "check"
        } else if p.starts_with("Fit residuals") {
            "fit"
        } else {
            return None;
        };
        Some((role, p.split("</table>").next().unwrap()))
    }) {
        for tr in part.split("<tr>").skip(2) {
            let cells: Vec<String> = tr.split("<td").skip(1).map(|c| c.split_once('>').unwrap().1.split("</td>").next().unwrap().replace("&#x27;", "'")).collect();
            let model = cells[3].split(" (median over seeds").next().unwrap().to_string();
            rows.push((role.into(), cells[0].clone(), cells[1].clone(), cells[2].clone(), model, cells[6].clone()));
        }
    }
    rows
}

#[test]
fn sim_fit_and_the_html_report_show_the_same_reference_rows_and_verdicts() {
    let d = tempfile::tempdir().unwrap();
    let set = ["--set", "workload.samples=300"];
    let o = irqlab(&[&["sim", "xen-arm-zynq-timer", "--out", "z"][..], &set].concat(), d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sim = text_rows(&String::from_utf8_lossy(&o.stdout));
    assert!(irqlab(&["report", "z/result.json", "-o", "z/report.html"], d.path()).status.success());
    let html = html_rows(&std::fs::read_to_string(d.path().join("z/report.html")).unwrap());
    // No iteration: the fitted costs are the scenario's own, so the fit's run is the sim's run.
    let o = irqlab(&[&["fit", "xen-arm-zynq-timer", "--free", "xen_irq_handler", "--max-iters", "0", "--no-loo"][..], &set].concat(), d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fit = text_rows(&String::from_utf8_lossy(&o.stdout));

    // Every reference of the result, in its order within its role, with the verdict result.json gives it.
    let r = results::read_json(&d.path().join("z/result.json")).unwrap();
    let expected: Vec<(String, String, String, String)> = ["check", "fit"]
        .iter()
        .flat_map(|role| r.references.iter().filter(move |x| x.role.as_str() == *role))
        .map(|x| (x.role.as_str().to_string(), x.config.clone(), format!("{} {}", x.class, x.stat), x.status().word().to_string()))
        .collect();
    let key = |rows: &[RefRow]| rows.iter().map(|x| (x.0.clone(), x.1.clone(), x.2.clone(), x.5.clone())).collect::<Vec<_>>();
    assert_eq!(key(&sim), expected);
    assert!(expected.iter().any(|x| x.3 == "OUT") && expected.iter().any(|x| x.3 == "ok"), "both verdicts occur: {expected:?}");
    // The same rows, the same numbers and the same verdicts in all three.
    assert_eq!(sim, html);
    assert_eq!(sim, fit);
}

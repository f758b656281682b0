//! Terminal tables.
use results::{ConfigResult, RunResult};

/// Left-align the first `left` columns, right-align the rest; columns sized to content.
pub fn render_grid(header: &[String], rows: &[Vec<String>], left: usize) -> String {
    let n = header.len();
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let fmt_row = |r: &[String]| {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| if i < left { format!("{c:<width$}", width = w[i]) } else { format!("{c:>width$}", width = w[i]) })
            .collect();
        cells.join("  ").trim_end().to_string()
    };
    let mut s = fmt_row(header);
    s.push('\n');
    s.push_str(&w.iter().map(|x| "-".repeat(*x)).collect::<Vec<_>>().join("  "));
    s.push('\n');
    for r in rows {
        s.push_str(&fmt_row(r));
        s.push('\n');
    }
    s
}

/// Group digits: 1234567 → 1,234,567.
pub fn thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The latency table: CONFIG CLASS COUNT AVG MIN MAX WARM_MAX P50 P99 P99.9 P99.99 (ns).
pub fn latency_table(r: &RunResult) -> String {
    let header: Vec<String> = ["CONFIG", "CLASS", "COUNT", "AVG", "MIN", "MAX", "WARM_MAX", "P50", "P99", "P99.9", "P99.99"]
        .map(String::from)
        .to_vec();
    let mut rows = Vec::new();
    for c in &r.configs {
        if let Some(e) = &c.error {
            rows.push(vec![c.name.clone(), "FAILED".into(), e.lines().next().unwrap_or("").to_string()]);
            continue;
        }
        for (class, l) in &c.classes {
            let s = &l.summary;
            rows.push(vec![
                c.name.clone(),
                class.clone(),
                thousands(s.count),
                format!("{:.0}", s.mean),
                thousands(s.min),
                thousands(s.max),
                thousands(s.warm_max),
                thousands(s.p50),
                thousands(s.p99),
                thousands(s.p999),
                thousands(s.p9999),
            ]);
        }
    }
    let mut out = format!(
        "{} — {} [{}], seed {}   (latencies in ns)\n",
        r.meta.scenario,
        r.meta.description,
        r.meta.kind.as_str(),
        r.meta.seed
    );
    // Failed rows have fewer cells; render them after the grid so columns stay aligned.
    let (ok, failed): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| r.len() == header.len());
    out.push_str(&render_grid(&header, &ok, 2));
    for f in failed {
        out.push_str(&format!("{}  FAILED: {}\n", f[0], f[2]));
    }
    out
}

/// Scalar figures of every configuration.
pub fn figures_table(r: &RunResult) -> String {
    let rows: Vec<Vec<String>> = r
        .configs
        .iter()
        .flat_map(|c| c.figures.iter().map(move |(k, f)| vec![c.name.clone(), k.clone(), format_value(f.value), f.unit.clone()]))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    render_grid(&["CONFIG".into(), "FIGURE".into(), "VALUE".into(), "UNIT".into()], &rows, 2)
}

/// Where the time went, per configuration and class: segment, count, mean, share of total.
pub fn breakdown_table(c: &ConfigResult) -> String {
    let mut out = String::new();
    for (class, segs) in &c.breakdown {
        let total: f64 = segs.iter().map(|s| s.total_ns).sum();
        let rows: Vec<Vec<String>> = segs
            .iter()
            .map(|s| {
                vec![
                    s.segment.clone(),
                    thousands(s.count),
                    format!("{:.1}", s.mean_ns),
                    format!("{:.1}%", if total > 0.0 { 100.0 * s.total_ns / total } else { 0.0 }),
                ]
            })
            .collect();
        out.push_str(&format!("{} / {}\n", c.name, class));
        out.push_str(&render_grid(&["SEGMENT".into(), "COUNT".into(), "MEAN_NS".into(), "SHARE".into()], &rows, 1));
    }
    out
}

/// Counters of every configuration, one column per configuration.
pub fn counters_table(r: &RunResult) -> String {
    let keys: std::collections::BTreeSet<&String> = r.configs.iter().flat_map(|c| c.counters.keys()).collect();
    if keys.is_empty() {
        return String::new();
    }
    let mut header = vec!["COUNTER".to_string()];
    header.extend(r.configs.iter().map(|c| c.name.clone()));
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|k| {
            let mut row = vec![(*k).clone()];
            row.extend(r.configs.iter().map(|c| c.counters.get(*k).map(|v| thousands(*v)).unwrap_or_else(|| "-".into())));
            row
        })
        .collect();
    render_grid(&header, &rows, 1)
}

/// Compact number formatting for figures.
pub fn format_value(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e6 || v.abs() < 1e-3 {
        format!("{v:.4e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{LatencyRecorder, ResultKind, RunMeta};
    use std::collections::BTreeMap;

    fn run() -> RunResult {
        let mut r = RunResult::new(RunMeta {
            tool_version: "t".into(),
            scenario: "xen".into(),
            description: "d".into(),
            seed: 1,
            kind: ResultKind::Calibrated,
            platform: BTreeMap::new(),
            knobs: BTreeMap::new(),
        });
        let mut c = ConfigResult::new("vwfi=trap");
        let mut rec = LatencyRecorder::new(1);
        for v in [7030, 4810, 4850, 4980] {
            rec.record(v);
        }
        c.classes.insert("timer".into(), rec.finish());
        c.add_counter("exits", 4);
        let mut b = results::BreakdownBuilder::default();
        b.add_ps("trap", 3_000_000);
        b.add_ps("ack", 1_000_000);
        c.breakdown.insert("timer".into(), b.finish());
        r.configs.push(c);
        r.configs.push(ConfigResult::failed("vwfi=bad", BTreeMap::new(), "key `hypervisor.vwfi`: unknown variant".into()));
        r
    }

    #[test]
    fn latency_table_has_source_columns_and_failures() {
        let t = latency_table(&run());
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("[calibrated]"));
        assert!(lines[1].starts_with("CONFIG") && lines[1].contains("AVG") && lines[1].contains("WARM_MAX") && lines[1].contains("P99.99"));
        assert!(lines[3].contains("vwfi=trap") && lines[3].contains("7,030") && lines[3].contains("4,980"), "{}", lines[3]);
        assert!(t.contains("vwfi=bad  FAILED: key `hypervisor.vwfi`"));
    }

    #[test]
    fn breakdown_shares_add_up() {
        let t = breakdown_table(&run().configs[0]);
        assert!(t.contains("75.0%") && t.contains("25.0%"), "{t}");
    }

    #[test]
    fn formatting_helpers() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(format_value(9282161150.0), "9.2822e9");
        assert_eq!(format_value(1.23456), "1.235");
        assert!(counters_table(&run()).contains("exits"));
    }
}

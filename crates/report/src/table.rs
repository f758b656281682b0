//! Terminal tables.
use results::{ConfigResult, RunResult};

/// Longest cell shown in a terminal table; longer cells end in "…".
pub const MAX_CELL_CHARS: usize = 120;

/// A cell as the terminal shows it: control characters escaped (a result file cannot move the
/// cursor or change colours), at most [`MAX_CELL_CHARS`] characters.
pub fn clean_cell(s: &str) -> String {
    let s = results::escape_control(s);
    if s.chars().count() <= MAX_CELL_CHARS {
        s
    } else {
        let mut t: String = s.chars().take(MAX_CELL_CHARS - 1).collect();
        t.push('…');
        t
    }
}

/// Longest free text (a scenario description) printed whole on a title line.
pub const MAX_TEXT_CHARS: usize = 2000;

/// Free text as the terminal shows it: control characters escaped, at most `max` characters.
pub fn clean_text(s: &str, max: usize) -> String {
    let s = results::escape_control(s);
    if s.chars().count() <= max {
        s
    } else {
        s.chars().take(max - 1).chain(['…']).collect()
    }
}

fn pad(out: &mut String, c: &str, width: usize, right: bool) {
    let fill = width.saturating_sub(c.chars().count());
    if right {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(c);
    } else {
        out.push_str(c);
        out.extend(std::iter::repeat_n(' ', fill));
    }
}

/// Left-align the first `left` columns, right-align the rest; columns sized to content.
///
/// Padding is done by hand: `format!("{c:<width$}")` panics when `width` exceeds 65,535 (the
/// formatter's width is a u16), which a long error message in a result file reached. Cells are
/// cleaned with [`clean_cell`].
pub fn render_grid(header: &[String], rows: &[Vec<String>], left: usize) -> String {
    let n = header.len();
    let header: Vec<String> = header.iter().map(|h| clean_cell(h)).collect();
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r.iter().take(n).map(|c| clean_cell(c)).collect()).collect();
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let fmt_row = |r: &[String]| {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            pad(&mut line, c, w[i], i >= left);
        }
        line.trim_end().to_string()
    };
    let mut s = fmt_row(&header);
    s.push('\n');
    s.push_str(&w.iter().map(|x| "-".repeat(*x)).collect::<Vec<_>>().join("  "));
    s.push('\n');
    for r in &rows {
        s.push_str(&fmt_row(r));
        s.push('\n');
    }
    s
}

pub use crate::format::thousands;
use crate::format::{latency, LatencyUnit};

/// Column names of the latency table; percentile names are the same in CSV and JSON output.
pub const LATENCY_HEADER: [&str; 12] = ["CONFIG", "CLASS", "COUNT", "AVG", "MIN", "MAX", "WARM_MAX", "p50", "p90", "p99", "p99.9", "p99.99"];

/// The latency table in µs (the default unit of cyclictest and rtla).
pub fn latency_table(r: &RunResult) -> String {
    latency_table_in(r, LatencyUnit::Us)
}

/// The latency table: CONFIG CLASS COUNT AVG MIN MAX WARM_MAX p50 p90 p99 p99.9 p99.99, latencies in
/// `unit` (named in the title line). Failed configurations follow the table, one line each.
pub fn latency_table_in(r: &RunResult, unit: LatencyUnit) -> String {
    let header: Vec<String> = LATENCY_HEADER.map(String::from).to_vec();
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for c in &r.configs {
        if let Some(e) = &c.error {
            failed.push(format!("{}  FAILED: {}\n", clean_cell(&c.name), clean_cell(e)));
            continue;
        }
        for (class, l) in &c.classes {
            let s = &l.summary;
            let mut row = vec![c.name.clone(), class.clone(), thousands(s.count)];
            row.extend([s.mean, s.min as f64, s.max as f64, s.warm_max as f64, s.p50 as f64, s.p90 as f64, s.p99 as f64, s.p999 as f64, s.p9999 as f64].map(|v| latency(v, unit)));
            rows.push(row);
        }
    }
    let mut out = format!(
        "{} — {} [{}], seed {}   (latencies in {})\n",
        clean_cell(&r.meta.scenario),
        // The description is a sentence a person wrote to be read whole: not cut at a cell's
        // width (issue 28: headers ended in "…"), only escaped and bounded against hostile files.
        clean_text(&r.meta.description, MAX_TEXT_CHARS),
        r.meta.kind.as_str(),
        r.meta.seed,
        unit.symbol()
    );
    out.push_str(&render_grid(&header, &rows, 2));
    for f in failed {
        out.push_str(&f);
    }
    out
}

/// Scalar figures of every configuration, each in the unit that reads best.
/// Figures shown as columns (more: one row per figure).
pub const MAX_FIGURE_COLUMNS: usize = 8;

pub fn figures_table(r: &RunResult) -> String {
    // One unit per figure for the whole table (the largest value's), so a column never mixes
    // 9.287 s with 16.64 µs for the same quantity.
    let mut units: std::collections::BTreeMap<&str, (f64, String)> = std::collections::BTreeMap::new();
    for c in &r.configs {
        for (k, f) in &c.figures {
            let e = units.entry(k.as_str()).or_insert((0.0, f.unit.clone()));
            e.0 = e.0.max(f.value.abs());
        }
    }
    let scaled: std::collections::BTreeMap<&str, (f64, String)> = units
        .iter()
        .map(|(k, (max, unit))| {
            let named = crate::format::figure_named(k, *max, unit).1 == *unit && !unit.is_empty();
            (*k, if named { (1.0, unit.clone()) } else { crate::format::scale(*max, unit) })
        })
        .collect();
    // A few figures: one row per configuration, one column per figure (the unit in its
    // header). Many: one row per configuration and figure.
    if (1..=MAX_FIGURE_COLUMNS).contains(&scaled.len()) {
        let mut head = vec!["CONFIG".to_string()];
        head.extend(scaled.iter().map(|(k, (_, u))| if u.is_empty() { k.to_string() } else { format!("{k} ({u})") }));
        let rows: Vec<Vec<String>> = r
            .configs
            .iter()
            .filter(|c| !c.figures.is_empty())
            .map(|c| {
                let mut row = vec![c.name.clone()];
                row.extend(scaled.iter().map(|(k, (f, _))| c.figures.get(*k).map(|x| crate::format::number(x.value * f)).unwrap_or_else(|| "–".into())));
                row
            })
            .collect();
        return render_grid(&head, &rows, 1);
    }
    let rows: Vec<Vec<String>> = r
        .configs
        .iter()
        .flat_map(|c| {
            let scaled = &scaled;
            c.figures.iter().map(move |(k, f)| {
                let (factor, unit) = scaled.get(k.as_str()).cloned().unwrap_or((1.0, f.unit.clone()));
                vec![c.name.clone(), k.clone(), crate::format::number(f.value * factor), unit]
            })
        })
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
            .map(|s| vec![s.segment.clone(), thousands(s.count), crate::format::group(s.mean_ns, 1), format!("{:.1}%", if total > 0.0 { 100.0 * s.total_ns / total } else { 0.0 })])
            .collect();
        out.push_str(&format!("{} / {}\n", c.name, class));
        out.push_str(&render_grid(&["SEGMENT".into(), "COUNT".into(), "MEAN (ns)".into(), "SHARE".into()], &rows, 1));
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

/// A number for people: grouped, no exponent notation (see [`crate::format::number`]).
pub fn format_value(v: f64) -> String {
    crate::format::number(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{LatencyRecorder, ResultKind, RunMeta};
    use std::collections::BTreeMap;

    fn run() -> RunResult {
        let mut r = RunResult::new(RunMeta { description: "d".into(), ..RunMeta::named("t", "xen", 1, ResultKind::Calibrated) });
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
        assert!(lines[0].contains("latencies in µs"));
        assert!(lines[1].starts_with("CONFIG") && lines[1].contains("AVG") && lines[1].contains("WARM_MAX") && lines[1].contains("p90") && lines[1].ends_with("p99.99"));
        assert!(lines[3].contains("vwfi=trap") && lines[3].contains("7.03") && lines[3].contains("4.98"), "{}", lines[3]);
        let ns = latency_table_in(&run(), LatencyUnit::Ns);
        assert!(ns.contains("latencies in ns") && ns.contains("7,030") && ns.contains("5,418"), "{ns}");
        assert!(t.contains("vwfi=bad  FAILED: key `hypervisor.vwfi`"));
    }

    #[test]
    fn one_unit_per_figure_in_the_figures_table() {
        let mut r = run();
        r.configs[0].set_figure("total", 9.287e9, "ns");
        r.configs[1].set_figure("total", 16_640.0, "ns");
        // Few figures: columns, the unit in the header.
        let t = figures_table(&r);
        assert!(t.lines().next().unwrap().contains("total (s)"), "{t}");
        assert!(t.contains("9.287") && t.contains("0.0000166"), "{t}");
        // Many: rows, one unit per figure.
        for (i, c) in r.configs.iter_mut().enumerate() {
            for k in 0..MAX_FIGURE_COLUMNS {
                c.set_figure(&format!("f{k}"), i as f64, "x");
            }
        }
        let t = figures_table(&r);
        let rows: Vec<&str> = t.lines().filter(|l| l.contains("total")).collect();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|l| l.trim_end().ends_with(" s")), "{t}");
    }

    #[test]
    fn a_long_description_is_printed_whole() {
        let mut r = run();
        r.meta.description = format!("{} end of the sentence", "word ".repeat(40));
        let t = latency_table_in(&r, LatencyUnit::Us);
        assert!(t.lines().next().unwrap().contains("end of the sentence [calibrated]"), "{t}");
    }

    #[test]
    fn huge_cells_do_not_panic_and_are_truncated() {
        let long = "x".repeat(70_000);
        let t = render_grid(&["A".into(), "B".into()], &[vec![long.clone(), "1".into()], vec!["y".into(), "22".into()]], 1);
        let first = t.lines().nth(2).unwrap();
        assert_eq!(first.chars().count(), MAX_CELL_CHARS + 2 + 2, "{}", &first[..50]);
        assert!(first.contains('…'));
        let mut r = run();
        r.configs[1].error = Some(long);
        assert!(latency_table(&r).lines().last().unwrap().ends_with('…'));
    }

    #[test]
    fn control_characters_are_escaped_in_terminal_output() {
        let mut r = run();
        r.configs[0].name = "evil\u{1b}[2J\rname".into();
        r.meta.scenario = "s\u{7}".into();
        let t = latency_table(&r);
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
        assert!(t.contains("evil\\u{1b}[2J\\rname") && t.starts_with("s\\u{7}"), "{t}");
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
        assert_eq!(format_value(9282161150.0), "9,282,161,150");
        assert_eq!(format_value(1.23456), "1.235");
        assert!(counters_table(&run()).contains("exits"));
    }
}

//! The "over N seeds" table: for each configuration run with several seeds, the median and the
//! range of the statistics a reader decides from (p50, p99, max and every figure), so that a row
//! that depends on the seed shows it.
use results::{LatencyUnit, RunResult, Spread};

use crate::format::{figure, latency};
use crate::svg::esc;
use crate::table::render_grid;

/// Latency statistics shown per class.
const STATS: [&str; 3] = ["p50", "p99", "max"];

fn cell(s: &Spread, show: &dyn Fn(f64) -> String) -> String {
    let (lo, hi) = (show(s.min), show(s.max));
    if lo == hi {
        show(s.median)
    } else {
        format!("{} [{lo} – {hi}]", show(s.median))
    }
}

const HEADER: [&str; 5] = ["CONFIG", "CLASS/FIGURE", "p50", "p99", "MAX"];

/// (seeds per configuration, one row per class and figure); no rows when no configuration ran
/// with more than one seed.
fn spread_rows(r: &RunResult, unit: LatencyUnit) -> (usize, Vec<Vec<String>>) {
    let mut rows = Vec::new();
    let mut seeds = 0;
    for c in &r.configs {
        let Some(sp) = &c.seed_spread else { continue };
        seeds = seeds.max(sp.seeds.len());
        for class in c.classes.keys() {
            let mut row = vec![c.name.clone(), class.clone()];
            for stat in STATS {
                row.push(sp.latency(class, stat).map(|s| cell(s, &|v| latency(v, unit))).unwrap_or_default());
            }
            rows.push(row);
        }
        for (name, f) in &c.figures {
            if let Some(s) = sp.figure(name) {
                let show = |v: f64| {
                    let (v, u) = figure(v, &f.unit);
                    if u.is_empty() {
                        v
                    } else {
                        format!("{v} {u}")
                    }
                };
                rows.push(vec![c.name.clone(), name.clone(), cell(s, &show), String::new(), String::new()]);
            }
        }
    }
    (seeds, rows)
}

/// Text table; empty when no configuration ran with more than one seed.
pub fn seed_spread_table(r: &RunResult, unit: LatencyUnit) -> String {
    let (seeds, rows) = spread_rows(r, unit);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("\nover {seeds} seeds per configuration: median [min – max] (latencies in {})\n", unit.symbol());
    out.push_str(&render_grid(&HEADER.map(String::from), &rows, 2));
    out
}

/// (section title, HTML table); None when no configuration ran with more than one seed.
pub fn seed_spread_html(r: &RunResult, unit: LatencyUnit) -> Option<(String, String)> {
    let (seeds, rows) = spread_rows(r, unit);
    if rows.is_empty() {
        return None;
    }
    let mut h = format!(
        "<p>Every configuration ran with {seeds} seeds; the tables above show the first seed. Each cell here is the median over the seeds and, when they differ, [min – max] (latencies in {}). A wide range means one seed's row is not representative.</p><table class=\"spread\"><tr>",
        unit.symbol()
    );
    for c in HEADER {
        h.push_str(&format!("<th>{c}</th>"));
    }
    h.push_str("</tr>");
    for row in rows {
        h.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if i >= 2 { " class=\"num\"" } else { "" };
            h.push_str(&format!("<td{class}>{}</td>", esc(cell)));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    Some((format!("over {seeds} seeds"), h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta, SeedSpread};

    fn config(seed: u64, base: u64) -> ConfigResult {
        let mut rec = LatencyRecorder::new(0);
        for i in 0..1000 {
            rec.record(base + i);
        }
        let mut c = ConfigResult::new("trap");
        c.seed = seed;
        c.classes.insert("timer".into(), rec.finish());
        c
    }

    #[test]
    fn table_shows_median_and_range_only_when_seeds_differ() {
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Predicted));
        let (a, b, c) = (config(1, 2000), config(2, 900_000), config(3, 3000));
        let mut row = a.clone();
        row.seed_spread = Some(SeedSpread::over(&[&a, &b, &c]));
        r.configs.push(row);
        let t = seed_spread_table(&r, LatencyUnit::Us);
        assert!(t.contains("over 3 seeds"), "{t}");
        let line = t.lines().find(|l| l.starts_with("trap")).unwrap();
        // median p50 is the 3,000 ns seed's; the range runs from ~2.5 µs to ~900 µs.
        assert!(line.contains("[") && line.contains("900"), "{line}");
        let (title, html) = seed_spread_html(&r, LatencyUnit::Us).unwrap();
        assert_eq!(title, "over 3 seeds");
        assert!(html.contains("<td>trap</td>") && html.matches("<tr>").count() == 2, "{html}");
        r.configs[0].seed_spread = None;
        assert_eq!(seed_spread_table(&r, LatencyUnit::Us), "");
        assert!(seed_spread_html(&r, LatencyUnit::Us).is_none());
    }
}

//! The results history as a trend (issue 46 item 3, `irqlab report --history`): one statistic of
//! one class per stored run, a line per configuration, x the run's number in the history (the
//! order runs were added), y the statistic; each point's tooltip names its commit, and a run the
//! gate rejected is drawn as a point without a line through it, so a drift across accepted
//! commits shows as a slope, not as one bad run. A self-contained HTML page with the plot (the
//! house's hand-written SVG, `svg::Plot`) and the same numbers as a table.
use results::LatencyUnit;

use crate::svg::{esc, Axis, Plot};

/// One stored run's value.
pub struct TrendPoint {
    pub run: i64,
    pub commit: String,
    pub accepted: bool,
    /// Nanoseconds (or a count when the statistic is `count`).
    pub value: f64,
}

/// The page: `title` names the history, label, class and statistic; `series` are per
/// configuration, points in run order.
pub fn trend_html(title: &str, stat: &str, series: &[(String, Vec<TrendPoint>)], unit: LatencyUnit) -> String {
    let scale = |v: f64| if stat == "count" { v } else { unit.from_ns(v) };
    let all = series.iter().flat_map(|(_, p)| p.iter());
    let (xlo, xhi) = all.clone().fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(p.run as f64), h.max(p.run as f64)));
    let (ylo, yhi) = all.fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(scale(p.value)), h.max(scale(p.value))));
    let yname = if stat == "count" { stat.to_string() } else { format!("{stat} ({})", unit.symbol()) };
    let (width, plot_h) = (900.0, 320.0);
    let x = Axis::numeric(xlo.min(xhi), xhi.max(xlo), false, "run in the history (order added)", width - 120.0, true);
    let y = Axis::numeric(ylo.min(yhi), yhi.max(ylo), false, &yname, plot_h, false);
    let legend: Vec<(String, usize)> = series.iter().enumerate().map(|(i, (n, _))| (n.clone(), i)).collect();
    let mut plot = Plot::new(title, width, plot_h, x, y, &legend);
    let mut rows = String::new();
    for (i, (name, pts)) in series.iter().enumerate() {
        let line: Vec<(f64, f64)> = pts.iter().filter(|p| p.accepted).map(|p| (p.run as f64, scale(p.value))).collect();
        plot.line(&line, i, name);
        for p in pts {
            let v = scale(p.value);
            let tip = format!("{name}: run {} commit {}: {v:.3}{}", p.run, p.commit, if p.accepted { "" } else { " (rejected)" });
            plot.point(p.run as f64, v, i, &tip);
            rows += &format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=num>{v:.3}</td><td>{}</td></tr>\n",
                p.run,
                esc(&p.commit),
                esc(name),
                if p.accepted { "accepted" } else { "rejected" }
            );
        }
    }
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>irqlab report — {t}</title>\n<style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:2px 10px;text-align:left}}.num{{text-align:right}}</style></head>\n<body><h1>{t}</h1>\n{svg}\n<table><tr><th>run</th><th>commit</th><th>configuration</th><th>{y}</th><th>gate</th></tr>\n{rows}</table></body></html>\n",
        t = esc(title),
        svg = plot.finish(),
        y = esc(&yname)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(run: i64, commit: &str, accepted: bool, value: f64) -> TrendPoint {
        TrendPoint { run, commit: commit.into(), accepted, value }
    }

    #[test]
    fn a_line_through_accepted_runs_a_point_per_run_and_the_table() {
        let s = vec![("x<y>".to_string(), vec![p(1, "c1", true, 10_000.0), p(2, "c2", false, 30_000.0), p(3, "c3", true, 11_000.0)])];
        let h = trend_html("history h.sqlite, label main, timer p99", "p99", &s, LatencyUnit::Us);
        assert!(h.contains("<title>irqlab report — history h.sqlite"), "the report marker: irqlab may replace it");
        assert_eq!(h.matches("<circle class=\"point\"").count(), 3);
        let line = h.split("<polyline class=\"series\" points=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(line.split(' ').count(), 2, "the rejected run is off the line: {line}");
        assert!(h.contains("<td>c2</td><td>x&lt;y&gt;</td><td class=num>30.000</td><td>rejected</td>"), "{h}");
        assert_eq!(h, trend_html("history h.sqlite, label main, timer p99", "p99", &s, LatencyUnit::Us));
    }
}

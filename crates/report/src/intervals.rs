//! The report's confidence intervals (issue 25): per configuration and class, each statistic's
//! value with its 95 % interval as a number and as an error bar, or the reason there is none
//! ("too few samples" for a p99.99 of 5,000). The statistics are `results::stats::interval`;
//! this only lays them out. Kept apart from the report's layout code on purpose.
use std::fmt::Write as _;

use results::stats::interval::{stat_interval, StatInterval};
use results::stats::pairs::class_data;
use results::stats::Confidence;
use results::RunResult;

use crate::format::{latency, LatencyUnit};
use crate::svg::esc;

const STATS: [&str; 6] = ["mean", "p50", "p90", "p99", "p99.9", "p99.99"];
/// At most this many configurations get the section (a large sweep has its pivot tables).
const MAX_CONFIGS: usize = 40;

/// Half-width of the error bar's axis, relative to the value: the bar spans value × (1 ± SPAN).
const SPAN: f64 = 0.10;

/// A text error bar of `lo..hi` with the value marked (`├──●──┤`) on the axis value × (1 ± 10 %),
/// 41 columns; a bound beyond the axis shows as `◄` / `►`. Text rather than SVG: the report's
/// SVGs are plots with axes, and its tests hold them to that.
fn bar(v: &StatInterval) -> String {
    const W: usize = 41;
    let (a0, a1) = (v.value * (1.0 - SPAN), v.value * (1.0 + SPAN));
    let col = |ns: f64| ((((ns - a0) / (a1 - a0)).clamp(0.0, 1.0)) * (W - 1) as f64).round() as usize;
    let mut cells = vec![' '; W];
    if let Ok((lo, hi)) = v.interval {
        let (a, b) = (col(lo), col(hi));
        for c in cells.iter_mut().take(b + 1).skip(a) {
            *c = '─';
        }
        cells[a] = if lo < a0 { '◄' } else { '├' };
        cells[b] = if hi > a1 {
            '►'
        } else if a == b {
            '┼'
        } else {
            '┤'
        };
    }
    cells[col(v.value)] = '●';
    format!("<code>{}</code>", cells.into_iter().collect::<String>().trim_end())
}

/// (section title, HTML); `None` when no configuration has a latency class.
pub fn intervals_html(r: &RunResult, unit: LatencyUnit) -> Option<(String, String)> {
    let conf = Confidence::default();
    let mut rows = String::new();
    for c in r.configs.iter().filter(|c| c.error.is_none()).take(MAX_CONFIGS) {
        for class in c.classes.keys() {
            let Ok(Some(d)) = class_data(c, class) else { continue };
            let runs = d.runs.len().max(1);
            let ivs: Vec<StatInterval> = STATS.iter().filter_map(|s| stat_interval(&d, s, conf)).collect();
            for v in &ivs {
                let (text, why) = match &v.interval {
                    Ok((lo, hi)) => (format!("{} – {}", latency(*lo, unit), latency(*hi, unit)), String::new()),
                    Err(e) => ("-".to_string(), e.to_string()),
                };
                let _ = write!(
                    rows,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{runs}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&c.name),
                    esc(class),
                    v.stat,
                    latency(v.value, unit),
                    esc(&text),
                    bar(v),
                    esc(&why)
                );
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let u = unit.symbol();
    // Folded like the report's other long tables: one row per configuration, class and statistic
    // is 729 rows for xen-wfi-policy, and the answer must stay on the first screen.
    let n = rows.matches("<tr>").count();
    let h = format!(
        "<details><summary>The intervals: {n} rows</summary><p>95 % confidence intervals. One run: distribution-free intervals for percentiles from order statistics (bounds read from the HDR histogram's buckets, 0.1 % resolution) and a t-interval for the mean. Several runs (--repeat / --seeds): the spread between the runs (t-interval of the runs' values on a log scale). A percentile needs at least ln(0.025)/ln(p) samples for an interval: 368 for p99, 3,688 for p99.9, 36,887 for p99.99.</p>\
         <table class=\"intervals\"><tr><th>CONFIG</th><th>CLASS</th><th>STAT</th><th>RUNS</th><th>VALUE ({u})</th><th>95 % INTERVAL ({u})</th><th>ERROR BAR (value ± 10 %)</th><th>NOTE</th></tr>{rows}</table></details>"
    );
    Some(("confidence intervals".into(), h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta};

    #[test]
    fn intervals_and_reasons_are_in_the_section() {
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured));
        let mut rec = LatencyRecorder::new(0);
        (0..5000u64).for_each(|i| rec.record(1000 + (i * 7919) % 5000));
        let mut c = ConfigResult::new("a<b");
        c.classes.insert("timer".into(), rec.finish());
        r.configs.push(c);
        let (title, h) = intervals_html(&r, LatencyUnit::Us).unwrap();
        assert_eq!(title, "confidence intervals");
        assert!(h.contains("a&lt;b") && h.contains("●") && h.contains("┤") && h.contains(" – "), "{h}");
        assert!(h.contains("too few samples (needs 36887, has 5000)"), "{h}");
        assert!(intervals_html(&RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured)), LatencyUnit::Us).is_none());
    }
}

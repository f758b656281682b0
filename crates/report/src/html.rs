//! One self-contained HTML report (inline SVG, inline CSS, no scripts, no external files).
use std::collections::BTreeMap;

use minijinja::{context, Environment};
use results::{ResultsError, RunResult};
use serde::Serialize;

use crate::svg::{cdf_svg, histogram_svg};
use crate::table::{format_value, thousands};

const TEMPLATE: &str = include_str!("../templates/report.html");

/// Errors while building a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A stored histogram is corrupt.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// Plotting failed.
    #[error("{0}")]
    Plot(String),
    /// The template failed to render (a bug).
    #[error("HTML template: {0}")]
    Template(#[from] minijinja::Error),
}

#[derive(Serialize)]
struct RunView {
    label: String,
    scenario: String,
    description: String,
    kind: &'static str,
    tool_version: String,
    seed: u64,
    platform: Vec<(String, String)>,
    knobs: Vec<(String, String)>,
}

#[derive(Serialize)]
struct SummaryRow {
    run: String,
    config: String,
    class: String,
    values: Vec<String>,
    error: Option<String>,
}

#[derive(Serialize)]
struct SegView {
    segment: String,
    count: String,
    mean: String,
    share: String,
    bar: u32,
}

#[derive(Serialize)]
struct BreakdownView {
    class: String,
    segments: Vec<SegView>,
}

#[derive(Serialize)]
struct ConfigView {
    run: String,
    name: String,
    error: Option<String>,
    params: Vec<(String, String)>,
    histograms: Vec<String>,
    breakdowns: Vec<BreakdownView>,
    counters: Vec<(String, String)>,
    figures: Vec<(String, String, String)>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct ClassView {
    name: String,
    cdf_svg: String,
}

/// Render runs (with their labels, usually file names) into one HTML document.
pub fn render_html(runs: &[(String, RunResult)]) -> Result<String, ReportError> {
    let mut summary = Vec::new();
    let mut configs = Vec::new();
    let mut by_class: BTreeMap<String, Vec<(String, hdrhistogram::Histogram<u64>)>> = BTreeMap::new();
    for (label, r) in runs {
        for c in &r.configs {
            let series = if runs.len() > 1 { format!("{label}: {} [{}]", c.name, r.meta.kind.as_str()) } else { c.name.clone() };
            if let Some(e) = &c.error {
                summary.push(SummaryRow { run: label.clone(), config: c.name.clone(), class: String::new(), values: vec![], error: Some(e.clone()) });
            }
            let mut histograms = Vec::new();
            for (class, l) in &c.classes {
                let s = &l.summary;
                summary.push(SummaryRow {
                    run: label.clone(),
                    config: c.name.clone(),
                    class: class.clone(),
                    values: [s.count, 0, s.min, s.max, s.warm_max, s.p50, s.p90, s.p99, s.p999, s.p9999]
                        .iter()
                        .enumerate()
                        .map(|(i, v)| if i == 1 { format!("{:.0}", s.mean) } else { thousands(*v) })
                        .collect(),
                    error: None,
                });
                let h = l.histogram(class)?;
                if h.len() > 0 {
                    histograms.push(histogram_svg(&format!("{series} — {class}"), &h, 60).map_err(ReportError::Plot)?);
                    by_class.entry(class.clone()).or_default().push((series.clone(), h));
                }
            }
            let breakdowns = c
                .breakdown
                .iter()
                .map(|(class, segs)| {
                    let total: f64 = segs.iter().map(|s| s.total_ns).sum();
                    BreakdownView {
                        class: class.clone(),
                        segments: segs
                            .iter()
                            .map(|s| {
                                let share = if total > 0.0 { s.total_ns / total } else { 0.0 };
                                SegView {
                                    segment: s.segment.clone(),
                                    count: thousands(s.count),
                                    mean: format!("{:.1}", s.mean_ns),
                                    share: format!("{:.1}", share * 100.0),
                                    bar: (share * 300.0).round() as u32,
                                }
                            })
                            .collect(),
                    }
                })
                .collect();
            configs.push(ConfigView {
                run: label.clone(),
                name: c.name.clone(),
                error: c.error.clone(),
                params: c.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                histograms,
                breakdowns,
                counters: c.counters.iter().map(|(k, v)| (k.clone(), thousands(*v))).collect(),
                figures: c.figures.iter().map(|(k, f)| (k.clone(), format_value(f.value), f.unit.clone())).collect(),
                notes: c.notes.clone(),
            });
        }
    }
    let classes = by_class
        .into_iter()
        .map(|(name, series)| Ok(ClassView { cdf_svg: cdf_svg(&format!("{name} latency CDF"), &series).map_err(ReportError::Plot)?, name }))
        .collect::<Result<Vec<_>, ReportError>>()?;
    let run_views: Vec<RunView> = runs
        .iter()
        .map(|(label, r)| RunView {
            label: label.clone(),
            scenario: r.meta.scenario.clone(),
            description: r.meta.description.clone(),
            kind: r.meta.kind.as_str(),
            tool_version: r.meta.tool_version.clone(),
            seed: r.meta.seed,
            platform: r.meta.platform.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            knobs: r.meta.knobs.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        })
        .collect();
    let title = runs.iter().map(|(_, r)| r.meta.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)?;
    let html = env.get_template("report.html")?.render(context! {
        title, runs => run_views, summary, classes, configs,
    })?;
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta};

    fn run(kind: ResultKind) -> RunResult {
        let mut r = RunResult::new(RunMeta {
            tool_version: "t".into(),
            scenario: "demo<&>".into(),
            description: "d".into(),
            seed: 1,
            kind,
            platform: BTreeMap::from([("cpu".into(), "A53".into())]),
            knobs: BTreeMap::new(),
        });
        let mut c = ConfigResult::new("trap");
        let mut rec = LatencyRecorder::new(0);
        for v in 4000..6000 {
            rec.record(v);
        }
        c.classes.insert("timer".into(), rec.finish());
        let mut b = results::BreakdownBuilder::default();
        b.add_ps("trap-to-hyp", 1000);
        c.breakdown.insert("timer".into(), b.finish());
        r.configs.push(c);
        r.configs.push(ConfigResult::failed("broken", BTreeMap::new(), "pCPU 9 does not exist".into()));
        r
    }

    #[test]
    fn report_is_self_contained_and_escaped() {
        let html = render_html(&[("model.json".into(), run(ResultKind::Predicted)), ("host.json".into(), run(ResultKind::Measured))]).unwrap();
        assert!(html.contains("<svg") && html.contains("timer latency CDF"));
        assert!(html.contains("demo&lt;&amp;&gt;"), "scenario name escaped");
        assert!(html.contains("kind-measured") && html.contains("kind-predicted"));
        assert!(html.contains("FAILED: pCPU 9 does not exist"));
        assert!(html.contains("trap-to-hyp"));
        assert!(!html.contains("<script") && !html.contains("src=\"http"), "no external resources");
        // one CDF for the class, one histogram per (run, config)
        assert_eq!(html.matches("timer latency CDF").count(), 1);
        assert!(html.matches("<svg").count() >= 3);
    }
}

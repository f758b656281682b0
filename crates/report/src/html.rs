//! One self-contained HTML report (inline SVG, inline CSS, no scripts, no external files).
//!
//! Order: what the badges mean, the answer to the run's questions (issue 28), contents, the runs (with a measured run's host caveat in plain
//! sight), the latency summary, per sweep run the pivot, heatmap and latency-versus-figure
//! scatter, the "vs published" checks, CDFs per class (small multiples when there are many
//! series), then one section per configuration.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use minijinja::{context, Environment};
use results::{ConfigResult, ResultsError, RunResult};
use serde::Serialize;

use crate::format::{group, latency, thousands, LatencyUnit};
use crate::heatmap::heatmap_html;
use crate::pivot::{pivot, CellSpec};
use crate::references::ReferenceTable;
use crate::svg::{esc, histogram_svg, scatter_svg, CdfCurve, ScatterPoint};
use crate::sweep::{default_class, default_figure, find, run_axes, Stat, SweepAxis};

const TEMPLATE: &str = include_str!("../templates/report.html");

/// A table longer than this many rows starts folded (`<details>`), so that the answer and the
/// contents stay on the first screen.
pub const FOLD_ROWS: usize = 12;

/// Small-multiple plots shown open; more start folded.
pub const FOLD_PLOTS: usize = 4;

/// Series in one CDF before the report switches to small multiples.
pub const MAX_SERIES_PER_PLOT: usize = 6;

/// Errors while building a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A stored histogram is corrupt.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// A sweep axis named on the command line does not exist.
    #[error("{run}: no sweep axis `{name}` (its axes: {available})")]
    UnknownAxis { run: String, name: String, available: String },
    /// The template failed to render (a bug).
    #[error("HTML template: {0}")]
    Template(#[from] minijinja::Error),
}

/// What the report shows; `Default` gives the documented defaults.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Latency unit of tables and plots (µs by default).
    pub unit: LatencyUnit,
    /// Pivot axes: the first is across, the others down; empty = the first axis across, the
    /// rest down. Axes not named are folded into ranges.
    pub pivot: Vec<String>,
    /// Statistic of the pivot and heatmap cells (default p99).
    pub stat: Option<String>,
    /// Latency class for the pivot, heatmap and scatter (default: the first class).
    pub class: Option<String>,
    /// Heatmap axes (x, y); default the first two sweep axes.
    pub heatmap: Option<(String, String)>,
    /// Figure on the scatter's x axis; default a varying figure, preferring a throughput.
    /// `Some("none")` leaves the scatter out.
    pub scatter: Option<String>,
    /// Thresholds (ns) whose share of samples beyond the two results' verdicts compare
    /// (`report --share-above`, issue 45 item 5).
    pub share_above: Vec<u64>,
}

#[derive(Serialize)]
struct RunView {
    anchor: String,
    label: String,
    scenario: String,
    description: String,
    kind: &'static str,
    tool_version: String,
    seed: u64,
    caveat: Option<String>,
    platform: Vec<(String, String)>,
    knobs: Vec<(String, String)>,
}

#[derive(Serialize)]
struct SummaryRow {
    run: String,
    anchor: String,
    config: String,
    class: String,
    caveat: bool,
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
    anchor: String,
    run: String,
    name: String,
    seed: u64,
    caveat: Option<String>,
    error: Option<String>,
    params: Vec<(String, String)>,
    histograms: Vec<String>,
    breakdowns: Vec<BreakdownView>,
    counters: Vec<(String, String, &'static str)>,
    /// Measured: no seed to show (a measurement has none; `seed 0` read as if it had one).
    measured: bool,
    figures: Vec<(String, String, String)>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct Section {
    anchor: String,
    title: String,
    html: String,
    /// Sub-sections for the contents: (anchor, title).
    parts: Vec<(String, String)>,
}

/// The caveat of a measured run whose numbers are not bare-metal latencies: QEMU emulation (the
/// Arm lab, or an imported lab console) and a nested host, or `None`.
pub fn host_caveat(r: &RunResult) -> Option<String> {
    let mut said = Vec::new();
    if let Some(lab) = r.emulation() {
        said.push(format!(
            "Emulation, not hardware latency: measured in the QEMU lab ({lab}). Read the structure and the counts (exits, paths, delivery); the times are the emulator's, never a machine's."
        ));
    }
    if let Some(ring0) = r.meta.platform.get("host.guest_ring0").filter(|v| v.starts_with("emulated")) {
        said.push(format!(
            "Measured on a nested host ({ring0}): guest ring-0 code is emulated instruction by instruction, so every exit, injection and handler costs far more than on bare metal. These latencies describe this host only."
        ));
    }
    (!said.is_empty()).then(|| said.join(" "))
}

/// Render runs (with their labels, usually file names) into one HTML document, with defaults.
pub fn render_html(runs: &[(String, RunResult)]) -> Result<String, ReportError> {
    render_html_with(runs, &ReportOptions::default())
}

/// Render runs into one HTML document.
pub fn render_html_with(runs: &[(String, RunResult)], opts: &ReportOptions) -> Result<String, ReportError> {
    let unit = opts.unit;
    let mut summary = Vec::new();
    let mut configs = Vec::new();
    // class -> (group label, [(series label, histogram)])
    let mut by_class: BTreeMap<String, Vec<(String, String, CdfCurve)>> = BTreeMap::new();
    for (ri, (label, r)) in runs.iter().enumerate() {
        let caveat = host_caveat(r);
        let ax = run_axes(r);
        for (ci, c) in r.configs.iter().enumerate() {
            let anchor = format!("cfg-{ri}-{ci}");
            let (group_key, series) = series_names(label, r, c, &ax, runs.len() > 1);
            if let Some(e) = &c.error {
                summary.push(SummaryRow {
                    run: label.clone(),
                    anchor: anchor.clone(),
                    config: c.name.clone(),
                    class: String::new(),
                    caveat: false,
                    values: vec![],
                    error: Some(e.clone()),
                });
            }
            let mut histograms = Vec::new();
            for (class, l) in &c.classes {
                let s = &l.summary;
                let mut values = vec![thousands(s.count)];
                values.extend(
                    [s.mean, s.min as f64, s.max as f64, s.warm_max as f64, s.p50 as f64, s.p90 as f64, s.p99 as f64, s.p999 as f64, s.p9999 as f64].map(|v| latency(v, unit)),
                );
                summary.push(SummaryRow {
                    run: label.clone(),
                    anchor: anchor.clone(),
                    config: c.name.clone(),
                    class: class.clone(),
                    caveat: caveat.is_some(),
                    values,
                    error: None,
                });
                let h = l.histogram(class)?;
                if !h.is_empty() {
                    histograms.push(histogram_svg(&format!("{} — {class}", c.name), &h, 60, unit, 640.0));
                    // the curve, not the ~0.5 MB histogram: memory bounded by the input (issue 36)
                    by_class.entry(class.clone()).or_default().push((group_key.clone(), series.clone(), CdfCurve::of(&h)));
                }
            }
            configs.push(config_view(anchor, label, c, caveat.clone(), histograms, r.meta.kind == results::ResultKind::Measured));
        }
    }

    let mut sweeps = Vec::new();
    for (ri, (label, r)) in runs.iter().enumerate() {
        if let Some(s) = sweep_section(ri, label, r, opts)? {
            sweeps.push(s);
        }
    }
    let mut references = Vec::new();
    for (ri, (label, r)) in runs.iter().enumerate() {
        let html = ReferenceTable::of_run(r, unit).html();
        if !html.is_empty() {
            references.push(Section {
                anchor: format!("refs-{ri}"),
                title: format!("{label}: vs published ({})", r.meta.knobs.get("reproduces").map(String::as_str).unwrap_or("references")),
                html,
                parts: vec![],
            });
        }
        if let Some((title, html)) = crate::intervals::intervals_html(r, unit) {
            references.push(Section { anchor: format!("intervals-{ri}"), title: format!("{label}: {title}"), html, parts: vec![] });
        }
        if let Some((title, html)) = crate::seed_spread::seed_spread_html(r, unit) {
            references.push(Section { anchor: format!("seeds-{ri}"), title: format!("{label}: {title}"), html, parts: vec![] });
        }
        if let Some((title, html)) = crate::sample_paths::sample_paths_html(r, unit) {
            references.push(Section { anchor: format!("paths-{ri}"), title: format!("{label}: {title}"), html, parts: vec![] });
        }
        if let Some((title, html)) = crate::census::census_html(r, crate::census::TOP) {
            references.push(Section { anchor: format!("census-{ri}"), title: format!("{label}: {title}"), html, parts: vec![] });
        }
    }
    let answers: Vec<Section> = runs
        .iter()
        .enumerate()
        .filter(|(_, (_, r))| !r.questions.is_empty())
        .map(|(ri, (label, r))| Section {
            anchor: format!("answer-{ri}"),
            title: if runs.len() > 1 { format!("{label}: the answer") } else { "The answer".into() },
            html: crate::answer_view::answers_html(r, unit),
            parts: vec![],
        })
        .collect();
    if let [(la, a), (lb, b)] = runs {
        if let Some((title, html)) = crate::verdict_table::verdict_html(a, b, unit, &opts.share_above) {
            references.push(Section { anchor: "verdicts".into(), title: format!("{title} ({lb} against {la})"), html, parts: vec![] });
        }
        if let Some(text) = crate::census::census_compare_text(a, b, crate::census::TOP) {
            let html = format!("<pre>{}</pre>", text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;"));
            references.push(Section { anchor: "census-diff".into(), title: format!("path census, {lb} − {la}"), html, parts: vec![] });
        }
    }
    let classes: Vec<Section> = by_class.into_iter().enumerate().map(|(i, (class, series))| cdf_section(i, &class, series, unit)).collect();

    let run_views: Vec<RunView> = runs
        .iter()
        .enumerate()
        .map(|(ri, (label, r))| RunView {
            anchor: format!("run-{ri}"),
            label: label.clone(),
            scenario: r.meta.scenario.clone(),
            description: r.meta.description.clone(),
            kind: r.meta.kind.as_str(),
            tool_version: r.meta.tool_version.clone(),
            seed: r.meta.seed,
            caveat: host_caveat(r),
            platform: r.meta.platform.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            knobs: r.meta.knobs.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        })
        .collect();
    let caveats: Vec<String> = run_views.iter().filter_map(|r| r.caveat.as_ref().map(|c| format!("{}: {c}", r.label))).collect();
    let title = runs.iter().map(|(_, r)| r.meta.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)?;
    let html = env.get_template("report.html")?.render(context! {
        title, runs => run_views, answers, summary, fold_summary => summary.len() > FOLD_ROWS, one_run => runs.len() == 1, sweeps, references, classes, configs, caveats, unit => unit.symbol(),
    })?;
    Ok(html)
}

/// (small-multiple group, series label) of a configuration: grouped by every sweep axis but the
/// first, the first axis's value naming the series.
fn series_names(label: &str, r: &RunResult, c: &ConfigResult, ax: &[SweepAxis], many_runs: bool) -> (String, String) {
    // A path label is shortened to its last two components (`zynq/result.json`) for legends.
    let short: Vec<&str> = label.rsplit('/').take(2).collect();
    let short = short.into_iter().rev().collect::<Vec<_>>().join("/");
    let run = if many_runs { format!("{short} [{}]: ", r.meta.kind.as_str()) } else { String::new() };
    match ax.split_first() {
        Some((first, rest)) => {
            let group = rest.iter().map(|a| format!("{}={}", a.short(), c.params.get(&a.key).map(String::as_str).unwrap_or("?"))).collect::<Vec<_>>().join(", ");
            let series = format!("{run}{}={}", first.short(), c.params.get(&first.key).map(String::as_str).unwrap_or("?"));
            (group, series)
        }
        None => (String::new(), format!("{run}{}", c.name)),
    }
}

fn cdf_section(i: usize, class: &str, series: Vec<(String, String, CdfCurve)>, unit: LatencyUnit) -> Section {
    let title = format!("{class} latency CDF");
    let html = if series.len() <= MAX_SERIES_PER_PLOT {
        let s: Vec<(String, CdfCurve)> = series.into_iter().map(|(g, n, h)| (if g.is_empty() { n } else { format!("{n}, {g}") }, h)).collect();
        crate::svg::cdf_svg_in(&title, &s, unit, 760.0, None)
    } else {
        let mut groups: Vec<(String, Vec<(String, CdfCurve)>)> = Vec::new();
        for (g, n, h) in series {
            match groups.iter_mut().find(|x| x.0 == g) {
                Some(x) => x.1.push((n, h)),
                None => groups.push((g, vec![(n, h)])),
            }
        }
        let mut out = format!(
            "<p>{} plots, one per combination of the other axes, on the same axes; series: the parameter under study (else the first sweep axis). Same colours mean the same value in every plot.</p>{}<div class=\"multiples\">",
            groups.len(),
            if groups.len() > FOLD_PLOTS { format!("<details><summary>Show the {} plots</summary>", groups.len()) } else { String::new() }
        );
        // One x range and one nines axis for every panel: they compare the same class.
        let all: Vec<(String, CdfCurve)> = groups.iter().flat_map(|g| g.1.iter().cloned()).collect();
        let shared = crate::svg::cdf_extent(&all, unit);
        for (g, s) in &groups {
            let t = if g.is_empty() { title.clone() } else { format!("{class}: {g}") };
            out.push_str(&crate::svg::cdf_svg_in(&t, s, unit, 380.0, Some(shared)));
        }
        out.push_str("</div>");
        if groups.len() > FOLD_PLOTS {
            out.push_str("</details>");
        }
        out
    };
    let band = format!(
        "<p>Shaded around each curve: the {:.0} % confidence band of each percentile (distribution-free, from the order statistics; widened to the histogram's buckets where only the histogram is stored). Where the band stops, the percentiles above have too few samples behind them to mean anything; a run's repetitions are pooled here, their spread is in the interval table.</p>",
        crate::svg::BAND_CONFIDENCE * 100.0
    );
    Section { anchor: format!("cdf-{i}"), title: format!("Class “{class}”: latency CDF"), html: band + &html, parts: vec![] }
}

fn resolve<'a>(run: &str, ax: &'a [SweepAxis], name: &str) -> Result<&'a SweepAxis, ReportError> {
    find(ax, name).ok_or_else(|| ReportError::UnknownAxis { run: run.into(), name: name.into(), available: ax.iter().map(|a| a.key.as_str()).collect::<Vec<_>>().join(", ") })
}

/// Pivot, heatmap and scatter of one run, when it is a sweep.
fn sweep_section(ri: usize, label: &str, r: &RunResult, opts: &ReportOptions) -> Result<Option<Section>, ReportError> {
    let ax = run_axes(r);
    if ax.is_empty() || r.configs.len() < 3 {
        return Ok(None);
    }
    let Some(class) = opts.class.clone().or_else(|| default_class(&r.configs)) else { return Ok(None) };
    let class_title = crate::sweep::class_title(&r.configs, &class);
    let stat = Stat::parse(opts.stat.as_deref().unwrap_or("p99")).resolve(&r.configs);
    let fig_name = match opts.scatter.as_deref() {
        Some("none") => None,
        Some(f) => Some(f.to_string()),
        None => default_figure(&r.configs),
    };
    let fig = fig_name.as_deref().map(|f| Stat::parse(f).resolve(&r.configs));
    let spec = CellSpec { stat: &stat, second: fig.as_ref(), class: &class, unit: opts.unit };
    let (col, rows): (&SweepAxis, Vec<SweepAxis>) = if opts.pivot.is_empty() {
        (&ax[0], ax[1..].to_vec())
    } else {
        let col = resolve(label, &ax, &opts.pivot[0])?;
        let rows = opts.pivot[1..].iter().map(|n| resolve(label, &ax, n).cloned()).collect::<Result<Vec<_>, _>>()?;
        (col, rows)
    };
    let p = pivot(&r.configs, &ax, col, &rows, &spec);
    let mut h = String::new();
    let mut parts = vec![(format!("pivot-{ri}"), "summary pivot".to_string())];
    let _ = write!(
        h,
        "<h3 id=\"pivot-{ri}\">Summary: {} across, {} down</h3><p class=\"caption\">{} (<code>irqlab report --pivot AXIS,AXIS… --stat STAT --scatter FIGURE</code> chooses.)</p>{}",
        esc(col.short()),
        esc(&if rows.is_empty() { "—".to_string() } else { rows.iter().map(|a| a.short()).collect::<Vec<_>>().join(" × ") }),
        esc(&p.caption()),
        p.to_html(&|_| None)
    );
    if ax.len() >= 2 {
        let (x, y) = match &opts.heatmap {
            Some((x, y)) => (resolve(label, &ax, x)?, resolve(label, &ax, y)?),
            None => (&ax[0], &ax[1]),
        };
        let hspec = CellSpec { second: None, ..spec };
        parts.push((format!("heatmap-{ri}"), "heatmap".into()));
        let _ = write!(
            h,
            "<h3 id=\"heatmap-{ri}\">Heatmap: {} over {} × {}</h3>{}",
            esc(&stat.title(&class_title, opts.unit, &r.configs)),
            esc(x.short()),
            esc(y.short()),
            heatmap_html(&r.configs, &ax, x, y, &hspec)
        );
    }
    if let (Some(fig), Some(name)) = (&fig, &fig_name) {
        let pts: Vec<ScatterPoint> = r
            .configs
            .iter()
            .filter_map(|c| {
                let (x, y) = (fig.value_or_only(c, &class)?, stat.value_or_only(c, &class)?);
                let series = c.params.get(&ax[0].key).and_then(|v| ax[0].values.iter().position(|x| x == v)).unwrap_or(0);
                let y = if stat.is_latency() { opts.unit.from_ns(y) } else { y };
                Some(ScatterPoint { x, y, series, tip: format!("{}: {} = {}, {} = {}", c.name, name, crate::format::number(x), stat_name(&stat), crate::format::number(y)) })
            })
            .collect();
        if pts.len() >= 2 {
            let legend: Vec<(String, usize)> = ax[0].values.iter().enumerate().map(|(i, v)| (format!("{}={v}", ax[0].short()), i)).collect();
            let y_title = stat.title(&class_title, opts.unit, &r.configs);
            let x_title = fig.title(&class_title, opts.unit, &r.configs);
            parts.push((format!("scatter-{ri}"), format!("{} vs {name}", stat_name(&stat))));
            let _ = write!(
                h,
                "<h3 id=\"scatter-{ri}\">{} against {}</h3><p class=\"caption\">One point per configuration; colour: {}. Hover a point for its configuration.</p>{}",
                esc(&y_title),
                esc(&x_title),
                esc(&ax[0].key),
                scatter_svg(&format!("{y_title} vs {x_title}"), &x_title, &y_title, &pts, &legend, 760.0)
            );
        }
    }
    Ok(Some(Section { anchor: format!("sweep-{ri}"), title: format!("{label}: sweep of {} configurations", r.configs.len()), html: h, parts }))
}

fn stat_name(s: &Stat) -> String {
    match s {
        Stat::Latency(n) => n.clone(),
        Stat::Count => "count".into(),
        Stat::Figure { name, .. } => name.clone(),
    }
}

/// What a KVM statistic counts, for the counters that readers asked about (the names are KVM's
/// binary stats, Linux `virt/kvm/kvm_main.c` and `arch/x86/kvm/x86.c`, `kvm_vcpu_stats_desc`).
pub fn counter_note(name: &str) -> &'static str {
    let n = name.rsplit('.').next().unwrap_or(name);
    match n {
        "insn_emulation_fail" => "instructions KVM's x86 emulator could not emulate (each ends the run with an emulation failure; 0 is normal)",
        "insn_emulation" => "instructions KVM emulated in software (on a nested host guest ring-0 code is emulated, so this is large there)",
        "halt_exits" => "exits to KVM because the guest executed HLT",
        "halt_successful_poll" => "halts that ended during halt polling, before the vCPU slept",
        "halt_attempted_poll" => "halts during which KVM polled",
        "halt_wakeup" => "wake-ups of a halted vCPU",
        "irq_injections" => "interrupts KVM injected into the guest",
        "exits" => "all VM exits",
        "irq_exits" => "exits caused by an external interrupt on the host CPU",
        "io_exits" => "exits for port I/O (the benchmark guest reports through a port)",
        "mmio_exits" => "exits for MMIO that userspace handled",
        _ => "",
    }
}

fn config_view(anchor: String, label: &str, c: &ConfigResult, caveat: Option<String>, histograms: Vec<String>, measured: bool) -> ConfigView {
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
                            mean: group(s.mean_ns, 1),
                            share: format!("{:.1}", share * 100.0),
                            bar: (share * 300.0).round() as u32,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    ConfigView {
        anchor,
        run: label.to_string(),
        name: c.name.clone(),
        seed: c.seed,
        caveat,
        error: c.error.clone(),
        params: c.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        histograms,
        breakdowns,
        counters: c.counters.iter().map(|(k, v)| (k.clone(), thousands(*v), counter_note(k))).collect(),
        measured,
        figures: c
            .figures
            .iter()
            .map(|(k, f)| {
                let (v, u) = crate::format::figure_named(k, f.value, &f.unit);
                (k.clone(), v, u)
            })
            .collect(),
        notes: c.notes.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::tests::texts;
    use results::{LatencyRecorder, ResultKind, RunMeta};

    fn run(kind: ResultKind) -> RunResult {
        let mut r = RunResult::new(RunMeta { description: "d".into(), platform: BTreeMap::from([("cpu".into(), "A53".into())]), ..RunMeta::named("t", "demo<&>", 1, kind) });
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

    fn sweep_run() -> RunResult {
        let mut r = run(ResultKind::Predicted);
        r.configs = crate::sweep::tests::sweep();
        r
    }

    /// Every SVG in the page has x and y tick labels and both axis titles.
    fn assert_every_plot_has_axes(html: &str) {
        let svgs: Vec<&str> = html.split("<svg").skip(1).map(|s| &s[..s.find("</svg>").unwrap()]).collect();
        assert!(!svgs.is_empty());
        for s in svgs {
            for c in ["x-tick", "y-tick"] {
                assert!(texts(s, c).len() >= 2, "{c} missing in {}", &s[..200.min(s.len())]);
            }
            assert_eq!(texts(s, "x-title").len(), 1);
            assert_eq!(texts(s, "y-title").len(), 1);
        }
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
        assert!(html.contains("calibrated</span>: model output whose costs were fitted"), "badges explained");
        assert!(html.contains("href=\"#cfg-1-0\""), "contents link every configuration");
        assert_eq!(html.matches("timer latency CDF</text>").count(), 1);
        assert_every_plot_has_axes(&html);
    }

    #[test]
    fn nested_host_caveat_is_beside_the_numbers() {
        let mut m = run(ResultKind::Measured);
        m.meta.platform.insert("host.guest_ring0".into(), "emulated (nested PVM)".into());
        let html = render_html(&[("host.json".into(), m)]).unwrap();
        let caveat = "guest ring-0 code is emulated";
        let summary = html.find("id=\"summary\"").unwrap();
        let after = &html[summary..];
        assert!(after[..after.find("</table>").unwrap()].contains("⚠"), "flagged in the summary rows");
        // Said once, in plain sight under the run (issue 28: it was repeated three times);
        // the summary's ⚠ rows point there.
        assert_eq!(html.matches(caveat).count(), 1, "once, in the run header");
        assert!(after.contains("see the caveat under <a href=\"#runs\">Runs</a>"));
        assert!(!html[..html.find(caveat).unwrap()].ends_with("<details>"));
    }

    #[test]
    fn lab_results_say_they_are_emulation_beside_the_numbers() {
        let mut m = run(ResultKind::Measured);
        m.meta.platform.insert("lab".into(), "QEMU TCG -icount: instruction count (not hardware latency); nested KVM".into());
        let html = render_html(&[("lab.json".into(), m.clone())]).unwrap();
        assert!(html.contains("<p class=\"caveat\">⚠ Emulation, not hardware latency: measured in the QEMU lab (QEMU TCG -icount: instruction count"), "in the run header");
        let summary = html.find("id=\"summary\"").unwrap();
        assert!(html[summary..].contains("⚠ marks rows whose numbers are not bare-metal latencies"));
        // An imported lab console names its host the same way; a real board does not.
        m.meta.platform.remove("lab");
        m.meta.platform.insert("host".into(), "QEMU TCG emulation (not hardware latency)".into());
        assert!(host_caveat(&m).unwrap().starts_with("Emulation, not hardware latency"));
        m.meta.platform.insert("host".into(), "board: zcu102".into());
        assert_eq!(host_caveat(&m), None);
    }

    #[test]
    fn sweep_report_has_pivot_heatmap_scatter_and_small_multiples() {
        let r = sweep_run();
        let html = render_html(&[("wfi.json".into(), r.clone())]).unwrap();
        assert!(html.contains("Summary: vwfi across, other × pcpus down"));
        assert!(html.contains("<th>adaptive</th>") && html.contains("<small>0.500</small>"));
        assert!(html.contains("Heatmap: timer p99 (µs) over vwfi × other"));
        assert!(html.contains("timer p99 (µs) against other.throughput (pCPU)"));
        assert_eq!(html.matches("<circle").count(), 12);
        // 12 series > MAX_SERIES_PER_PLOT: one small plot per (other, pcpus) with 3 series each
        assert!(html.contains("4 plots, one per combination"), "small multiples");
        assert!(html.contains("timer: other=busy, pcpus=1</text>"));
        assert!(html.contains("href=\"#heatmap-0\"") && html.contains("href=\"#pivot-0\""));
        assert_every_plot_has_axes(&html);

        let opts =
            ReportOptions { pivot: vec!["other".into(), "vwfi".into()], stat: Some("p50".into()), scatter: Some("none".into()), unit: LatencyUnit::Ns, ..Default::default() };
        let html = render_html_with(&[("wfi.json".into(), r.clone())], &opts).unwrap();
        assert!(html.contains("Summary: other across, vwfi down") && html.contains("Ranges over hypervisor.pcpus"));
        assert!(!html.contains("<circle") && html.contains("timer p50 (ns)"));
        let bad = ReportOptions { pivot: vec!["vwfii".into()], ..Default::default() };
        let e = render_html_with(&[("wfi.json".into(), r)], &bad).unwrap_err().to_string();
        assert!(e.contains("no sweep axis `vwfii`") && e.contains("hypervisor.vwfi"), "{e}");
    }
}

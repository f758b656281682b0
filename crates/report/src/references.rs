//! "vs published": the model's value next to each published figure, in two groups — held-out
//! checks (never used to calibrate: their deviation is a prediction error) and fit residuals
//! (figures the costs were calibrated to: a small deviation only shows the fit converged).
//!
//! The table is computed once, here ([`ReferenceTable`]: per reference its role, published value,
//! model value, error, tolerance and verdict, every number already in the unit it is shown in),
//! and formatted by the three places that show it: `irqlab sim`'s and `irqlab fit`'s terminal
//! tables ([`ReferenceTable::text`]) and the HTML report ([`ReferenceTable::html`]). It lives in
//! `report`, not `sim`, because the HTML report reads result.json files and depends on `results`
//! only (docs/design.md's crate table). The verdict itself is `results::ReferenceOutcome::status`,
//! which the CSV and `sim --check` use too.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use results::{ReferenceOutcome, ReferenceRole as Role, ReferenceStatus as Status, RunResult};

use crate::format::{group, latency, scale, LatencyUnit};
use crate::svg::esc;
use crate::sweep::LATENCY_STATS;
use crate::table::{format_value, render_grid};

/// The model's side of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Model {
    /// The model's value (with several seeds, the median over them), in the row's unit.
    Value(String),
    /// The configuration was not part of this run (`--config` chose others).
    NotRun,
    /// No value, with the reason when one was recorded (the configuration failed, say).
    Missing(Option<String>),
}

/// One published figure against the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub config: String,
    /// The latency class; `None` for a figure.
    pub class: Option<String>,
    /// The statistic, with the denominator of a ratio: `mean`, ``ratio:total over `vanilla` ``.
    pub stat: String,
    /// The unit of `published`, `model` and `range`: the latency unit, a figure's unit rescaled
    /// to read best for the published value, or empty (a ratio, a figure without unit).
    pub unit: String,
    pub published: String,
    pub model: Model,
    /// With several seeds: the model's minimum and maximum over them.
    pub range: Option<(String, String)>,
    /// model / published − 1.
    pub error: Option<f64>,
    /// Relative tolerance (0.15 = ±15 %).
    pub tolerance: f64,
    pub status: Status,
    pub source: String,
}

/// The rows of one role, in the order the scenario lists its references.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub role: Role,
    pub rows: Vec<Row>,
}

impl Group {
    /// Rows whose configuration ran.
    pub fn ran(&self) -> usize {
        self.rows.iter().filter(|r| r.status != Status::NotRun).count()
    }

    /// Rows within tolerance.
    pub fn within(&self) -> usize {
        self.rows.iter().filter(|r| r.status == Status::Within).count()
    }

    /// Whether some row has a range over seeds.
    pub fn ranged(&self) -> bool {
        self.rows.iter().any(|r| r.range.is_some())
    }
}

/// The "vs published" table: held-out checks first, then fit residuals; a role without
/// references has no group.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceTable {
    pub groups: Vec<Group>,
    /// The most seeds any configuration ran with (1 without `--seeds`).
    pub seeds: usize,
    /// Configurations named by a reference but not part of this run, once each, in order.
    pub not_run: Vec<String>,
}

impl ReferenceTable {
    /// The table of a run's references, figures in the units the run recorded.
    pub fn of_run(r: &RunResult, unit: LatencyUnit) -> Self {
        Self::within_run(&r.references, r, unit)
    }

    /// The table of `refs` (`irqlab fit`'s leave-one-out rows, say) with the figure units and
    /// seed count of run `r`.
    pub fn within_run(refs: &[ReferenceOutcome], r: &RunResult, unit: LatencyUnit) -> Self {
        let seeds = r.configs.iter().filter_map(|c| c.seed_spread.as_ref()).map(|s| s.seeds.len()).max().unwrap_or(1);
        Self::new(refs, &r.figure_units(), seeds, unit)
    }

    /// The table of `refs`; `figure_units` maps a figure's name to its unit
    /// (`RunResult::figure_units`), latency statistics are shown in `unit`.
    pub fn new(refs: &[ReferenceOutcome], figure_units: &BTreeMap<String, String>, seeds: usize, unit: LatencyUnit) -> Self {
        let groups = [Role::Check, Role::Fit]
            .into_iter()
            .map(|role| Group { role, rows: refs.iter().filter(|r| r.role == role).map(|r| row(r, figure_units, unit)).collect() })
            .filter(|g| !g.rows.is_empty())
            .collect();
        let mut not_run: Vec<String> = Vec::new();
        for r in refs.iter().filter(|r| r.not_run()) {
            if !not_run.contains(&r.config) {
                not_run.push(r.config.clone());
            }
        }
        ReferenceTable { groups, seeds, not_run }
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The terminal tables, one per group under `title(role)`, then the configurations not run.
    /// The seed-range column only in a group where some row has a range.
    pub fn text(&self, title: impl Fn(Role) -> String) -> String {
        let mut s = String::new();
        for g in &self.groups {
            let ranged = g.ranged();
            let mut head: Vec<String> = ["CONFIG", "CLASS", "STAT", "UNIT", "PUBLISHED", "MODEL", "SEED RANGE", "ERROR", "TOL", "STATUS"].map(String::from).to_vec();
            if ranged {
                head[5] = format!("MODEL (median of {} seeds)", self.seeds);
            } else {
                head.remove(6);
            }
            let rows: Vec<Vec<String>> = g
                .rows
                .iter()
                .map(|r| {
                    let mut cells = vec![
                        r.config.clone(),
                        r.class.clone().unwrap_or_else(|| "(figure)".into()),
                        r.stat.clone(),
                        r.unit.clone(),
                        r.published.clone(),
                        match &r.model {
                            Model::Value(v) => v.clone(),
                            Model::NotRun => "–".into(),
                            Model::Missing(Some(why)) => format!("n/a: {}", why.lines().next().unwrap_or("")),
                            Model::Missing(None) => "n/a".into(),
                        },
                    ];
                    if ranged {
                        cells.push(r.range.as_ref().map(|(lo, hi)| format!("{lo} – {hi}")).unwrap_or_default());
                    }
                    cells.extend([percent(r.error).unwrap_or_default(), format!("±{:.0}%", r.tolerance * 100.0), r.status.word().into()]);
                    cells
                })
                .collect();
            s.push_str(&format!("\n{}\n", title(g.role)));
            s.push_str(&render_grid(&head, &rows, 4));
        }
        if !self.not_run.is_empty() {
            let names: Vec<String> = self.not_run.iter().map(|c| format!("`{c}`")).collect();
            s.push_str(&format!("not run (not part of this run, e.g. --config chose others): {}\n", names.join(", ")));
        }
        s
    }

    /// Both groups as HTML, each under a heading that counts its rows within tolerance (empty
    /// when there are no references).
    pub fn html(&self) -> String {
        let mut h = String::new();
        for g in &self.groups {
            let (title, what) = match g.role {
                Role::Check => ("Held-out checks", "published figures never used to calibrate this model: the deviation is a prediction error."),
                Role::Fit => ("Fit residuals", "published figures the costs were calibrated to: a small deviation shows only that the fit converged, not that the model predicts."),
            };
            let _ = write!(h, "<h3>{title} ({} of {} within tolerance)</h3><p>{what}</p>{}", g.within(), g.ran(), html_table(g));
        }
        h
    }
}

/// The terminal titles of `irqlab sim`: what each group is, and what the scenario reproduces.
pub fn sim_title(role: Role, reproduces: &str) -> String {
    match role {
        Role::Check => format!("vs published, held out (never used to calibrate: prediction errors) — {reproduces}"),
        Role::Fit => format!("vs published, fitted (used to calibrate: residuals, not predictions) — {reproduces}"),
    }
}

fn percent(x: Option<f64>) -> Option<String> {
    x.map(|d| format!("{:+.1}%", d * 100.0))
}

fn row(r: &ReferenceOutcome, figure_units: &BTreeMap<String, String>, unit: LatencyUnit) -> Row {
    let is_latency = !r.class.is_empty() && LATENCY_STATS.contains(&r.stat.as_str());
    // A figure is shown in the unit that reads best for its published value, the model's value
    // and range in the same unit (never ns beside s for one total).
    let figure_unit = r.stat.strip_prefix("figure:").and_then(|f| figure_units.get(f));
    let (factor, shown_unit) = match figure_unit {
        _ if is_latency => (1.0, unit.symbol().to_string()),
        Some(u) => scale(r.published.abs(), u),
        None => (1.0, String::new()),
    };
    let show = |v: f64| {
        if is_latency {
            latency(v, unit)
        } else if r.stat.starts_with("ratio:") {
            group(v, 3)
        } else {
            format_value(v * factor)
        }
    };
    Row {
        config: r.config.clone(),
        class: (!r.class.is_empty()).then(|| r.class.clone()),
        stat: match &r.over {
            Some(o) => format!("{} over `{o}`", r.stat),
            None => r.stat.clone(),
        },
        unit: shown_unit,
        published: show(r.published),
        model: match (r.model, &r.missing) {
            (Some(v), _) => Model::Value(show(v)),
            _ if r.not_run() => Model::NotRun,
            (None, why) => Model::Missing(why.clone()),
        },
        range: r.over_seeds.map(|s| (show(s.min), show(s.max))),
        error: r.deviation(),
        tolerance: r.tolerance,
        status: r.status(),
        source: r.source.clone(),
    }
}

fn html_table(g: &Group) -> String {
    let mut h = String::from(
        "<table class=\"refs\"><tr><th>configuration</th><th>statistic</th><th>published</th><th>model</th><th>error</th><th>tolerance</th><th>status</th><th>source</th></tr>",
    );
    for r in &g.rows {
        let with_unit = |v: &str| if r.unit.is_empty() { v.to_string() } else { format!("{v} {}", r.unit) };
        let stat = match &r.class {
            Some(c) => format!("{c} {}", r.stat),
            None => r.stat.clone(),
        };
        let model = match (&r.model, &r.range) {
            (Model::Value(v), Some((lo, hi))) => format!("{} (median over seeds; range {} – {})", with_unit(v), with_unit(lo), with_unit(hi)),
            (Model::Value(v), None) => with_unit(v),
            (Model::NotRun, _) => "–".into(),
            (Model::Missing(Some(why)), _) => format!("n/a: {why}"),
            (Model::Missing(None), _) => "n/a".into(),
        };
        let class = match r.status {
            Status::Within => " class=\"ok\"",
            Status::Out => " class=\"out\"",
            Status::NotRun => "",
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">±{:.0}%</td><td{class}>{}</td><td>{}</td></tr>",
            esc(&r.config),
            esc(&stat),
            esc(&with_unit(&r.published)),
            esc(&model),
            percent(r.error).unwrap_or_else(|| "–".into()),
            r.tolerance * 100.0,
            r.status.word(),
            esc(&r.source)
        );
    }
    h.push_str("</table>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(role: Role, stat: &str, published: f64, model: Option<f64>) -> ReferenceOutcome {
        ReferenceOutcome {
            config: "vwfi=trap".into(),
            class: "timer".into(),
            stat: stat.into(),
            over: None,
            role,
            published,
            tolerance: 0.15,
            source: "Xen Project blog <2017>".into(),
            model,
            over_seeds: None,
            missing: model.is_none().then(|| "configuration failed".into()),
        }
    }

    fn table(refs: &[ReferenceOutcome]) -> ReferenceTable {
        ReferenceTable::new(refs, &BTreeMap::new(), 1, LatencyUnit::Us)
    }

    #[test]
    fn two_groups_with_named_columns() {
        let t = table(&[r(Role::Fit, "mean", 4850.0, Some(4891.9)), r(Role::Check, "max", 7030.0, Some(9000.0)), r(Role::Check, "min", 4810.0, None)]);
        let h = t.html();
        let checks = h.find("Held-out checks (0 of 2 within tolerance)").unwrap();
        let fits = h.find("Fit residuals (1 of 1 within tolerance)").unwrap();
        assert!(checks < fits, "checks first");
        assert!(h.contains("<th>status</th>") && !h.contains("<th></th>") && !h.contains("<th>CLASS</th>"));
        assert!(h.contains(">4.85 µs<") && h.contains(">4.89 µs<") && h.contains("+0.9%") && h.contains("+28.0%"));
        assert!(h.contains("n/a: configuration failed") && h.contains("&lt;2017&gt;"));
        assert_eq!(h.matches("class=\"out\"").count(), 2);
        assert_eq!(table(&[]).html(), "");
        assert!(table(&[]).is_empty() && table(&[]).text(|_| "t".into()).is_empty());
    }

    #[test]
    fn a_median_over_seeds_shows_its_range() {
        let mut x = r(Role::Check, "warm_max", 1950.0, Some(2070.0));
        x.over_seeds = Some(results::Spread { median: 2070.0, min: 2050.0, max: 2880.0 });
        let t = ReferenceTable::new(&[x], &BTreeMap::new(), 8, LatencyUnit::Us);
        let h = t.html();
        assert!(h.contains(">2.07 µs (median over seeds; range 2.05 µs – 2.88 µs)<"), "{h}");
        assert!(h.contains("+6.2%") && h.contains("1 of 1 within"));
        let s = t.text(|_| "refs".into());
        assert!(s.contains("MODEL (median of 8 seeds)") && s.contains("2.05 – 2.88"), "{s}");
    }

    #[test]
    fn figures_read_in_one_unit_and_ratios_plainly() {
        // A total published in ns reads in s, the model's value in the same unit.
        let mut total = r(Role::Check, "figure:total", 8.98e9, Some(11.5e9));
        total.class = String::new();
        let mut ratio = r(Role::Fit, "ratio:total", 2.542, Some(2.474));
        ratio.class = String::new();
        ratio.over = Some("vanilla".into());
        let units = BTreeMap::from([("total".to_string(), "ns".to_string())]);
        let t = ReferenceTable::new(&[total, ratio], &units, 1, LatencyUnit::Us);
        let (c, f) = (&t.groups[0].rows[0], &t.groups[1].rows[0]);
        assert_eq!((c.unit.as_str(), c.published.as_str(), &c.model), ("s", "8.98", &Model::Value("11.5".into())));
        assert_eq!((c.class.as_deref(), c.status), (None, Status::Out));
        assert_eq!((f.stat.as_str(), f.published.as_str(), f.unit.as_str(), f.status), ("ratio:total over `vanilla`", "2.542", "", Status::Within));
        let s = t.text(|role| role.as_str().to_string());
        assert!(s.find("\ncheck\n").unwrap() < s.find("\nfit\n").unwrap() && s.contains("(figure)") && !s.contains("SEED RANGE"), "{s}");
    }

    #[test]
    fn configurations_not_run_are_named_once_and_not_judged() {
        let mut a = r(Role::Check, "mean", 4850.0, None);
        a.missing = Some("not run: --config chose others".into());
        let mut b = a.clone();
        b.stat = "max".into();
        let t = table(&[a, b]);
        assert_eq!(t.not_run, vec!["vwfi=trap".to_string()]);
        assert_eq!((t.groups[0].ran(), t.groups[0].within()), (0, 0));
        assert!(t.text(|_| "t".into()).contains("not run (not part of this run, e.g. --config chose others): `vwfi=trap`\n"));
        assert!(t.html().contains("(0 of 0 within tolerance)") && t.html().contains("<td>not run</td>"));
    }
}

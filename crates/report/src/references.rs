//! "vs published": the model's value next to each published figure, in two groups — fit
//! residuals (figures the costs were calibrated to: a small deviation only shows the fit
//! converged) and held-out checks (never used to calibrate: their deviation is a prediction error).
//!
//! Rows are `results::ReferenceOutcome` as `irqlab sim` records them in result.json.
use std::fmt::Write as _;

use results::{ReferenceOutcome as Reference, ReferenceRole as Role};

use crate::format::{figure_text, group, latency, LatencyUnit};
use crate::svg::esc;
use crate::sweep::LATENCY_STATS;

fn value(r: &Reference, v: f64, unit: LatencyUnit) -> String {
    if !r.class.is_empty() && LATENCY_STATS.contains(&r.stat.as_str()) {
        format!("{} {}", latency(v, unit), unit.symbol())
    } else if r.stat.starts_with("ratio:") {
        group(v, 3)
    } else {
        figure_text(v, "")
    }
}

fn table(refs: &[&Reference], unit: LatencyUnit) -> String {
    let mut h = String::from(
        "<table class=\"refs\"><tr><th>configuration</th><th>statistic</th><th>published</th><th>model</th><th>deviation</th><th>tolerance</th><th>verdict</th><th>source</th></tr>",
    );
    for r in refs {
        let stat = if r.class.is_empty() { r.stat.clone() } else { format!("{} {}", r.class, r.stat) };
        let stat = match &r.over {
            Some(o) => format!("{stat} (over {o})"),
            None => stat,
        };
        let model = match (r.model, &r.missing) {
            (Some(v), _) => match r.over_seeds {
                Some(s) => format!("{} (median over seeds; range {} – {})", value(r, v, unit), value(r, s.min, unit), value(r, s.max, unit)),
                None => value(r, v, unit),
            },
            (None, Some(_)) if r.not_run() => "–".into(),
            (None, Some(m)) => format!("n/a: {m}"),
            (None, None) => "n/a".into(),
        };
        let verdict = if r.not_run() {
            "<td>not run</td>"
        } else if r.within() {
            "<td class=\"ok\">within</td>"
        } else {
            "<td class=\"out\">OUT</td>"
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">±{:.0}%</td>{verdict}<td>{}</td></tr>",
            esc(&r.config),
            esc(&stat),
            esc(&value(r, r.published, unit)),
            esc(&model),
            r.deviation().map(|d| format!("{:+.1}%", d * 100.0)).unwrap_or_else(|| "–".into()),
            r.tolerance * 100.0,
            esc(&r.source)
        );
    }
    h.push_str("</table>");
    h
}

/// Both groups as HTML (empty when there are no references).
pub fn references_html(refs: &[Reference], unit: LatencyUnit) -> String {
    if refs.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    for (role, title, what) in [
        (Role::Check, "Held-out checks", "published figures never used to calibrate this model: the deviation is a prediction error."),
        (Role::Fit, "Fit residuals", "published figures the costs were calibrated to: a small deviation shows only that the fit converged, not that the model predicts."),
    ] {
        let group: Vec<&Reference> = refs.iter().filter(|r| r.role == role).collect();
        if group.is_empty() {
            continue;
        }
        let ran = group.iter().filter(|r| !r.not_run()).count();
        let within = group.iter().filter(|r| r.within()).count();
        let _ = write!(h, "<h3>{title} ({within} of {ran} within tolerance)</h3><p>{}</p>{}", what, table(&group, unit));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(role: Role, stat: &str, published: f64, model: Option<f64>) -> Reference {
        Reference {
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

    #[test]
    fn two_groups_with_named_columns() {
        let h = references_html(&[r(Role::Fit, "mean", 4850.0, Some(4891.9)), r(Role::Check, "max", 7030.0, Some(9000.0)), r(Role::Check, "min", 4810.0, None)], LatencyUnit::Us);
        let checks = h.find("Held-out checks (0 of 2 within tolerance)").unwrap();
        let fits = h.find("Fit residuals (1 of 1 within tolerance)").unwrap();
        assert!(checks < fits, "checks first");
        assert!(h.contains("<th>verdict</th>") && !h.contains("<th></th>") && !h.contains("<th>CLASS</th>"));
        assert!(h.contains(">4.85 µs<") && h.contains(">4.89 µs<") && h.contains("+0.9%") && h.contains("+28.0%"));
        assert!(h.contains("n/a: configuration failed") && h.contains("&lt;2017&gt;"));
        assert_eq!(h.matches("class=\"out\"").count(), 2);
        assert_eq!(references_html(&[], LatencyUnit::Us), "");
    }

    #[test]
    fn a_median_over_seeds_shows_its_range() {
        let mut x = r(Role::Check, "warm_max", 1950.0, Some(2070.0));
        x.over_seeds = Some(results::Spread { median: 2070.0, min: 2050.0, max: 2880.0 });
        let h = references_html(&[x], LatencyUnit::Us);
        assert!(h.contains(">2.07 µs (median over seeds; range 2.05 µs – 2.88 µs)<"), "{h}");
        assert!(h.contains("+6.2%") && h.contains("1 of 1 within"));
    }
}

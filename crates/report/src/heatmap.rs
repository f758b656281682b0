//! A heatmap of one statistic over two sweep axes: a pivot per combination of the remaining axes
//! (small multiples), cells coloured on one scale shared by all of them (logarithmic for
//! latencies), so a glance finds where latency or throughput changes.
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use results::ConfigResult;

use crate::pivot::{pivot, Cell, CellSpec};
use crate::svg::esc;
use crate::sweep::SweepAxis;

/// Facets beyond this many are left out (and said so).
pub const MAX_FACETS: usize = 36;

/// Colour of `f` in 0..1 for a latency: light yellow (low, good) to dark red (high, bad).
pub fn ramp(f: f64) -> String {
    let f = if f.is_finite() { f.clamp(0.0, 1.0) } else { 0.0 };
    let lerp = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", lerp(255.0, 215.0), lerp(247.0, 48.0), lerp(188.0, 39.0))
}

/// Colour of `f` in 0..1 for a figure, where high may be good (a throughput): light to dark
/// blue, no alarm colour.
pub fn ramp_neutral(f: f64) -> String {
    let f = if f.is_finite() { f.clamp(0.0, 1.0) } else { 0.0 };
    let lerp = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", lerp(239.0, 33.0), lerp(243.0, 102.0), lerp(255.0, 172.0))
}

/// The heatmap as HTML: `x` across, `y` down, one small table per combination of the other axes.
pub fn heatmap_html(configs: &[ConfigResult], all: &[SweepAxis], x: &SweepAxis, y: &SweepAxis, spec: &CellSpec) -> String {
    let rest: Vec<&SweepAxis> = all.iter().filter(|a| a.key != x.key && a.key != y.key).collect();
    // One facet per combination of the other axes' values that some configuration has, in sweep
    // order. Enumerating every combination was exponential in the number of axes (issue 45).
    let mut present: BTreeMap<Vec<usize>, Vec<(String, String)>> = BTreeMap::new();
    let index: Vec<HashMap<&str, usize>> = rest.iter().map(|a| a.positions()).collect();
    for c in configs {
        if !c.params.contains_key(&x.key) || !c.params.contains_key(&y.key) {
            continue;
        }
        let Some(order) = rest.iter().zip(&index).map(|(a, ix)| c.params.get(&a.key).and_then(|v| ix.get(v.as_str())).copied()).collect::<Option<Vec<usize>>>() else { continue };
        present.entry(order).or_insert_with(|| rest.iter().map(|a| (a.key.clone(), c.params[&a.key].clone())).collect());
    }
    let mut facets: Vec<Vec<(String, String)>> = present.into_values().collect();
    let total = facets.len();
    facets.truncate(MAX_FACETS);
    let rows = [y.clone()];
    let pivots: Vec<(String, crate::pivot::Pivot)> = facets
        .iter()
        .map(|f| {
            let sub: Vec<ConfigResult> = configs.iter().filter(|c| f.iter().all(|(k, v)| c.params.get(k) == Some(v))).cloned().collect();
            let label = f.iter().map(|(k, v)| format!("{}={v}", k.rsplit('.').next().unwrap_or(k))).collect::<Vec<_>>().join(", ");
            (label, pivot(&sub, all, x, &rows, spec))
        })
        .filter(|(_, p)| !p.rows.is_empty())
        .collect();
    let vals: Vec<f64> = pivots.iter().flat_map(|(_, p)| p.rows.iter().flat_map(|r| r.1.iter().flatten().map(|c| c.max))).collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log = spec.stat.is_latency() && lo > 0.0;
    let frac = move |v: f64| {
        if hi <= lo {
            0.5
        } else if log {
            (v / lo).ln() / (hi / lo).ln()
        } else {
            (v - lo) / (hi - lo)
        }
    };
    let paint = |f: f64| if spec.stat.is_latency() { ramp(f) } else { ramp_neutral(f) };
    let color = |c: &Cell| Some(paint(frac(c.max)));
    let mut h = String::from("<div class=\"facets\">");
    for (label, p) in &pivots {
        let _ = write!(h, "<figure class=\"facet\">{}<figcaption>{}</figcaption></figure>", p.to_html(&color), esc(if label.is_empty() { "all configurations" } else { label }));
    }
    h.push_str("</div>");
    let stat = spec.stat.title(&crate::sweep::class_title(configs, spec.class), spec.unit, configs);
    let _ = write!(
        h,
        "<p class=\"caption\">Colour key: {} <span class=\"key\" style=\"background:linear-gradient(to right, {}, {}, {})\"></span> from light (low, {}) to dark (high, {}){}.{}</p>",
        esc(&stat),
        paint(0.0),
        paint(0.5),
        paint(1.0),
        esc(&spec.stat.show(lo, spec.unit)),
        esc(&spec.stat.show(hi, spec.unit)),
        if log { ", log scale" } else { "" },
        if total > MAX_FACETS { format!(" First {MAX_FACETS} of {total} combinations shown.") } else { String::new() }
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::LatencyUnit;
    use crate::sweep::{axes, find, tests::sweep, Stat};

    #[test]
    fn one_facet_per_remaining_value_and_shared_colours() {
        let cs = sweep();
        let ax = axes(&cs);
        let stat = Stat::parse("p99");
        let spec = CellSpec { stat: &stat, second: None, class: "timer", unit: LatencyUnit::Ns };
        let h = heatmap_html(&cs, &ax, find(&ax, "vwfi").unwrap(), find(&ax, "other").unwrap(), &spec);
        assert_eq!(h.matches("<figure class=\"facet\">").count(), 2, "pcpus=1 and pcpus=2");
        assert!(h.contains("<figcaption>pcpus=1</figcaption>") && h.contains("<figcaption>pcpus=2</figcaption>"));
        // lowest value (1,001 ns) gets the light end, highest (3,102 ns) the dark end
        assert!(h.contains(&format!("background:{}\">1,001<", ramp(0.0))), "{h}");
        assert!(h.contains(&format!("background:{}\">3,102<", ramp(1.0))), "{h}");
        assert!(h.contains("timer p99 (ns)") && h.contains("log scale"));
        assert_eq!(h.matches("(n=").count(), 0, "every cell is one configuration");
    }

    #[test]
    fn figures_get_a_neutral_ramp_and_every_heatmap_a_key() {
        let cs = sweep();
        let ax = axes(&cs);
        let stat = Stat::parse("other.throughput");
        let spec = CellSpec { stat: &stat, second: None, class: "timer", unit: LatencyUnit::Ns };
        let h = heatmap_html(&cs, &ax, find(&ax, "vwfi").unwrap(), find(&ax, "other").unwrap(), &spec);
        assert!(h.contains("class=\"key\"") && h.contains(&ramp_neutral(1.0)) && !h.contains(&ramp(1.0)), "{h}");
    }

    #[test]
    fn one_facet_per_combination_some_configuration_has() {
        // 64 axes, 62 of them left for facets (3^62 combinations): three facets (issue 45).
        let cs = crate::pivot::more_tests::many_axes();
        let ax = axes(&cs);
        let stat = Stat::parse("p99");
        let spec = CellSpec { stat: &stat, second: None, class: "t", unit: LatencyUnit::Ns };
        let h = heatmap_html(&cs, &ax, &ax[0], &ax[1], &spec);
        assert_eq!(h.matches("<figure class=\"facet\">").count(), 3, "{h}");
        assert!(h.contains("<figcaption>p02=2, p03=0,") && h.contains("<figcaption>p02=0, p03=1,"), "{h}");
        assert!(!h.contains("combinations shown"), "{h}");
    }

    #[test]
    fn ramp_ends() {
        assert_eq!(ramp(0.0), "#fff7bc");
        assert_eq!(ramp(1.0), "#d73027");
        assert_eq!(ramp(f64::NAN), "#fff7bc");
    }
}

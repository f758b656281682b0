//! SVG plots with plotters (svg backend, no font dependencies).
//!
//! The CDF uses a "nines" y axis, y = −log10(1 − p), so p50, p90, p99, p99.9 and p99.99 are evenly
//! spaced: the tail — what the GICv4 and vwfi debates turn on — gets as much room as the body.
use hdrhistogram::Histogram;
use plotters::prelude::*;

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Colour for series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// (latency ns, nines) points of a histogram's CDF; the last point is capped at log10(count).
pub fn cdf_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let total = h.len();
    if total == 0 {
        return Vec::new();
    }
    let cap = (total as f64).log10().max(1.0);
    let mut cum = 0u64;
    let mut pts = vec![(h.min() as f64, 0.0)];
    for v in h.iter_recorded() {
        cum += v.count_since_last_iteration();
        let p = cum as f64 / total as f64;
        let nines = if p >= 1.0 { cap } else { (-(1.0 - p).log10()).min(cap) };
        pts.push((h.highest_equivalent(v.value_iterated_to()) as f64, nines));
    }
    pts
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plot failed: {e:?}")
}

/// Overlaid CDFs of several series (name, histogram) on a nines axis. Returns SVG text.
pub fn cdf_svg(title: &str, series: &[(String, Histogram<u64>)]) -> Result<String, String> {
    let curves: Vec<(String, Vec<(f64, f64)>)> = series.iter().map(|(n, h)| (n.clone(), cdf_points(h))).collect();
    let xmax = curves.iter().flat_map(|c| c.1.iter().map(|p| p.0)).fold(1.0f64, f64::max) * 1.05;
    let xmin = curves.iter().flat_map(|c| c.1.iter().map(|p| p.0)).fold(f64::MAX, f64::min).min(xmax / 1.1) * 0.95;
    let ymax = curves.iter().flat_map(|c| c.1.iter().map(|p| p.1)).fold(1.0f64, f64::max).ceil();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((xmin.max(1.0)..xmax).log_scale(), 0.0..ymax)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("latency (ns, log scale)")
            .y_desc("percentile")
            .y_labels(ymax as usize + 1)
            .y_label_formatter(&|y| nines_label(*y))
            .x_label_formatter(&|x| short_ns(*x))
            .draw()
            .map_err(err)?;
        for (i, (name, pts)) in curves.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                .map_err(err)?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// Histogram of one series: linear bins from min to p99.9, the rest in a last "tail" bin.
pub fn histogram_svg(title: &str, h: &Histogram<u64>, bins: usize) -> Result<String, String> {
    let lo = h.min() as f64;
    let hi = (h.value_at_quantile(0.999) as f64).max(lo + 1.0);
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0u64; bins + 1];
    for v in h.iter_recorded() {
        let x = h.median_equivalent(v.value_iterated_to()) as f64;
        let i = if x >= hi { bins } else { (((x - lo) / width) as usize).min(bins - 1) };
        counts[i] += v.count_since_last_iteration();
    }
    let ymax = counts.iter().copied().max().unwrap_or(1).max(1) as f64 * 1.1;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(lo..hi + width, 0.0..ymax)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("latency (ns); last bar: above p99.9")
            .y_desc("count")
            .x_label_formatter(&|x| short_ns(*x))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(counts.iter().enumerate().map(|(i, c)| {
                let x0 = lo + i as f64 * width;
                let style = if i == bins { RED.mix(0.6).filled() } else { color(0).mix(0.8).filled() };
                Rectangle::new([(x0, 0.0), (x0 + width * 0.95, *c as f64)], style)
            }))
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// 0 → "p0", 1 → "p90", 2 → "p99", 3 → "p99.9"...
pub fn nines_label(y: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-y));
    if y < 0.5 {
        "p0".into()
    } else {
        let s = format!("{p:.4}");
        format!("p{}", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// 1500 → "1.5µs".
pub fn short_ns(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.3}ms", x / 1e6).replace(".000", "")
    } else if x >= 1e3 {
        format!("{:.1}µs", x / 1e3).replace(".0µ", "µ")
    } else {
        format!("{x:.0}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: impl Iterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3).unwrap();
        for v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn cdf_is_monotone_and_reaches_the_cap() {
        let h = hist(1..=10_000);
        let pts = cdf_points(&h);
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!((pts.last().unwrap().1 - 4.0).abs() < 1e-9);
        // the p99 point sits at about 2 nines
        let p99 = pts.iter().find(|p| p.1 >= 2.0).unwrap();
        assert!((p99.0 - 9900.0).abs() < 20.0, "{p99:?}");
    }

    #[test]
    fn labels() {
        assert_eq!(nines_label(0.0), "p0");
        assert_eq!(nines_label(1.0), "p90");
        assert_eq!(nines_label(3.0), "p99.9");
        assert_eq!(short_ns(4850.0), "4.8µs");
        assert_eq!(short_ns(300.0), "300ns");
    }

    #[test]
    fn svgs_render_with_series_names() {
        let a = hist(1000..2000);
        let b = hist(4000..6000);
        let s = cdf_svg("timer", &[("native".into(), a.clone()), ("trap".into(), b)]).unwrap();
        assert!(s.starts_with("<svg") && s.contains("native") && s.contains("trap") && s.contains("<polyline"));
        let hsvg = histogram_svg("native", &a, 40).unwrap();
        assert!(hsvg.matches("<rect").count() > 40, "bars drawn");
    }
}

use super::*;

fn hist(values: impl Iterator<Item = u64>) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3).unwrap();
    for v in values {
        h.record(v).unwrap();
    }
    h
}

/// The text of every `<text class="CLASS" ...>` element.
pub(crate) fn texts(svg: &str, class: &str) -> Vec<String> {
    let pat = format!("<text class=\"{class}\"");
    svg.match_indices(&pat)
        .map(|(i, _)| {
            let rest = &svg[i..];
            let start = rest.find('>').unwrap() + 1;
            rest[start..start + rest[start..].find("</text>").unwrap()].to_string()
        })
        .collect()
}

fn assert_axes(svg: &str) {
    for c in ["x-tick", "y-tick"] {
        let t = texts(svg, c);
        assert!(t.len() >= 2, "{c}: {t:?}");
        let mut d = t.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), t.len(), "duplicate {c}: {t:?}");
        assert!(t.iter().all(|l| !l.contains("µs") && !l.contains("ns") && !l.contains('e')), "{c}: {t:?}");
    }
    assert_eq!(texts(svg, "x-title").len(), 1);
    assert_eq!(texts(svg, "y-title").len(), 1);
    assert!(svg.contains("viewBox=") && svg.contains("width=\"100%\""));
}

#[test]
fn cdf_is_monotone_and_reaches_the_cap() {
    let h = hist(1..=10_000);
    let pts = cdf_points(&h);
    assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    assert!((pts.last().unwrap().1 - 4.0).abs() < 1e-9);
    let p99 = pts.iter().find(|p| p.1 >= 2.0).unwrap();
    assert!((p99.0 - 9900.0).abs() < 20.0, "{p99:?}");
}

/// Issue 25: the band brackets each percentile, narrows with more samples, and stops where
/// a percentile has too few samples behind it (p99.9 of 1,000 samples has none).
#[test]
fn cdf_band_brackets_each_percentile_and_stops_where_too_few() {
    let conf = results::stats::Confidence::new(0.95).unwrap();
    let small = hist(1..=1_000);
    let big = hist((1..=100_000).map(|v| v / 100 + 1));
    let band = cdf_band(&small, conf);
    assert!(!band.is_empty());
    for (y, lo, hi) in &band {
        let p = 1.0 - 10f64.powf(-y);
        let q = small.value_at_quantile(p) as f64;
        assert!(*lo <= q && q <= *hi, "p={p}: {q} outside [{lo}, {hi}]");
    }
    let top = band.last().unwrap().0;
    assert!(top < 3.0 && top >= 2.0, "1,000 samples resolve p99 but not p99.9: band ends at {top} nines");
    let width = |b: &[(f64, f64, f64)], y: f64| b.iter().find(|r| (r.0 - y).abs() < 1e-9).map(|r| r.2 - r.1).unwrap();
    let (ws, wb) = (width(&band, 1.0) / 1000.0, width(&cdf_band(&big, conf), 1.0) / 1000.0);
    assert!(wb < ws, "more samples, narrower band at p90: {wb} vs {ws}");
    let svg = cdf_svg("t", &[("a".into(), small)], LatencyUnit::Us, 760.0);
    assert_eq!(svg.matches("<polygon class=\"band\"").count(), 1, "one band per series");
    assert!(svg.find("class=\"band\"").unwrap() < svg.find("class=\"series\"").unwrap(), "the band is drawn under its line");
}

#[test]
fn labels() {
    assert_eq!(nines_label(0.0), "p0");
    assert_eq!(nines_label(2f64.log10()), "p50");
    assert_eq!(nines_label(1.0), "p90");
    assert_eq!(nines_label(3.0), "p99.9");
    assert_eq!(nines_label(7.0), "p99.99999");
}

#[test]
fn narrow_cdf_has_latency_ticks_in_one_unit() {
    // 4.61–7.17 µs: less than a decade (the default scenario's vwfi=trap).
    let s = cdf_svg("timer", &[("trap".into(), hist(4610..7170))], LatencyUnit::Us, 720.0);
    assert_axes(&s);
    assert_eq!(texts(&s, "x-tick"), ["5", "6", "7"]);
    assert_eq!(texts(&s, "x-title"), ["latency (µs, log scale)"]);
    let ns = cdf_svg("timer", &[("trap".into(), hist(4610..7170))], LatencyUnit::Ns, 720.0);
    assert!(texts(&ns, "x-tick").contains(&"5,000".to_string()), "{:?}", texts(&ns, "x-tick"));
    assert_eq!(texts(&ns, "x-title"), ["latency (ns, log scale)"]);
}

#[test]
fn wide_cdf_ticks_do_not_overlap_and_legend_is_below() {
    let s = cdf_svg("ipi", &[("a".into(), hist(300..400)), ("b".into(), hist((1..200).map(|v| v * v * 250)))], LatencyUnit::Us, 360.0);
    assert_axes(&s);
    let ticks = texts(&s, "x-tick");
    assert!(ticks.len() <= 7, "{ticks:?}");
    let legend_y = s.find("class=\"legend\"").unwrap();
    assert!(legend_y > s.find("class=\"x-title\"").unwrap(), "legend after the axes");
}

#[test]
fn histograms_have_integer_counts_and_log_bins_for_long_tails() {
    let body = hist(std::iter::repeat_n(5000, 160_000).chain(4000..6000));
    let s = histogram_svg("short", &body, 40, LatencyUnit::Us, 720.0);
    assert_axes(&s);
    assert!(texts(&s, "y-tick").iter().all(|t| !t.contains('.')), "{:?}", texts(&s, "y-tick"));
    assert!(texts(&s, "y-tick").contains(&"150,000".to_string()), "{:?}", texts(&s, "y-tick"));
    assert!(!texts(&s, "x-title")[0].contains("log"));
    let tail = hist((0..10_000).map(|i| if i % 1000 == 0 { 2_000_000 } else { 2000 + i % 100 }));
    let s = histogram_svg("tail", &tail, 40, LatencyUnit::Us, 720.0);
    assert_axes(&s);
    assert!(texts(&s, "x-title")[0].contains("log scale") && texts(&s, "y-title")[0].contains("log scale"));
    assert!(s.matches("class=\"hist-bar\"").count() >= 2, "tail bar visible");
}

#[test]
fn scatter_renders_points_with_tooltips() {
    let pts: Vec<ScatterPoint> = (0..9).map(|i| ScatterPoint { x: i as f64 * 0.1, y: 5.0 + i as f64, series: i % 3, tip: format!("pt{i}") }).collect();
    let s = scatter_svg("p99 vs throughput", "other.throughput (pCPU)", "p99 (µs)", &pts, &[("trap".into(), 0), ("native".into(), 1), ("adaptive".into(), 2)], 720.0);
    assert_axes(&s);
    assert_eq!(s.matches("<circle").count(), 9);
    assert!(s.contains("<title>pt4</title>") && s.contains(">adaptive</text>"));
}

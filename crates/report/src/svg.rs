//! SVG plots, written directly (no plotting library): full control over ticks, units and layout.
//!
//! Why not a library (issue 28, item 6, decided 2026-11-25): `plotters` was declared in the
//! workspace but never used, and is removed. Its SVG backend draws text without the classes and
//! units the report's checks rely on (`x-tick`, `x-title`, one unit per axis), has no "nines"
//! axis, and would still need this module's tick and legend layout. An inline interactive
//! library (uPlot, ~50 KB; Vega-Lite, ~800 KB) would give hover and zoom, but every report would
//! carry that script, the page would need JavaScript to show anything, and `check-reports.sh`
//! could no longer read the plots from the HTML. Static SVG keeps the report one small file
//! that works offline, prints, and is checked as text; the exact percentiles a hover would show
//! are in the tables beside each plot, and each point of a scatter carries a `<title>` tooltip.
//!
//! Every plot has a title, x and y tick labels (`class="x-tick"` / `"y-tick"`) and axis titles
//! (`class="x-title"` / `"y-title"`) naming the one unit the ticks are in; the legend sits below
//! the plot area, so it never covers data. The `<svg>` has a `viewBox` and `width:100%`, so it
//! scales with the page instead of being fixed at some pixel width.
//!
//! The CDF uses a "nines" y axis, y = −log10(1 − p), so p50, p90, p99, p99.9 and p99.99 are evenly
//! spaced: the tail — what the GICv4 and vwfi debates turn on — gets as much room as the body.
use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::format::LatencyUnit;
use crate::ticks::{fit, linear_ticks, log_ticks, Tick};

const PALETTE: [&str; 10] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const DASHES: [&str; 3] = ["", "6 3", "2 2"];
/// Pixels per character of 12 px sans-serif text (an upper estimate, for layout).
const CHAR_PX: f64 = 7.0;
const FONT: f64 = 12.0;

/// Colour and dash pattern of series `i`: ten colours, then the same colours dashed.
pub fn style(i: usize) -> (&'static str, &'static str) {
    (PALETTE[i % PALETTE.len()], DASHES[(i / PALETTE.len()) % DASHES.len()])
}

/// Escape text for SVG/HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c if c.is_control() => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

fn text_px(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_PX
}

/// Linear or logarithmic mapping.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    Log,
}

/// One axis: range in data units, ticks and the title (which names the unit).
#[derive(Debug, Clone)]
pub struct Axis {
    pub scale: Scale,
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<Tick>,
    pub title: String,
}

impl Axis {
    /// Position of `v` along the axis, 0..1.
    pub fn frac(&self, v: f64) -> f64 {
        let f = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.max(f64::MIN_POSITIVE).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        };
        if f.is_finite() {
            f
        } else {
            0.5
        }
    }

    /// A numeric axis over the data range [lo, hi] with ticks fitted to `px` pixels. `log` is
    /// honoured only when lo > 0. `horizontal` decides how label size is measured.
    pub fn numeric(lo: f64, hi: f64, log: bool, title: &str, px: f64, horizontal: bool) -> Axis {
        let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - (lo.abs() * 0.1).max(1.0), hi + (hi.abs() * 0.1).max(1.0)) };
        let log = log && lo > 0.0;
        let (lo, hi, scale) = if log {
            let pad = (hi / lo).powf(0.03);
            (lo / pad, hi * pad, Scale::Log)
        } else {
            let pad = (hi - lo) * 0.03;
            (if lo >= 0.0 && lo - pad < 0.0 { 0.0 } else { lo - pad }, hi + pad, Scale::Linear)
        };
        let mut axis = Axis { scale, lo, hi, ticks: Vec::new(), title: title.to_string() };
        let probe = axis.clone();
        let extent = |s: &str| if horizontal { text_px(s) } else { FONT };
        axis.ticks = fit(
            |m| if log { log_ticks(lo, hi, m) } else { linear_ticks(lo, hi, m) },
            |v| probe.frac(v) * px,
            extent,
            if horizontal { 10.0 } else { 6.0 },
            if horizontal { 10 } else { 8 },
        );
        axis
    }

    /// A count axis from 0 with whole-number ticks (no "160000.0").
    pub fn counts(max: f64, title: &str, px: f64) -> Axis {
        let hi = max.max(1.0) * 1.05;
        let mut axis = Axis { scale: Scale::Linear, lo: 0.0, hi, ticks: Vec::new(), title: title.to_string() };
        let probe = axis.clone();
        axis.ticks = fit(|m| linear_ticks(0.0, hi, m).into_iter().filter(|t| t.value.fract() == 0.0).collect(), |v| probe.frac(v) * px, |_| FONT, 6.0, 8);
        axis
    }
}

/// A plot under construction: frame, axes and legend are laid out first, series are added, then
/// [`Plot::finish`] closes the SVG.
pub struct Plot {
    out: String,
    x: Axis,
    y: Axis,
    left: f64,
    top: f64,
    pw: f64,
    ph: f64,
}

/// A legend entry of at most `max` characters: a long one loses its middle, not its end, since
/// labels that differ only at the end (`model/result.json [predicted]: vwfi=trap` and `…=native`)
/// must stay different.
pub fn shorten(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= max {
        return name.to_string();
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    let chars: Vec<char> = name.chars().collect();
    format!("{}…{}", chars[..head].iter().collect::<String>(), chars[n - tail..].iter().collect::<String>())
}

/// Legend entries: name and series index (for its style).
pub type Legend = [(String, usize)];

impl Plot {
    /// `width`: viewBox width; `plot_h`: height of the plot area. The y axis ticks must be set;
    /// the x axis ticks are (re)fitted to the plot area's width.
    pub fn new(title: &str, width: f64, plot_h: f64, x: Axis, y: Axis, legend: &Legend) -> Plot {
        let ylabel_w = y.ticks.iter().map(|t| text_px(&t.label)).fold(0.0, f64::max);
        let left = 8.0 + 18.0 + ylabel_w + 8.0;
        let right = 16.0 + x.ticks.last().map(|t| text_px(&t.label) / 2.0).unwrap_or(0.0);
        let pw = (width - left - right).max(60.0);
        let top = 30.0;
        // Legend rows below the x-axis title.
        let mut rows: Vec<Vec<(String, usize, f64)>> = vec![Vec::new()];
        let mut row_w = 0.0;
        for (name, i) in legend {
            let name = shorten(name, 70);
            let w = 28.0 + text_px(&name) + 14.0;
            if row_w + w > width - 16.0 && row_w > 0.0 {
                rows.push(Vec::new());
                row_w = 0.0;
            }
            rows.last_mut().expect("one row").push((name, *i, row_w));
            row_w += w;
        }
        let legend_h = if legend.is_empty() { 0.0 } else { rows.len() as f64 * 18.0 + 6.0 };
        let height = top + plot_h + 20.0 + 22.0 + legend_h + 6.0;
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {width:.0} {height:.0}" width="100%" style="max-width:{width:.0}px;height:auto" font-family="sans-serif" font-size="{FONT}" role="img"><title>{t}</title><rect width="100%" height="100%" fill="white"/><text class="plot-title" x="{cx:.1}" y="20" text-anchor="middle" font-size="15">{t}</text>"#,
            t = esc(title),
            cx = width / 2.0
        );
        let mut p = Plot { out, x, y, left, top, pw, ph: plot_h };
        p.frame();
        let ly = top + plot_h + 20.0 + 22.0 + 8.0;
        for (r, row) in rows.iter().enumerate() {
            let y = ly + r as f64 * 18.0;
            for (name, i, x0) in row {
                let (c, d) = style(*i);
                let x0 = 8.0 + x0;
                let _ = write!(
                    p.out,
                    r#"<g class="legend"><line x1="{x0:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{c}" stroke-width="3" stroke-dasharray="{d}"/><text x="{:.1}" y="{:.1}">{}</text></g>"#,
                    x0 + 22.0,
                    x0 + 28.0,
                    y + 4.0,
                    esc(name)
                );
            }
        }
        p
    }

    fn frame(&mut self) {
        let (l, t, w, h) = (self.left, self.top, self.pw, self.ph);
        let _ = write!(self.out, r##"<rect x="{l:.1}" y="{t:.1}" width="{w:.1}" height="{h:.1}" fill="none" stroke="#444"/>"##);
        for k in &self.x.ticks {
            let x = l + self.x.frac(k.value) * w;
            let _ = write!(
                self.out,
                r##"<line x1="{x:.1}" y1="{t:.1}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/><text class="x-tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                t + h,
                t + h + 15.0,
                esc(&k.label)
            );
        }
        for k in &self.y.ticks {
            let y = t + h - self.y.frac(k.value) * h;
            let _ = write!(
                self.out,
                r##"<line x1="{l:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text class="y-tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                l + w,
                l - 5.0,
                y + 4.0,
                esc(&k.label)
            );
        }
        let _ = write!(
            self.out,
            r#"<text class="x-title" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="y-title" transform="translate(14,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            l + w / 2.0,
            t + h + 35.0,
            esc(&self.x.title),
            t + h / 2.0,
            esc(&self.y.title)
        );
    }

    fn px(&self, x: f64, y: f64) -> (f64, f64) {
        let fx = self.x.frac(x).clamp(-0.02, 1.02);
        let fy = self.y.frac(y).clamp(-0.02, 1.02);
        (self.left + fx * self.pw, self.top + self.ph - fy * self.ph)
    }

    /// A line through `pts` (data units) in the style of series `i`.
    pub fn line(&mut self, pts: &[(f64, f64)], i: usize, name: &str) {
        let (c, d) = style(i);
        let mut path = String::new();
        for (x, y) in pts {
            let (px, py) = self.px(*x, *y);
            let _ = write!(path, "{px:.1},{py:.1} ");
        }
        let _ = write!(
            self.out,
            r#"<polyline class="series" points="{}" fill="none" stroke="{c}" stroke-width="2" stroke-dasharray="{d}"><title>{}</title></polyline>"#,
            path.trim_end(),
            esc(name)
        );
    }

    /// A shaded band between two x edges over y (`rows` = (y, x_lo, x_hi), y increasing), in
    /// the colour of series `i`, drawn under the lines.
    pub fn band(&mut self, rows: &[(f64, f64, f64)], i: usize, tip: &str) {
        if rows.len() < 2 {
            return;
        }
        let (c, _) = style(i);
        let mut path = String::new();
        for (y, _, hi) in rows {
            let (px, py) = self.px(*hi, *y);
            let _ = write!(path, "{px:.1},{py:.1} ");
        }
        for (y, lo, _) in rows.iter().rev() {
            let (px, py) = self.px(*lo, *y);
            let _ = write!(path, "{px:.1},{py:.1} ");
        }
        let _ = write!(self.out, r#"<polygon class="band" points="{}" fill="{c}" fill-opacity="0.18" stroke="none"><title>{}</title></polygon>"#, path.trim_end(), esc(tip));
    }

    /// A bar over [x0, x1] from the axis bottom to `y`.
    pub fn bar(&mut self, x0: f64, x1: f64, y: f64, fill: &str, tip: &str) {
        let (a, top) = self.px(x0, y);
        let (b, _) = self.px(x1, y);
        let bottom = self.top + self.ph;
        let w = (b - a - 0.6).max(0.8);
        let _ = write!(
            self.out,
            r#"<rect class="hist-bar" x="{a:.1}" y="{top:.1}" width="{w:.1}" height="{:.1}" fill="{fill}"><title>{}</title></rect>"#,
            (bottom - top).max(0.0),
            esc(tip)
        );
    }

    /// A point with a tooltip.
    pub fn point(&mut self, x: f64, y: f64, i: usize, tip: &str) {
        let (c, _) = style(i);
        let (px, py) = self.px(x, y);
        let _ = write!(
            self.out,
            r#"<circle class="point" cx="{px:.1}" cy="{py:.1}" r="4.5" fill="{c}" fill-opacity="0.8" stroke="black" stroke-width="0.5"><title>{}</title></circle>"#,
            esc(tip)
        );
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
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

/// Step of the nines grid a CDF's confidence band is computed on.
const BAND_STEP: f64 = 0.05;

/// The pointwise confidence band of a CDF (issue 25): for percentiles on a grid of nines, the
/// distribution-free interval of that percentile from the order statistics
/// (`results::stats::order_ci`; bucket-widened when only the histogram is stored), as
/// (nines, lo ns, hi ns) rows. It stops below the first percentile with too few samples behind
/// it, so a tail drawn beyond the band is visibly unresolved.
pub fn cdf_band(h: &Histogram<u64>, conf: results::stats::Confidence) -> Vec<(f64, f64, f64)> {
    use results::stats::{bins::Bins, order_ci::quantile_ci};
    if h.is_empty() {
        return Vec::new();
    }
    let bins = Bins::from_histogram(h);
    let cap = (h.len() as f64).log10();
    let mut out = Vec::new();
    let mut k = 1;
    loop {
        let y = k as f64 * BAND_STEP;
        if y >= cap {
            break;
        }
        let p = 1.0 - 10f64.powf(-y);
        match quantile_ci(&bins, p, conf).ci() {
            Some(ci) => out.push((y, ci.lo, ci.hi)),
            None => break,
        }
        k += 1;
    }
    out
}

/// 0 → "p0", 0.301 → "p50", 1 → "p90", 2 → "p99", 3 → "p99.9", 7 → "p99.99999".
pub fn nines_label(y: f64) -> String {
    if y < 0.1 {
        return "p0".into();
    }
    if (y - y.round()).abs() < 1e-9 && y >= 1.0 {
        // Exact for whole nines, however many (formatting 100·(1 − 10⁻⁷) would round to "p100").
        let n = y.round() as usize;
        return match n {
            1 => "p90".into(),
            n => format!("p99{}{}", if n > 2 { "." } else { "" }, "9".repeat(n - 2)),
        };
    }
    let p = 100.0 * (1.0 - 10f64.powf(-y));
    let s = format!("{p:.4}");
    format!("p{}", s.trim_end_matches('0').trim_end_matches('.'))
}

fn nines_axis(ymax: f64) -> Axis {
    let mut ticks = vec![Tick { value: 0.0, label: "p0".into() }, Tick { value: 2f64.log10(), label: "p50".into() }];
    ticks.extend((1..=ymax as usize).map(|n| Tick { value: n as f64, label: nines_label(n as f64) }));
    Axis { scale: Scale::Linear, lo: 0.0, hi: ymax, ticks, title: "percentile".into() }
}

/// Log scale when the data spans more than a factor of `ratio` and stays positive.
fn wants_log(lo: f64, hi: f64, ratio: f64) -> bool {
    lo > 0.0 && hi / lo > ratio
}

/// Confidence of the bands drawn around each CDF.
pub const BAND_CONFIDENCE: f64 = 0.95;

/// What a CDF plot needs of one series, in ns: the curve ([`cdf_points`]) and its confidence band
/// ([`cdf_band`]). A few kB where the decoded histogram it comes from is ~0.5 MB (1 ns – 100 s
/// at irqlab's precision), so a report over 10,000 configurations keeps these, not the
/// histograms (issue 36: the report's memory bounded by its input).
#[derive(Debug, Clone, PartialEq)]
pub struct CdfCurve {
    pub points: Vec<(f64, f64)>,
    pub band: Vec<(f64, f64, f64)>,
}

impl CdfCurve {
    pub fn of(h: &Histogram<u64>) -> Self {
        let conf = results::stats::Confidence::new(BAND_CONFIDENCE).expect("a level in (0, 1)");
        CdfCurve { points: cdf_points(h), band: cdf_band(h, conf) }
    }
}

/// Overlaid CDFs of several series (name, histogram) on a nines axis, latency in `unit` on a log
/// axis (a linear one when some latency is 0). `width` is the viewBox width.
pub fn cdf_svg(title: &str, series: &[(String, Histogram<u64>)], unit: LatencyUnit, width: f64) -> String {
    let curves: Vec<(String, CdfCurve)> = series.iter().map(|(n, h)| (n.clone(), CdfCurve::of(h))).collect();
    cdf_svg_in(title, &curves, unit, width, None)
}

/// The x range (in `unit`) and the top of the nines axis that `series` need.
pub fn cdf_extent(series: &[(String, CdfCurve)], unit: LatencyUnit) -> (f64, f64, f64) {
    let pts = || series.iter().flat_map(|(_, c)| c.points.iter()).map(|&(x, y)| (unit.from_ns(x), y));
    let (lo, hi) = (pts().map(|p| p.0).fold(f64::MAX, f64::min), pts().map(|p| p.0).fold(f64::MIN, f64::max));
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (1.0, 10.0) };
    (lo, hi, pts().map(|p| p.1).fold(1.0f64, f64::max).ceil())
}

/// [`cdf_svg`] of curves on given axes: small multiples that compare the same thing share them
/// (`shared` = [`cdf_extent`] of all their series), so panels can be read against each other.
pub fn cdf_svg_in(title: &str, series: &[(String, CdfCurve)], unit: LatencyUnit, width: f64, shared: Option<(f64, f64, f64)>) -> String {
    let (lo, hi, ymax) = shared.unwrap_or_else(|| cdf_extent(series, unit));
    let log = lo > 0.0;
    let x_title = format!("latency ({}{})", unit.symbol(), if log { ", log scale" } else { "" });
    let plot_h = if width < 500.0 { 220.0 } else { 300.0 };
    let x = Axis::numeric(lo, hi, log, &x_title, width - 120.0, true);
    let legend: Vec<(String, usize)> = series.iter().enumerate().map(|(i, c)| (c.0.clone(), i)).collect();
    let mut p = Plot::new(title, width, plot_h, x, nines_axis(ymax), &legend);
    for (i, (name, c)) in series.iter().enumerate() {
        let rows: Vec<(f64, f64, f64)> = c.band.iter().map(|&(y, lo, hi)| (y, unit.from_ns(lo), unit.from_ns(hi))).collect();
        let top = rows.last().map(|r| nines_label(r.0)).unwrap_or_default();
        p.band(&rows, i, &format!("{name}: {:.0} % confidence band of each percentile, up to {top}", BAND_CONFIDENCE * 100.0));
    }
    for (i, (name, c)) in series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = c.points.iter().map(|&(x, y)| (unit.from_ns(x), y)).collect();
        p.line(&pts, i, name);
    }
    p.finish()
}

/// Histogram of one series. Short-tailed data (max ≤ 4 × p50): linear bins from min to max.
/// Long-tailed data: logarithmic bins and a log count axis, so the tail is visible next to the
/// body instead of hiding in one last bar.
pub fn histogram_svg(title: &str, h: &Histogram<u64>, bins: usize, unit: LatencyUnit, width: f64) -> String {
    let bins = bins.max(1);
    let min = unit.from_ns(h.min() as f64);
    let max = unit.from_ns(h.highest_equivalent(h.max()) as f64);
    let p50 = unit.from_ns(h.value_at_quantile(0.5) as f64);
    let long_tail = max > 4.0 * p50.max(f64::MIN_POSITIVE) && max > min;
    let log_x = long_tail && min > 0.0;
    let (mut lo, mut hi) = if max > min { (min, max) } else { (min - 0.5, max + 0.5) };
    let mut bins = bins;
    // Bin on the data's resolution: model latencies often sit on a grid (10 ns steps), and bins
    // of 14 ns would hold one or two grid values alternately — a comb, not a distribution. With
    // a linear axis and bins not much wider than the grid, each bin holds a whole number of grid
    // steps, centred on them.
    if !log_x && max > min {
        let vals: Vec<f64> = h.iter_recorded().map(|v| unit.from_ns(h.median_equivalent(v.value_iterated_to()) as f64)).collect();
        let res = vals.windows(2).map(|w| w[1] - w[0]).filter(|d| *d > 0.0).fold(f64::INFINITY, f64::min);
        let w = (max - min) / bins as f64;
        if res.is_finite() && w < 8.0 * res {
            let width = (w / res).ceil().max(1.0) * res;
            lo = min - res / 2.0;
            bins = (((max + res / 2.0) - lo) / width).ceil().max(1.0) as usize;
            hi = lo + bins as f64 * width;
        }
    }
    let edge = |i: usize| {
        let f = i as f64 / bins as f64;
        if log_x {
            lo * (hi / lo).powf(f)
        } else {
            lo + (hi - lo) * f
        }
    };
    let mut counts = vec![0u64; bins];
    for v in h.iter_recorded() {
        let x = unit.from_ns(h.median_equivalent(v.value_iterated_to()) as f64);
        let f = if log_x { (x / lo).ln() / (hi / lo).ln() } else { (x - lo) / (hi - lo) };
        let i = ((f * bins as f64).floor().max(0.0) as usize).min(bins - 1);
        counts[i] += v.count_since_last_iteration();
    }
    let cmax = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let x_title = format!("latency ({}{})", unit.symbol(), if log_x { ", log scale" } else { "" });
    let x = Axis::numeric(lo, hi, log_x, &x_title, width - 120.0, true);
    let plot_h = 180.0;
    let y = if long_tail {
        let mut a = Axis::numeric(1.0, cmax, true, "samples per bin (log scale)", plot_h, false);
        a.lo = 0.7;
        a.ticks.retain(|t| t.value >= 1.0 && t.value.fract() == 0.0);
        a
    } else {
        Axis::counts(cmax, "samples per bin", plot_h)
    };
    let floor = y.lo;
    let mut p = Plot::new(title, width, plot_h, x, y, &[]);
    let (c, _) = style(0);
    for (i, n) in counts.iter().enumerate() {
        if *n > 0 {
            let tip = format!("{}–{} {}: {} samples", crate::ticks::label(round3(edge(i))), crate::ticks::label(round3(edge(i + 1))), unit.symbol(), crate::format::thousands(*n));
            p.bar(edge(i), edge(i + 1), (*n as f64).max(floor * 1.2), c, &tip);
        }
    }
    p.finish()
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// One point of a scatter plot.
pub struct ScatterPoint {
    pub x: f64,
    pub y: f64,
    /// Series (colour) index and tooltip.
    pub series: usize,
    pub tip: String,
}

/// A scatter plot; `legend` names the series. The y axis is logarithmic when it spans more than
/// a factor of 10.
pub fn scatter_svg(title: &str, x_title: &str, y_title: &str, pts: &[ScatterPoint], legend: &Legend, width: f64) -> String {
    let fold = |f: fn(&ScatterPoint) -> f64| (pts.iter().map(f).fold(f64::MAX, f64::min), pts.iter().map(f).fold(f64::MIN, f64::max));
    let (xlo, xhi) = fold(|p| p.x);
    let (ylo, yhi) = fold(|p| p.y);
    let (xlo, xhi) = if xlo <= xhi { (xlo, xhi) } else { (0.0, 1.0) };
    let (ylo, yhi) = if ylo <= yhi { (ylo, yhi) } else { (1.0, 10.0) };
    let log_y = wants_log(ylo, yhi, 10.0);
    let y_title = if log_y { format!("{y_title}, log scale") } else { y_title.to_string() };
    let plot_h = 300.0;
    let x = Axis::numeric(xlo, xhi, false, x_title, width - 120.0, true);
    let y = Axis::numeric(ylo, yhi, log_y, &y_title, plot_h, false);
    let mut p = Plot::new(title, width, plot_h, x, y, legend);
    for q in pts {
        p.point(q.x, q.y, q.series, &q.tip);
    }
    p.finish()
}

#[cfg(test)]
pub(crate) mod tests;

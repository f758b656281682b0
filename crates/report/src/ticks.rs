//! Axis ticks a person can read: "nice" values (1, 2, 2.5, 5 × 10ⁿ on linear axes; 1, 2, 5 or
//! 1…9 × 10ⁿ on log axes), labels as plain numbers in the axis's one unit (the unit is in the axis
//! title, never repeated in every label), no duplicates, and no two labels overlapping.
//!
//! A log axis spanning less than a power of ten gets linear nice ticks inside its range instead
//! of decade ticks that would fall outside it (the CDF of a 4.6–7.2 µs distribution gets
//! 5, 5.5, 6, 6.5, 7 — not nothing).
use crate::format::group;

/// One tick: where (in data units) and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: String,
}

/// The shortest decimal label of `v` (at most 9 decimals), digits grouped: 2.5, 10, 12,000, 0.002.
pub fn label(v: f64) -> String {
    let d = (0..=9).find(|d| {
        let p = 10f64.powi(*d);
        ((v * p).round() / p - v).abs() <= 1e-9 * v.abs().max(1e-12)
    });
    group(v, d.unwrap_or(9) as usize)
}

fn tick(v: f64) -> Tick {
    Tick { value: v, label: label(v) }
}

/// Nice linear ticks inside [lo, hi]: at most `max` (≥ 2) and at least 2 when lo < hi.
pub fn linear_ticks(lo: f64, hi: f64, max: usize) -> Vec<Tick> {
    let max = max.max(2);
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return if lo.is_finite() { vec![tick(lo)] } else { Vec::new() };
    }
    let raw = (hi - lo) / (max - 1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * mag);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let mut out: Vec<Tick> = (first..=last).map(|k| tick(round_to_step(k as f64 * step, step))).collect();
    if out.len() < 2 {
        // The range holds at most one multiple of the step: show its ends instead.
        out = vec![tick(round_sig(lo)), tick(round_sig(hi))];
        out.dedup_by(|a, b| a.label == b.label);
    }
    out
}

fn round_to_step(v: f64, step: f64) -> f64 {
    let d = (-step.log10().floor()).max(0.0) as i32 + 1;
    let p = 10f64.powi(d);
    (v * p).round() / p
}

fn round_sig(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let p = 10f64.powi(2 - v.abs().log10().floor() as i32);
    (v * p).round() / p
}

/// Ticks on a log axis over [lo, hi] (lo > 0): the densest of decades / 1-2-5 / 1…9 per decade
/// with at most `max` ticks; with fewer than three ticks inside the range (a span under about a
/// decade), linear nice ticks instead.
pub fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<Tick> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return linear_ticks(lo, hi, max);
    }
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let inside = |mantissas: &[f64], every: i32| -> Vec<Tick> {
        (d0..=d1)
            .filter(|d| (d - d0) % every == 0)
            .flat_map(|d| mantissas.iter().map(move |m| m * 10f64.powi(d)))
            .map(round_sig)
            .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
            .map(tick)
            .collect()
    };
    let sets: [&[f64]; 3] = [&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[1.0, 2.0, 5.0], &[1.0]];
    let mut best = sets.iter().map(|m| inside(m, 1)).find(|t| t.len() <= max);
    if best.is_none() {
        // Many decades: every k-th decade.
        best = (2..=(d1 - d0).max(2)).map(|k| inside(&[1.0], k)).find(|t| t.len() <= max.max(2));
    }
    match best {
        Some(t) if t.len() >= 3 => t,
        _ => linear_ticks(lo, hi, max.min(7)),
    }
}

/// Reduce `max` until the labels fit: `make(max)` builds ticks, `pos` maps a value to pixels
/// along the axis, `extent` is a label's size along the axis in pixels. Neighbouring labels keep
/// `gap` pixels between them.
pub fn fit(make: impl Fn(usize) -> Vec<Tick>, pos: impl Fn(f64) -> f64, extent: impl Fn(&str) -> f64, gap: f64, start: usize) -> Vec<Tick> {
    let mut max = start.max(2);
    loop {
        let t = make(max);
        if max <= 2 || !overlaps(&t, &pos, &extent, gap) {
            return t;
        }
        max -= 1;
    }
}

/// Whether any two neighbouring labels overlap.
pub fn overlaps(t: &[Tick], pos: &impl Fn(f64) -> f64, extent: &impl Fn(&str) -> f64, gap: f64) -> bool {
    let mut placed: Vec<(f64, f64)> = t.iter().map(|k| (pos(k.value), extent(&k.label))).collect();
    placed.sort_by(|a, b| a.0.total_cmp(&b.0));
    placed.windows(2).any(|w| (w[1].0 - w[0].0).abs() < (w[0].1 + w[1].1) / 2.0 + gap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(t: &[Tick]) -> Vec<&str> {
        t.iter().map(|k| k.label.as_str()).collect()
    }

    fn assert_clean(t: &[Tick], lo: f64, hi: f64) {
        assert!(t.len() >= 2, "{t:?}");
        let mut l: Vec<&str> = labels(t);
        l.sort();
        l.dedup();
        assert_eq!(l.len(), t.len(), "duplicate labels {t:?}");
        assert!(t.windows(2).all(|w| w[0].value < w[1].value), "{t:?}");
        assert!(t.iter().all(|k| k.value >= lo * 0.999 && k.value <= hi * 1.001), "{t:?} outside {lo}..{hi}");
        assert!(t.iter().all(|k| !k.label.contains('e') && !k.label.contains("s")), "plain numbers, no unit: {t:?}");
    }

    #[test]
    fn log_axis_under_one_decade_still_has_ticks() {
        for (lo, hi) in [(4.61, 7.17), (1.62, 2.76), (0.95, 1.05), (45.0, 52.0), (1999.0, 2001.0), (4.6, 46.0)] {
            let t = log_ticks(lo, hi, 8);
            assert_clean(&t, lo, hi);
            assert!(t.len() >= 3 || hi / lo < 1.01, "{lo}..{hi}: {t:?}");
        }
        assert_eq!(labels(&log_ticks(4.61, 7.17, 8)), ["5", "6", "7"]);
        assert_eq!(labels(&log_ticks(1.62, 2.76, 8)), ["1.8", "2", "2.2", "2.4", "2.6"]);
    }

    #[test]
    fn log_axis_over_many_decades() {
        let t = log_ticks(0.3, 1.2e6, 8);
        assert_clean(&t, 0.3, 1.2e6);
        assert_eq!(labels(&t), ["1", "10", "100", "1,000", "10,000", "100,000", "1,000,000"]);
        let t = log_ticks(1.0, 1e12, 6);
        assert_clean(&t, 1.0, 1e12);
        assert!(t.len() <= 6);
        let t = log_ticks(1.5, 300.0, 8);
        assert_eq!(labels(&t), ["2", "5", "10", "20", "50", "100", "200"]);
    }

    #[test]
    fn linear_ticks_are_nice_and_integer_counts_have_no_decimals() {
        assert_eq!(labels(&linear_ticks(0.0, 160_000.0, 6)), ["0", "50,000", "100,000", "150,000"]);
        assert_eq!(labels(&linear_ticks(0.0, 1.0, 5)), ["0", "0.25", "0.5", "0.75", "1"]);
        assert_clean(&linear_ticks(0.993, 0.995, 5), 0.993, 0.995);
        assert_eq!(labels(&linear_ticks(3.0, 3.0, 5)), ["3"]);
    }

    #[test]
    fn fitting_removes_overlaps() {
        // 400 px axis, labels 7 px per character: "100,000" is 49 px wide.
        let pos = |v: f64| v.log10() / 6.0 * 400.0;
        let ext = |s: &str| s.chars().count() as f64 * 7.0;
        let t = fit(|m| log_ticks(1.0, 1e6, m), pos, ext, 6.0, 20);
        assert!(!overlaps(&t, &pos, &ext, 6.0), "{t:?}");
        assert!(t.len() >= 3, "{t:?}");
        let dense = log_ticks(1.0, 1e6, 20);
        assert!(overlaps(&dense, &pos, &ext, 6.0), "1..9 per decade would overlap here");
    }
}

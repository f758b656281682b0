//! Numbers for people: one thousands separator (`,`) everywhere, never exponent notation, latencies
//! in one chosen unit (µs by default, as cyclictest and rtla print them), times and frequencies in
//! the unit that reads best (8.981 s rather than 8980694233 ns, 1,996.248 MHz rather than
//! 1996248 kHz).
pub use results::LatencyUnit;

/// Group the integer part with commas: 1234567.891 (2 decimals) → "1,234,567.89".
pub fn group(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = s.split_once('.').map(|(i, f)| (i, Some(f))).unwrap_or((&s, None));
    let mut out = String::new();
    if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.push('-');
    }
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// Group digits: 1234567 → "1,234,567".
pub fn thousands(v: u64) -> String {
    group(v as f64, 0)
}

/// Decimals shown for a latency in a table: µs with 2 (10 ns), ns with none.
pub fn table_decimals(unit: LatencyUnit) -> usize {
    match unit {
        LatencyUnit::Us => 2,
        LatencyUnit::Ns => 0,
    }
}

/// A latency given in ns, shown in `unit` without the unit symbol: 4892.0 → "4.89" (µs).
pub fn latency(ns: f64, unit: LatencyUnit) -> String {
    group(unit.from_ns(ns), table_decimals(unit))
}

/// Decimals that keep about four significant digits, at most `max`.
fn sig_decimals(v: f64, max: usize) -> usize {
    let a = v.abs();
    if a == 0.0 || a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1.min(max)
    } else if a >= 10.0 {
        2.min(max)
    } else if a >= 1.0 {
        3.min(max)
    } else {
        // 0.0123 → 4 decimals ("0.0123"); never exponent notation.
        let lead = (-a.log10()).floor() as usize;
        (lead + 3).min(max.max(3))
    }
}

/// A plain number: integers grouped, fractions with about four significant digits.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.fract() == 0.0 {
        return group(v, 0);
    }
    let s = group(v, sig_decimals(v, 9));
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

const TIME_UNITS: [(&str, f64); 4] = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)];
/// Frequencies stop at MHz: CPU and TSC clocks are quoted in MHz (1,996.248 MHz).
const FREQ_UNITS: [(&str, f64); 3] = [("Hz", 1.0), ("kHz", 1e3), ("MHz", 1e6)];

/// A figure with its unit, rescaled for reading: (8.9807e9, "ns") → ("8.981", "s");
/// (1996248, "kHz") → ("1,996.248", "MHz"); (0.992, "pCPU") → ("0.992", "pCPU").
pub fn figure(value: f64, unit: &str) -> (String, String) {
    let u = if unit == "us" { "µs" } else { unit };
    if let Some((_, base)) = TIME_UNITS.iter().find(|(n, _)| *n == u) {
        let secs = value * base;
        let (name, scale) = TIME_UNITS.iter().rev().find(|(_, s)| secs.abs() >= *s).copied().unwrap_or(TIME_UNITS[0]);
        let v = secs / scale;
        return (group(v, sig_decimals(v, 3)), name.to_string());
    }
    if let Some((_, base)) = FREQ_UNITS.iter().find(|(n, _)| *n == u) {
        let hz = value * base;
        let (name, scale) = FREQ_UNITS.iter().rev().find(|(_, s)| hz.abs() >= *s).copied().unwrap_or(FREQ_UNITS[0]);
        // Frequencies keep kHz resolution: a TSC of 1996248 kHz is 1,996.248 MHz exactly.
        let decimals = if scale > 1e3 { ((scale / 1e3).log10().round() as usize).min(6) } else { 0 };
        return (group(hz / scale, decimals), name.to_string());
    }
    (number(value), u.to_string())
}

/// The factor and unit in which values up to `max_abs` of unit `unit` read best (time and
/// frequency units are rescaled; others keep factor 1): (8.98e9, "ns") → (1e-9, "s").
pub fn scale(max_abs: f64, unit: &str) -> (f64, String) {
    let u = if unit == "us" { "µs" } else { unit };
    for units in [&TIME_UNITS[..], &FREQ_UNITS[..]] {
        if let Some((_, base)) = units.iter().find(|(n, _)| *n == u) {
            let x = max_abs * base;
            let (name, s) = units.iter().rev().find(|(_, s)| x >= *s).copied().unwrap_or(units[0]);
            return (base / s, name.to_string());
        }
    }
    (1.0, u.to_string())
}

/// [`figure`] for a named figure: a name that states its unit (`tsc_khz`) keeps it, so that the
/// value printed beside `tsc_khz` is in kHz (1,996,248), not silently in MHz.
pub fn figure_named(name: &str, value: f64, unit: &str) -> (String, String) {
    let suffix = format!("_{}", unit.to_lowercase());
    if !unit.is_empty() && name.to_lowercase().ends_with(&suffix) {
        return (number(value), unit.to_string());
    }
    figure(value, unit)
}

/// `figure` joined: "8.981 s".
pub fn figure_text(value: f64, unit: &str) -> String {
    let (v, u) = figure(value, unit);
    if u.is_empty() {
        v
    } else {
        format!("{v} {u}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_is_one_style() {
        assert_eq!(group(1234567.891, 2), "1,234,567.89");
        assert_eq!(group(-1234.5, 1), "-1,234.5");
        assert_eq!(group(-0.001, 1), "0.0");
        assert_eq!(thousands(160000), "160,000");
        assert_eq!(thousands(12), "12");
        assert_eq!(latency(4892.4, LatencyUnit::Us), "4.89");
        assert_eq!(latency(4892.4, LatencyUnit::Ns), "4,892");
        assert_eq!(latency(8_980_694_233.0, LatencyUnit::Us), "8,980,694.23");
    }

    #[test]
    fn figures_pick_a_readable_unit_and_never_use_exponents() {
        assert_eq!(figure(8.9807e9, "ns"), ("8.981".into(), "s".into()));
        assert_eq!(figure(1996248.0, "kHz"), ("1,996.248".into(), "MHz".into()));
        assert_eq!(figure(9.783794, "ms"), ("9.784".into(), "ms".into()));
        assert_eq!(figure(500.358, "s"), ("500.4".into(), "s".into()));
        assert_eq!(figure(86400.0, "s"), ("86,400".into(), "s".into()));
        assert_eq!(scale(8.98e9, "ns"), (1e-9, "s".to_string()));
        assert_eq!(scale(3.0, "pCPU"), (1.0, "pCPU".to_string()));
        assert_eq!(figure(0.992, "pCPU"), ("0.992".into(), "pCPU".into()));
        assert_eq!(figure(5.548e5, ""), ("554,800".into(), "".into()));
        assert_eq!(figure(0.000012, "x").0, "0.000012");
        assert_eq!(number(1.7), "1.7");
        assert_eq!(figure_named("tsc_khz", 1996248.0, "kHz"), ("1,996,248".into(), "kHz".into()));
        assert_eq!(figure_named("cpu_clock", 1996248.0, "kHz"), ("1,996.248".into(), "MHz".into()));
        for v in [1e-9, 3.3e-7, 1e15, 123456789.123] {
            assert!(!figure(v, "").0.contains('e'), "{v}");
        }
    }
}

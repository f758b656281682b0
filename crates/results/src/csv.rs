//! CSV export for pandas and spreadsheets: one row per (configuration, interrupt class).
//!
//! Columns, in order (see also `docs/results-csv.md` and `scripts/load_results.py`):
//! - `scenario`, `kind` (predicted | calibrated | measured), `seed` (the run's base seed),
//!   `config`, `config_seed` (the seed this configuration ran with);
//! - one column per parameter key of any configuration (`hypervisor.vwfi`, `workload.other`, ...);
//! - `class`, `count`, then latencies in the chosen unit with the unit in the name:
//!   `min_us mean_us p50_us p90_us p99_us p99.9_us p99.99_us max_us warm_max_us` (or `_ns`);
//! - `clamped_low`, `clamped_high` (samples outside the histogram range);
//! - one `figure.<name>_<unit>` column per figure and one `counter.<name>` column per counter of
//!   any configuration (per configuration, repeated on each of its class rows);
//! - `error` (empty unless the configuration failed).
//!
//! Percentile names are the same everywhere: p50, p90, p99, p99.9, p99.99.
//! A text cell that pandas' plain `read_csv` would read as missing (`null`, `NA`, `None`, … —
//! [`PANDAS_NA`]) is written with a leading `'`: Xen's `null` scheduler is `'null`.
//! Control characters in text fields are written as visible escapes (`\n`, `\u{1b}`), so printing
//! the CSV to a terminal cannot move the cursor or change colours.
use std::collections::BTreeSet;

use crate::run::RunResult;

/// The unit latencies are shown in. µs by default, as cyclictest and rtla print them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LatencyUnit {
    #[default]
    Us,
    Ns,
}

impl LatencyUnit {
    /// Column/axis suffix: `us` or `ns` (ASCII, for column names).
    pub fn ascii(self) -> &'static str {
        match self {
            LatencyUnit::Us => "us",
            LatencyUnit::Ns => "ns",
        }
    }

    /// Human unit symbol: `µs` or `ns`.
    pub fn symbol(self) -> &'static str {
        match self {
            LatencyUnit::Us => "µs",
            LatencyUnit::Ns => "ns",
        }
    }

    /// Convert nanoseconds into this unit.
    pub fn from_ns(self, ns: f64) -> f64 {
        match self {
            LatencyUnit::Us => ns / 1000.0,
            LatencyUnit::Ns => ns,
        }
    }

    /// Decimals that keep nanosecond resolution: 3 for µs, 0 for ns.
    pub fn decimals(self) -> usize {
        match self {
            LatencyUnit::Us => 3,
            LatencyUnit::Ns => 0,
        }
    }

    /// `us`, `µs` or `ns`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "us" | "µs" => Some(LatencyUnit::Us),
            "ns" => Some(LatencyUnit::Ns),
            _ => None,
        }
    }
}

/// Replace control characters with visible escapes (`\n`, `\t`, `\u{1b}`).
pub fn escape_control(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The strings `pandas.read_csv` reads as missing by default (its `na_values`, pandas 1.5–2.x).
/// Xen's `null` scheduler is one of them: its rows read as NaN and a groupby dropped them.
pub const PANDAS_NA: [&str; 18] =
    ["#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"];

/// A text cell: control characters escaped; a value pandas would read as missing (`null`, `NA`,
/// `None`…) written with a leading `'` (the spreadsheet mark for "text"), and so is a value that
/// itself begins with `'` — one `'` is always the mark, so the value is unambiguous (quoting
/// would not help: pandas applies `na_values` to quoted cells too). Only an empty cell is missing.
fn field(s: &str) -> String {
    let s = escape_control(s);
    let s = if PANDAS_NA.contains(&s.as_str()) || s.starts_with('\'') { format!("'{s}") } else { s };
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// Render the run as CSV with latencies in µs.
pub fn to_csv(r: &RunResult) -> String {
    to_csv_in(r, LatencyUnit::Us)
}

/// Render the run as CSV with latencies in `unit`. Failed configurations appear with empty numbers
/// and their error.
pub fn to_csv_in(r: &RunResult, unit: LatencyUnit) -> String {
    let params: BTreeSet<&str> = r.configs.iter().flat_map(|c| c.params.keys().map(|k| k.as_str())).collect();
    let figures = r.figure_units();
    let counters: BTreeSet<&str> = r.configs.iter().flat_map(|c| c.counters.keys().map(|k| k.as_str())).collect();
    // Breakdown segments of any class, in first-seen order.
    let mut segments: Vec<&str> = Vec::new();
    for c in &r.configs {
        for seg in c.breakdown.values().flatten() {
            if !segments.contains(&seg.segment.as_str()) {
                segments.push(&seg.segment);
            }
        }
    }
    // "vs published" references: one column group per reference key (see `ref_key`).
    let ref_keys: BTreeSet<String> = r.references.iter().map(ref_key).collect();
    let u = unit.ascii();
    let mut header: Vec<String> = ["scenario", "kind", "seed", "config", "config_seed"].map(String::from).to_vec();
    header.extend(params.iter().map(|p| field(p)));
    header.push("class".into());
    header.push("count".into());
    header.extend(["min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max", "warm_max"].map(|s| format!("{s}_{u}")));
    header.extend(["clamped_low", "clamped_high"].map(String::from));
    header.extend(figures.iter().map(|(k, unit)| field(&if unit.is_empty() { format!("figure.{k}") } else { format!("figure.{k}_{unit}") })));
    header.extend(counters.iter().map(|k| field(&format!("counter.{k}"))));
    header.extend(segments.iter().map(|k| field(&format!("segment.{k}.mean_{u}"))));
    for k in &ref_keys {
        header.extend(REF_COLUMNS.map(|c| field(&format!("{k}.{c}"))));
    }
    header.push("error".into());
    let mut out = header.join(",");
    out.push('\n');
    let lat = |ns: f64| format!("{:.*}", unit.decimals(), unit.from_ns(ns));
    // A measurement has no seed: its seed columns stay empty rather than showing 0 or a
    // number that seeded nothing (issue 28).
    let measured = r.meta.kind == crate::run::ResultKind::Measured;
    let seed = |s: u64| if measured { String::new() } else { s.to_string() };
    for c in &r.configs {
        let mut prefix = vec![field(&r.meta.scenario), r.meta.kind.as_str().to_string(), seed(r.meta.seed), field(&c.name), seed(c.seed)];
        prefix.extend(params.iter().map(|p| field(c.params.get(*p).map(String::as_str).unwrap_or(""))));
        let mut suffix: Vec<String> = figures.keys().map(|k| c.figures.get(k).map(|f| plain(f.value)).unwrap_or_default()).collect();
        suffix.extend(counters.iter().map(|k| c.counters.get(*k).map(|v| v.to_string()).unwrap_or_default()));
        // Per class: breakdown and references follow the class columns of each row.
        let per_class = |class: &str| -> Vec<String> {
            let mut v: Vec<String> =
                segments.iter().map(|k| c.breakdown.get(class).and_then(|b| b.iter().find(|x| x.segment == *k)).map(|x| lat(x.mean_ns)).unwrap_or_default()).collect();
            for k in &ref_keys {
                let hit = r.references.iter().find(|x| x.config == c.name && (x.class.is_empty() || x.class == class) && ref_key(x) == *k);
                match hit {
                    Some(x) => v.extend([
                        x.role.as_str().to_string(),
                        plain(x.published),
                        x.model.map(plain).unwrap_or_default(),
                        x.over_seeds.map(|s| plain(s.min)).unwrap_or_default(),
                        x.over_seeds.map(|s| plain(s.max)).unwrap_or_default(),
                        x.deviation().map(plain).unwrap_or_default(),
                        x.status().word().to_string(),
                    ]),
                    None => v.extend(std::iter::repeat_n(String::new(), REF_COLUMNS.len())),
                }
            }
            v
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        if c.classes.is_empty() {
            let mut row: Vec<String> = std::iter::repeat_n(String::new(), 13).collect();
            row.extend(suffix.iter().cloned());
            row.extend(per_class(""));
            rows.push(row);
        }
        for (class, l) in &c.classes {
            let s = &l.summary;
            let mut row = vec![field(class), s.count.to_string()];
            row.extend([s.min as f64, s.mean, s.p50 as f64, s.p90 as f64, s.p99 as f64, s.p999 as f64, s.p9999 as f64, s.max as f64, s.warm_max as f64].map(lat));
            row.extend([s.clamped_low, s.clamped_high].map(|v| v.to_string()));
            row.extend(suffix.iter().cloned());
            row.extend(per_class(class));
            rows.push(row);
        }
        let error = field(c.error.as_deref().unwrap_or(""));
        for row in rows {
            let line: Vec<&str> = prefix.iter().chain(&row).chain(std::iter::once(&error)).map(String::as_str).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
    }
    out
}

/// The columns of each reference group: `model` is the median over seeds when the configuration
/// ran with several, `model_min`/`model_max` their range (empty with one seed).
const REF_COLUMNS: [&str; 7] = ["role", "published", "model", "model_min", "model_max", "deviation", "status"];

/// The column-group name of a reference: `ref.<stat>` for a latency statistic of the row's class
/// (`ref.<stat>.over.<config>` for a ratio), `ref.figure.<name>` for a figure (on every row of its
/// configuration).
fn ref_key(x: &crate::ReferenceOutcome) -> String {
    let base = if x.class.is_empty() { format!("ref.figure.{}", x.stat) } else { format!("ref.{}", x.stat) };
    match &x.over {
        Some(o) => format!("{base}.over.{o}"),
        None => base,
    }
}

/// A float without exponent notation and without trailing zeros (full precision for pandas).
fn plain(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    // Rust's Display for f64 never uses exponent notation and round-trips exactly.
    format!("{v}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};
    use std::collections::BTreeMap;

    fn run() -> RunResult {
        let mut r = RunResult::new(RunMeta::named("t", "s", 7, ResultKind::Measured));
        let mut c = ConfigResult::new("x2apic cluster, pv");
        c.seed = 99;
        c.params.insert("mode".into(), "cluster".into());
        let mut rec = LatencyRecorder::new(0);
        rec.record(1500);
        c.classes.insert("ipi".into(), rec.finish());
        c.classes.insert("timer".into(), rec.finish());
        c.set_figure("tsc", 1996248.0, "kHz");
        c.set_figure("total", 8.9807e9, "ns");
        c.add_counter("exits", 12);
        r.configs.push(c);
        r.configs.push(ConfigResult::failed("bad", BTreeMap::new(), "line one\nline two \u{1b}[31m".into()));
        r
    }

    /// Issue 36: pandas' plain `read_csv` turned the `null` scheduler into NaN; every value it
    /// reads as missing is marked, and a value beginning with the mark is marked again.
    #[test]
    fn text_that_pandas_reads_as_missing_is_marked() {
        let mut r = run();
        r.configs[0].params.insert("hypervisor.scheduler".into(), "null".into());
        r.configs[1].params.insert("hypervisor.scheduler".into(), "'x".into());
        let csv = to_csv(&r);
        let cells: Vec<&str> = csv.lines().flat_map(|l| l.split(',')).collect();
        assert!(cells.contains(&"'null") && cells.contains(&"''x"), "{csv}");
        for na in PANDAS_NA {
            assert!(!cells.contains(&na), "`{na}` would read as NaN: {csv}");
            assert_eq!(field(na), format!("'{na}"));
        }
        assert_eq!(field("credit2"), "credit2");
    }

    #[test]
    fn one_row_per_config_and_class_with_all_columns() {
        let csv = to_csv(&run());
        let lines: Vec<_> = csv.lines().collect();
        assert_eq!(lines.len(), 4, "{csv}");
        assert_eq!(
            lines[0],
            "scenario,kind,seed,config,config_seed,mode,class,count,min_us,mean_us,p50_us,p90_us,p99_us,p99.9_us,p99.99_us,max_us,warm_max_us,clamped_low,clamped_high,figure.total_ns,figure.tsc_kHz,counter.exits,error"
        );
        // A measurement has no seed: empty seed columns, whatever the struct holds.
        assert!(lines[1].starts_with("s,measured,,\"x2apic cluster, pv\",,cluster,ipi,1,1.500,1.500,"), "{}", lines[1]);
        let mut predicted = run();
        predicted.meta.kind = ResultKind::Predicted;
        let p = to_csv(&predicted);
        assert!(p.lines().nth(1).unwrap().starts_with("s,predicted,7,\"x2apic cluster, pv\",99,"), "{p}");
        assert!(lines[1].ends_with(",0,0,8980700000,1996248,12,"), "no exponent notation: {}", lines[1]);
        assert!(lines[2].contains(",timer,1,"));
        let n = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == n + l.matches("\"x2apic cluster, pv\"").count()), "{csv}");
    }

    #[test]
    fn control_characters_are_escaped_and_ns_unit_renames_columns() {
        let csv = to_csv_in(&run(), LatencyUnit::Ns);
        assert!(csv.contains("p99.9_ns") && !csv.contains("_us,"));
        assert!(csv.contains(",1500,1500.000,") || csv.contains(",1500,1500,"), "{csv}");
        assert!(!csv.contains('\u{1b}') && csv.contains("line one\\nline two \\u{1b}[31m"), "{csv}");
        assert_eq!(csv.lines().count(), 4, "newline in error stays on one line");
    }

    #[test]
    fn breakdown_and_references_are_columns_of_their_class_row() {
        let mut r = run();
        r.configs[0].breakdown.insert("timer".into(), vec![crate::SegmentStat { segment: "exit".into(), count: 2, total_ns: 3000.0, mean_ns: 1500.0 }]);
        let reference = |class: &str, stat: &str, model: Option<f64>| crate::ReferenceOutcome {
            config: "x2apic cluster, pv".into(),
            class: class.into(),
            stat: stat.into(),
            over: None,
            role: crate::ReferenceRole::Check,
            published: 1400.0,
            tolerance: 0.15,
            source: "paper".into(),
            model,
            over_seeds: None,
            missing: None,
        };
        r.references.push(reference("timer", "mean", Some(1500.0)));
        r.references.push(reference("", "tsc", Some(2e6)));
        let csv = to_csv(&r);
        // Split on commas outside double quotes (the config name holds one).
        fn split(l: &str) -> Vec<&str> {
            let (mut out, mut start, mut quoted) = (Vec::new(), 0, false);
            for (i, ch) in l.char_indices() {
                match ch {
                    '"' => quoted = !quoted,
                    ',' if !quoted => {
                        out.push(&l[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            out.push(&l[start..]);
            out
        }
        let lines: Vec<Vec<&str>> = csv.lines().map(split).collect();
        let col = |name: &str| lines[0].iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}: {:?}", lines[0]));
        let (ipi, timer) = (&lines[1], &lines[2]);
        assert_eq!((ipi[col("class")], timer[col("class")]), ("ipi", "timer"));
        assert_eq!(timer[col("segment.exit.mean_us")], "1.500");
        assert_eq!(ipi[col("segment.exit.mean_us")], "", "the ipi class has no breakdown");
        assert_eq!(timer[col("ref.mean.published")], "1400");
        assert_eq!(timer[col("ref.mean.status")], "ok");
        assert_eq!(timer[col("ref.mean.role")], "check");
        assert_eq!(ipi[col("ref.mean.status")], "", "a class reference is on its own class row only");
        // A figure reference is on every row of its configuration, out of tolerance here.
        assert_eq!((ipi[col("ref.figure.tsc.status")], timer[col("ref.figure.tsc.status")]), ("OUT", "OUT"));
        assert_eq!(*timer.last().unwrap(), "", "error stays the last column");
        assert!(lines.iter().all(|l| l.len() == lines[0].len()), "every row has every column");
    }
}

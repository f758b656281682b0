//! Two runs side by side with ratios (B / A), as a terminal table, CSV or JSON.
//!
//! Latencies are shown in the chosen unit (the column says which), figures in their own units;
//! every statistic including p99.99 and the seeds of both sides are there; what did not pair is
//! listed after the table. All text from the result files is escaped before it reaches a terminal.
use std::fmt::Write as _;

use results::{compare_mapped, escape_control, Comparison, PairedBy, RunResult};
use serde_json::json;

use crate::format::{group, number, LatencyUnit};
use crate::table::render_grid;

/// Output format of `irqlab compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareFormat {
    Table,
    Csv,
    Json,
}

/// A rendered comparison and whether anything paired.
pub struct CompareOutput {
    pub text: String,
    pub comparison: Comparison,
}

impl CompareOutput {
    pub fn nothing_paired(&self) -> bool {
        self.comparison.pairs.is_empty()
    }
}

fn by_text(b: &PairedBy) -> String {
    match b {
        PairedBy::Name => "name".into(),
        PairedBy::Params(k) => format!("params:{}", k.join("+")),
        PairedBy::OnlyOne => "only-one".into(),
    }
}

/// Row values in display units: (unit label, a, b).
fn shown(r: &results::CompareRow, unit: LatencyUnit) -> (String, f64, f64) {
    if r.is_latency() {
        (unit.symbol().to_string(), unit.from_ns(r.a), unit.from_ns(r.b))
    } else {
        (r.unit.clone(), r.a, r.b)
    }
}

fn names(list: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut s = list.iter().take(SHOWN).map(|n| escape_control(n)).collect::<Vec<_>>().join("; ");
    if list.len() > SHOWN {
        let _ = write!(s, "; and {} more", list.len() - SHOWN);
    }
    s
}

/// Compare `a` with `b` (`map` renames A's parameter keys to B's) and render it.
pub fn compare_output(a: &RunResult, b: &RunResult, a_name: &str, b_name: &str, map: &[(String, String)], unit: LatencyUnit, format: CompareFormat) -> CompareOutput {
    let c = compare_mapped(a, b, map);
    let text = match format {
        CompareFormat::Table => table(a, b, a_name, b_name, &c, unit),
        CompareFormat::Csv => csv(a, b, &c, unit),
        CompareFormat::Json => json_text(a, b, a_name, b_name, &c, unit),
    };
    CompareOutput { text, comparison: c }
}

fn table(a: &RunResult, b: &RunResult, a_name: &str, b_name: &str, c: &Comparison, unit: LatencyUnit) -> String {
    let mut out = String::new();
    for (tag, name, r) in [("A", a_name, a), ("B", b_name, b)] {
        let _ = writeln!(
            out,
            "{tag} = {}: {} [{}], seed {}, {} configurations",
            escape_control(name),
            escape_control(&r.meta.scenario),
            r.meta.kind.as_str(),
            r.meta.seed,
            r.configs.len()
        );
        if let Some(lab) = r.emulation() {
            let _ = writeln!(out, "    {tag} is emulation, not hardware latency: {}", escape_control(lab));
        }
    }
    if c.pairs.is_empty() {
        out.push_str("no configuration pairs: names differ and no parameter key common to both runs has equal values (rename keys with --map A_KEY=B_KEY)\n");
    } else {
        let mut grid = Vec::new();
        for p in &c.pairs {
            let (ca, cb) = (&a.configs[p.a], &b.configs[p.b]);
            let label = if ca.name == cb.name { ca.name.clone() } else { format!("{} | {}", ca.name, cb.name) };
            for r in c.rows.iter().filter(|r| r.config == label) {
                let (u, va, vb) = shown(r, unit);
                let fmt = |v: f64| if r.is_latency() { group(v, crate::format::table_decimals(unit)) } else { number(v) };
                grid.push(vec![
                    label.clone(),
                    r.class.clone(),
                    r.stat.clone(),
                    u,
                    fmt(va),
                    fmt(vb),
                    r.ratio().map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into()),
                    ca.seed.to_string(),
                    cb.seed.to_string(),
                ]);
            }
        }
        out.push_str(&render_grid(&["CONFIG", "CLASS", "STAT", "UNIT", "A", "B", "B/A", "SEED_A", "SEED_B"].map(String::from), &grid, 4));
        let mut how: Vec<String> = c.pairs.iter().map(|p| by_text(&p.by)).collect();
        how.sort();
        how.dedup();
        let _ = writeln!(out, "{} pairs (paired by {})", c.pairs.len(), how.join(", "));
        let first_runs: Vec<String> = c.pairs.iter().filter_map(|p| first_run_label(&a.configs[p.a], &b.configs[p.b])).collect();
        if !first_runs.is_empty() {
            let _ = writeln!(out, "with repetitions, A and B above are each side's first run, not all runs ({}); the verdicts below use every run", names(&first_runs));
        }
    }
    if !c.unpaired_a.is_empty() {
        let _ = writeln!(out, "not paired, only in A ({}): {}", c.unpaired_a.len(), names(&c.unpaired_a));
    }
    if !c.unpaired_b.is_empty() {
        let _ = writeln!(out, "not paired, only in B ({}): {}", c.unpaired_b.len(), names(&c.unpaired_b));
    }
    if !c.ambiguous.is_empty() {
        let _ = writeln!(out, "ambiguous (several B configurations have the same common parameters): {}", names(&c.ambiguous));
    }
    out
}

/// Repetitions behind a configuration (1 without).
fn runs(c: &results::ConfigResult) -> usize {
    c.repetitions.as_ref().map(|r| r.len()).filter(|&n| n > 1).unwrap_or(1)
}

/// `name: A run 1 of 5, B run 1 of 5` for a pair whose rows show first runs of repetitions.
fn first_run_label(ca: &results::ConfigResult, cb: &results::ConfigResult) -> Option<String> {
    let (ra, rb) = (runs(ca), runs(cb));
    if ra == 1 && rb == 1 {
        return None;
    }
    let side = |tag: &str, n: usize| if n == 1 { format!("{tag} its one run") } else { format!("{tag} run 1 of {n}") };
    let label = if ca.name == cb.name { ca.name.clone() } else { format!("{} | {}", ca.name, cb.name) };
    Some(format!("`{}`: {}, {}", crate::table::clean_cell(&label), side("A", ra), side("B", rb)))
}

fn csv_field(s: &str) -> String {
    let s = escape_control(s);
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

fn csv(a: &RunResult, b: &RunResult, c: &Comparison, unit: LatencyUnit) -> String {
    let mut out = String::from("config_a,config_b,paired_by,seed_a,seed_b,class,stat,unit,a,b,ratio\n");
    let mut rows = c.rows.iter();
    for p in &c.pairs {
        let (ca, cb) = (&a.configs[p.a], &b.configs[p.b]);
        let label = if ca.name == cb.name { ca.name.clone() } else { format!("{} | {}", ca.name, cb.name) };
        for r in rows.by_ref().take_while(|r| r.config == label).collect::<Vec<_>>() {
            let (u, va, vb) = shown(r, unit);
            let u = if u == "µs" { "us".to_string() } else { u };
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{va},{vb},{}",
                csv_field(&ca.name),
                csv_field(&cb.name),
                csv_field(&by_text(&p.by)),
                ca.seed,
                cb.seed,
                csv_field(&r.class),
                r.stat,
                csv_field(&u),
                r.ratio().map(|x| x.to_string()).unwrap_or_default()
            );
        }
    }
    out
}

fn json_text(a: &RunResult, b: &RunResult, a_name: &str, b_name: &str, c: &Comparison, unit: LatencyUnit) -> String {
    let side = |name: &str, r: &RunResult| json!({"file": name, "scenario": r.meta.scenario, "kind": r.meta.kind.as_str(), "seed": r.meta.seed, "emulation": r.emulation()});
    let pairs: Vec<_> = c
        .pairs
        .iter()
        .map(|p| {
            let (ca, cb) = (&a.configs[p.a], &b.configs[p.b]);
            json!({"config_a": ca.name, "config_b": cb.name, "paired_by": by_text(&p.by), "seed_a": ca.seed, "seed_b": cb.seed,
                   "runs_a": runs(ca), "runs_b": runs(cb), "rows_show": if runs(ca) > 1 || runs(cb) > 1 { "each side's first run" } else { "the one run" }})
        })
        .collect();
    let rows: Vec<_> = c
        .rows
        .iter()
        .map(|r| {
            let (u, va, vb) = shown(r, unit);
            json!({"config": r.config, "class": r.class, "stat": r.stat, "unit": if u == "µs" { "us".into() } else { u }, "a": va, "b": vb, "ratio": r.ratio()})
        })
        .collect();
    let v = json!({"a": side(a_name, a), "b": side(b_name, b), "pairs": pairs, "rows": rows, "unpaired_a": c.unpaired_a, "unpaired_b": c.unpaired_b, "ambiguous": c.ambiguous});
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta};

    fn run(kind: ResultKind, configs: &[(&str, &str, u64)]) -> RunResult {
        let mut r = RunResult::new(RunMeta::named("t", "s\u{1b}[31m", 3, kind));
        for (name, period, v) in configs {
            let mut c = ConfigResult::new(*name);
            c.seed = *v;
            c.params.insert("period_us".into(), period.to_string());
            let mut rec = LatencyRecorder::new(0);
            rec.record(*v);
            c.classes.insert("timer".into(), rec.finish());
            r.configs.push(c);
        }
        r
    }

    #[test]
    fn table_shows_units_p9999_seeds_and_unpaired() {
        let a = run(ResultKind::Predicted, &[("model 77", "77", 4000), ("model 100", "100", 5000)]);
        let b = run(ResultKind::Measured, &[("timer\u{7}", "77", 8000)]);
        let o = compare_output(&a, &b, "a.json", "b.json", &[], LatencyUnit::Us, CompareFormat::Table);
        let t = &o.text;
        assert!(!o.nothing_paired());
        assert!(t.contains("p99.99") && t.contains("µs") && t.contains("SEED_A") && t.contains(" 4000 ") || t.contains("4000  8000"), "{t}");
        assert!(t.contains("4.00") && t.contains("8.00") && t.contains("2.000"), "{t}");
        assert!(t.contains("paired by params:period_us"), "{t}");
        assert!(t.contains("only in A (1): model 100"), "{t}");
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "escaped: {t:?}");
        assert!(t.contains("timer\\u{7}"));
    }

    #[test]
    fn rows_from_repetitions_are_labelled_as_first_runs() {
        let a = run(ResultKind::Measured, &[("x", "1", 4000)]);
        let mut b = a.clone();
        let second = run(ResultKind::Measured, &[("x", "1", 5000)]).configs.remove(0);
        b.configs[0].repetitions = Some(results::Repetitions::over(&[&b.configs[0], &second, &second]).unwrap());
        let t = compare_output(&a, &b, "a.json", "b.json", &[], LatencyUnit::Us, CompareFormat::Table).text;
        assert!(t.contains("with repetitions, A and B above are each side's first run, not all runs (`x`: A its one run, B run 1 of 3)"), "{t}");
        assert!(!compare_output(&a, &a, "a", "a", &[], LatencyUnit::Us, CompareFormat::Table).text.contains("first run"));
        let j = compare_output(&a, &b, "a.json", "b.json", &[], LatencyUnit::Us, CompareFormat::Json).text;
        let j: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!((j["pairs"][0]["runs_b"].as_u64(), j["pairs"][0]["rows_show"].as_str()), (Some(3), Some("each side's first run")));
    }

    #[test]
    fn nothing_pairs_is_reported() {
        let a = run(ResultKind::Predicted, &[("x", "1", 1), ("y", "2", 1)]);
        let b = run(ResultKind::Measured, &[("p", "3", 1), ("q", "4", 1)]);
        let o = compare_output(&a, &b, "a", "b", &[], LatencyUnit::Us, CompareFormat::Table);
        assert!(o.nothing_paired());
        assert!(o.text.contains("no configuration pairs") && o.text.contains("only in B (2): p; q"), "{}", o.text);
    }

    #[test]
    fn csv_and_json_carry_the_same_rows() {
        let a = run(ResultKind::Predicted, &[("m", "77", 4000)]);
        let b = run(ResultKind::Measured, &[("t", "77", 8000)]);
        let csv = compare_output(&a, &b, "a", "b", &[], LatencyUnit::Ns, CompareFormat::Csv).text;
        assert_eq!(csv.lines().count(), 1 + 10);
        assert!(csv.contains("m,t,params:period_us,4000,8000,timer,p99.99,ns,4000,8000,2"), "{csv}");
        let j: serde_json::Value = serde_json::from_str(&compare_output(&a, &b, "a", "b", &[], LatencyUnit::Us, CompareFormat::Json).text).unwrap();
        assert_eq!(j["rows"].as_array().unwrap().len(), 10);
        assert_eq!(j["rows"][7]["stat"], "p99.99");
        assert_eq!(j["rows"][7]["unit"], "us");
        assert_eq!(j["rows"][7]["a"], 4.0);
        assert_eq!(j["pairs"][0]["seed_b"], 8000);
        assert_eq!(j["b"]["emulation"], serde_json::Value::Null);
    }

    #[test]
    fn a_lab_side_is_said_to_be_emulation() {
        let a = run(ResultKind::Measured, &[("t", "77", 4000)]);
        let mut b = run(ResultKind::Measured, &[("t", "77", 8000)]);
        b.meta.platform.insert("lab".into(), "QEMU TCG emulation (not hardware latency)".into());
        let t = compare_output(&a, &b, "host.json", "lab.json", &[], LatencyUnit::Us, CompareFormat::Table).text;
        assert!(t.contains("    B is emulation, not hardware latency: QEMU TCG emulation"), "{t}");
        assert!(!t.contains("A is emulation"), "{t}");
        let j: serde_json::Value = serde_json::from_str(&compare_output(&a, &b, "a", "b", &[], LatencyUnit::Us, CompareFormat::Json).text).unwrap();
        assert_eq!(j["b"]["emulation"], "QEMU TCG emulation (not hardware latency)");
    }
}

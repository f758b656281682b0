//! The summary pivot of a sweep: one column per value of one axis, one row per combination of
//! the row axes, a statistic in each cell — the trap / native / adaptive table of
//! docs/xen-wfi-policy.md, from a command.
//!
//! Axes named neither as column nor as rows are folded: a cell then holds several
//! configurations and shows their range (`min – max`) and how many there are.
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use results::ConfigResult;

use crate::format::LatencyUnit;
use crate::svg::esc;
use crate::sweep::{Stat, SweepAxis};

/// One cell: the statistic over the configurations that fall into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub min: f64,
    pub max: f64,
    pub n: usize,
    pub text: String,
    /// The second statistic (e.g. the other guest's throughput), as text.
    pub second: Option<String>,
}

/// A computed pivot.
#[derive(Debug, Clone, PartialEq)]
pub struct Pivot {
    pub col: SweepAxis,
    pub rows_axes: Vec<SweepAxis>,
    /// Axes folded into cells.
    pub folded: Vec<String>,
    /// Row keys (values of `rows_axes`, in order) and one cell per column value.
    pub rows: Vec<(Vec<String>, Vec<Option<Cell>>)>,
    pub stat_title: String,
    pub second_title: Option<String>,
    /// Column values no configuration of this pivot has (left out rather than shown empty).
    pub dropped: Vec<String>,
}

/// What to put in the cells.
pub struct CellSpec<'a> {
    pub stat: &'a Stat,
    pub second: Option<&'a Stat>,
    pub class: &'a str,
    pub unit: LatencyUnit,
}

fn summarise(stat: &Stat, vals: &[f64], unit: LatencyUnit) -> Option<(f64, f64, String)> {
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match vals.len() {
        0 => None,
        1 => Some((min, max, stat.show(min, unit))),
        n => Some((min, max, format!("{} – {} (n={n})", stat.show(min, unit), stat.show(max, unit)))),
    }
}

/// Pivot `configs` with `col` across and `rows` down (both must be axes of `configs`).
pub fn pivot(configs: &[ConfigResult], all_axes: &[SweepAxis], col: &SweepAxis, rows: &[SweepAxis], spec: &CellSpec) -> Pivot {
    let folded: Vec<String> = all_axes.iter().filter(|a| a.key != col.key && !rows.iter().any(|r| r.key == a.key)).map(|a| a.key.clone()).collect();
    // Row keys in the order of the axes' values (the sweep order): only the combinations some
    // configuration has. Enumerating every combination of the row axes' values was exponential in
    // their number (issue 45: a configuration with 30 varying parameters took seconds, 50 never
    // ended).
    let mut groups: BTreeMap<(Vec<String>, usize), Vec<&ConfigResult>> = BTreeMap::new();
    let mut present: BTreeMap<Vec<usize>, Vec<String>> = BTreeMap::new();
    let (col_index, row_index): (HashMap<&str, usize>, Vec<HashMap<&str, usize>>) = (col.positions(), rows.iter().map(SweepAxis::positions).collect());
    for c in configs {
        let Some(&ci) = c.params.get(&col.key).and_then(|v| col_index.get(v.as_str())) else { continue };
        let Some(key) = rows.iter().map(|a| c.params.get(&a.key).cloned()).collect::<Option<Vec<String>>>() else { continue };
        if let Some(order) = key.iter().zip(&row_index).map(|(v, ix)| ix.get(v.as_str()).copied()).collect::<Option<Vec<usize>>>() {
            present.entry(order).or_insert_with(|| key.clone());
        }
        groups.entry((key, ci)).or_default().push(c);
    }
    let row_keys: Vec<Vec<String>> = present.into_values().collect();
    let cell = |key: &Vec<String>, ci: usize| -> Option<Cell> {
        let cs = groups.get(&(key.clone(), ci))?;
        let vals: Vec<f64> = cs.iter().filter_map(|c| spec.stat.value_or_only(c, spec.class)).collect();
        let (min, max, text) = summarise(spec.stat, &vals, spec.unit)?;
        let second = spec.second.and_then(|s| {
            let v: Vec<f64> = cs.iter().filter_map(|c| s.value_or_only(c, spec.class)).collect();
            summarise(s, &v, spec.unit).map(|x| x.2)
        });
        Some(Cell { min, max, n: vals.len(), text, second })
    };
    let mut rows_out: Vec<(Vec<String>, Vec<Option<Cell>>)> = row_keys
        .into_iter()
        .map(|k| {
            let cells: Vec<Option<Cell>> = (0..col.values.len()).map(|ci| cell(&k, ci)).collect();
            (k, cells)
        })
        .filter(|(_, cells)| cells.iter().any(Option::is_some))
        .collect();
    // A column with no value in any row says nothing: leave it out and say so.
    let keep: Vec<bool> = (0..col.values.len()).map(|ci| rows_out.iter().any(|r| r.1[ci].is_some())).collect();
    let dropped: Vec<String> = col.values.iter().zip(&keep).filter(|(_, k)| !**k).map(|(v, _)| v.clone()).collect();
    let mut col = col.clone();
    if !rows_out.is_empty() && !dropped.is_empty() {
        col.values = col.values.iter().zip(&keep).filter(|(_, k)| **k).map(|(v, _)| v.clone()).collect();
        for r in &mut rows_out {
            r.1 = r.1.drain(..).zip(&keep).filter(|(_, k)| **k).map(|(c, _)| c).collect();
        }
    }
    Pivot {
        dropped: if rows_out.is_empty() { Vec::new() } else { dropped },
        col,
        rows_axes: rows.to_vec(),
        folded,
        rows: rows_out,
        stat_title: spec.stat.title(&crate::sweep::class_title(configs, spec.class), spec.unit, configs),
        second_title: spec.second.map(|s| s.title(spec.class, spec.unit, configs)),
    }
}

impl Pivot {
    /// An HTML table; `color` gives an optional background per cell.
    pub fn to_html(&self, color: &dyn Fn(&Cell) -> Option<String>) -> String {
        let mut h = String::from("<table class=\"pivot\">");
        let _ = write!(h, "<tr>");
        for a in &self.rows_axes {
            let _ = write!(h, "<th rowspan=\"2\">{}</th>", esc(a.short()));
        }
        let _ = write!(h, "<th colspan=\"{}\">{}</th></tr><tr>", self.col.values.len(), esc(self.col.short()));
        for v in &self.col.values {
            let _ = write!(h, "<th>{}</th>", esc(v));
        }
        h.push_str("</tr>");
        for (key, cells) in &self.rows {
            h.push_str("<tr>");
            for k in key {
                let _ = write!(h, "<th class=\"rowkey\">{}</th>", esc(k));
            }
            for c in cells {
                match c {
                    None => h.push_str("<td class=\"num missing\">–</td>"),
                    Some(c) => {
                        let style = color(c).map(|bg| format!(" style=\"background:{bg}\"")).unwrap_or_default();
                        let _ = write!(h, "<td class=\"num\"{style}>{}", esc(&c.text));
                        if let Some(s) = &c.second {
                            let _ = write!(h, "<br><small>{}</small>", esc(s));
                        }
                        h.push_str("</td>");
                    }
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
        h
    }

    /// The caption: what the cells hold and what was folded.
    pub fn caption(&self) -> String {
        let mut s = format!("Cells: {}", self.stat_title);
        if let Some(t) = &self.second_title {
            s.push_str(&format!("; below it, {t}"));
        }
        s.push('.');
        if !self.folded.is_empty() {
            s.push_str(&format!(
                " Ranges over {} (folded: a cell holds every configuration that differs only in these, with their range and count; not shown as rows or columns).",
                self.folded.join(", ")
            ));
        }
        if !self.dropped.is_empty() {
            s.push_str(&format!(" No configuration has {} = {}.", self.col.short(), self.dropped.join(" / ")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{axes, find, tests::sweep};

    #[test]
    fn default_pivot_has_one_config_per_cell() {
        let cs = sweep();
        let ax = axes(&cs);
        let stat = Stat::parse("p99");
        let fig = Stat::parse("other.throughput");
        let p = pivot(&cs, &ax, &ax[0], &ax[1..], &CellSpec { stat: &stat, second: Some(&fig), class: "timer", unit: LatencyUnit::Ns });
        assert_eq!(p.col.values, ["trap", "native", "adaptive"]);
        assert_eq!(p.rows.len(), 4, "other × pcpus");
        assert_eq!(p.rows[0].0, ["busy", "1"]);
        let texts: Vec<&str> = p.rows[0].1.iter().map(|c| c.as_ref().unwrap().text.as_str()).collect();
        assert_eq!(texts, ["1,001", "2,001", "3,001"]);
        assert_eq!(p.rows[3].1[2].as_ref().unwrap().second.as_deref(), Some("1.700"));
        assert!(p.folded.is_empty());
        let html = p.to_html(&|_| None);
        assert!(html.contains("<th colspan=\"3\">vwfi</th>") && html.contains("<th>adaptive</th>") && html.contains("<small>0.500</small>"), "{html}");
    }

    #[test]
    fn unnamed_axes_fold_into_ranges() {
        let cs = sweep();
        let ax = axes(&cs);
        let stat = Stat::parse("p99");
        let col = find(&ax, "other").unwrap();
        let rows = [find(&ax, "vwfi").unwrap().clone()];
        let p = pivot(&cs, &ax, col, &rows, &CellSpec { stat: &stat, second: None, class: "timer", unit: LatencyUnit::Ns });
        assert_eq!(p.folded, ["hypervisor.pcpus"]);
        let c = p.rows[1].1[1].as_ref().unwrap();
        assert_eq!((c.min, c.max, c.n), (2101.0, 2102.0, 2));
        assert_eq!(c.text, "2,101 – 2,102 (n=2)");
        assert!(p.caption().contains("Ranges over hypervisor.pcpus"));
    }
}

#[cfg(test)]
pub(crate) mod more_tests {
    use super::*;
    use crate::sweep::axes;
    use results::LatencyRecorder;

    fn one(name: &str, params: &[(&str, &str)], class: &str, ns: u64) -> ConfigResult {
        let mut c = ConfigResult::new(name);
        for (k, v) in params {
            c.params.insert(k.to_string(), v.to_string());
        }
        let mut r = LatencyRecorder::new(0);
        r.record(ns);
        c.classes.insert(class.into(), r.finish());
        c
    }

    #[test]
    fn one_class_per_path_fills_every_column() {
        // A measured matrix: each device path has its own class name.
        let cs: Vec<ConfigResult> =
            ["irqfd", "msi", "line", "level"].iter().enumerate().map(|(i, v)| one(v, &[("via", v)], &format!("device_{v}"), 1000 * (i as u64 + 1))).collect();
        let ax = axes(&cs);
        let stat = Stat::parse("p99");
        let spec = CellSpec { stat: &stat, second: None, class: "device_irqfd", unit: LatencyUnit::Ns };
        let p = pivot(&cs, &ax, &ax[0], &[], &spec);
        assert_eq!(p.rows.len(), 1);
        assert!(p.rows[0].1.iter().all(Option::is_some), "{:?}", p.rows);
    }

    #[test]
    fn an_empty_column_is_left_out_and_named() {
        let cs = vec![
            one("a", &[("vwfi", "trap"), ("sched", "c1")], "t", 10),
            one("b", &[("vwfi", "native"), ("sched", "c1")], "t", 5),
            one("c", &[("vwfi", "trap"), ("sched", "c2")], "t", 20),
        ];
        let ax = axes(&cs);
        let stat = Stat::parse("p99");
        let spec = CellSpec { stat: &stat, second: None, class: "t", unit: LatencyUnit::Ns };
        let vwfi = ax.iter().find(|a| a.key == "vwfi").unwrap();
        // Only the sched=c2 configurations: native has none there.
        let sub: Vec<ConfigResult> = cs.iter().filter(|c| c.params["sched"] == "c2").cloned().collect();
        let p = pivot(&sub, &ax, vwfi, &[], &spec);
        assert_eq!(p.col.values, ["trap"]);
        assert_eq!(p.dropped, ["native"]);
        assert!(p.caption().contains("No configuration has vwfi = native"));
        assert!(!p.to_html(&|_| None).contains("missing"));
    }

    /// Three configurations that differ in all of 64 parameters (issue 45): the pivot has the
    /// three rows they fill, in sweep order, not one per combination of 63 row axes' values
    /// (3^63: `report` never ended).
    pub(crate) fn many_axes() -> Vec<ConfigResult> {
        (0..3)
            .map(|i| {
                let params: Vec<(String, String)> = (0..64).map(|k| (format!("p{k:02}"), ((i + k) % 3).to_string())).collect();
                let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                one(&format!("c{i}"), &params, "t", 100 * (i as u64 + 1))
            })
            .collect()
    }

    #[test]
    fn rows_are_the_combinations_configurations_have() {
        let cs = many_axes();
        let ax = axes(&cs);
        assert_eq!(ax.len(), 64);
        let stat = Stat::parse("p99");
        let spec = CellSpec { stat: &stat, second: None, class: "t", unit: LatencyUnit::Ns };
        let p = pivot(&cs, &ax, &ax[0], &ax[1..], &spec);
        assert_eq!(p.rows.len(), 3);
        for (i, (key, cells)) in p.rows.iter().enumerate() {
            assert_eq!(key[0], ((i + 1) % 3).to_string(), "row {i} is configuration c{i}'s (p01 = {})", (i + 1) % 3);
            assert_eq!(cells.iter().filter(|c| c.is_some()).count(), 1);
            assert_eq!(cells[i].as_ref().map(|c| c.min), Some(100.0 * (i as f64 + 1.0)));
        }
    }
}

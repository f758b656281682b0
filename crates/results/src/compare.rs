//! Side-by-side comparison of two runs.
//!
//! Configurations are paired, in this order: by equal name; then by parameters — the values of
//! the parameter keys both runs have (after renaming A's keys with `--map A=B`), so a measured
//! `period_us=77` pairs with a model's `period_us=77` whatever the rows are called; and when each
//! run has exactly one configuration left, those two. What did not pair is reported, not dropped.
//! Everything is indexed by hash maps: 40,000 configurations compare in milliseconds.
use std::collections::{BTreeSet, HashMap};

use crate::latency::Summary;
use crate::run::{ConfigResult, RunResult};

/// One compared statistic of one paired (configuration, class).
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    /// The pair's label: the name, or `A name | B name` when they differ.
    pub config: String,
    pub class: String,
    pub stat: String,
    /// `ns` for latencies, the figure's unit for figures, empty for counts.
    pub unit: String,
    pub a: f64,
    pub b: f64,
}

impl CompareRow {
    /// b / a; `None` when a is zero.
    pub fn ratio(&self) -> Option<f64> {
        (self.a != 0.0).then(|| self.b / self.a)
    }

    /// Whether this row is a latency in nanoseconds (shown in the chosen latency unit).
    pub fn is_latency(&self) -> bool {
        self.unit == "ns" && !self.class.starts_with("figure:")
    }
}

/// How a pair was found.
#[derive(Debug, Clone, PartialEq)]
pub enum PairedBy {
    Name,
    /// The parameter keys (B's names) whose values agreed.
    Params(Vec<String>),
    /// Each run had one configuration left.
    OnlyOne,
}

/// Two configurations compared with each other (indices into `a.configs` and `b.configs`).
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    pub by: PairedBy,
}

/// The outcome of a comparison: pairs, their rows, and what did not pair.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    pub pairs: Vec<Pair>,
    pub rows: Vec<CompareRow>,
    /// Names of A's configurations without a partner.
    pub unpaired_a: Vec<String>,
    pub unpaired_b: Vec<String>,
    /// A's configurations that matched several of B's on the common parameters (not paired).
    pub ambiguous: Vec<String>,
}

/// Latency statistics compared, with the names used everywhere (table, CSV, JSON): the names of
/// [`crate::vocab::stat::COMPARED`].
pub const COMPARED_STATS: [&str; 10] = crate::vocab::stat::names(crate::vocab::stat::COMPARED);

/// A summary statistic by its name in [`COMPARED_STATS`] (latencies in ns); `None` for other
/// names. The names and fields are [`crate::vocab::stat::Stat`]'s.
pub fn summary_stat(s: &Summary, name: &str) -> Option<f64> {
    crate::vocab::stat::Stat::parse(name)?.of(s)
}

/// Compare with no key renaming.
pub fn compare(a: &RunResult, b: &RunResult) -> Comparison {
    compare_mapped(a, b, &[])
}

/// Compare; `map` renames A's parameter keys to B's (`(a_key, b_key)`).
pub fn compare_mapped(a: &RunResult, b: &RunResult, map: &[(String, String)]) -> Comparison {
    let mut used_a = vec![false; a.configs.len()];
    let mut used_b = vec![false; b.configs.len()];
    let mut pairs = Vec::new();

    // 1. Equal names (the first B configuration of each name).
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(b.configs.len());
    for (j, c) in b.configs.iter().enumerate().rev() {
        by_name.insert(c.name.as_str(), j);
    }
    for (i, c) in a.configs.iter().enumerate() {
        if let Some(&j) = by_name.get(c.name.as_str()) {
            if !used_b[j] {
                used_a[i] = true;
                used_b[j] = true;
                pairs.push(Pair { a: i, b: j, by: PairedBy::Name });
            }
        }
    }

    // 2. Parameters on the keys both runs have.
    let rename = |k: &str| -> String { map.iter().find(|(from, _)| from == k).map(|(_, to)| to.clone()).unwrap_or_else(|| k.to_string()) };
    let keys_a: BTreeSet<String> = a.configs.iter().flat_map(|c| c.params.keys().map(|k| rename(k))).collect();
    let keys_b: BTreeSet<&str> = b.configs.iter().flat_map(|c| c.params.keys().map(String::as_str)).collect();
    let common: Vec<String> = keys_a.into_iter().filter(|k| keys_b.contains(k.as_str())).collect();
    let mut ambiguous = Vec::new();
    if !common.is_empty() {
        // A's name for each common key (the inverse of the map).
        let common_in_a: Vec<String> = common.iter().map(|k| map.iter().find(|(_, to)| to == k).map(|(from, _)| from.clone()).unwrap_or_else(|| k.clone())).collect();
        let key_of_b = |c: &ConfigResult| -> Option<Vec<String>> { common.iter().map(|k| c.params.get(k).cloned()).collect() };
        let mut index: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
        for (j, c) in b.configs.iter().enumerate() {
            if !used_b[j] {
                if let Some(key) = key_of_b(c) {
                    index.entry(key).or_default().push(j);
                }
            }
        }
        for (i, c) in a.configs.iter().enumerate() {
            if used_a[i] {
                continue;
            }
            let Some(key) = common_in_a.iter().map(|k| c.params.get(k).cloned()).collect::<Option<Vec<String>>>() else { continue };
            let Some(cands) = index.get(&key) else { continue };
            let free: Vec<usize> = cands.iter().copied().filter(|j| !used_b[*j]).collect();
            match free.as_slice() {
                [j] => {
                    used_a[i] = true;
                    used_b[*j] = true;
                    pairs.push(Pair { a: i, b: *j, by: PairedBy::Params(common.clone()) });
                }
                [] => {}
                _ => ambiguous.push(c.name.clone()),
            }
        }
    }

    // 3. One configuration left on each side.
    let left_a: Vec<usize> = (0..a.configs.len()).filter(|i| !used_a[*i]).collect();
    let left_b: Vec<usize> = (0..b.configs.len()).filter(|j| !used_b[*j]).collect();
    if let ([i], [j]) = (left_a.as_slice(), left_b.as_slice()) {
        if ambiguous.is_empty() {
            used_a[*i] = true;
            used_b[*j] = true;
            pairs.push(Pair { a: *i, b: *j, by: PairedBy::OnlyOne });
        }
    }

    pairs.sort_by_key(|p| p.a);
    let mut rows = Vec::new();
    for p in &pairs {
        rows_of_pair(&a.configs[p.a], &b.configs[p.b], &mut rows);
    }
    Comparison {
        rows,
        unpaired_a: a.configs.iter().zip(&used_a).filter(|(_, u)| !**u).map(|(c, _)| c.name.clone()).collect(),
        unpaired_b: b.configs.iter().zip(&used_b).filter(|(_, u)| !**u).map(|(c, _)| c.name.clone()).collect(),
        pairs,
        ambiguous,
    }
}

fn rows_of_pair(ca: &ConfigResult, cb: &ConfigResult, rows: &mut Vec<CompareRow>) {
    let config = if ca.name == cb.name { ca.name.clone() } else { format!("{} | {}", ca.name, cb.name) };
    for (class, la) in &ca.classes {
        let Some(lb) = cb.classes.get(class) else { continue };
        let (sa, sb) = (&la.summary, &lb.summary);
        for stat in COMPARED_STATS {
            let (Some(va), Some(vb)) = (summary_stat(sa, stat), summary_stat(sb, stat)) else { continue };
            let unit = if stat == "count" { "" } else { "ns" };
            rows.push(CompareRow { config: config.clone(), class: class.clone(), stat: stat.to_string(), unit: unit.into(), a: va, b: vb });
        }
    }
    for (key, fa) in &ca.figures {
        if let Some(fb) = cb.figures.get(key) {
            if fa.unit == fb.unit {
                rows.push(CompareRow { config: config.clone(), class: format!("figure:{key}"), stat: "value".into(), unit: fa.unit.clone(), a: fa.value, b: fb.value });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LatencyRecorder, ResultKind, RunMeta};

    fn run(configs: &[(&str, &[(&str, &str)], u64)]) -> RunResult {
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Predicted));
        for (name, params, v) in configs {
            let mut c = ConfigResult::new(*name);
            c.params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let mut rec = LatencyRecorder::new(0);
            rec.record(*v);
            c.classes.insert("timer".into(), rec.finish());
            r.configs.push(c);
        }
        r
    }

    #[test]
    fn matches_by_name_and_reports_the_rest() {
        let c = compare(&run(&[("trap", &[], 100), ("native", &[], 50)]), &run(&[("native", &[], 150), ("other", &[], 1)]));
        let mean = c.rows.iter().find(|r| r.stat == "mean" && r.config == "native").unwrap();
        assert_eq!(mean.ratio(), Some(3.0));
        // trap and other are the last ones left: paired as the only ones
        assert_eq!(c.pairs, vec![Pair { a: 0, b: 1, by: PairedBy::OnlyOne }, Pair { a: 1, b: 0, by: PairedBy::Name }]);
    }

    #[test]
    fn pairs_by_common_params_with_a_key_map() {
        let model = run(&[
            ("vwfi=trap, period=77", &[("hypervisor.vwfi", "trap"), ("workload.period_us", "77")], 100),
            ("vwfi=trap, period=100", &[("hypervisor.vwfi", "trap"), ("workload.period_us", "100")], 200),
            ("vwfi=trap, period=500", &[("hypervisor.vwfi", "trap"), ("workload.period_us", "500")], 300),
        ]);
        let measured = run(&[("timer a", &[("period_us", "100"), ("wait", "hlt")], 250), ("timer b", &[("period_us", "9")], 1)]);
        let c = compare(&model, &measured);
        assert!(c.pairs.is_empty(), "no common key without a map");
        let map = [("workload.period_us".to_string(), "period_us".to_string())];
        let c = compare_mapped(&model, &measured, &map);
        assert_eq!(c.pairs, vec![Pair { a: 1, b: 0, by: PairedBy::Params(vec!["period_us".into()]) }]);
        assert_eq!(c.unpaired_a, vec!["vwfi=trap, period=77", "vwfi=trap, period=500"]);
        assert_eq!(c.unpaired_b, vec!["timer b"]);
        let p50 = c.rows.iter().find(|r| r.stat == "p50").unwrap();
        assert_eq!((p50.a, p50.b, p50.unit.as_str()), (200.0, 250.0, "ns"));
        assert!(c.rows.iter().any(|r| r.stat == "p99.99"));
    }

    #[test]
    fn ambiguous_params_do_not_pair() {
        let a = run(&[("x", &[("k", "1")], 1), ("y", &[("k", "2")], 1)]);
        let b = run(&[("p", &[("k", "1"), ("j", "a")], 1), ("q", &[("k", "1"), ("j", "b")], 1)]);
        let c = compare(&a, &b);
        assert!(c.pairs.is_empty());
        assert_eq!(c.ambiguous, vec!["x"]);
    }

    #[test]
    fn forty_thousand_configurations_pair_by_params() {
        let mut a = run(&[("seed", &[], 10)]);
        let template = a.configs.pop().unwrap();
        let mut b = a.clone();
        for i in 0..40_000 {
            let mut c = template.clone();
            c.name = format!("point {i}");
            c.params.insert("n".into(), i.to_string());
            a.configs.push(c.clone());
            c.name = format!("renamed {i}");
            b.configs.push(c);
        }
        b.configs.reverse();
        // Correctness only: how long it takes is a benchmark, not a unit test (BENCHMARKS.md,
        // "compare pairing"), so a loaded CI machine cannot fail it.
        let t = std::time::Instant::now();
        let c = compare(&a, &b);
        eprintln!("compare of 40,000 x 40,000 configurations: {:?} (recorded in BENCHMARKS.md, not asserted)", t.elapsed());
        assert_eq!(c.pairs.len(), 40_000);
        assert!(c.pairs.iter().all(|p| a.configs[p.a].params == b.configs[p.b].params));
    }
}

//! Sweep axes of a run and the statistics reports can show per configuration.
//!
//! A sweep axis is a parameter key whose value differs between configurations. Parameters are
//! stored in a sorted map, so the scenario's axis order is recovered from the configuration names,
//! which the runner writes in sweep order (`vwfi=trap, other=busy, pcpus=1`); keys not named there
//! follow alphabetically. Users name axes by full key (`hypervisor.vwfi`) or by its last part
//! (`vwfi`).
use std::collections::{BTreeMap, HashMap, HashSet};

use results::ConfigResult;

use crate::format::{group, latency, number, LatencyUnit};

/// One sweep axis: the parameter key and its values in order of first appearance.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepAxis {
    pub key: String,
    pub values: Vec<String>,
}

impl SweepAxis {
    /// The short name: the part after the last `.`.
    pub fn short(&self) -> &str {
        self.key.rsplit('.').next().unwrap_or(&self.key)
    }

    /// Each value's position in the sweep order, for lookups in constant time.
    pub fn positions(&self) -> HashMap<&str, usize> {
        self.values.iter().enumerate().map(|(i, v)| (v.as_str(), i)).collect()
    }
}

/// The sweep axes of `configs` (failed ones included: they still have parameters).
pub fn axes(configs: &[ConfigResult]) -> Vec<SweepAxis> {
    // Linear in configurations × parameters (issue 45: a search of the axis list per parameter,
    // and of the name's parts per comparison while sorting, made `report` quadratic in a
    // configuration's number of parameters).
    let mut seen: BTreeMap<&str, (usize, HashSet<&str>)> = BTreeMap::new();
    let mut axes: Vec<SweepAxis> = Vec::new();
    for c in configs {
        for (k, v) in &c.params {
            let (i, values) = seen.entry(k.as_str()).or_insert_with(|| {
                axes.push(SweepAxis { key: k.clone(), values: Vec::new() });
                (axes.len() - 1, HashSet::new())
            });
            if values.insert(v.as_str()) {
                axes[*i].values.push(v.clone());
            }
        }
    }
    axes.retain(|a| a.values.len() > 1);
    // First position of each name part (`key=` in the first configuration's name).
    let mut name_rank: HashMap<&str, usize> = HashMap::new();
    if let Some(c) = configs.first() {
        for (i, key) in c.name.split(", ").filter_map(|p| p.split_once('=').map(|kv| kv.0)).enumerate() {
            name_rank.entry(key).or_insert(i);
        }
    }
    let rank = |a: &SweepAxis| [name_rank.get(a.key.as_str()), name_rank.get(a.short())].into_iter().flatten().copied().min().unwrap_or(usize::MAX);
    axes.sort_by_cached_key(|a| (rank(a), a.key.clone()));
    axes
}

/// The axes of a run, the parameters its questions study first (in question order): they colour
/// the scatter, name the CDF series (so a baseline and its variant share a panel) and head the
/// pivot's columns.
pub fn run_axes(r: &results::RunResult) -> Vec<SweepAxis> {
    let mut ax = axes(&r.configs);
    let rank = |a: &SweepAxis| r.questions.iter().position(|q| q.param == a.key).unwrap_or(usize::MAX);
    ax.sort_by_key(rank);
    ax
}

/// Find an axis by full key or short name.
pub fn find<'a>(axes: &'a [SweepAxis], name: &str) -> Option<&'a SweepAxis> {
    axes.iter().find(|a| a.key == name).or_else(|| axes.iter().find(|a| a.short() == name))
}

/// Latency statistics by the names used everywhere (table, CSV, JSON, flags):
/// [`results::vocab::stat::LATENCY`].
pub const LATENCY_STATS: [&str; 9] = results::vocab::stat::names(results::vocab::stat::LATENCY);

/// What a statistic name refers to.
#[derive(Debug, Clone, PartialEq)]
pub enum Stat {
    /// A latency statistic (ns) of a class.
    Latency(String),
    /// The sample count of a class.
    Count,
    /// A figure (`other.throughput`), with or without a `figure:` prefix; values are multiplied
    /// by `factor` to show them in `unit` (see [`Stat::resolve`]).
    Figure { name: String, factor: f64, unit: String },
}

impl Stat {
    pub fn parse(s: &str) -> Stat {
        let s = s.strip_prefix("figure:").unwrap_or(s);
        match s {
            "count" => Stat::Count,
            "avg" => Stat::Latency("mean".into()),
            s if LATENCY_STATS.contains(&s) => Stat::Latency(s.into()),
            s => Stat::Figure { name: s.into(), factor: 1.0, unit: String::new() },
        }
    }

    /// The value for configuration `c` (latencies in ns).
    pub fn value(&self, c: &ConfigResult, class: &str) -> Option<f64> {
        if c.error.is_some() {
            return None;
        }
        let s = || c.classes.get(class).map(|l| &l.summary);
        match self {
            Stat::Count => s().map(|s| s.count as f64),
            Stat::Latency(name) => s().filter(|s| s.count > 0).and_then(|s| results::summary_stat(s, name)),
            Stat::Figure { name, factor, .. } => c.figures.get(name).map(|f| f.value * factor),
        }
    }

    /// [`value`](Self::value) of `class`, or, for a configuration that does not have it and has
    /// exactly one class, of that one: a measured matrix names each device path's class after the
    /// path (`device_irqfd`, `device_msi`), and a pivot over `via` must not fill only the irqfd
    /// column.
    pub fn value_or_only(&self, c: &ConfigResult, class: &str) -> Option<f64> {
        if c.classes.contains_key(class) || c.classes.len() != 1 {
            return self.value(c, class);
        }
        let only = c.classes.keys().next()?;
        self.value(c, only)
    }

    /// The value as shown in a table cell (latencies in `unit`).
    pub fn show(&self, v: f64, unit: LatencyUnit) -> String {
        match self {
            Stat::Latency(_) => latency(v, unit),
            Stat::Count => number(v),
            // One number of decimals for a whole column of figures.
            Stat::Figure { .. } if v.abs() >= 1000.0 => group(v, 0),
            Stat::Figure { .. } => group(v, 3),
        }
    }

    /// Title with unit: `timer p99 (µs)`, `other.throughput (pCPU)`.
    pub fn title(&self, class: &str, unit: LatencyUnit, configs: &[ConfigResult]) -> String {
        match self {
            Stat::Latency(n) => format!("{class} {n} ({})", unit.symbol()),
            Stat::Count => format!("{class} count"),
            Stat::Figure { name, unit, .. } if !unit.is_empty() => format!("{name} ({unit})"),
            Stat::Figure { name, .. } => match configs.iter().find_map(|c| c.figures.get(name)).map(|f| f.unit.as_str()).filter(|u| !u.is_empty()) {
                Some(u) => format!("{name} ({u})"),
                None => name.clone(),
            },
        }
    }

    /// Pick the display unit of a figure from its values in `configs` (8.98e9 ns → s).
    pub fn resolve(self, configs: &[ConfigResult]) -> Stat {
        match self {
            Stat::Figure { name, .. } => {
                let figs: Vec<&results::Figure> = configs.iter().filter_map(|c| c.figures.get(&name)).collect();
                let max = figs.iter().map(|f| f.value.abs()).fold(0.0, f64::max);
                let (factor, unit) = crate::format::scale(max, figs.first().map(|f| f.unit.as_str()).unwrap_or(""));
                Stat::Figure { name, factor, unit }
            }
            s => s,
        }
    }

    pub fn is_latency(&self) -> bool {
        matches!(self, Stat::Latency(_))
    }
}

/// How a class is named in titles: itself, or, when every configuration has one class under its
/// own name (`device_irqfd`, `device_msi`), their common prefix and a word on it.
pub fn class_title(configs: &[ConfigResult], class: &str) -> String {
    let names: std::collections::BTreeSet<&String> = configs.iter().flat_map(|c| c.classes.keys()).collect();
    if names.len() < 2 || !configs.iter().filter(|c| c.error.is_none()).all(|c| c.classes.len() == 1) {
        return class.to_string();
    }
    let first: Vec<char> = class.chars().collect();
    let n = names.iter().map(|s| s.chars().zip(&first).take_while(|(a, b)| a == *b).count()).min().unwrap_or(0);
    let prefix: String = first[..n].iter().collect::<String>().trim_end_matches(['_', '-', '.']).to_string();
    format!("{} (each configuration's one class)", if prefix.is_empty() { "latency" } else { &prefix })
}

/// The class shown by default: the first class of the first configuration that has one.
pub fn default_class(configs: &[ConfigResult]) -> Option<String> {
    configs.iter().find_map(|c| c.classes.keys().next().cloned())
}

/// The figure plotted against latency by default: one present in most configurations whose
/// value varies, preferring a throughput; never a bookkeeping figure (simulated or wall time, a
/// start time) and never an indicator (every value 0 or 1, like `pcpu.idle` with one pCPU):
/// a scatter against either says nothing about the latency.
pub fn default_figure(configs: &[ConfigResult]) -> Option<String> {
    let mut names: Vec<&String> = configs.iter().flat_map(|c| c.figures.keys()).collect();
    names.sort();
    names.dedup();
    let useful = |n: &&String| {
        let vals: Vec<f64> = configs.iter().filter_map(|c| c.figures.get(*n).map(|f| f.value)).collect();
        let indicator = vals.iter().all(|v| *v == 0.0 || *v == 1.0 || (v - v.round()).abs() < 1e-3 && v.round().abs() <= 1.0);
        let bookkeeping = ["simulated_time", "wall"].contains(&n.as_str()) || n.contains("start") || n.ends_with("_time") || n.ends_with(".time");
        !bookkeeping && !indicator && vals.len() * 2 >= configs.len() && vals.iter().any(|v| *v != vals[0])
    };
    let candidates: Vec<&String> = names.into_iter().filter(useful).collect();
    candidates.iter().find(|n| n.contains("throughput")).or(candidates.first()).map(|s| (*s).clone())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use results::LatencyRecorder;

    /// A 3 × 2 × 2 sweep like xen-wfi-policy's: vwfi × other × pcpus, p99 growing with each.
    pub(crate) fn sweep() -> Vec<ConfigResult> {
        let mut out = Vec::new();
        for (i, vwfi) in ["trap", "native", "adaptive"].iter().enumerate() {
            for (j, other) in ["busy", "idle"].iter().enumerate() {
                for pcpus in ["1", "2"] {
                    let mut c = ConfigResult::new(format!("vwfi={vwfi}, other={other}, pcpus={pcpus}"));
                    c.params.insert("hypervisor.vwfi".into(), vwfi.to_string());
                    c.params.insert("workload.other".into(), other.to_string());
                    c.params.insert("hypervisor.pcpus".into(), pcpus.into());
                    c.params.insert("hypervisor.first_pcpu".into(), "0".into());
                    let mut r = LatencyRecorder::new(0);
                    let base = 1000 * (i as u64 + 1) + 100 * j as u64 + pcpus.parse::<u64>().unwrap();
                    for _ in 0..100 {
                        r.record(base);
                    }
                    c.classes.insert("timer".into(), r.finish());
                    c.set_figure("other.throughput", 0.5 + i as f64 * 0.1 + j as f64, "pCPU");
                    c.set_figure("simulated_time", 3.0 + i as f64, "s");
                    out.push(c);
                }
            }
        }
        out
    }

    #[test]
    fn axes_follow_the_sweep_order_of_the_names() {
        let a = axes(&sweep());
        let keys: Vec<&str> = a.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["hypervisor.vwfi", "workload.other", "hypervisor.pcpus"], "constant first_pcpu is no axis");
        assert_eq!(a[0].values, ["trap", "native", "adaptive"]);
        assert_eq!(find(&a, "other").unwrap().key, "workload.other");
        assert_eq!(find(&a, "hypervisor.pcpus").unwrap().short(), "pcpus");
        assert!(find(&a, "nope").is_none());
    }

    #[test]
    fn stats_and_defaults() {
        let s = sweep();
        assert_eq!(Stat::parse("p99").value(&s[0], "timer"), Some(1001.0));
        assert_eq!(Stat::parse("figure:other.throughput").value(&s[2], "timer"), Some(1.5));
        assert_eq!(Stat::parse("count").value(&s[0], "timer"), Some(100.0));
        assert_eq!(Stat::parse("p99").show(1001.0, LatencyUnit::Us), "1.00");
        assert_eq!(default_class(&s).as_deref(), Some("timer"));
        assert_eq!(default_figure(&s).as_deref(), Some("other.throughput"));
        assert_eq!(Stat::parse("other.throughput").title("timer", LatencyUnit::Us, &s), "other.throughput (pCPU)");
        // Indicators and start times are never the default scatter.
        let mut flags = s.clone();
        for (i, c) in flags.iter_mut().enumerate() {
            c.figures.clear();
            c.set_figure("pcpu.idle", if i % 2 == 0 { 0.9996 } else { 0.0 }, "pCPU");
            c.set_figure("vm_start_time", 1e9 + i as f64, "ns");
        }
        assert_eq!(default_figure(&flags), None);
        flags[0].set_figure("pcpu.idle", 0.5, "pCPU");
        assert_eq!(default_figure(&flags).as_deref(), Some("pcpu.idle"), "a real fraction is plotted");
        let mut big = s.clone();
        big[0].set_figure("total", 8.98e9, "ns");
        let t = Stat::parse("total").resolve(&big);
        assert_eq!(t.title("timer", LatencyUnit::Us, &big), "total (s)");
        assert_eq!(t.value(&big[0], "timer"), Some(8.98));
    }
}

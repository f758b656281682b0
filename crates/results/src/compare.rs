//! Side-by-side comparison of two runs: configurations matched by name, classes by name.
use crate::run::RunResult;

/// One compared statistic of one (configuration, class) present in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    pub config: String,
    pub class: String,
    pub stat: &'static str,
    pub a: f64,
    pub b: f64,
}

impl CompareRow {
    /// b / a; `None` when a is zero.
    pub fn ratio(&self) -> Option<f64> {
        (self.a != 0.0).then(|| self.b / self.a)
    }
}

/// Compare latency summaries and figures. When both runs have exactly one configuration, they are
/// matched regardless of name (a model row against a measurement row).
pub fn compare(a: &RunResult, b: &RunResult) -> Vec<CompareRow> {
    let mut rows = Vec::new();
    let pairs: Vec<_> = if a.configs.len() == 1 && b.configs.len() == 1 {
        vec![(&a.configs[0], &b.configs[0])]
    } else {
        a.configs.iter().filter_map(|ca| b.configs.iter().find(|cb| cb.name == ca.name).map(|cb| (ca, cb))).collect()
    };
    for (ca, cb) in pairs {
        let config = if ca.name == cb.name { ca.name.clone() } else { format!("{} | {}", ca.name, cb.name) };
        for (class, la) in &ca.classes {
            let Some(lb) = cb.classes.get(class) else { continue };
            let (sa, sb) = (&la.summary, &lb.summary);
            let stats: [(&'static str, f64, f64); 8] = [
                ("count", sa.count as f64, sb.count as f64),
                ("mean", sa.mean, sb.mean),
                ("min", sa.min as f64, sb.min as f64),
                ("p50", sa.p50 as f64, sb.p50 as f64),
                ("p99", sa.p99 as f64, sb.p99 as f64),
                ("p99.9", sa.p999 as f64, sb.p999 as f64),
                ("max", sa.max as f64, sb.max as f64),
                ("warm_max", sa.warm_max as f64, sb.warm_max as f64),
            ];
            for (stat, va, vb) in stats {
                rows.push(CompareRow { config: config.clone(), class: class.clone(), stat, a: va, b: vb });
            }
        }
        for (key, fa) in &ca.figures {
            if let Some(fb) = cb.figures.get(key) {
                rows.push(CompareRow { config: config.clone(), class: format!("figure:{key}"), stat: "value", a: fa.value, b: fb.value });
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConfigResult, LatencyRecorder, ResultKind, RunMeta};
    use std::collections::BTreeMap;

    fn run(configs: &[(&str, u64)]) -> RunResult {
        let mut r = RunResult::new(RunMeta {
            tool_version: "t".into(),
            scenario: "s".into(),
            description: String::new(),
            seed: 1,
            kind: ResultKind::Predicted,
            platform: BTreeMap::new(),
            knobs: BTreeMap::new(),
        });
        for (name, v) in configs {
            let mut c = ConfigResult::new(*name);
            let mut rec = LatencyRecorder::new(0);
            rec.record(*v);
            c.classes.insert("timer".into(), rec.finish());
            r.configs.push(c);
        }
        r
    }

    #[test]
    fn matches_by_name_and_computes_ratio() {
        let rows = compare(&run(&[("trap", 100), ("native", 50)]), &run(&[("native", 150), ("other", 1)]));
        let mean = rows.iter().find(|r| r.stat == "mean").unwrap();
        assert_eq!(mean.config, "native");
        assert_eq!(mean.ratio(), Some(3.0));
        assert!(rows.iter().all(|r| r.config == "native"));
    }

    #[test]
    fn single_configs_match_regardless_of_name() {
        let rows = compare(&run(&[("model", 100)]), &run(&[("host", 200)]));
        assert_eq!(rows.iter().find(|r| r.stat == "p50").unwrap().ratio(), Some(2.0));
    }
}

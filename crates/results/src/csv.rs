//! CSV export: one row per (configuration, interrupt class), parameters as columns.
use std::collections::BTreeSet;

use crate::run::RunResult;

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Render the run as CSV. Failed configurations appear with empty numbers and their error.
pub fn to_csv(r: &RunResult) -> String {
    let params: BTreeSet<&str> = r.configs.iter().flat_map(|c| c.params.keys().map(|k| k.as_str())).collect();
    let mut out = String::new();
    let mut header: Vec<String> = vec!["kind".into(), "config".into()];
    header.extend(params.iter().map(|p| field(p)));
    header.extend(
        ["class", "count", "min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p99.9_ns", "p99.99_ns", "max_ns", "warm_max_ns", "error"]
            .map(String::from),
    );
    out.push_str(&header.join(","));
    out.push('\n');
    for c in &r.configs {
        let mut prefix = vec![r.meta.kind.as_str().to_string(), field(&c.name)];
        prefix.extend(params.iter().map(|p| field(c.params.get(*p).map(String::as_str).unwrap_or(""))));
        let err = field(c.error.as_deref().unwrap_or(""));
        if c.classes.is_empty() {
            let mut row = prefix.clone();
            row.push(String::new());
            row.extend(std::iter::repeat_n(String::new(), 10));
            row.push(err.clone());
            out.push_str(&row.join(","));
            out.push('\n');
        }
        for (class, l) in &c.classes {
            let s = &l.summary;
            let mut row = prefix.clone();
            row.push(field(class));
            row.extend(
                [s.count, s.min].iter().map(|v| v.to_string()).chain([format!("{:.1}", s.mean)]).chain(
                    [s.p50, s.p90, s.p99, s.p999, s.p9999, s.max, s.warm_max].iter().map(|v| v.to_string()),
                ),
            );
            row.push(err.clone());
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};
    use std::collections::BTreeMap;

    #[test]
    fn rows_per_class_params_as_columns_and_quoting() {
        let mut r = RunResult::new(RunMeta {
            tool_version: "t".into(),
            scenario: "s".into(),
            description: String::new(),
            seed: 1,
            kind: ResultKind::Measured,
            platform: BTreeMap::new(),
            knobs: BTreeMap::new(),
        });
        let mut c = ConfigResult::new("x2apic cluster, pv");
        c.params.insert("mode".into(), "cluster".into());
        let mut rec = LatencyRecorder::new(0);
        rec.record(10);
        c.classes.insert("ipi".into(), rec.finish());
        r.configs.push(c);
        r.configs.push(ConfigResult::failed("bad", BTreeMap::new(), "pCPU 9 does not exist".into()));
        let csv = to_csv(&r);
        let lines: Vec<_> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("kind,config,mode,class,count"));
        assert!(lines[1].starts_with("measured,\"x2apic cluster, pv\",cluster,ipi,1,10,10.0,"), "{}", lines[1]);
        assert!(lines[2].ends_with("pCPU 9 does not exist"));
    }
}

//! Helpers the Xen scenario tests share: run a scenario, patch keys, read a statistic.
#![allow(dead_code)]
use results::RunResult;
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::{set_path, Scenario};

pub const S3: &str = include_str!("../../../../scenarios/xen-arm-zynq-timer.toml");
pub const WFI: &str = include_str!("../../../../scenarios/xen-wfi-policy.toml");

/// Run `sc` (every configuration must succeed).
pub fn run(sc: &Scenario, seed: Option<u64>) -> RunResult {
    let out = run_scenario(sc, &ScenarioOpts { keep_traces: 1, ..ScenarioOpts::with_seed(seed) }).unwrap();
    for c in &out.result.configs {
        assert!(c.error.is_none(), "{}: {:?}", c.name, c.error);
    }
    out.result
}

/// A scenario text with some keys replaced (dotted keys, TOML values; `sweep:AXIS` sets an axis;
/// `unset:a.b.c` removes key `c` of table `a.b`, e.g. a cost override the configuration no longer uses).
pub fn with(text: &str, sets: &[(&str, &str)]) -> Scenario {
    let mut doc: toml::Table = toml::from_str(text).unwrap();
    // The patched scenario studies a mechanism, not the shipped question (whose baseline a patch
    // may remove, which `[[question]]` refuses as an unknown value).
    doc.remove("question");
    for (k, v) in sets {
        if let Some(path) = k.strip_prefix("unset:") {
            let (table, key) = path.rsplit_once('.').unwrap();
            let t = table.split('.').fold(&mut doc, |t, part| t.get_mut(part).and_then(|x| x.as_table_mut()).unwrap());
            assert!(t.remove(key).is_some(), "no key {path}");
            continue;
        }
        let val: toml::Table = toml::from_str(&format!("v = {v}")).unwrap();
        match k.strip_prefix("sweep:") {
            Some(axis) => {
                doc.get_mut("sweep").and_then(|s| s.as_table_mut()).unwrap().insert(axis.into(), val["v"].clone());
            }
            None => set_path(&mut doc, k, val["v"].clone()).unwrap(),
        }
    }
    Scenario::parse(&toml::to_string(&doc).unwrap(), "test.toml", "test", None).unwrap()
}

/// A cost override as a TOML inline table.
pub fn cost_ns(ns: f64) -> String {
    format!("{{ ns = {ns}, source = \"test\", basis = \"guess\" }}")
}

/// Timer-latency statistic of configuration `config` (ns).
pub fn stat(r: &RunResult, config: &str, stat: &str) -> f64 {
    let c = r.configs.iter().find(|c| c.name == config).unwrap_or_else(|| panic!("no config {config}"));
    let s = &c.classes["timer"].summary;
    match stat {
        "mean" => s.mean,
        "min" => s.min as f64,
        "max" => s.max as f64,
        "warm_max" => s.warm_max as f64,
        "p50" => s.p50 as f64,
        "p99" => s.p99 as f64,
        _ => unreachable!(),
    }
}

/// `S3` with only configuration `config`, `samples` rounds and the keys `sets` replaced.
pub fn s3_only(config: &str, samples: u64, sets: &[(&str, &str)]) -> Scenario {
    let n = samples.to_string();
    let mut all = vec![("workload.samples", n.as_str())];
    // The calibrated credit2 cost is an override only credit2 configurations use.
    let credit2 = config.starts_with("credit2") || sets.iter().any(|(k, v)| *k == "hypervisor.scheduler" && *v == "\"credit2\"");
    if !credit2 {
        all.push(("unset:platform.costs.credit2_schedule", ""));
    }
    all.extend_from_slice(sets);
    let mut sc = with(S3, &all);
    sc.selected = vec![config.to_string()];
    sc
}

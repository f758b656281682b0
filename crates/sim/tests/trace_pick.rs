//! `--trace N --trace-at WHICH` through the runner: the slowest, the paths nearest a percentile
//! and chosen rounds are the ones kept, in result.json form too, and choosing never changes the
//! result itself.
use sim::engine::TracePick;
use sim::runner::{run_scenario, run_scenario_picking, ScenarioOpts, ScenarioOutput};
use sim::scenario::{shipped_scenario, Scenario};

fn scenario() -> Scenario {
    let text = shipped_scenario("xen-arm-zynq-timer").unwrap().replace("samples = 1000", "samples = 400");
    let mut sc = Scenario::parse(&text, "xen-arm-zynq-timer.toml", "xen-arm-zynq-timer", None).unwrap();
    sc.select_configs(&["vwfi=trap".into()]).unwrap();
    sc
}

fn run(pick: &TracePick, n: usize) -> ScenarioOutput {
    let opts = ScenarioOpts { keep_traces: n, ..ScenarioOpts::quiet() };
    run_scenario_picking(&scenario(), &opts, pick).unwrap()
}

fn totals(out: &ScenarioOutput) -> Vec<f64> {
    out.result.configs[0].traces.iter().map(|t| t.total_ns).collect()
}

#[test]
fn slowest_are_the_largest_latencies_slowest_first() {
    let all = run(&TracePick::First, 400);
    let mut every = totals(&all);
    assert_eq!(every.len(), 400, "first 400 of 400 = all paths");
    every.sort_by(|a, b| b.total_cmp(a));
    let slow = run(&TracePick::Slowest, 3);
    assert_eq!(totals(&slow), every[..3].to_vec());
    let choice = slow.result.configs[0].trace_choice.clone().unwrap();
    assert_eq!((choice.how.as_str(), choice.per_class), ("slowest", 3));
}

#[test]
fn nearest_a_percentile_brackets_it() {
    let all = run(&TracePick::First, 400);
    let mut every = totals(&all);
    every.sort_by(|a, b| a.total_cmp(b));
    let p90 = all.result.configs[0].classes["timer"].summary.p90 as f64;
    let near = run(&TracePick::Percentile(90.0), 2);
    let kept = totals(&near);
    assert_eq!(kept.len(), 2);
    // No path that was not kept is closer to p90 than the kept ones (HDR rounds p90 to 3 digits).
    let worst = kept.iter().map(|t| (t - p90).abs()).fold(0.0, f64::max);
    let closer = every.iter().filter(|t| (*t - p90).abs() + 0.001 * p90 < worst).count();
    assert!(closer <= 2, "kept {kept:?} for p90 {p90}, {closer} paths closer");
    assert!(kept.iter().all(|t| (t - p90).abs() < 0.02 * p90), "{kept:?} vs {p90}");
    // Far from the slowest: p90 is not the tail.
    assert!(kept[0] < every[every.len() - 1]);
}

#[test]
fn rounds_are_those_paths() {
    let all = run(&TracePick::First, 400);
    let picked = run(&TracePick::parse("250,3").unwrap(), 5);
    let labels: Vec<&str> = picked.result.configs[0].traces.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels.len(), 2);
    assert!(labels[0].starts_with("timer #3 ") && labels[1].starts_with("timer #250 "), "{labels:?}");
    assert_eq!(picked.result.configs[0].traces[1], all.result.configs[0].traces[250]);
}

#[test]
fn choosing_paths_never_changes_the_result() {
    let plain = run_scenario(&scenario(), &ScenarioOpts::quiet()).unwrap();
    for pick in [TracePick::Slowest, TracePick::Percentile(99.0), TracePick::parse("7").unwrap()] {
        let mut r = run(&pick, 2).result;
        for c in &mut r.configs {
            assert!(!c.traces.is_empty(), "{pick:?} kept paths");
            c.traces.clear();
            c.trace_choice = None;
        }
        assert_eq!(results::to_json_string(&r), results::to_json_string(&plain.result), "{pick:?}");
    }
}

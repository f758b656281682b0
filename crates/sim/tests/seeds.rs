//! `seeds = N`: every point runs with N seeds, the row keeps the first seed's result (equal to
//! the `seeds = 1` row) and carries the median and range over all N.
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::Scenario;

const DEMO: &str = include_str!("../../../scenarios/demo-timer-inject.toml");

fn run(text: &str, seeds: Option<u64>) -> results::RunResult {
    run_seed(text, None, seeds)
}

fn run_seed(text: &str, seed: Option<u64>, seeds: Option<u64>) -> results::RunResult {
    let sc = Scenario::parse(text, "s.toml", "s", None).unwrap();
    run_scenario(&sc, &ScenarioOpts { seeds, ..ScenarioOpts::with_seed(seed) }).unwrap().result
}

#[test]
fn rows_keep_the_first_seed_and_carry_the_spread() {
    let one = run(DEMO, None);
    let four = run(DEMO, Some(4));
    assert_eq!(one.configs.len(), four.configs.len());
    for (a, b) in one.configs.iter().zip(&four.configs) {
        assert!(a.seed_spread.is_none());
        let sp = b.seed_spread.as_ref().expect("spread with 4 seeds");
        assert_eq!(sp.seeds.len(), 4);
        assert_eq!(sp.seeds[0], a.seed, "the first seed is the point's own");
        let mut distinct = sp.seeds.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "seeds differ: {:?}", sp.seeds);
        let mut b = b.clone();
        let reps = b.repetitions.take().expect("repetitions with 4 seeds");
        assert_eq!(reps.len(), 4);
        assert_eq!(reps.runs[0].seed, Some(a.seed));
        for (class, lc) in &a.classes {
            assert_eq!(reps.summaries(class)[0], lc.summary, "{class}: the first repetition is the row");
            assert_eq!(reps.pooled[class].summary.count, reps.summaries(class).iter().map(|s| s.count).sum::<u64>());
        }
        b.seed_spread = None;
        assert_eq!(a, &b, "the row is the first seed's result");
        // Different seeds give different samples: the range of the mean is not a point.
        for class in a.classes.keys() {
            let mean = sp.latency(class, "mean").unwrap();
            assert!(mean.min < mean.max, "{class}: {mean:?}");
            assert!(mean.min <= mean.median && mean.median <= mean.max);
            let own = a.classes[class].summary.mean;
            assert!(mean.min <= own && own <= mean.max);
        }
    }
}

#[test]
fn spread_is_deterministic() {
    let a = results::to_json_string(&run(DEMO, Some(3)));
    let b = results::to_json_string(&run(DEMO, Some(3)));
    assert_eq!(a, b);
    // Another base seed gives another spread (a constant would pass the line above).
    let c = run_seed(DEMO, Some(11), Some(3));
    assert_ne!(a, results::to_json_string(&c));
    let median = |r: &results::RunResult| r.configs[0].seed_spread.as_ref().unwrap().latency("timer", "mean").unwrap().median;
    assert_ne!(median(&run(DEMO, Some(3))), median(&c));
}

#[test]
fn seeds_out_of_range_are_refused_with_the_key() {
    for (n, bad) in [(0, true), (1001, true), (1000, false)] {
        let text = DEMO.replacen("[scenario]", &format!("[scenario]\nseeds = {n}"), 1);
        match Scenario::parse(&text, "s.toml", "s", None) {
            Err(e) if bad => assert!(e.to_string().contains("scenario.seeds"), "{e}"),
            Ok(_) if !bad => {}
            other => panic!("seeds = {n}: {:?}", other.map(|_| ())),
        }
    }
    let sc = Scenario::parse(DEMO, "s.toml", "s", None).unwrap();
    let e = run_scenario(&sc, &ScenarioOpts { seeds: Some(0), ..ScenarioOpts::quiet() }).err().unwrap();
    assert!(e.to_string().contains("--seeds"), "{e}");
}

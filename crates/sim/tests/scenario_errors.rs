//! Bad scenario input must give errors that name the file, the key and what was expected.
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::{Scenario, ScenarioError};

const GOOD: &str = include_str!("../../../scenarios/demo-timer-inject.toml");

fn parse(text: &str) -> Result<Scenario, String> {
    Scenario::parse(text, "bad.toml", "bad", None).map_err(|e| e.to_string())
}

fn opts() -> ScenarioOpts<'static> {
    ScenarioOpts::quiet()
}

/// Run and return the error that made the input unusable (every point is validated before any
/// runs, so a bad value anywhere stops the whole run).
fn point_error(text: &str) -> String {
    let sc = parse(text).unwrap();
    match run_scenario(&sc, &opts()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected the scenario to be rejected"),
    }
}

#[test]
fn good_scenario_runs() {
    let sc = parse(GOOD).unwrap();
    assert_eq!(sc.point_count().unwrap(), 2);
    let out = run_scenario(&sc, &ScenarioOpts { keep_traces: 1, ..ScenarioOpts::quiet() }).unwrap();
    assert!(out.result.configs.iter().all(|c| c.error.is_none()));
}

#[test]
fn unknown_key_names_file_and_key() {
    let e = point_error(&GOOD.replace("busy_fraction = 0.0", "busy_fraction = 0.0\nbusyness = 3"));
    assert!(e.contains("bad.toml") && e.contains("busyness") && e.contains("workload"), "{e}");
}

#[test]
fn unknown_top_level_key() {
    let e = parse(&format!("{GOOD}\n[extras]\na = 1\n")).unwrap_err();
    assert!(e.contains("bad.toml") && e.contains("extras") && e.contains("expected one of"), "{e}");
}

#[test]
fn wrong_type_names_key_and_type() {
    let e = point_error(&GOOD.replace("samples = 20000", "samples = \"many\""));
    assert!(e.contains("bad.toml") && e.contains("workload.samples") && e.contains("invalid type"), "{e}");
}

#[test]
fn zero_vcpus_is_rejected() {
    let e = point_error(&GOOD.replace("vcpus = 1", "vcpus = 0"));
    assert!(e.contains("bad.toml") && e.contains("vm[0].vcpus") && e.contains("at least 1"), "{e}");
}

#[test]
fn pinning_to_missing_pcpu_is_rejected() {
    let e = point_error(&GOOD.replace("pin = [1]", "pin = [7]"));
    assert!(e.contains("vm[0].pin[0]") && e.contains("4 CPUs") && e.contains("got 7"), "{e}");
}

#[test]
fn negative_cost_override_is_rejected() {
    let text = GOOD.replace("profile = \"demo-arm64-a53\"", "profile = \"demo-arm64-a53\"\n[platform.costs.lr_inject]\nns = -5\nsource = \"x\"\nbasis = \"guess\"");
    let e = point_error(&text);
    assert!(e.contains("bad.toml") && e.contains("platform.costs.lr_inject") && e.contains("non-negative"), "{e}");
}

#[test]
fn bad_sweep_value_stops_the_run_before_any_point_runs() {
    let text = GOOD.replace("\"hypervisor.idle\" = [\"trap\", \"native\"]", "\"hypervisor.idle\" = [\"trap\", \"sometimes\"]");
    let e = point_error(&text);
    assert!(e.contains("hypervisor.idle") && e.contains("sometimes"), "{e}");
}

#[test]
fn unknown_model_and_profile() {
    let sc = parse(&GOOD.replace("model = \"timer-inject\"", "model = \"warp-drive\"")).unwrap();
    let e = run_scenario(&sc, &ScenarioOpts::quiet()).err().unwrap().to_string();
    assert!(e.contains("scenario.model") && e.contains("warp-drive") && e.contains("timer-inject"), "{e}");
    let e = point_error(&GOOD.replace("profile = \"demo-arm64-a53\"", "profile = \"nope\""));
    assert!(e.contains("unknown platform profile `nope`"), "{e}");
}

#[test]
fn empty_sweep_axis_and_missing_sections() {
    let e = parse(&GOOD.replace("[\"trap\", \"native\"]", "[]")).unwrap_err();
    assert!(e.contains("sweep.hypervisor.idle") && e.contains("non-empty array"), "{e}");
    let e = parse("[platform]\nprofile = \"x\"").unwrap_err();
    assert!(e.contains("[scenario]"), "{e}");
    let e = parse("this is not toml").unwrap_err();
    assert!(e.starts_with("bad.toml"), "{e}");
}

/// Issue 27: a big document times many points is refused before one copy per point is made,
/// naming the counts; the sweep with a repeated value is refused naming the axis and the value.
#[test]
fn points_times_document_size_is_bounded_and_sweep_values_are_distinct() {
    let junk: Vec<String> = (0..2_500).map(|i| i.to_string()).collect();
    let periods: Vec<String> = (0..10_000).map(|i| (100 + i).to_string()).collect();
    let text = GOOD
        .replace("cold_rounds = 2", &format!("cold_rounds = 2\njunk = [{}]", junk.join(",")))
        .replace("\"hypervisor.idle\" = [\"trap\", \"native\"]", &format!("\"workload.period_us\" = [{}]", periods.join(",")));
    let sc = parse(&text).unwrap();
    let e = sc.points(1).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("key `sweep`") && e.contains("10000 points × 25"), "{e}");
    let e = parse(&GOOD.replace("[\"trap\", \"native\"]", "[\"trap\", \"native\", \"trap\"]")).unwrap_err();
    assert!(e.contains("key `sweep.hypervisor.idle`") && e.contains("`trap` twice (entries 0 and 2)"), "{e}");
    // The first point of each configuration is what the run prepares first (see runner::probe).
    let e = point_error(&GOOD.replace("cold_rounds = 2", "cold_rounds = 2\nnot_a_key = 1"));
    assert!(e.contains("not_a_key"), "{e}");
}

/// Issue 44 item 4: a scenario that is not TOML, and one whose profile is unusable, keep the
/// toml crate's and the profile's error as their source (they were strings, and the chain
/// ended at ScenarioError); the messages are as before.
#[test]
fn errors_keep_the_toml_and_profile_errors_as_their_source() {
    let e = Scenario::parse("[scenario\nmodel = 1", "bad.toml", "bad", None).unwrap_err();
    assert!(e.to_string().starts_with("bad.toml: TOML parse error at line 1"), "{e}");
    let toml = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<toml::de::Error>()).unwrap_or_else(|| panic!("{e:?}"));
    assert_eq!(toml.span().map(|s| s.start), Some(9), "{toml}");

    let shipped = sim::scenario::shipped_scenario("demo-timer-inject").unwrap();
    let text = shipped.replace("profile = \"demo-arm64-a53\"", "profile = \"no-such-profile\"");
    assert_ne!(text, shipped, "the demo scenario names its profile");
    // The point's platform, resolved as the runner does (validate_scenario gathers every
    // point's problems as text: `ScenarioError::Unusable`).
    let sc = Scenario::parse(&text, "p.toml", "p", None).unwrap();
    let e: ScenarioError = sc.platform(&sc.doc).unwrap_err();
    assert!(e.to_string().starts_with("p.toml: [platform]: "), "{e}");
    assert!(std::error::Error::source(&e).and_then(|s| s.downcast_ref::<sim::platform::PlatformError>()).is_some(), "{e:?}");
}

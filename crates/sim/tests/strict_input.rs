//! Nothing wrong passes silently: every dotted key (sweep axis, `[[configs]]` `set`, `--set`,
//! cost and parameter override) must resolve to a real field, references are validated, and a
//! bad value anywhere stops the run before any point runs.
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::{parse_set, Scenario};

const DEMO: &str = include_str!("../../../scenarios/demo-timer-inject.toml");
const S3: &str = include_str!("../../../scenarios/xen-arm-zynq-timer.toml");

fn opts() -> ScenarioOpts<'static> {
    ScenarioOpts::quiet()
}

fn parse(text: &str) -> Result<Scenario, String> {
    Scenario::parse(text, "bad.toml", "bad", None).map_err(|e| e.to_string())
}

/// The error of a scenario that parses but must not run.
fn run_err(text: &str) -> String {
    let sc = parse(text).unwrap();
    match run_scenario(&sc, &opts()) {
        Err(e) => e.to_string(),
        Ok(out) => panic!("expected a rejection, got {} configurations", out.result.configs.len()),
    }
}

#[test]
fn typo_in_sweep_section_is_a_parse_error() {
    let e = parse(&DEMO.replace("\"hypervisor.idle\" = [", "\"hypervisr.idle\" = [")).unwrap_err();
    assert!(e.contains("bad.toml") && e.contains("hypervisr") && e.contains("did you mean `hypervisor`"), "{e}");
}

#[test]
fn typo_in_swept_field_stops_the_run() {
    let e = run_err(&DEMO.replace("\"hypervisor.idle\" = [", "\"hypervisor.idel\" = ["));
    assert!(e.contains("bad.toml") && e.contains("idel"), "{e}");
}

#[test]
fn typo_in_a_swept_value_stops_the_run() {
    let e = run_err(&DEMO.replace("[\"trap\", \"native\"]", "[\"trapp\", \"native\"]"));
    assert!(e.contains("trapp") && e.contains("hypervisor.idle"), "{e}");
}

#[test]
fn typo_in_config_set_key_stops_the_run() {
    let e = run_err(&S3.replace("set = { \"hypervisor.vwfi\" = \"native\" }", "set = { \"hypervisor.vwfii\" = \"native\" }"));
    assert!(e.contains("vwfii"), "{e}");
    let e = parse(&S3.replace("set = { \"hypervisor.vwfi\" = \"native\" }", "set = { \"hypervisr.vwfi\" = \"native\" }")).unwrap_err();
    assert!(e.contains("configs[1]") && e.contains("hypervisr"), "{e}");
}

#[test]
fn cost_override_must_name_a_cost_the_model_uses() {
    let e = run_err(&S3.replace("[platform.costs.xen_irq_handler]", "[platform.costs.xen_irq_handlr]"));
    assert!(e.contains("platform.costs.xen_irq_handlr") && e.contains("did you mean `xen_irq_handler`"), "{e}");
    let e = run_err(&S3.replace("[platform.params.cold_factor]", "[platform.params.cold_facter]"));
    assert!(e.contains("platform.params.cold_facter") && e.contains("cold_factor"), "{e}");
}

#[test]
fn a_section_the_model_does_not_read_is_an_error() {
    // xen-arm reads [hypervisor] and [workload]; the demo model reads [vm] too.
    let text = S3.replace("[hypervisor]\n", "[[vm]]\nvcpus = 1\n\n[hypervisor]\n");
    let e = run_err(&text);
    assert!(e.contains("vm"), "{e}");
}

#[test]
fn config_set_and_sweep_may_not_set_the_same_key() {
    let text = format!("{S3}\n[sweep]\n\"hypervisor.vwfi\" = [\"trap\", \"native\"]\n");
    let e = parse(&text).unwrap_err();
    assert!(e.contains("configs[0].set.hypervisor.vwfi") && e.contains("swept"), "{e}");
}

#[test]
fn references_are_validated_when_loaded() {
    let e = parse(&S3.replace("config = \"vwfi=trap\"\nclass = \"timer\"\nstat = \"min\"", "config = \"vwfi=trapp\"\nclass = \"timer\"\nstat = \"min\"")).unwrap_err();
    assert!(e.contains("reference[1].config") && e.contains("vwfi=trapp"), "{e}");
    let e = parse(&S3.replacen("value = 4850", "value = nan", 1)).unwrap_err();
    assert!(e.contains("reference[0].value"), "{e}");
    let e = parse(&S3.replacen("tolerance = 0.15", "tolerance = -0.15", 1)).unwrap_err();
    assert!(e.contains("reference[0].tolerance"), "{e}");
    let e = parse(&S3.replacen("role = \"fit\"\n", "", 1)).unwrap_err();
    assert!(e.contains("role"), "{e}");
    let e = parse(&S3.replacen("stat = \"mean\"", "stat = \"average\"", 1)).unwrap_err();
    assert!(e.contains("reference[0].stat") && e.contains("p99.9"), "{e}");
}

#[test]
fn a_reference_to_a_class_the_model_does_not_produce_is_an_error() {
    let e = run_err(&S3.replacen("class = \"timer\"", "class = \"timr\"", 1).replace("samples = 1000", "samples = 50"));
    assert!(e.contains("reference[0]") && e.contains("timr") && e.contains("it has: timer"), "{e}");
}

#[test]
fn references_record_role_and_value_in_the_result() {
    let mut sc = parse(&S3.replace("samples = 1000", "samples = 50")).unwrap();
    sc.select_configs(&["vwfi=native".into()]).unwrap();
    let out = run_scenario(&sc, &opts()).unwrap();
    assert_eq!(out.result.configs.len(), 1);
    assert_eq!(out.result.references.len(), S3.matches("[[reference]]").count());
    let native: Vec<_> = out.result.references.iter().filter(|r| r.config == "vwfi=native").collect();
    assert!(native.iter().all(|r| r.model.is_some()));
    assert!(out.result.references.iter().filter(|r| r.config != "vwfi=native").all(|r| r.not_run()));
    let fits = out.result.references.iter().filter(|r| r.role == results::ReferenceRole::Fit).count();
    assert_eq!(fits, S3.matches("role = \"fit\"").count(), "roles are carried from the file");
    assert!(fits >= 1 && fits < out.result.references.len(), "both roles present");
}

#[test]
fn set_overrides_are_typed_and_strict() {
    let mut sc = parse(S3).unwrap();
    sc.apply_sets(&[parse_set("workload.samples=40").unwrap()]).unwrap();
    let out = run_scenario(&sc, &opts()).unwrap();
    assert_eq!(out.result.configs[0].classes["timer"].summary.count, 40);
    assert_eq!(out.result.configs[0].params["workload.samples"], "40");

    let mut sc = parse(S3).unwrap();
    sc.apply_sets(&[parse_set("workload.sampels=40").unwrap()]).unwrap();
    let e = run_scenario(&sc, &opts()).err().unwrap().to_string();
    assert!(e.contains("sampels"), "{e}");

    let mut sc = parse(S3).unwrap();
    sc.apply_sets(&[parse_set("workload.samples=\"40\"").unwrap()]).unwrap();
    let e = run_scenario(&sc, &opts()).err().unwrap().to_string();
    assert!(e.contains("workload.samples"), "{e}");

    // A key a configuration sets cannot be overridden: the rows would be mislabelled.
    let mut sc = parse(S3).unwrap();
    let e = sc.apply_sets(&[parse_set("hypervisor.vwfi=native").unwrap()]).unwrap_err().to_string();
    assert!(e.contains("set by configuration `vwfi=trap`") && e.contains("--config"), "{e}");
    assert!(parse_set("hypervisr.vwfi=native").is_err());
}

#[test]
fn unknown_config_names_are_rejected_with_a_hint() {
    let mut sc = parse(S3).unwrap();
    let e = sc.select_configs(&["vwfi=nativ".into()]).unwrap_err().to_string();
    assert!(e.contains("did you mean `vwfi=native`"), "{e}");
    let mut sc = parse(DEMO).unwrap();
    assert!(sc.select_configs(&["x".into()]).unwrap_err().to_string().contains("no [[configs]]"));
}

#[test]
fn shards_partition_the_points() {
    let text = include_str!("../../../scenarios/xen-wfi-policy.toml");
    let whole = parse(text).unwrap();
    let all = whole.points(1).unwrap();
    let mut seen = std::collections::BTreeMap::new();
    for i in 1..=4 {
        let mut sc = parse(text).unwrap();
        sc.set_shard(i, 4).unwrap();
        for (idx, p) in sc.points(1).unwrap() {
            assert!(seen.insert(idx, (p.name.clone(), p.seed)).is_none(), "point {idx} in two shards");
        }
    }
    assert_eq!(seen.len(), all.len());
    for (idx, p) in &all {
        assert_eq!(seen[idx], (p.name.clone(), p.seed), "seeds do not depend on sharding");
    }
    let mut sc = parse(text).unwrap();
    assert!(sc.set_shard(0, 4).is_err() && sc.set_shard(5, 4).is_err() && sc.set_shard(1, 0).is_err());
}

#[test]
fn point_count_is_bounded_before_expansion() {
    let axis: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    let mut text = DEMO.replace("[sweep]", "[sweep.unused]");
    text = text.replace("[sweep.unused]\n\"hypervisor.idle\" = [\"trap\", \"native\"]", "");
    text.push_str("\n[sweep]\n");
    for k in ["busy_fraction", "period_us", "samples", "warmup", "cold_rounds", "a", "b", "c", "d", "e"] {
        text.push_str(&format!("\"workload.{k}\" = [{}]\n", axis.join(", ")));
    }
    let sc = parse(&text).unwrap();
    let started = std::time::Instant::now();
    let e = sc.point_count().unwrap_err().to_string();
    assert!(e.contains("10000000000 points") && e.contains("--max-points"), "{e}");
    assert!(run_scenario(&sc, &opts()).is_err());
    assert!(started.elapsed().as_secs() < 5, "the bound is checked before expanding");
}

#[test]
fn huge_costs_are_rejected_not_wrapped() {
    let mut sc = parse(S3).unwrap();
    sc.apply_sets(&[parse_set("platform.costs.xen_irq_handler={ median_ns = 1e300, p99_ns = 1e300, source = \"x\", basis = \"guess\" }").unwrap()]).unwrap();
    let e = run_scenario(&sc, &opts()).err().expect("rejected").to_string();
    assert!(e.contains("platform.costs.xen_irq_handler") && e.contains("at most"), "{e}");
}

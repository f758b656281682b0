//! The KVM PV IPI reproduction (seeds.md S2): published ratios and totals, exit counts per mode,
//! traces, determinism, and bad input.
use sim::runner::{run_scenario, ScenarioOutput, ScenarioOpts};
use sim::scenario::{check_references, set_path, Scenario};


const TEXT: &str = include_str!("../../../scenarios/kvm-pv-ipi-skylake.toml");
const ITER: i64 = 3000;

fn scenario(edit: impl Fn(&mut toml::Table)) -> Scenario {
    let mut doc: toml::Table = toml::from_str(TEXT).unwrap();
    set_path(&mut doc, "workload.iterations", toml::Value::Integer(ITER)).unwrap();
    edit(&mut doc);
    Scenario::parse(&toml::to_string(&doc).unwrap(), "kvm-pv-ipi-skylake.toml", "kvm-pv-ipi-skylake", None).unwrap()
}

fn run(sc: &Scenario, traces: usize) -> ScenarioOutput {
    run_scenario(sc, &ScenarioOpts { seed: None, seeds: None, keep_traces: traces, on_start: &|_| {}, progress: &|_| {} }).unwrap()
}

/// Scale totals published for 100,000 operations to ITER operations.
fn scaled(sc: &Scenario) -> Vec<sim::scenario::Reference> {
    sc.references
        .iter()
        .cloned()
        .map(|mut r| {
            if r.stat.starts_with("figure:") {
                r.value *= ITER as f64 / 100_000.0;
            }
            r
        })
        .collect()
}

#[test]
fn published_ratios_and_totals_are_reproduced() {
    let sc = scenario(|_| {});
    let out = run(&sc, 0);
    for c in &out.result.configs {
        assert!(c.error.is_none(), "{}: {:?}", c.name, c.error);
    }
    let checks = check_references(&sc.file, &scaled(&sc), &out.result).unwrap();
    assert!(checks.len() >= 12);
    for ch in &checks {
        assert!(ch.within(), "{} {} published {} got {:?}", ch.config, ch.stat, ch.published, ch.model);
    }
}

#[test]
fn exit_counts_follow_the_apic_mode() {
    let sc = scenario(|d| {
        d.remove("reference");
        set_path(d, "workload.rows", toml::Value::Array(vec!["broadcast-ipi".into()])).unwrap();
    });
    let out = run(&sc, 0);
    let exits = |name: &str, key: &str| out.result.configs.iter().find(|c| c.name == name).unwrap().counters.get(key).copied().unwrap_or(0);
    let n = ITER as u64;
    assert_eq!(exits("x2apic cluster, vanilla", "exits.icr_write"), 5 * n, "80 IDs / 16 per cluster");
    assert_eq!(exits("x2apic physical, vanilla", "exits.icr_write"), 79 * n, "one per destination");
    assert_eq!(exits("x2apic cluster, pv-ipi", "exits.hypercall"), n, "one 128-ID window");
    assert_eq!(exits("x2apic physical, pv-ipi", "exits.icr_write"), 0);
    assert_eq!(exits("x2apic physical, pv-ipi", "kicks"), 79 * n);
    assert_eq!(exits("x2apic physical, pv-ipi", "exits.eoi"), 0, "APICv: no EOI exits");
}

#[test]
fn traces_show_why_physical_mode_is_slow() {
    let sc = scenario(|d| {
        d.remove("reference");
        set_path(d, "workload.rows", toml::Value::Array(vec!["broadcast-ipi".into()])).unwrap();
    });
    let out = run(&sc, 1);
    let trace = |name: &str| out.traces.iter().find(|t| t.0 == name).unwrap().1[0].clone();
    let phys = trace("x2apic physical, vanilla");
    let pv = trace("x2apic physical, pv-ipi");
    let seg = |t: &sim::engine::Trace, s: &str| t.segments.iter().find(|x| x.0 == s).map(|x| x.1).unwrap();
    // The last destination of a physical-mode broadcast waits behind 78 earlier ICR-write exits;
    // with PV IPI it waits only behind earlier deliveries inside the single hypercall.
    assert!(phys.label.contains("APIC ID 79"), "{}", phys.label);
    assert!(seg(&phys, "earlier-exits-of-this-op").ns() > 100_000, "{}", phys.render());
    assert_eq!(seg(&pv, "earlier-exits-of-this-op").ns(), 0, "{}", pv.render());
    assert!(seg(&pv, "deliver-earlier-destinations").ns() > 50_000, "{}", pv.render());
    assert!(pv.segments.iter().any(|s| s.0 == "pv-ipi-hypercall-exit"));
    assert!(phys.total() > pv.total());
}

#[test]
fn without_apicv_every_eoi_exits_and_costs_time() {
    let base = run(&scenario(|_| {}), 0);
    let no_apicv = run(&scenario(|d| set_path(d, "hypervisor.apicv", false.into()).unwrap()), 0);
    let total = |r: &ScenarioOutput| r.result.configs[0].figures["normal_ipi.total"].value;
    assert!(total(&no_apicv) > total(&base) * 1.1);
    assert!(no_apicv.result.configs[0].counters["exits.eoi"] > 0);
}

#[test]
fn same_seed_same_bytes() {
    let sc = scenario(|d| set_path(d, "workload.iterations", 500.into()).unwrap());
    let a = results::to_json_string(&run(&sc, 0).result);
    let b = results::to_json_string(&run(&sc, 0).result);
    assert_eq!(a, b);
}

#[test]
fn bad_input_names_the_key() {
    let err = |edit: &dyn Fn(&mut toml::Table)| {
        let sc = scenario(edit);
        run_scenario(&sc, &ScenarioOpts { seed: None, seeds: None, keep_traces: 0, on_start: &|_| {}, progress: &|_| {} }).err().expect("rejected").to_string()
    };
    let e = err(&|d| set_path(d, "vm.0.vcpus", 1.into()).unwrap());
    assert!(e.contains("vm[0].vcpus") && e.contains("at least 2"), "{e}");
    let e = err(&|d| set_path(d, "workload.normal_target", 80.into()).unwrap());
    assert!(e.contains("workload.normal_target") && e.contains("1 to 79"), "{e}");
    let e = err(&|d| set_path(d, "vm.0.vcpus", 81.into()).unwrap());
    assert!(e.contains("at most 80 vCPUs"), "{e}");
    let e = err(&|d| set_path(d, "workload.vector", 3.into()).unwrap());
    assert!(e.contains("workload.vector"), "{e}");
}

//! Simulated interrupts per second, one core, for every shipped model (issue 11): each bench
//! runs one configuration of a shipped scenario with a reduced count, single-threaded through
//! the same `run_scenario` the CLI uses. Criterion's "elements" are the latency samples the run
//! records (the interrupts measured), counted from a first run, not assumed from the count set.
//!
//!   cargo bench -p sim --bench models
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::Scenario;

/// (model, shipped scenario, configuration, workload count key, count).
const CASES: &[(&str, &str, &str, &str, i64)] = &[
    ("xen_arm", "xen-arm-zynq-timer", "vwfi=trap", "workload.samples", 100_000),
    ("xen_gicv4", "xen-gicv4-fio", "xen", "workload.completions", 5_000),
    ("kvm_ipi", "kvm-pv-ipi-skylake", "x2apic cluster, vanilla", "workload.iterations", 20_000),
    ("kvm_x86", "kvm-apic-timer-virt", "L1, off", "workload.samples", 50_000),
    ("kvm_arm_fwd", "kvm-arm-forwarded-irq", "", "workload.transactions", 5_000),
    ("timer_inject", "demo-timer-inject", "", "workload.samples", 100_000),
];

fn scenario(name: &str, config: &str, key: &str, count: i64) -> Scenario {
    let mut sc = Scenario::load(name).expect("shipped scenario");
    sc.apply_sets(&[(key.to_string(), toml::Value::Integer(count))]).expect("count key");
    // "" = every point (demo-timer-inject has one; kvm-arm-forwarded-irq sweeps four irq paths).
    if !config.is_empty() {
        sc.select_configs(&[config.to_string()]).expect("configuration");
    }
    sc
}

/// Latency samples recorded by one run (the interrupts a bench iteration simulates).
fn run_once(sc: &Scenario) -> u64 {
    // One seed: a scenario that runs several (`seeds = N`) would simulate N× what the row counts.
    let opts = ScenarioOpts { seeds: Some(1), ..ScenarioOpts::quiet() };
    let out = run_scenario(sc, &opts).expect("scenario runs");
    out.result.configs.iter().flat_map(|c| c.classes.values()).map(|c| c.summary.count).sum()
}

fn models(c: &mut Criterion) {
    // One point per run, so rayon has nothing to spread; pin it to one thread anyway.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut g = c.benchmark_group("model");
    g.sample_size(10);
    for &(model, name, config, key, count) in CASES {
        let sc = scenario(name, config, key, count);
        let interrupts = run_once(&sc);
        assert!(interrupts > 0, "{name}: no samples recorded");
        g.throughput(Throughput::Elements(interrupts));
        g.bench_function(model, |b| b.iter(|| run_once(&sc)));
    }
    g.finish();
}

criterion_group!(benches, models);
criterion_main!(benches);

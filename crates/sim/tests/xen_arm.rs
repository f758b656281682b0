//! The `xen-arm` model: the S3 table is reproduced within its tolerances, runs are
//! deterministic, and the qualitative claims of docs/xen-wfi-policy.md hold on a small grid.
use results::{to_json_string, ConfigResult, RunResult};
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::{set_path, Scenario};

const S3: &str = include_str!("../../../scenarios/xen-arm-zynq-timer.toml");
const WFI: &str = include_str!("../../../scenarios/xen-wfi-policy.toml");

fn run(sc: &Scenario, seed: Option<u64>) -> RunResult {
    let out = run_scenario(sc, &ScenarioOpts { seed, seeds: None, keep_traces: 1, on_start: &|_| {}, progress: &|_| {} }).unwrap();
    for c in &out.result.configs {
        assert!(c.error.is_none(), "{}: {:?}", c.name, c.error);
    }
    out.result
}

/// A scenario text with some keys replaced (dotted keys, TOML values).
fn with(text: &str, sets: &[(&str, &str)]) -> Scenario {
    let mut doc: toml::Table = toml::from_str(text).unwrap();
    for (k, v) in sets {
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

#[test]
fn s3_table_is_reproduced_within_tolerance() {
    let sc = Scenario::parse(S3, "scenarios/xen-arm-zynq-timer.toml", "xen-arm-zynq-timer", None).unwrap();
    let r = run(&sc, None);
    assert_eq!(r.references.len(), 8);
    for c in &r.references {
        assert!(c.within(), "{} {} {}: got {:?}, published {}", c.config, c.class, c.stat, c.model, c.published);
    }
}

#[test]
fn s3_holds_for_other_seeds() {
    let sc = Scenario::parse(S3, "s3.toml", "s3", None).unwrap();
    for seed in [2, 3, 4] {
        let r = run(&sc, Some(seed));
        let bad: Vec<_> = r.references.iter().filter(|c| !c.within()).collect();
        assert!(bad.is_empty(), "seed {seed}: {:?}", bad.iter().map(|c| (&c.config, &c.stat, &c.model)).collect::<Vec<_>>());
    }
}

#[test]
fn same_seed_same_json() {
    let sc = with(WFI, &[("workload.samples", "300"), ("sweep:hypervisor.pcpus", "[2]"), ("sweep:hypervisor.vcpus_per_pcpu", "[2]")]);
    let a = to_json_string(&run(&sc, Some(7)));
    let b = to_json_string(&run(&sc, Some(7)));
    assert_eq!(a, b);
    let c = to_json_string(&run(&sc, Some(8)));
    assert_ne!(a, c);
}

fn point<'a>(r: &'a RunResult, vwfi: &str, other: &str, k: u32) -> &'a ConfigResult {
    r.configs
        .iter()
        .find(|c| {
            c.params["hypervisor.vwfi"] == vwfi
                && c.params["workload.other"] == other
                && c.params["hypervisor.vcpus_per_pcpu"] == k.to_string()
        })
        .unwrap_or_else(|| panic!("no point {vwfi} {other} {k}"))
}

fn p(c: &ConfigResult, stat: &str) -> f64 {
    let s = &c.classes["timer"].summary;
    match stat {
        "p50" => s.p50 as f64,
        "p99" => s.p99 as f64,
        "mean" => s.mean,
        _ => unreachable!(),
    }
}

fn fig(c: &ConfigResult, k: &str) -> f64 {
    c.figures.get(k).map(|f| f.value).unwrap_or(f64::NAN)
}

#[test]
fn wfi_policy_claims_on_a_small_grid() {
    let sc = with(
        WFI,
        &[
            ("workload.samples", "1500"),
            ("sweep:hypervisor.pcpus", "[1]"),
            ("sweep:hypervisor.vcpus_per_pcpu", "[1, 2]"),
        ],
    );
    let r = run(&sc, None);
    // Alone on its pCPU: native beats trap (the S3 result), adaptive equals native.
    for other in ["busy", "idle", "bursty"] {
        let (t, n, a) = (point(&r, "trap", other, 1), point(&r, "native", other, 1), point(&r, "adaptive", other, 1));
        assert!(p(n, "p99") * 2.0 < p(t, "p50"), "{other}: native {} vs trap {}", p(n, "p99"), p(t, "p50"));
        assert!((p(a, "mean") / p(n, "mean") - 1.0).abs() < 0.05, "{other}: adaptive {} vs native {}", p(a, "mean"), p(n, "mean"));
    }
    // Sharing with a busy vCPU: native halves the other guest's throughput and the tbm's tail
    // waits for a time slice; trap and adaptive keep the other guest near its ideal.
    let (t, n, a) = (point(&r, "trap", "busy", 2), point(&r, "native", "busy", 2), point(&r, "adaptive", "busy", 2));
    assert!(fig(n, "other.throughput") < 0.6, "native {}", fig(n, "other.throughput"));
    assert!(fig(t, "other.throughput") > 0.95 && fig(a, "other.throughput") > 0.95);
    assert!(p(n, "p99") > 10.0 * p(t, "p99"), "native p99 {} vs trap {}", p(n, "p99"), p(t, "p99"));
    assert!((p(a, "p50") / p(t, "p50") - 1.0).abs() < 0.1);
    // Sharing with an idle vCPU: trap and adaptive block it; adaptive keeps native latency.
    let (t, a) = (point(&r, "trap", "idle", 2), point(&r, "adaptive", "idle", 2));
    assert!(p(a, "p50") * 2.0 < p(t, "p50"));
    // The adaptive policy flips TWI and kicks sleeping vCPUs when a bursty neighbour wakes.
    let a = point(&r, "adaptive", "bursty", 2);
    assert!(a.counters["vwfi.adaptive_kicks"] > 0 && a.counters["vwfi.twi_switches"] > 0);
    assert_eq!(point(&r, "trap", "bursty", 2).counters["vwfi.twi_switches"], 0);
}

#[test]
fn traces_show_the_interrupt_path() {
    let sc = Scenario::parse(S3, "s3.toml", "s3", None).unwrap();
    let out = run_scenario(&sc, &ScenarioOpts { seed: None, seeds: None, keep_traces: 3, on_start: &|_| {}, progress: &|_| {} }).unwrap();
    let (name, trap) = &out.traces[0];
    assert_eq!(name, "vwfi=trap");
    let segs: Vec<&str> = trap[2].segments.iter().map(|s| s.0).collect();
    for s in ["phys-irq", "idle-wakeup", "xen-irq-handler", "vcpu-wake", "lr-write", "eret", "guest-ack"] {
        assert!(segs.contains(&s), "{segs:?}");
    }
    let native: Vec<&str> = out.traces[1].1[2].segments.iter().map(|s| s.0).collect();
    assert!(native.contains(&"wfi-exit") && native.contains(&"trap-to-el2") && !native.contains(&"vcpu-wake"), "{native:?}");
    assert!(trap[2].render().contains("guest-ack"));
}

#[test]
fn debug_build_multiplier_adds_latency() {
    let base = run(&with(S3, &[("workload.samples", "200")]), None);
    let dbg = run(&with(S3, &[("workload.samples", "200"), ("hypervisor.debug_multiplier", "1.5")]), None);
    for i in 0..2 {
        assert!(dbg.configs[i].classes["timer"].summary.mean > base.configs[i].classes["timer"].summary.mean * 1.2);
    }
}

#[test]
fn bad_input_names_the_key() {
    let err = |sc: Scenario| {
        run_scenario(&sc, &ScenarioOpts { seed: None, seeds: None, keep_traces: 0, on_start: &|_| {}, progress: &|_| {} }).err().expect("rejected").to_string()
    };
    let e = err(with(S3, &[("hypervisor.pcpus", "9")]));
    assert!(e.contains("hypervisor.pcpus") && e.contains("4 CPUs"), "{e}");
    let e = err(with(S3, &[("hypervisor.vcpus_per_pcpu", "2")]));
    assert!(e.contains("workload.other"), "{e}");
    let e = err(with(S3, &[("hypervisor.scheduler", "\"sometimes\"")]));
    assert!(e.contains("hypervisor.scheduler") && e.contains("sometimes"), "{e}");
    let e = err(with(S3, &[("hypervisor.first_pcpu", "4294967295")]));
    assert!(e.contains("hypervisor.pcpus") && e.contains("4294967295 + 1"), "{e}");
    let e = err(with(S3, &[("hypervisor.debug_multiplier", "1e308")]));
    assert!(e.contains("hypervisor.debug_multiplier") && e.contains("100"), "{e}");
    let e = err(with(S3, &[("workload.period_us", "1e9"), ("workload.samples", "20000")]));
    assert!(e.contains("workload.period_us") && e.contains("100 simulated days"), "{e}");
    let e = err(with(S3, &[("workload.samples", "1000000000000")]));
    assert!(e.contains("workload.samples") && e.contains("1..=1000000000"), "{e}");
}

#[test]
fn other_schedulers_run() {
    for s in ["\"null\"", "\"rtds\"", "\"credit2\""] {
        let sc = with(WFI, &[("workload.samples", "200"), ("hypervisor.scheduler", s), ("sweep:hypervisor.pcpus", "[1]"), ("sweep:hypervisor.vcpus_per_pcpu", "[1]")]);
        let r = run(&sc, None);
        assert_eq!(r.configs[0].classes["timer"].summary.count, 200, "{s}");
    }
}

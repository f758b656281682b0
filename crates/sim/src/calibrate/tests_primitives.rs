//! The composition from primitives, on synthetic primitive distributions: every path's predicted
//! p50 moves when a primitive it depends on moves, and stays where it was when the primitive is
//! not on its path; noisy or unusable primitives are refused by name.
use std::collections::BTreeMap;

use results::RunResult;

use super::primitives::{dependence, needed, too_noisy, Prim, Primitives, Source, MAPPING, PATHS, QUANTILES};
use super::*;

/// Median of each synthetic primitive (ns); every quantile is the median × (0.8 … 1.2).
const MEDIANS: &[(&str, f64)] = &[
    ("guest_insn", 600.0),
    ("exit_cpuid", 700.0),
    ("exit_msr", 900.0),
    ("exit_icr", 3000.0),
    ("ioctl_signal_msi", 1500.0),
    ("ioctl_irq_line", 1500.0),
    // Large enough that tripling it moves the kick path (forced_exit_running reads it) by > 3 %.
    ("irqfd_signal", 3000.0),
    ("wake_halt_polled", 14000.0),
    ("wake_halt_blocked", 20000.0),
    ("wake_halt_remote", 60000.0),
    ("eventfd_wake", 3000.0),
    ("hrtimer_spin", 10000.0),
    // The kick of a running vCPU: large enough that forced_exit_running (it less the irqfd write,
    // 6 instructions and the cross-CPU wake) stays positive with wake_halt_remote tripled.
    ("irq_running", 180000.0),
];

fn prim(median: f64) -> Prim {
    Prim::from_quantiles(2000, (0..QUANTILES).map(|i| median * (0.8 + 0.4 * i as f64 / QUANTILES as f64)).collect())
}

fn synthetic(scale: Option<(&str, f64)>) -> Primitives {
    let prims = MEDIANS.iter().map(|(n, m)| (n.to_string(), prim(if scale.is_some_and(|s| s.0 == *n) { m * scale.unwrap().1 } else { *m }))).collect();
    Primitives { file: "synthetic.json".into(), host: "test host".into(), prims }
}

/// (model configuration, class) of each measured path in kvm-x86-host.
fn config_of(path: &str) -> (&'static str, &'static str) {
    match path {
        "timer-hlt" => ("timer hlt", "timer"),
        "timer-hlt-poll0" => ("timer hlt, halt polling off", "timer"),
        "timer-busy" => ("timer busy", "timer"),
        "device-irqfd" => ("device irqfd", "device_irqfd"),
        "device-msi" => ("device msi", "device_msi"),
        "device-line" => ("device line", "device_line"),
        "device-level" => ("device level", "device_level"),
        "ipi-oneway" => ("ipi", "ipi_one_way"),
        "ipi-roundtrip" => ("ipi", "ipi_round_trip"),
        other => panic!("no configuration for {other}"),
    }
}

fn p50s(p: &Primitives) -> BTreeMap<&'static str, f64> {
    let mut sc = Scenario::load("kvm-x86-host").unwrap();
    // A halt-poll window far above every idle time, so that the "host default" configurations
    // poll (PATHS: poll_wake) and only halt_poll_ns = 0 blocks, whatever the synthetic costs do
    // to the idle times (hyp/halt_poll.rs decides poll or block per halt).
    sc.apply_sets(&[
        ("workload.samples".into(), toml::Value::Integer(1000)),
        (
            "platform.params.host_halt_poll_ns".into(),
            toml::from_str::<toml::Table>("v = { value = 10000000, source = \"test: a window above every idle time\", basis = \"guess\" }").unwrap()["v"].clone(),
        ),
    ])
    .unwrap();
    let r: RunResult = run_whole(&p.apply(&sc).unwrap()).unwrap();
    PATHS
        .iter()
        .map(|(path, _)| {
            let (cfg, class) = config_of(path);
            let c = r.configs.iter().find(|c| c.name == cfg).unwrap_or_else(|| panic!("{cfg}"));
            (*path, c.classes[class].summary.p50 as f64)
        })
        .collect()
}

#[test]
fn the_synthetic_set_covers_every_primitive_a_cost_reads() {
    let have: Vec<&str> = MEDIANS.iter().map(|m| m.0).collect();
    assert_eq!(needed(), {
        let mut h = have.clone();
        h.sort_unstable();
        h
    });
    assert_eq!(PATHS.len(), 9, "the nine measured paths");
    // The halted paths' own instructions cancel against the wake-up that contains them.
    assert_eq!(dependence("device-irqfd").get("guest_insn"), Some(&0.0));
    assert_eq!(dependence("timer-busy").get("guest_insn"), Some(&0.0), "5 handler instructions + the entry cancel against the kick that contains them");
    assert_eq!(dependence("timer-busy").get("irq_running"), Some(&1.0), "the forced exit is the kick primitive's");
    assert_eq!(dependence("timer-busy").get("exit_cpuid"), None, "not an instruction exit");
    assert_eq!(dependence("ipi-oneway").get("exit_cpuid"), Some(&0.0), "the ICR exit is exit_icr whole");
    assert_eq!(dependence("ipi-roundtrip").get("exit_icr"), Some(&2.0));
    assert_eq!(dependence("device-msi").get("irqfd_signal"), Some(&-1.0));
}

#[test]
fn a_path_moves_with_its_primitives_and_only_with_them() {
    let base = p50s(&synthetic(None));
    for (name, _) in MEDIANS {
        let moved = p50s(&synthetic(Some((name, 3.0))));
        for (path, _) in PATHS {
            let (b, m) = (base[path], moved[path]);
            let rel = (m - b) / b;
            match dependence(path).get(name) {
                Some(k) if k.abs() > 0.0 => {
                    assert!(rel.abs() > 0.03 && rel.signum() == k.signum(), "{path} must move with {name} (net ×{k}): p50 {b} → {m}");
                }
                Some(_) => assert!(rel.abs() < 0.05, "{path}: {name} cancels on it, yet p50 {b} → {m}"),
                None => assert!(rel.abs() < 0.005, "{path} does not read {name}, yet p50 {b} → {m}"),
            }
        }
    }
}

#[test]
fn costs_are_the_mapped_primitives_with_their_source() {
    let p = synthetic(None);
    let costs: BTreeMap<String, toml::Table> = p.costs().into_iter().collect();
    assert_eq!(costs.len(), MAPPING.len());
    let v = |c: &str| costs[c]["values_ns"].as_array().unwrap().iter().map(|x| x.as_float().unwrap()).collect::<Vec<f64>>();
    // handle_icr_write = exit_icr − exit_cpuid at each quantile: 2300 × (0.8 … 1.2).
    let icr = v("handle_icr_write");
    assert_eq!(icr.len(), QUANTILES);
    assert!((icr[0] - 1840.0).abs() < 0.1 && (icr[QUANTILES / 2] - 2300.0).abs() < 0.1, "{} {}", icr[0], icr[QUANTILES / 2]);
    // block_wake = wake_halt_blocked − irqfd_signal − 6·guest_insn: (20000 − 3000 − 3600) = 13400 at the median.
    assert!((v("block_wake")[QUANTILES / 2] - 13400.0).abs() < 0.1);
    // forced_exit_running = irq_running − irqfd_signal − 6·guest_insn − (wake_halt_remote − wake_halt_polled):
    // 180000 − 3000 − 3600 − 46000 = 127400 at the median.
    assert!((v("forced_exit_running")[QUANTILES / 2] - 127400.0).abs() < 0.1);
    assert!(v("vm_entry_inject").iter().all(|x| *x == 0.0), "inside the wake-up");
    for (cost, t) in &costs {
        assert_eq!(t["basis"].as_str(), Some("measured"), "{cost}");
        let src = t["source"].as_str().unwrap();
        assert!(src.contains("synthetic.json") && src.contains("test host") && src.contains("2000 samples"), "{cost}: {src}");
    }
    assert!(matches!(MAPPING.iter().find(|m| m.0 == "eventfd_signal").unwrap().1, Source::One("irqfd_signal")));
}

#[test]
fn noisy_or_thin_primitives_are_refused_with_the_reason() {
    assert_eq!(too_noisy(&prim(1000.0)), None);
    let thin = Prim { count: 50, ..prim(1000.0) };
    assert!(too_noisy(&thin).unwrap().contains("50 samples"));
    // A 4 ms p99 on a 12 µs median: another thread took the CPU.
    let late = Prim { p50: 12_000.0, p99: 4_000_000.0, ..prim(12_000.0) };
    let why = too_noisy(&late).unwrap();
    assert!(why.contains("333×") && why.contains("quieter host"), "{why}");
    // A sub-µs primitive may have a 20× tail that is still short (a host tick): kept.
    assert_eq!(too_noisy(&Prim { p50: 240.0, p99: 20_000.0, ..prim(240.0) }), None);
    // Blocking cheaper than polling identifies nothing.
    let mut p = synthetic(None);
    p.prims.insert("wake_halt_blocked".into(), prim(10_000.0));
    let e = p.check_wakes().unwrap_err().to_string();
    assert!(e.starts_with("--primitives synthetic.json: primitive `wake_halt_blocked`: too noisy to identify block_wake"), "{e}");
}

#[test]
fn a_result_that_is_not_primitives_is_refused_by_file() {
    let mut r = RunResult::new(results::RunMeta::named("t", "run-timer", 0, results::ResultKind::Measured));
    let mut c = results::ConfigResult::new("timer");
    c.params.insert("bench".into(), "timer".into());
    r.configs.push(c);
    let e = Primitives::read("m.json", &r).unwrap_err().to_string();
    assert!(e.starts_with("--primitives m.json: no configuration with bench = primitives"), "{e}");
    let sim = RunResult::new(results::RunMeta::named("t", "x", 0, results::ResultKind::Predicted));
    assert!(Primitives::read("s.json", &sim).unwrap_err().to_string().contains("a predicted result"));
}

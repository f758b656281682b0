//! The KVM PV IPI reproduction (S2, the KVM PV IPI series, Wanpeng Li, kvm list, 2018): published ratios and totals, exit counts per mode,
//! KVM's halt polling, the Broadcast-lock spinlock, the posted-interrupt paths, traces,
//! determinism, and bad input. Figures are totals over 100,000 operations (`totals_over`) even
//! though the tests run fewer.
use sim::runner::{run_scenario, ScenarioOpts, ScenarioOutput};
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
    run_seed(sc, None, traces)
}

fn run_seed(sc: &Scenario, seed: Option<u64>, traces: usize) -> ScenarioOutput {
    run_scenario(sc, &ScenarioOpts { keep_traces: traces, ..ScenarioOpts::with_seed(seed) }).unwrap()
}

#[test]
fn published_ratios_and_totals_are_reproduced() {
    let sc = scenario(|_| {});
    let out = run(&sc, 0);
    for c in &out.result.configs {
        assert!(c.error.is_none(), "{}: {:?}", c.name, c.error);
    }
    let checks = check_references(&sc.file, &sc.references, &out.result).unwrap();
    assert_eq!(checks.len(), 23);
    for ch in &checks {
        assert!(ch.within(), "{} {} published {} got {:?}", ch.config, ch.stat, ch.published, ch.model);
    }
    // The fit's residuals as documented (docs/kvm-pv-ipi.md): every fitted figure within 8 %.
    for ch in checks.iter().filter(|c| c.role == results::ReferenceRole::Fit) {
        let d = ch.deviation().unwrap();
        assert!(d.abs() < 0.08, "fitted {} {}: residual {:+.1}%", ch.config, ch.stat, d * 100.0);
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
    // A constant would pass the line above: another seed must give other numbers.
    let c = run_seed(&sc, Some(2), 0).result;
    assert_ne!(a, results::to_json_string(&c));
    let total = |r: &results::RunResult| r.configs[0].figures["broadcast_ipi.total"].value;
    assert_ne!(total(&run(&sc, 0).result), total(&c));
}

/// The held-out checks whose mechanism is not the fitted one: Broadcast lock (the IPI plus the
/// spinlock the targets contend for, `kvm_ipi::lock`) in all four modes. Judged at ±20 %, tighter
/// than the scenario's ±25 %, so a lock model that lost (or doubled) the broadcast's cost fails.
/// The ratio = 1 rows (normal IPI vanilla / pv-ipi) hold by construction, and the normal-IPI
/// totals share the fitted row's path, so neither is asserted here.
#[test]
fn broadcast_lock_checks_hold_at_a_tolerance_that_can_fail() {
    let sc = scenario(|_| {});
    let out = run(&sc, 0);
    let checks = check_references(&sc.file, &sc.references, &out.result).unwrap();
    let lock: Vec<_> = checks.iter().filter(|c| c.stat == "figure:broadcast_lock.total").collect();
    assert_eq!(lock.len(), 4);
    for c in &lock {
        assert_eq!(c.role, results::ReferenceRole::Check, "{}", c.config);
        let d = c.deviation().unwrap();
        assert!(d.abs() < 0.20, "{}: broadcast lock {:+.1}% off the published total", c.config, d * 100.0);
    }
}

#[test]
fn bad_input_names_the_key() {
    let err = |edit: &dyn Fn(&mut toml::Table)| {
        let sc = scenario(edit);
        run_scenario(&sc, &ScenarioOpts::quiet()).err().expect("rejected").to_string()
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

fn config<'a>(out: &'a ScenarioOutput, name: &str) -> &'a results::ConfigResult {
    out.result.configs.iter().find(|c| c.name == name).unwrap()
}
fn counter(out: &ScenarioOutput, name: &str, key: &str) -> u64 {
    config(out, name).counters.get(key).copied().unwrap_or(0)
}
fn figure(out: &ScenarioOutput, name: &str, key: &str) -> f64 {
    config(out, name).figures[key].value
}
fn rows(d: &mut toml::Table, rows: &[&str]) {
    d.remove("reference");
    set_path(d, "workload.rows", toml::Value::Array(rows.iter().map(|r| toml::Value::from(*r)).collect())).unwrap();
}

/// Back to the profile's guesses for a polling target (150 ns kick, 650 ns median wake with a
/// spread), undoing the fit's ~0.94 us delivery and ~0 wake.
fn unfitted_polling(d: &mut toml::Table) {
    let mut costs = d["platform"]["costs"].as_table().unwrap().clone();
    costs.remove("deliver_to_polling");
    costs.remove("wake_from_poll");
    set_path(d, "platform.costs", toml::Value::Table(costs)).unwrap();
}

#[test]
fn adaptive_halt_polling_catches_broadcast_targets_a_fixed_50us_window_does_not() {
    // KVM's rule (4.17, x86: max 200 us, grow x2 from 10 us) grows each target's window past
    // its idle time between operations, so almost every kick finds it polling; the first
    // reproduction's fixed 50 us window is shorter than that idle time, so every target blocks.
    // The profile's (unfitted) polling costs: the fit prices a polling delivery above the guessed
    // blocked one (docs/kvm-pv-ipi.md), which says nothing about the rule under test.
    let unfitted = |d: &mut toml::Table| {
        rows(d, &["broadcast-ipi"]);
        unfitted_polling(d);
    };
    let adaptive = run(&scenario(unfitted), 0);
    let fixed = run(
        &scenario(|d| {
            unfitted(d);
            set_path(d, "hypervisor.halt_poll", "fixed".into()).unwrap();
            set_path(d, "hypervisor.halt_poll_ns", 50_000.into()).unwrap();
        }),
        0,
    );
    let n = ITER as u64 * 79;
    for name in ["x2apic cluster, pv-ipi", "x2apic cluster, vanilla"] {
        let polled = counter(&adaptive, name, "halt_poll.success");
        assert!(polled > n * 95 / 100, "{name}: {polled} of {n} kicks found the target polling");
        assert!(counter(&adaptive, name, "halt_poll.grow") >= 79 * 4, "{name}: windows grew from 0 in steps");
        assert_eq!(counter(&fixed, name, "halt_poll.success"), 0, "{name}: a 50 us window misses every broadcast target");
        assert_eq!(counter(&fixed, name, "halt_poll.grow"), 0, "a fixed window never adapts");
        assert!(figure(&fixed, name, "broadcast_ipi.total") > figure(&adaptive, name, "broadcast_ipi.total"));
    }
}

#[test]
fn broadcast_lock_queues_on_the_spinlock_and_pays_line_transfers() {
    // With the fitted costs handlers arrive one ~0.94 us delivery apart with almost no spread, so
    // the lock is nearly never held (docs/kvm-pv-ipi.md); the queue is exercised with the
    // profile's polling costs, where arrivals are ~150 ns apart and the wake-ups spread.
    let lock_rows = |d: &mut toml::Table| {
        rows(d, &["broadcast-ipi", "broadcast-lock"]);
        unfitted_polling(d);
    };
    let base = run(&scenario(lock_rows), 0);
    // Contention removed: a critical section and line transfers that cost nothing.
    let free = run(
        &scenario(|d| {
            lock_rows(d);
            for k in ["lock_hold", "line_transfer_same_socket", "line_transfer_cross_socket"] {
                fixed_cost(d, k, 0);
            }
        }),
        0,
    );
    for name in ["x2apic cluster, pv-ipi", "x2apic physical, pv-ipi"] {
        let (lock, bcast) = (figure(&base, name, "broadcast_lock.total"), figure(&base, name, "broadcast_ipi.total"));
        let wait = figure(&base, name, "broadcast_lock.lock_wait");
        assert!(counter(&base, name, "lock.contended") > ITER as u64, "{name}: handlers found the lock held");
        assert!(wait > 0.0, "{name}: handlers waited for the lock");
        // The lock row must cost more than the plain broadcast by at least the transfers of the
        // last handlers queued behind each other (79 acquisitions, each >= one transfer).
        assert!(lock > bcast * 1.005, "{name}: lock {lock} vs broadcast {bcast}");
        let (lock0, bcast0) = (figure(&free, name, "broadcast_lock.total"), figure(&free, name, "broadcast_ipi.total"));
        assert_eq!(figure(&free, name, "broadcast_lock.lock_wait"), 0.0, "{name}: no contention without a hold");
        assert!(((lock0 - bcast0) / bcast0).abs() < 0.002, "{name}: without contention the rows agree: {lock0} vs {bcast0}");
        assert!(lock - bcast > 2.0 * (lock0 - bcast0).abs(), "{name}: the difference comes from the lock");
    }
}

/// A cost of exactly `ns`.
fn fixed_cost(d: &mut toml::Table, name: &str, ns: i64) {
    let mut t = toml::Table::new();
    t.insert("ns".into(), ns.into());
    t.insert("source".into(), "test".into());
    t.insert("basis".into(), "guess".into());
    set_path(d, &format!("platform.costs.{name}"), toml::Value::Table(t)).unwrap();
}

#[test]
fn a_burst_of_handlers_queues_behind_each_other_on_the_lock() {
    // KVM's deliveries made free: the 79 handlers arrive within the wake-ups' spread, so the
    // last one to get the lock waits for most of the others' line transfers and holds. Without
    // the queue (each handler starting at its arrival) the row would differ from Broadcast by one
    // transfer + hold (~0.1-0.2 us per operation).
    let out = run(
        &scenario(|d| {
            rows(d, &["broadcast-ipi", "broadcast-lock"]);
            unfitted_polling(d);
            d.remove("configs");
            set_path(d, "hypervisor.pv_ipi", true.into()).unwrap();
            fixed_cost(d, "deliver_to_polling", 0);
        }),
        0,
    );
    let c = &out.result.configs[0];
    let per_op = (c.figures["broadcast_lock.total"].value - c.figures["broadcast_ipi.total"].value) / 100_000.0;
    // 78 acquisitions queued behind the first, each at least a same-socket transfer (60 ns median);
    // half of that as the bound.
    assert!(per_op > 78.0 * 60.0 / 2.0, "lock row adds {per_op} ns per operation");
}

#[test]
fn cross_socket_line_transfers_cost_more_than_same_socket_ones() {
    let with = |ns: i64| {
        run(
            &scenario(|d| {
                rows(d, &["broadcast-lock"]);
                unfitted_polling(d);
                d.remove("configs");
                set_path(d, "hypervisor.pv_ipi", true.into()).unwrap();
                fixed_cost(d, "line_transfer_cross_socket", ns);
            }),
            0,
        )
        .result
        .configs[0]
            .figures["broadcast_lock.lock_wait"]
            .value
    };
    assert!(with(600) > with(130) * 1.5, "a slower UPI transfer lengthens the lock queue");
}

#[test]
fn targets_in_guest_mode_take_the_posted_interrupt_notification_path() {
    let one = |posted: bool| {
        let sc = scenario(|d| {
            rows(d, &["broadcast-ipi"]);
            d.remove("configs");
            set_path(d, "hypervisor.pv_ipi", true.into()).unwrap();
            set_path(d, "hypervisor.hlt_exits", false.into()).unwrap();
            set_path(d, "hypervisor.posted_interrupts", posted.into()).unwrap();
        });
        run(&sc, 1)
    };
    let n = ITER as u64 * 79;
    let pi = one(true);
    let c = &pi.result.configs[0];
    assert_eq!(c.counters.get("pi.notifications").copied(), Some(n), "every destination: PIR + ON + notification vector");
    for absent in ["exits.hlt", "halt_poll.success", "wakeups", "exits.kick"] {
        assert!(!c.counters.contains_key(absent), "{absent}: a target in guest mode neither halts nor exits");
    }
    let trace = &pi.traces[0].1[0];
    let segs: Vec<&str> = trace.segments.iter().map(|s| s.0).collect();
    assert_eq!(segs.last(), Some(&"pi-notification-to-handler"), "{}", trace.render());
    let kick = one(false);
    let k = &kick.result.configs[0];
    assert_eq!(k.counters.get("exits.kick").copied(), Some(n), "without posted interrupts each target is kicked out");
    assert!(!k.counters.contains_key("pi.notifications"));
    assert!(k.figures["broadcast_ipi.total"].value > c.figures["broadcast_ipi.total"].value, "an exit costs more than a notification");
}

#[test]
fn cluster_and_physical_differ_in_icr_decoding_not_in_the_pv_hypercall() {
    let out = run(&scenario(|d| rows(d, &["normal-ipi", "broadcast-ipi"])), 0);
    let n = ITER as u64;
    // Unicasts keep the mode's ICR write: logical (cluster table) in cluster mode, with or without PV.
    assert_eq!(counter(&out, "x2apic cluster, vanilla", "icr.logical_decode"), n + 5 * n);
    assert_eq!(counter(&out, "x2apic cluster, pv-ipi", "icr.logical_decode"), n, "only the Normal IPI writes the ICR");
    assert_eq!(counter(&out, "x2apic physical, vanilla", "icr.logical_decode"), 0);
    assert_eq!(counter(&out, "x2apic physical, pv-ipi", "icr.logical_decode"), 0);
    // kvm_pv_send_ipi indexes phys_map in both modes: the same broadcast path.
    let (c, p) = (figure(&out, "x2apic cluster, pv-ipi", "broadcast_ipi.total"), figure(&out, "x2apic physical, pv-ipi", "broadcast_ipi.total"));
    assert!(((c - p) / p).abs() < 0.01, "PV broadcast: cluster {c} vs physical {p}");
    assert!(figure(&out, "x2apic cluster, pv-ipi", "normal_ipi.total") > figure(&out, "x2apic physical, pv-ipi", "normal_ipi.total"));
}

#[test]
fn fixed_window_needs_a_window_and_windows_are_bounded() {
    let err = |edit: &dyn Fn(&mut toml::Table)| run_scenario(&scenario(edit), &ScenarioOpts::quiet()).err().expect("rejected").to_string();
    let e = err(&|d| set_path(d, "hypervisor.halt_poll", "fixed".into()).unwrap());
    assert!(e.contains("hypervisor.halt_poll_ns") && e.contains("fixed"), "{e}");
    let e = err(&|d| set_path(d, "hypervisor.halt_poll_ns", 1_000_000_000.into()).unwrap());
    assert!(e.contains("hypervisor.halt_poll_ns"), "{e}");
    let e = err(&|d| set_path(d, "workload.totals_over", 0.into()).unwrap());
    assert!(e.contains("workload.totals_over"), "{e}");
}

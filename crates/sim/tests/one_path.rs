//! One path, one model (issue 43, item 3): the S3 model (`xen-arm`) and the dom0less model
//! (`xen-arm-dom0less`) describe the same Xen path for a virtual-timer interrupt to a running vCPU
//! (arrival, trap to EL2, `vtimer_interrupt` → `vgic_inject_irq`, one list-register write, eret).
//! Run on the same board, they charge the same segments with the same costs; the end-to-end
//! latencies differ only by the segment after `eret`, which the two benchmarks define differently
//! (tbm stops at its IAR read, the dom0less bench at the handler's first instruction).
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::Scenario;

const S3: &str = include_str!("../../../scenarios/xen-arm-zynq-timer.toml");
const DOM0LESS: &str = include_str!("../../../scenarios/xen-arm-a53-dom0less.toml");

fn run(text: &str, name: &str) -> results::RunResult {
    let sc = Scenario::parse(text, &format!("{name}.toml"), name, None).unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&sc, &ScenarioOpts::quiet()).unwrap_or_else(|e| panic!("{e}")).result
}

/// Mean ns per segment of `class` in configuration `config`.
fn segments(r: &results::RunResult, config: &str, class: &str) -> Vec<(String, f64)> {
    let c = r.configs.iter().find(|c| c.name == config).unwrap_or_else(|| panic!("no config {config}"));
    c.breakdown[class].iter().map(|s| (s.segment.clone(), s.mean_ns)).collect()
}

fn mean(r: &results::RunResult, config: &str, class: &str) -> f64 {
    r.configs.iter().find(|c| c.name == config).unwrap().classes[class].summary.mean
}

/// S3's scenario with its tbm on the virtual timer, spinning (a running vCPU), null scheduler,
/// one configuration, 4000 rounds, one seed.
fn s3_virtual() -> String {
    let mut s = S3.replace("seeds = 8", "seeds = 1").replace("samples = 1000", "samples = 4000").replace("period_us = 500000", "period_us = 10000");
    // Null: no scheduler tick (credit2's fitted do_schedule is then unused: drop its override).
    let c2 = s.find("[platform.costs.credit2_schedule]").unwrap();
    let c2_end = c2 + s[c2..].find("[platform.params.cold_factor]").unwrap();
    s.replace_range(c2..c2_end, "");
    s = s.replace("scheduler = \"credit1\"", "scheduler = \"null\"").replace("timer = \"physical\"", "timer = \"virtual\"").replace("tbm_idle = \"wfi\"", "tbm_idle = \"spin\"");
    // One configuration; S3's configurations, references and questions are dropped.
    let cut = s.find("[[configs]]").unwrap();
    format!("{}[[configs]]\nname = \"running\"\nset = {{ \"hypervisor.vwfi\" = \"native\" }}\n", &s[..cut])
}

#[test]
fn s3_and_dom0less_charge_the_same_vtimer_path() {
    let s3 = run(&s3_virtual(), "s3-virtual");
    let d = run(&DOM0LESS.replace("samples = 10000", "samples = 4000"), "dom0less");
    let a = segments(&s3, "running", "timer");
    let b = segments(&d, "xen", "timer");
    let names = |v: &[(String, f64)]| v.iter().map(|s| s.0.clone()).collect::<Vec<_>>();
    // The shared part, in order: arrival, trap, the one handler, LR write, eret.
    let shared_a: Vec<String> = names(&a).into_iter().filter(|n| n != "guest-ack").collect();
    let shared_b: Vec<String> = names(&b).into_iter().filter(|n| n != "guest-vector").collect();
    assert_eq!(shared_a[1..], shared_b[1..], "segments after the arrival differ: {a:?} vs {b:?}");
    assert!(shared_a.contains(&"vtimer_interrupt+vgic_inject_irq".to_string()), "{a:?}");
    for (x, y) in a.iter().filter(|s| s.0 != "guest-ack").zip(b.iter().filter(|s| s.0 != "guest-vector")) {
        // Same cost distribution, different draws (4000 samples, first round cold in both).
        assert!((x.1 / y.1 - 1.0).abs() < 0.03, "{} {:.1} ns vs {} {:.1} ns", x.0, x.1, y.0, y.1);
    }
    // End to end: the difference is the benchmarks' endpoints (guest_ack − guest_exception_entry).
    let ack = a.iter().find(|s| s.0 == "guest-ack").unwrap().1;
    let vector = b.iter().find(|s| s.0 == "guest-vector").unwrap().1;
    let diff = mean(&s3, "running", "timer") - mean(&d, "xen", "timer");
    assert!((diff - (ack - vector)).abs() < 30.0, "S3-virtual − dom0less = {diff:.0} ns, endpoints differ by {:.0} ns", ack - vector);
}

#[test]
fn s3_physical_timer_keeps_its_softirq_path() {
    // The same run on the physical timer charges the full handler: the softirq share is the
    // difference, as `xen_core::timer_path` defines it.
    let phys = s3_virtual().replace("timer = \"virtual\"", "timer = \"physical\"");
    let p = run(&phys, "s3-physical");
    let v = run(&s3_virtual(), "s3-virtual");
    let h = |r: &results::RunResult, n: &str| segments(r, "running", "timer").into_iter().find(|s| s.0 == n).unwrap_or_else(|| panic!("no {n}")).1;
    let ratio = h(&v, "vtimer_interrupt+vgic_inject_irq") / h(&p, "xen-irq-handler");
    assert!((ratio - 0.65).abs() < 0.03, "virtual/physical handler = {ratio:.3}, profile share 0.35");
}

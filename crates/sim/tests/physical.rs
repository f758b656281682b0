//! Issue 43, items 4 and 5: the x86 sender's ICR-write exit follows KVM's path for each APIC
//! access kind; a timer period shorter than its path, or a board without a clock, is refused
//! (exit 2 naming the key), never timed as if it fit.
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::Scenario;

const XEN: &str = include_str!("../../../scenarios/xen-arm-a53-dom0less.toml");
const IPIV: &str = include_str!("../../../scenarios/kvm-x86-ipiv.toml");
const ZYNQ: &str = include_str!("../platforms/zynq-ultrascale-a53.toml");

fn parse(text: &str, dir: Option<std::path::PathBuf>) -> Scenario {
    Scenario::parse(text, "p.toml", "p", dir).unwrap_or_else(|e| panic!("{e}"))
}

fn rejected(sc: &Scenario) -> String {
    match run_scenario(sc, &ScenarioOpts::quiet()) {
        Err(e) => e.to_string(),
        Ok(out) => panic!("expected a rejection, got {} configurations", out.result.configs.len()),
    }
}

fn small_xen() -> String {
    XEN.replace("samples = 10000", "samples = 300")
}

#[test]
fn a_period_shorter_than_the_timer_path_is_refused() {
    let e = rejected(&parse(&small_xen().replace("period_us = 10000", "period_us = 1"), None));
    assert!(e.contains("workload.period_us") && e.contains("longer than the timer path"), "{e}");
    // Just above the cold path (3.14 µs: the census's vtimer path with S3's cold factor) it runs.
    let r = run_scenario(&parse(&small_xen().replace("period_us = 10000", "period_us = 3.2"), None), &ScenarioOpts::quiet()).unwrap();
    assert!(r.result.configs.iter().all(|c| c.error.is_none()));
}

#[test]
fn a_board_without_a_counter_is_refused_and_latencies_are_whole_ticks() {
    let dir = std::env::temp_dir().join(format!("irqlab-physical-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let start = ZYNQ.find("[params.counter_mhz]").unwrap();
    let end = start + ZYNQ[start..].find("[params.l2_evict").unwrap();
    std::fs::write(dir.join("noclock.toml"), format!("{}{}", &ZYNQ[..start], &ZYNQ[end..])).unwrap();
    let text = small_xen().replace("profile = \"zynq-ultrascale-a53\"", "profile = \"noclock.toml\"");
    let e = rejected(&parse(&text, Some(dir.clone())));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(e.contains("params.counter_mhz"), "{e}");
    // A 1 MHz counter: every timer latency is a whole µs.
    let slow = small_xen().replacen("[hypervisor]", "[platform.params.counter_mhz]\nvalue = 1\nsource = \"test: a 1 MHz counter\"\nbasis = \"guess\"\n\n[hypervisor]", 1);
    let r = run_scenario(&parse(&slow, None), &ScenarioOpts::quiet()).unwrap().result;
    for c in &r.configs {
        let t = &c.classes["timer"].summary;
        for v in [t.min, t.max, t.p50] {
            assert_eq!(v % 1000, 0, "{}: {v} ns is not whole 1 µs ticks", c.name);
        }
    }
}

fn cycles(r: &results::RunResult, config: &str, class: &str) -> f64 {
    let c = r.configs.iter().find(|c| c.name == config).unwrap_or_else(|| panic!("no {config}"));
    c.figures[&format!("{class}.cycles")].value
}

#[test]
fn the_icr_exit_follows_kvms_path_per_access_kind() {
    let base = IPIV.replace("iterations = 20000", "iterations = 500");
    let r = run_scenario(&parse(&base, None), &ScenarioOpts::quiet()).unwrap().result;
    let x2 = cycles(&r, "ipiv=off, apic_mode=x2apic-physical", "ipi_x2apic");
    let xa = cycles(&r, "ipiv=off, apic_mode=xapic-physical", "ipi_xapic");
    // x2APIC: 1065 − 250 + 100 cycles; xAPIC with APICv: 1065 + 100 + 100: 350 cycles apart.
    assert!((xa - x2 - 350.0).abs() < 60.0, "xAPIC − x2APIC = {:.0} cycles", xa - x2);
    // Without APICv the xAPIC page is emulated: two exits with decode, far above.
    let no_apicv = base.replace("apicv = true", "apicv = false").replace("posted_interrupts = true", "posted_interrupts = false");
    let no_apicv = no_apicv.replace("[[configs]]\nname = \"ipiv=on\"\nset = { \"hypervisor.ipiv\" = true }\n", "");
    let r2 = run_scenario(&parse(&no_apicv, None), &ScenarioOpts::quiet()).unwrap().result;
    let xe = cycles(&r2, "ipiv=off, apic_mode=xapic-physical", "ipi_xapic");
    assert!(xe - xa > 2.0 * 1065.0, "emulated xAPIC {xe:.0} vs APICv {xa:.0} cycles");
    // The fitted costing is still there for S2's kernel, and a bad value names the key.
    let e = rejected(&parse(&base.replace("icr_exit = \"kvm-fastpath\"", "icr_exit = \"fast\""), None));
    assert!(e.contains("icr_exit") && e.contains("kvm-fastpath"), "{e}");
    let e = rejected(&parse(&base.replace("icr_exit = \"kvm-fastpath\"", "icr_exit = \"fitted\""), None));
    assert!(e.contains("icr_write_exit"), "S2's lumped exit is not in this profile: {e}");
}

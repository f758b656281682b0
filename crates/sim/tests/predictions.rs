//! The issue-35 prediction scenarios: they run, their new keys are validated like every scenario
//! key (exit 2 naming the key and the accepted values), the mechanisms show in the results the
//! way the kernel and hypervisor source says they must, and the output is byte-identical for the
//! same scenario and seed.
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::Scenario;

const SGI: &str = include_str!("../../../scenarios/kvm-arm64-sgi-scaling.toml");
const IPIV: &str = include_str!("../../../scenarios/kvm-x86-ipiv.toml");
const XEN: &str = include_str!("../../../scenarios/xen-arm-a53-dom0less.toml");

fn opts() -> ScenarioOpts<'static> {
    ScenarioOpts::quiet()
}

fn run(text: &str) -> results::RunResult {
    let sc = Scenario::parse(text, "p.toml", "p", None).unwrap();
    run_scenario(&sc, &opts()).unwrap().result
}

/// The error of a scenario that must not run (the CLI exits 2 on any such error), and 2.
fn rejected(text: &str) -> (String, i32) {
    let sc = match Scenario::parse(text, "bad.toml", "bad", None) {
        Ok(sc) => sc,
        Err(e) => return (e.to_string(), 2),
    };
    match run_scenario(&sc, &opts()) {
        Err(e) => (e.to_string(), 2),
        Ok(out) => panic!("expected a rejection, got {} configurations", out.result.configs.len()),
    }
}

fn cfg<'a>(r: &'a results::RunResult, name: &str) -> &'a results::ConfigResult {
    r.configs.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no config {name}: {:?}", r.configs.iter().map(|c| &c.name).collect::<Vec<_>>()))
}

fn fig(c: &results::ConfigResult, k: &str) -> f64 {
    c.figures.get(k).unwrap_or_else(|| panic!("{}: no figure {k}", c.name)).value
}

/// Small versions of the shipped scenarios (fewer samples), same mechanisms.
fn small_sgi() -> String {
    SGI.replace("samples = 5000", "samples = 200").replace("iterations = 20000", "iterations = 500")
}

#[test]
fn sgi_walk_grows_with_target_index_table_does_not() {
    let r = run(&small_sgi());
    let d = |lookup: &str, board: &str, vcpus: u32, target: u32| fig(cfg(&r, &format!("{lookup}, board={board}, vcpus={vcpus}, target={target}")), "dispatch_ns");
    for board in ["neoverse-n1", "kunpeng-920"] {
        assert!(d("walk", board, 64, 1) < d("walk", board, 64, 15) && d("walk", board, 64, 15) < d("walk", board, 64, 31) && d("walk", board, 64, 31) < d("walk", board, 64, 63));
        let t: Vec<f64> = [1, 15, 31, 63].iter().map(|t| d("table", board, 64, *t)).collect();
        assert!(t.iter().all(|x| (x - t[0]).abs() < 1e-9), "{board}: table dispatch depends on the index: {t:?}");
        // The walk stops at its target: the VM's size beyond it does not matter.
        assert_eq!(d("walk", board, 2, 1), d("walk", board, 64, 1));
        // The benchmark total follows the dispatch.
        let n = |l: &str, t: u32| fig(cfg(&r, &format!("{l}, board={board}, vcpus=32, target={t}")), "normal_ipi.total");
        assert!(n("walk", 31) > n("walk", 1) && n("walk", 31) > n("table", 31));
    }
    // The slower clock pays more for the same cycles.
    assert!(d("walk", "kunpeng-920", 64, 63) > d("walk", "neoverse-n1", 64, 63));
    // A target the VM does not have: nothing delivered, no latency, the walk visits the whole VM.
    let miss = cfg(&r, "walk, board=neoverse-n1, vcpus=16, target=31");
    assert_eq!((fig(miss, "delivered"), fig(miss, "mpidr_walk_visits")), (0.0, 16.0));
    assert!(!miss.classes.contains_key("ipi"));
}

#[test]
fn ipiv_removes_the_sender_exit_for_physical_unicasts() {
    let r = run(&IPIV.replace("iterations = 20000", "iterations = 300"));
    for mode in ["xapic-physical", "x2apic-physical"] {
        let off = cfg(&r, &format!("ipiv=off, apic_mode={mode}"));
        let on = cfg(&r, &format!("ipiv=on, apic_mode={mode}"));
        assert!(off.counters.get("exits.icr_write").copied().unwrap_or(0) > 0);
        assert_eq!(on.counters.get("exits.icr_write"), None, "{mode}: IPIv left ICR-write exits");
        assert!(on.counters["ipiv.posted"] > 0);
        let class = if mode.starts_with("x2") { "ipi_x2apic" } else { "ipi_xapic" };
        assert!(fig(on, &format!("{class}.cycles")) < fig(off, &format!("{class}.cycles")));
        assert!(fig(on, "broadcast_ipi.total") < fig(off, "broadcast_ipi.total"));
    }
    // xAPIC's APIC-write exit costs more than x2APIC's WRMSR exit; with IPIv both are posted alike.
    let c = |n: &str, k: &str| fig(cfg(&r, n), k);
    assert!(c("ipiv=off, apic_mode=xapic-physical", "ipi_xapic.cycles") > c("ipiv=off, apic_mode=x2apic-physical", "ipi_x2apic.cycles"));
}

#[test]
fn ipiv_does_not_virtualize_a_cluster_mode_multicast() {
    // x2APIC cluster: the broadcast is a logical ICR write — IPIv does not apply, it still exits.
    let text = IPIV
        .replace("iterations = 20000", "iterations = 200")
        .replace("\"hypervisor.apic_mode\" = [\"xapic-physical\", \"x2apic-physical\"]", "\"hypervisor.apic_mode\" = [\"x2apic-cluster\"]")
        .replace("rows = [\"vmexit-ipi\", \"normal-ipi\", \"broadcast-ipi\", \"broadcast-lock\"]", "rows = [\"broadcast-ipi\"]");
    let text = &text[..text.find("[[question]]").unwrap()];
    let r = run(text);
    let on = cfg(&r, "ipiv=on, apic_mode=x2apic-cluster");
    assert!(on.counters["exits.icr_write"] > 0);
    assert_eq!(on.counters.get("ipiv.posted"), None);
}

#[test]
fn xen_dom0less_costs_more_than_native_and_the_sender_trap_is_inside_the_ipi() {
    let r = run(&XEN.replace("samples = 10000", "samples = 500"));
    let (n, x) = (cfg(&r, "native"), cfg(&r, "xen"));
    for class in ["timer", "ipi"] {
        assert!(x.classes[class].summary.mean > n.classes[class].summary.mean, "{class}");
    }
    assert!(fig(x, "sender_trap") < x.classes["ipi"].summary.mean);
    assert!(!n.figures.contains_key("sender_trap"));
    // The Xen timer path is the census's: a census counting a longer path makes the timer slower
    // and leaves the IPI alone; a census of another path is refused naming the file and the key.
    let mut v: serde_json::Value = serde_json::from_str(include_str!("../census/lab/xen-timer-credit2-native.json")).unwrap();
    let timer = &mut v["census"]["classes"]["timer"];
    timer["insns"] = serde_json::json!({"median": 1807.0, "min": 1807, "max": 1807});
    timer["by_el"]["EL2"] = 36120.into();
    timer["functions"].as_array_mut().unwrap().push(serde_json::json!({"side": "hyp", "name": "padding", "el": "EL2", "insns": 18060}));
    let longer = std::env::temp_dir().join(format!("irqlab-census-longer-{}.json", std::process::id()));
    std::fs::write(&longer, v.to_string()).unwrap();
    let with = |census: &str| XEN.replace("samples = 10000", "samples = 500").replace("[hypervisor]", &format!("[census]\n\"xen-vtimer-running\" = {census:?}\n\n[hypervisor]"));
    let slower = run(&with(longer.to_str().unwrap()));
    std::fs::remove_file(&longer).unwrap();
    assert!(cfg(&slower, "xen").classes["timer"].summary.mean > x.classes["timer"].summary.mean + 500.0);
    assert_eq!(cfg(&slower, "xen").classes["ipi"].summary, x.classes["ipi"].summary, "the IPI path has no timer");
    let (e, code) = rejected(&with("xen-timer-credit2-trap"));
    assert!(e.contains("bad.toml: [census]: crates/sim/census/lab/xen-timer-credit2-trap.json: key `lab_run.params.vwfi`") && code == 2, "{e}");
}

#[test]
fn same_scenario_and_seed_give_byte_identical_output() {
    for text in [small_sgi(), IPIV.replace("iterations = 20000", "iterations = 300"), XEN.replace("samples = 10000", "samples = 500")] {
        let a = results::to_json_string(&run(&text));
        let b = results::to_json_string(&run(&text));
        assert_eq!(a, b);
    }
}

#[test]
fn new_keys_reject_unknown_values_naming_the_key_and_the_accepted_ones() {
    let (e, code) = rejected(&SGI.replace("\"hypervisor.mpidr_lookup\" = \"table\"", "\"hypervisor.mpidr_lookup\" = \"hash\""));
    assert!(e.contains("mpidr_lookup") && e.contains("walk") && e.contains("table") && code == 2, "{e} ({code})");
    let (e, code) = rejected(
        &SGI.replace("board = \"neoverse-n1\"\n", "board = \"graviton9\"\n")
            .replace("\"platform.board\" = [\"neoverse-n1\", \"kunpeng-920\"]", "\"platform.board\" = [\"graviton9\"]"),
    );
    assert!(e.contains("platform.board") && e.contains("neoverse-n1") && e.contains("kunpeng-920") && code == 2, "{e} ({code})");
    let (e, code) = rejected(&SGI.replace("target = 1\n", "target = 0\n").replace("\"workload.target\" = [1, 15, 31, 63]", "\"workload.target\" = [0]"));
    assert!(e.contains("workload.target") && code == 2, "{e} ({code})");
    let (e, code) = rejected(&IPIV.replace("\"hypervisor.ipiv\" = true", "\"hypervisor.ipiv\" = \"yes\""));
    assert!(e.contains("ipiv") && code == 2, "{e} ({code})");
    let (e, code) = rejected(&IPIV.replace("posted_interrupts = true", "posted_interrupts = false"));
    assert!(e.contains("hypervisor.ipiv") && e.contains("posted_interrupts") && code == 2, "{e} ({code})");
    let (e, code) = rejected(&XEN.replace("scheduler = \"null\"", "scheduler = \"credit2\""));
    assert!(e.contains("hypervisor.scheduler") && e.contains("null") && code == 2, "{e} ({code})");
    let (e, code) = rejected(&XEN.replace("\"hypervisor.kind\" = \"xen\"", "\"hypervisor.kind\" = \"kvm\""));
    assert!(e.contains("kind") && e.contains("none") && e.contains("xen") && code == 2, "{e} ({code})");
}

#[test]
fn ipiv_to_a_blocked_target_still_goes_through_kvm_on_the_target_side() {
    // A poll window of 0: every target has blocked when the IPI comes. IPIv still spares the
    // sender its exit, but each delivery is a wake-up through KVM (wake-up vector, handler).
    let base = IPIV.replace("iterations = 20000", "iterations = 200").replace("halt_poll = \"linux-5.1\"", "halt_poll = \"fixed\"\nhalt_poll_ns = 0");
    let base = &base[..base.find("[[question]]").unwrap()];
    let r = run(base);
    let on = cfg(&r, "ipiv=on, apic_mode=x2apic-physical");
    let off = cfg(&r, "ipiv=off, apic_mode=x2apic-physical");
    assert_eq!(on.counters.get("exits.icr_write"), None);
    assert!(on.counters["wakeups"] > 0 && !on.counters.contains_key("halt_poll.success"));
    // The wake-up dominates: IPIv saves the sender's exit and KVM's delivery, not the wake-up.
    let saved = fig(off, "ipi_x2apic.cycles") - fig(on, "ipi_x2apic.cycles");
    assert!(saved > 0.0 && saved < fig(off, "ipi_x2apic.cycles") * 0.5, "saved {saved} cycles");
}

#[test]
fn a_board_profile_with_an_impossible_clock_is_rejected_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("irqlab-pred-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prof = include_str!("../platforms/neoverse-n1.toml").replace("cpu_ghz = 3.0", "cpu_ghz = 0");
    std::fs::write(dir.join("n1-bad.toml"), prof).unwrap();
    let text = small_sgi().replace("board = \"neoverse-n1\"\n", "profile = \"n1-bad.toml\"\n").replace("\"platform.board\" = [\"neoverse-n1\", \"kunpeng-920\"]\n", "");
    let sc = Scenario::parse(&text, "p.toml", "p", Some(dir.clone())).unwrap();
    let e = run_scenario(&sc, &opts()).err().expect("a zero clock must be rejected").to_string();
    std::fs::remove_dir_all(&dir).ok();
    assert!(e.contains("cpu_ghz"), "{e}");
}

//! The `kvm-x86` model: determinism, every timer fallback rule visible on the path, exit counts
//! of each device path, halt-poll grow/shrink, IPI exits, and bad input.
use results::ConfigResult;
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::{set_path, Scenario};

const S5: &str = include_str!("../../../scenarios/kvm-apic-timer-virt.toml");
const HOST: &str = include_str!("../../../scenarios/kvm-x86-host.toml");
const N: i64 = 400;

/// One point of the S5 scenario's base document with `sets` applied (no configs, no sweep).
fn point(base: &str, sets: &[(&str, toml::Value)]) -> ConfigResult {
    let mut doc: toml::Table = toml::from_str(base).unwrap();
    doc.remove("configs");
    doc.remove("sweep");
    set_path(&mut doc, "workload.samples", N.into()).unwrap();
    for (k, v) in sets {
        set_path(&mut doc, k, v.clone()).unwrap();
    }
    let sc = Scenario::parse(&toml::to_string(&doc).unwrap(), "t.toml", "t", None).unwrap();
    // Unusable input stops the run before it starts: report it as the point's error.
    match run_scenario(&sc, &ScenarioOpts { keep_traces: 1, ..ScenarioOpts::quiet() }) {
        Ok(out) => out.result.configs.into_iter().next().unwrap(),
        Err(e) => ConfigResult::failed("t", Default::default(), e.to_string()),
    }
}

fn s(v: &str) -> toml::Value {
    toml::Value::String(v.into())
}

fn segments(c: &ConfigResult, class: &str) -> Vec<String> {
    c.breakdown.get(class).map(|b| b.iter().map(|s| s.segment.clone()).collect()).unwrap_or_default()
}

fn has(c: &ConfigResult, class: &str, seg: &str) -> bool {
    segments(c, class).iter().any(|s| s == seg)
}

fn ctr(c: &ConfigResult, k: &str) -> u64 {
    c.counters.get(k).copied().unwrap_or(0)
}

fn ok(c: ConfigResult) -> ConfigResult {
    assert!(c.error.is_none(), "{}: {:?}", c.name, c.error);
    c
}

#[test]
fn same_seed_same_bytes() {
    let run_seed = |seed: Option<u64>| {
        let mut doc: toml::Table = toml::from_str(S5).unwrap();
        set_path(&mut doc, "workload.samples", 300.into()).unwrap();
        let sc = Scenario::parse(&toml::to_string(&doc).unwrap(), "s5.toml", "s5", None).unwrap();
        let out = run_scenario(&sc, &ScenarioOpts::with_seed(seed)).unwrap();
        results::to_json_string(&out.result)
    };
    let run = || run_seed(None);
    let a = run();
    assert_eq!(a, run());
    // A constant would pass the line above: another seed must give other numbers.
    assert_ne!(a, run_seed(Some(2)));
    assert!(!a.contains("\"error\": \""), "no point of the shipped S5 scenario may fail");
}

#[test]
fn feature_on_busy_l1_removes_both_exits() {
    let c = ok(point(S5, &[("workload.bench", s("timer-busy")), ("hypervisor.timer_virt", s("l1-only"))]));
    assert!(has(&c, "timer", "hw:timer-virt-delivery"));
    assert_eq!(ctr(&c, "exits.total"), 0);
    // Without the timer advance the exit's segments are on the latency path (with it they are
    // hidden up to the advance: `timer_advance_hides_the_exit_up_to_the_advance`).
    let off = ok(point(S5, &[("workload.bench", s("timer-busy")), ("hypervisor.lapic_timer_advance", false.into())]));
    assert!(has(&off, "timer", "vmexit:preemption-timer"));
    assert_eq!(ctr(&off, "exits.timer_arm"), N as u64);
    assert_eq!(ctr(&off, "exits.preemption_timer"), N as u64);
    assert!(c.figures["mean_reduction_pct"].value > 0.0);
    let hr = ok(point(S5, &[("workload.bench", s("timer-busy")), ("hypervisor.preemption_timer", false.into()), ("hypervisor.lapic_timer_advance", false.into())]));
    assert!(has(&hr, "timer", "vmexit:external-interrupt") && ctr(&hr, "exits.external_interrupt") == N as u64);
}

#[test]
fn fallback_hlt_uses_the_software_timer_even_with_the_feature() {
    let c = ok(point(S5, &[("workload.bench", s("timer-hlt")), ("hypervisor.timer_virt", s("l1-only")), ("hypervisor.lapic_timer_advance", false.into())]));
    assert!(has(&c, "timer", "host:hrtimer-expiry"), "{:?}", segments(&c, "timer"));
    assert!(!has(&c, "timer", "hw:timer-virt-delivery"));
    assert_eq!(ctr(&c, "exits.timer_arm"), 0, "arming still needs no exit");
    assert_eq!(ctr(&c, "exits.hlt"), N as u64);
}

#[test]
fn fallback_one_shot_and_periodic_modes_exit() {
    for mode in ["one-shot", "periodic"] {
        let c = ok(point(S5, &[("workload.bench", s("timer-busy")), ("hypervisor.timer_virt", s("l1-only")), ("workload.lvtt_mode", s(mode))]));
        assert!(!has(&c, "timer", "hw:timer-virt-delivery"), "{mode}");
        assert_eq!(ctr(&c, "exits.timer_arm"), N as u64, "{mode}");
        assert_eq!(ctr(&c, "exits.preemption_timer"), N as u64, "{mode}");
    }
}

#[test]
fn fallback_l2_running_with_l1_timer_reflects_unless_nested() {
    for tv in ["off", "l1-only"] {
        let c = ok(point(S5, &[("workload.bench", s("timer-busy")), ("vm.level", s("l2")), ("hypervisor.timer_virt", s(tv))]));
        assert!(has(&c, "timer", "nested:reflect-via-l1"), "{tv}");
        assert_eq!(ctr(&c, "exits.reflected_to_l1"), 2 * N as u64, "{tv}: arm + expiry reflected");
    }
    let n = ok(point(S5, &[("workload.bench", s("timer-busy")), ("vm.level", s("l2")), ("hypervisor.timer_virt", s("nested"))]));
    assert_eq!(ctr(&n, "exits.total"), 0);
    assert!(has(&n, "timer", "hw:timer-virt-delivery"));
}

#[test]
fn l1_only_saves_l1s_arm_exit_for_a_halted_l2() {
    let off = ok(point(S5, &[("workload.bench", s("timer-hlt")), ("vm.level", s("l2"))]));
    let l1 = ok(point(S5, &[("workload.bench", s("timer-hlt")), ("vm.level", s("l2")), ("hypervisor.timer_virt", s("l1-only"))]));
    // Off: the ISR's arm (reflected) and L1's arm of its own hrtimer for the halted L2.
    assert_eq!(ctr(&off, "exits.timer_arm"), 2 * N as u64);
    assert_eq!(ctr(&l1, "exits.timer_arm"), N as u64);
}

#[test]
fn l1_with_nested_is_rejected() {
    let c = point(S5, &[("workload.bench", s("timer-hlt")), ("vm.level", s("l1")), ("hypervisor.timer_virt", s("nested"))]);
    let e = c.error.unwrap();
    assert!(e.contains("hypervisor.timer_virt") && e.contains("l1-only"), "{e}");
}

#[test]
fn device_exit_counts_per_path() {
    let dev = |via: &str, apicv: bool| ok(point(S5, &[("workload.bench", s("device")), ("workload.via", s(via)), ("hypervisor.apicv", apicv.into()), ("vm.vcpus", 1.into())]));
    for via in ["irqfd", "msi", "line"] {
        let c = dev(via, true);
        assert_eq!((ctr(&c, "exits.hlt"), ctr(&c, "exits.eoi")), (N as u64 + 1, 0), "{via}");
        let class = format!("device_{via}");
        assert!(c.classes.contains_key(&class));
        assert_eq!(ctr(&dev(via, false), "exits.eoi"), N as u64, "{via} without APICv");
    }
    let lvl = dev("level", true);
    assert_eq!(ctr(&lvl, "exits.eoi"), N as u64, "level: EOI in the EOI-exit bitmap even with APICv");
    assert!(has(&lvl, "device_level", "kvm:ioapic-route"));
    assert!(has(&dev("line", true), "device_line", "host:KVM_IRQ_LINE"));
    assert!(has(&dev("irqfd", true), "device_irqfd", "host:eventfd-write+irqfd-msi"));
}

#[test]
fn ipi_takes_two_icr_exits_per_sample() {
    let c = ok(point(HOST, &[("workload.bench", s("ipi")), ("vm.vcpus", 2.into())]));
    assert_eq!(ctr(&c, "exits.icr_write"), 2 * N as u64);
    let one = c.classes["ipi_one_way"].summary.mean;
    let rt = c.classes["ipi_round_trip"].summary.mean;
    assert!(rt > one, "round trip {rt} > one way {one}");
    assert!(has(&c, "ipi_one_way", "vmexit:icr-write"));
}

#[test]
fn halt_polling_grows_to_catch_short_halts_and_stays_off_for_long_ones() {
    let short = ok(point(HOST, &[("workload.bench", s("timer")), ("workload.wait", s("hlt"))]));
    let (polled, blocked) = (ctr(&short, "halt_poll.success"), ctr(&short, "halt_poll.blocked"));
    assert!(blocked >= 1 && blocked < 10 && polled + blocked == N as u64, "grows within a few halts: {polled} polled, {blocked} blocked");
    assert!(ctr(&short, "halt_poll.grow") >= 1);
    let off = ok(point(HOST, &[("workload.bench", s("timer")), ("hypervisor.halt_poll_ns", 0.into())]));
    assert_eq!(ctr(&off, "halt_poll.success"), 0);
    assert!(off.classes["timer"].summary.p50 > short.classes["timer"].summary.p50);
    // Halts longer than the 200 µs maximum never grow the window.
    let long = ok(point(HOST, &[("workload.bench", s("timer")), ("workload.period_us", 1000.0.into())]));
    assert_eq!((ctr(&long, "halt_poll.success"), ctr(&long, "halt_poll.grow")), (0, 0));
}

#[test]
fn bad_input_names_the_key() {
    let c = point(S5, &[("workload.bench", s("timer-hlt")), ("workload.colour", s("red"))]);
    assert!(c.error.unwrap().contains("colour"));
    let c = point(S5, &[("workload.samples", 2_000_000_000i64.into())]);
    assert!(c.error.unwrap().contains("workload.samples"));
    let c = point(S5, &[("workload.bench", s("device")), ("vm.level", s("l2"))]);
    assert!(c.error.unwrap().contains("vm.level"));
    let c = point(HOST, &[("workload.bench", s("device")), ("workload.wait", s("busy"))]);
    assert!(c.error.unwrap().contains("workload.wait"));
}

/// KVM's timer advance (lapic.c, hyp::lapic_timer_advance) on L1's timer: the preemption-timer
/// exit still happens (same exit counts) but fires early and KVM spins to the deadline, so the
/// guest sees only the entry with injection; with APIC-timer virtualization there is no
/// injection, so no wait and no spin.
#[test]
fn timer_advance_hides_the_exit_up_to_the_advance() {
    let busy = |adv: bool, tv: &str| ok(point(S5, &[("workload.bench", s("timer-busy")), ("hypervisor.lapic_timer_advance", adv.into()), ("hypervisor.timer_virt", s(tv))]));
    let (with, without) = (busy(true, "off"), busy(false, "off"));
    assert_eq!(ctr(&with, "exits.preemption_timer"), N as u64);
    assert_eq!(ctr(&with, "exits.total"), ctr(&without, "exits.total"));
    let mean = |c: &ConfigResult| c.classes["timer"].summary.mean;
    // Without: exit round trip + handler + guest entry (~1.1 µs); with: entry + injection + guest entry.
    assert!(mean(&with) < 0.6 * mean(&without), "{} vs {}", mean(&with), mean(&without));
    assert!(!has(&with, "timer", "vmexit:preemption-timer"), "hidden behind the advance");
    assert!(has(&with, "timer", "host:vmentry+inject"));
    // The exit path (round trip 1065 + handler 1260 cycles at 2.3 GHz, ≈ 1.01 µs) is within
    // 100 cycles of the initial 1000 ns advance: too small an error to tune, so what is left
    // beyond the advance is a few ns per sample.
    let beyond = with.breakdown["timer"].iter().find(|x| x.segment == "host:timer-path-beyond-advance").unwrap();
    assert!(beyond.mean_ns < 200.0, "{}", beyond.mean_ns);
    let adv = with.figures["timer_advance_ns"].value;
    assert!(adv > 300.0 && adv < 5000.0, "got {adv}");
    let hw = busy(true, "l1-only");
    assert!(!hw.figures.contains_key("wait_lapic_expire_spun_per_sample") || hw.figures["wait_lapic_expire_spun_per_sample"].value == 0.0);
    assert!(mean(&hw) < mean(&with), "hardware delivery is still below entry + injection");
}

/// The halted path with the advance: the host timer fires early, the wake-up is hidden up to
/// the advance, and what exceeds it (beyond 1000 ns + 10000 cycles the error is dropped as a
/// spike, so the advance is not tuned up to it) reaches the guest.
#[test]
fn timer_advance_shortens_the_halted_path() {
    let hlt = |adv: bool| ok(point(S5, &[("workload.bench", s("timer-hlt")), ("hypervisor.lapic_timer_advance", adv.into())]));
    let (with, without) = (hlt(true), hlt(false));
    let sum = |c: &ConfigResult| c.classes["timer"].summary.clone();
    assert!(sum(&with).mean < sum(&without).mean - 500.0, "{} vs {}", sum(&with).mean, sum(&without).mean);
    assert!(has(&with, "timer", "host:timer-path-beyond-advance"));
    assert!(!has(&with, "timer", "host:wake-blocked-vcpu") && !has(&with, "timer", "host:halt-poll-hit"));
    assert_eq!(ctr(&with, "exits.hlt"), N as u64);
}

/// A NOHZ guest restarts its tick when it leaves idle (do_idle → tick_nohz_idle_exit, before
/// schedule_idle): one more TSC-deadline write on each cyclictest wake-up, an exit without the
/// feature and none with it.
#[test]
fn nohz_idle_exit_rearms_the_deadline_on_the_path() {
    let cyc = |nohz: bool, tv: &str| ok(point(S5, &[("workload.bench", s("cyclictest")), ("workload.nohz_idle", nohz.into()), ("hypervisor.timer_virt", s(tv))]));
    let (with, without) = (cyc(true, "off"), cyc(false, "off"));
    let samples = 16 * N as u64; // one cyclictest thread per vCPU (vm.vcpus = 16), N wake-ups each
    assert_eq!(ctr(&with, "exits.timer_arm"), 3 * samples, "sleep, handler re-arm, tick restart");
    assert_eq!(ctr(&without, "exits.timer_arm"), 2 * samples);
    let mean = |c: &ConfigResult| c.classes["timer"].summary.mean;
    assert!(mean(&with) > mean(&without) + 500.0, "{} vs {}", mean(&with), mean(&without));
    let feat = cyc(true, "l1-only");
    assert_eq!(ctr(&feat, "exits.timer_arm"), 0, "with the feature no deadline write exits");
    assert!(feat.figures["mean_reduction_pct"].value > cyc(false, "l1-only").figures["mean_reduction_pct"].value);
}

/// Issue 28: the reductions of a row with the feature are against the visible "off" row of its
/// level and bench, not a hidden baseline of another seed (`scenario.same_seed_across`).
#[test]
fn reductions_compare_against_the_visible_off_row() {
    let mut doc: toml::Table = toml::from_str(S5).unwrap();
    set_path(&mut doc, "workload.samples", 300.into()).unwrap();
    let sc = Scenario::parse(&toml::to_string(&doc).unwrap(), "s5.toml", "s5", None).unwrap();
    let out = run_scenario(&sc, &ScenarioOpts::quiet()).unwrap();
    let cs = &out.result.configs;
    let mut checked = 0;
    for c in cs.iter().filter(|c| c.figures.contains_key("baseline.mean")) {
        let off = cs
            .iter()
            .find(|o| {
                o.params.get("hypervisor.timer_virt").map(String::as_str) == Some("off")
                    && o.params.get("vm.level") == c.params.get("vm.level")
                    && o.params.get("workload.bench") == c.params.get("workload.bench")
            })
            .unwrap_or_else(|| panic!("{}: no off row", c.name));
        let t = &off.classes["timer"].summary;
        assert_eq!(c.figures["baseline.mean"].value, t.mean, "{} vs {}", c.name, off.name);
        assert_eq!(c.figures["baseline.min"].value, t.min as f64, "{} vs {}", c.name, off.name);
        checked += 1;
    }
    assert_eq!(checked, 9, "the three feature rows × three benches each carry a baseline");
}

#[test]
fn same_seed_across_must_name_a_parameter() {
    let text = S5.replace("same_seed_across = [\"hypervisor.timer_virt\"]", "same_seed_across = [\"hypervisor.timer_virtt\"]");
    assert_ne!(text, S5, "the shipped scenario declares same_seed_across");
    let e = Scenario::parse(&text, "s5.toml", "s5", None).unwrap_err().to_string();
    assert!(e.contains("scenario.same_seed_across[0]") && e.contains("timer_virtt"), "{e}");
}

//! The `xen-arm` model: the S3 table is reproduced within its tolerances, runs are
//! deterministic, and the qualitative claims of docs/xen-wfi-policy.md hold on a small grid.
use results::{to_json_string, ConfigResult, RunResult};
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::Scenario;

mod xen_common;
use xen_common::{cost_ns, run, s3_only, stat, with, S3, WFI};

/// The S3 rows (credit1, pinned): the configurations the blog measured.
const S3_CONFIGS: [&str; 2] = ["vwfi=trap", "vwfi=native"];

/// Published S3 rows (ns): (config, AVG, MIN, MAX, WARM_MAX).
const S3_ROWS: [(&str, f64, f64, f64, f64); 2] = [("vwfi=trap", 4850.0, 4810.0, 7030.0, 4980.0), ("vwfi=native", 1850.0, 1680.0, 2650.0, 1950.0)];

/// The warm-round shape of one S3 row judged against the published spread, not against ±15 %
/// of the value (which is four times the spread): MIN and WARM_MAX each within one published
/// warm spread (WARM_MAX − MIN: 170 ns trap, 270 ns native) of the published value, and the
/// model's warm spread within 0.5×–2× of the published one.
fn assert_warm_shape(r: &RunResult, config: &str, what: &str) {
    let (_, _, min, _, warm) = *S3_ROWS.iter().find(|row| row.0 == config).expect("an S3 row");
    let spread = warm - min;
    for (st, published) in [("min", min), ("warm_max", warm)] {
        let got = stat(r, config, st);
        assert!((got - published).abs() <= spread, "{what}: {config} {st} {got}, published {published} ± the published spread {spread}");
    }
    let s = stat(r, config, "warm_max") - stat(r, config, "min");
    assert!(s >= 0.5 * spread && s <= 2.0 * spread, "{what}: {config} WARM_MAX − MIN {s}, published {spread} (0.5×–2×)");
}

/// What the S3 rows must show beyond the ±15/30 % reference tolerances, which a model with no
/// cold effect or no variance would still meet: every S3 figure within its tolerance; the
/// first-round (cold) MAX standing out from the warm rounds as published (MAX / AVG 1.45 trap,
/// 1.43 native, within ±10 %); and the vwfi=native warm shape judged against the published
/// spread ([`assert_warm_shape`]). The vwfi=trap warm shape fails that judgement today (the
/// model's spread is ≈ 5× the published 170 ns: the profile's per-segment jitter is guessed);
/// `trap_warm_shape_is_a_known_gap_against_the_published_spread` pins that gap.
fn assert_s3_shape(r: &RunResult, what: &str) {
    // Every S3 figure, fitted or held out (the scenario judges each on its median over 8 seeds).
    for c in r.references.iter().filter(|c| S3_CONFIGS.contains(&c.config.as_str())) {
        assert!(c.within(), "{what}: {} {} {}: got {:?}, published {}", c.config, c.class, c.stat, c.model, c.published);
    }
    for (config, avg, _, max, _) in S3_ROWS {
        let ratio = max / avg;
        let got = stat(r, config, "max") / stat(r, config, "mean");
        assert!((got / ratio - 1.0).abs() < 0.10, "{what}: {config} MAX/AVG {got:.3}, published {ratio:.3}");
    }
    assert_warm_shape(r, "vwfi=native", what);
}

/// The vwfi=trap warm shape fails [`assert_warm_shape`] today: a known model gap, pinned here
/// rather than hidden behind a loose bound. The model's warm spread is 3–8× the published 170 ns
/// and its MIN is more than one published spread low (the profile's per-segment jitter is
/// guessed, not fitted). When the model improves this test fails: then move vwfi=trap into
/// [`assert_s3_shape`] with vwfi=native.
#[test]
fn trap_warm_shape_is_a_known_gap_against_the_published_spread() {
    let sc = Scenario::parse(S3, "scenarios/xen-arm-zynq-timer.toml", "xen-arm-zynq-timer", None).unwrap();
    let r = run(&sc, None);
    assert!(std::panic::catch_unwind(|| assert_warm_shape(&r, "vwfi=trap", "seed 1")).is_err(), "vwfi=trap now meets the published spread: tighten assert_s3_shape");
    let s = stat(&r, "vwfi=trap", "warm_max") - stat(&r, "vwfi=trap", "min");
    assert!(s > 3.0 * 170.0 && s < 8.0 * 170.0, "vwfi=trap WARM_MAX − MIN {s} ns: the documented gap is 3–8× the published 170 ns");
}

#[test]
fn s3_table_is_reproduced_within_tolerance() {
    let sc = Scenario::parse(S3, "scenarios/xen-arm-zynq-timer.toml", "xen-arm-zynq-timer", None).unwrap();
    let r = run(&sc, None);
    assert_eq!(r.references.len(), 20, "8 S3 figures + 12 from the Feb 2017 xen-devel post");
    assert_s3_shape(&r, "seed 1");
    // Without the cold first round, or without cost variance, the shape checks fail.
    let flat = run(&with(S3, &[("platform.params.cold_factor.value", "1.0")]), None);
    assert!(std::panic::catch_unwind(|| assert_s3_shape(&flat, "no cold effect")).is_err(), "no cold effect must fail");
}

/// With several seeds a reference is judged on the statistic's median over them and carries their
/// range; the first seed's own value (what the table row shows) lies in that range. With one seed
/// there is no range and the value is the row's own.
#[test]
fn references_are_judged_on_the_median_over_seeds() {
    let sc = Scenario::parse(S3, "scenarios/xen-arm-zynq-timer.toml", "xen-arm-zynq-timer", None).unwrap();
    assert_eq!(sc.header.seeds, 8, "the shipped S3 scenario runs 8 seeds per configuration");
    let r = run(&sc, None);
    let mut tails_differ = false;
    for c in r.references.iter().filter(|c| c.over.is_none()) {
        let s = c.over_seeds.unwrap_or_else(|| panic!("{} {}: no spread over seeds", c.config, c.stat));
        let cfg = r.configs.iter().find(|x| x.name == c.config).unwrap();
        let spread = cfg.seed_spread.as_ref().unwrap().latency(&c.class, &c.stat).unwrap();
        assert_eq!(s, *spread);
        assert_eq!(c.model, Some(spread.median), "{} {}", c.config, c.stat);
        let own = stat(&r, &c.config, &c.stat);
        assert!(s.min <= own && own <= s.max, "{} {}: seed 1's {own} outside [{}, {}]", c.config, c.stat, s.min, s.max);
        tails_differ |= own != s.median && (c.stat == "max" || c.stat == "warm_max");
    }
    assert!(tails_differ, "some tail statistic of seed 1 differs from the median over seeds");
    let one = run(&with(S3, &[("scenario.seeds", "1")]), None);
    for c in &one.references {
        assert!(c.over_seeds.is_none());
        if c.over.is_none() {
            assert_eq!(c.model, Some(stat(&one, &c.config, &c.stat)), "{} {}", c.config, c.stat);
        }
    }
}

#[test]
fn s3_holds_for_other_seeds() {
    let sc = Scenario::parse(S3, "s3.toml", "s3", None).unwrap();
    for seed in [2, 3, 4] {
        assert_s3_shape(&run(&sc, Some(seed)), &format!("seed {seed}"));
    }
}

#[test]
fn s3_shape_needs_cost_variance() {
    // Every hypervisor-path cost constant at its median: no warm spread left.
    let mut sets: Vec<(String, String)> = Vec::new();
    for (k, ns) in [
        ("xen_irq_handler", 800),
        ("trap_to_el2", 350),
        ("eret", 300),
        ("idle_wakeup", 250),
        ("wfi_exit", 200),
        ("vcpu_wake", 300),
        ("credit1_wake", 300),
        ("sched", 1600),
        ("credit1_schedule", 400),
        ("context_restore", 300),
    ] {
        sets.push((format!("platform.costs.{k}"), cost_ns(ns as f64)));
    }
    let sets: Vec<(&str, &str)> = sets.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let r = run(&with(S3, &sets), None);
    assert!(std::panic::catch_unwind(|| assert_s3_shape(&r, "constant costs")).is_err(), "constant costs must fail the spread check");
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
        .find(|c| c.params["hypervisor.vwfi"] == vwfi && c.params["workload.other"] == other && c.params["hypervisor.vcpus_per_pcpu"] == k.to_string())
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

/// The claims of docs/xen-wfi-policy.md ("Reading it"), each checked at 10 seeds: a claim
/// that holds at one seed only is not a claim.
#[test]
fn wfi_policy_claims_hold_over_seeds() {
    let sc = with(WFI, &[("workload.samples", "1000"), ("sweep:hypervisor.pcpus", "[1]"), ("sweep:hypervisor.vcpus_per_pcpu", "[1, 2]")]);
    let mut native_busy_p50_slow = 0;
    for seed in 1..=10 {
        let r = run(&sc, Some(seed));
        // Alone on its pCPU: native beats trap (the S3 result), adaptive equals native.
        for other in ["busy", "idle", "bursty"] {
            let (t, n, a) = (point(&r, "trap", other, 1), point(&r, "native", other, 1), point(&r, "adaptive", other, 1));
            assert!(p(n, "p99") * 2.0 < p(t, "p50"), "seed {seed} {other}: native {} vs trap {}", p(n, "p99"), p(t, "p50"));
            assert!((p(a, "mean") / p(n, "mean") - 1.0).abs() < 0.05, "seed {seed} {other}: adaptive {} vs native {}", p(a, "mean"), p(n, "mean"));
        }
        // Sharing with a busy vCPU: native halves the other guest's throughput and the tbm's tail
        // waits for a time slice; trap and adaptive keep the other guest near its ideal.
        let (t, n, a) = (point(&r, "trap", "busy", 2), point(&r, "native", "busy", 2), point(&r, "adaptive", "busy", 2));
        assert!(fig(n, "other.throughput") < 0.6, "seed {seed}: native {}", fig(n, "other.throughput"));
        assert!(fig(t, "other.throughput") > 0.95 && fig(a, "other.throughput") > 0.95, "seed {seed}");
        assert!(p(n, "p99") > 10.0 * p(t, "p99"), "seed {seed}: native p99 {} vs trap {}", p(n, "p99"), p(t, "p99"));
        assert!((p(a, "p50") / p(t, "p50") - 1.0).abs() < 0.1, "seed {seed}");
        // The native median: credit2 runs each of the two vCPUs for its whole credit (up to
        // 10 ms, csched2_runtime with the switched-out vCPU not yet re-queued), so the tbm vCPU
        // takes ~9 rounds per slice on its pCPU and one round waits for the busy vCPU's slice:
        // the median is fast at every seed, the p99 is a slice (the Xen lab's credit2 / native /
        // busy row: p50 3.6 µs, MAX 10.0 ms). Before csched2_runtime the model alternated ~1 ms
        // slices and its median was slow at about half the seeds.
        if p(n, "p50") > 100_000.0 {
            native_busy_p50_slow += 1;
        }
        assert!(p(n, "p99") > 1.0e6, "seed {seed}: native p99 {} under a busy vCPU's slice", p(n, "p99"));
        // Sharing with an idle vCPU: trap and adaptive block it; adaptive keeps native latency.
        let (t, a) = (point(&r, "trap", "idle", 2), point(&r, "adaptive", "idle", 2));
        assert!(p(a, "p50") * 2.0 < p(t, "p50"), "seed {seed}");
        // Bursty neighbour: adaptive's tail is worse than trap's (native WFI time charged as run
        // time), native's is the worst (a vCPU sleeping natively holds the pCPU for its whole
        // credit, so a waking burst waits up to 10 ms; before csched2_runtime the model had
        // adaptive worst), and adaptive flips TWI and kicks sleeping vCPUs; trap never flips.
        let (t, n, a) = (point(&r, "trap", "bursty", 2), point(&r, "native", "bursty", 2), point(&r, "adaptive", "bursty", 2));
        assert!(p(a, "p99") > 2.0 * p(t, "p99") && p(n, "p99") > p(a, "p99"), "seed {seed}: adaptive p99 {} trap {} native {}", p(a, "p99"), p(t, "p99"), p(n, "p99"));
        assert!(a.counters["vwfi.adaptive_kicks"] > 0 && a.counters["vwfi.twi_switches"] > 0, "seed {seed}");
        assert_eq!(t.counters["vwfi.twi_switches"], 0, "seed {seed}");
    }
    assert_eq!(native_busy_p50_slow, 0, "native p50 with a busy neighbour slow at {native_busy_p50_slow} of 10 seeds");
}

#[test]
fn traces_show_the_interrupt_path() {
    let sc = Scenario::parse(S3, "s3.toml", "s3", None).unwrap();
    let out = run_scenario(&sc, &ScenarioOpts { keep_traces: 3, ..ScenarioOpts::quiet() }).unwrap();
    let (name, trap) = &out.traces[0];
    assert_eq!(name, "vwfi=trap");
    let t = &trap[2];
    let segs: Vec<&str> = t.segments.iter().map(|s| s.0).collect();
    // vcpu_wake → runq insert/tickle → schedule() → schedule_tail → LR → guest, in this order.
    let want = ["phys-irq", "idle-wakeup", "xen-irq-handler", "vcpu-wake", "runq-tickle", "schedule", "context-restore", "lr-write", "eret", "guest-ack"];
    assert_eq!(segs, want, "trap path");
    let d = |n: &str| t.segments.iter().find(|s| s.0 == n).unwrap().1.ns_f64();
    // schedule_tail: ~300 ns of registers + 7 GICH MMIO writes (4 LRs, APR, VMCR, HCR) at 100 ns:
    // about the ~1000 ns the Feb 2017 post measured for it.
    assert!((900.0..1300.0).contains(&d("context-restore")), "context-restore {}", d("context-restore"));
    assert_eq!((d("lr-write"), d("guest-ack")), (100.0, 103.0), "one GICH_LR MMIO write; the published A53 GICV access");
    // credit1's wake and schedule() are the fitted remainder of the trap path: larger than restore.
    assert!(d("schedule") > d("context-restore"), "{:?}", t.segments);
    let native = &out.traces[1].1[2];
    let segs: Vec<&str> = native.segments.iter().map(|s| s.0).collect();
    assert_eq!(segs, ["phys-irq", "wfi-exit", "trap-to-el2", "xen-irq-handler", "lr-write", "eret", "guest-ack"], "native path");
    assert!(t.render().contains("guest-ack"));
}

#[test]
fn schedulers_cost_what_their_paths_say() {
    // Trapped WFI, alone on the pCPU: every interrupt runs the scheduler's wake + schedule, so
    // the mean moves by the difference of their costs; a spinning guest never meets the scheduler.
    let mean = |sched: &str, cfg: &str, sets: &[(&str, &str)]| {
        let q = format!("\"{sched}\"");
        let mut all = vec![("hypervisor.scheduler", q.as_str())];
        all.extend_from_slice(sets);
        stat(&run(&s3_only(cfg, 400, &all), None), cfg, "mean")
    };
    let [null, c1, rt, c2] = ["null", "credit1", "rtds", "credit2"].map(|s| mean(s, "vwfi=trap", &[]));
    assert!(null < c1 && c1 < rt && rt < c2, "null {null} < credit1 {c1} < rtds {rt} < credit2 {c2}");
    // credit1 − null = (300 + 400) − (100 + 100) ns of medians in the profile.
    assert!(((c1 - null) / 500.0 - 1.0).abs() < 0.2, "credit1 − null = {}", c1 - null);
    // A scheduler path made 2 µs dearer costs 2 µs more per interrupt (trap), nothing when spinning.
    let (cheap, dear) = (cost_ns(400.0), cost_ns(2400.0));
    for (cfg, want) in [("vwfi=trap", 2000.0), ("credit1, no WFI", 0.0)] {
        let d = mean("credit1", cfg, &[("platform.costs.credit1_schedule", &dear)]) - mean("credit1", cfg, &[("platform.costs.credit1_schedule", &cheap)]);
        assert!((d - want).abs() < 100.0, "{cfg}: +{d} ns, want +{want}");
    }
    // Spinning: every scheduler delivers every round.
    for s in ["null", "credit1", "credit2", "rtds"] {
        let r = run(&s3_only("credit1, no WFI", 300, &[("hypervisor.scheduler", &format!("\"{s}\""))]), None);
        assert_eq!(r.configs[0].classes["timer"].summary.count, 300, "{s}");
    }
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
    let err = |sc: Scenario| run_scenario(&sc, &ScenarioOpts::quiet()).err().expect("rejected").to_string();
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
    // A scheduler mechanism parameter out of its physical range (issue 26): a negative ratelimit.
    let e = err(with(S3, &[("hypervisor.ratelimit_us", "-5.0")]));
    assert!(e.contains("hypervisor.ratelimit_us") && e.contains("-5"), "{e}");
    // A negative slice, a ratelimit or time slice outside what Xen accepts.
    let e = err(with(S3, &[("hypervisor.min_slice_us", "-500.0")]));
    assert!(e.contains("hypervisor.min_slice_us") && e.contains("-500"), "{e}");
    let e = err(with(S3, &[("hypervisor.ratelimit_us", "50.0")]));
    assert!(e.contains("hypervisor.ratelimit_us") && e.contains("100..=500000"), "{e}");
    let e = err(with(S3, &[("hypervisor.tslice_us", "2000000.0")]));
    assert!(e.contains("hypervisor.tslice_us") && e.contains("1..=1000 ms"), "{e}");
    // 0 (ratelimit off) is Xen's own way of switching it off: accepted.
    run(&s3_only("vwfi=trap", 20, &[("hypervisor.ratelimit_us", "0.0")]), None);
}

/// credit2, vwfi=native, a busy vCPU on the tbm's pCPU (the Xen lab's "credit2 native busy"):
/// an interrupt for the tbm vCPU while the busy one runs is not a wake-up (it never blocked, so
/// no `runq_tickle`); it waits for the busy vCPU's slice end, which `csched2_runtime` puts at
/// that vCPU's own credit (the tbm vCPU, switched out, is not yet back in the runqueue): up to
/// 10 ms (`CSCHED2_MAX_TIMER`), the lab's 10.0 ms MAX. The credit-difference slice the model had
/// before kept every wait under 1 ms.
#[test]
fn credit2_interrupt_for_a_descheduled_vcpu_waits_for_the_slice_end() {
    let sets = [("hypervisor.vwfi", "\"native\""), ("workload.other", "\"busy\""), ("hypervisor.vcpus_per_pcpu", "2"), ("workload.period_us", "1000.0"), ("scenario.seeds", "1")];
    let r = run(&s3_only("credit2, WFI", 2000, &sets), None);
    let (max, p50) = (stat(&r, "credit2, WFI", "max"), stat(&r, "credit2, WFI", "p50"));
    assert!(max > 8.0e6 && max <= 10.1e6, "MAX {max} ns: a wait for a slice of up to 10 ms");
    assert!(p50 < 5_000.0, "p50 {p50} ns: most rounds find the tbm vCPU on its pCPU");
    // With the tbm vCPU blocking (vwfi=trap) it is woken and preempts: no slice-long wait.
    let sets = [("workload.other", "\"busy\""), ("hypervisor.vcpus_per_pcpu", "2"), ("workload.period_us", "1000.0"), ("scenario.seeds", "1")];
    let r = run(&s3_only("credit2, WFI", 500, &sets), None);
    assert!(stat(&r, "credit2, WFI", "max") < 1.0e6, "trap: {}", stat(&r, "credit2, WFI", "max"));
}

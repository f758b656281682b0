//! Mechanisms of the Xen core that each change latency the way their path says, and fail when
//! removed: list-register accesses (GICv2 MMIO, in proportion to the LRs touched), shared-L2
//! interference from busy neighbours, and RTDS draining a natively sleeping vCPU's budget.
mod xen_common;
use xen_common::{cost_ns, run, s3_only, stat, with, WFI};

/// Mean timer latency of S3 configuration `cfg` with `sets`.
fn mean(cfg: &str, sets: &[(&str, &str)]) -> f64 {
    stat(&run(&s3_only(cfg, 400, sets), None), cfg, "mean")
}

#[test]
fn lr_accesses_cost_in_proportion_to_the_lrs_touched() {
    // GICv2: the trap path restores 4 LRs + APR, VMCR, HCR (7 MMIO writes) and injects through
    // one LR; the native path only injects. +100 ns per access moves them by 800 and 100 ns.
    let dear = cost_ns(200.0);
    for (cfg, accesses) in [("vwfi=trap", 8.0), ("vwfi=native", 1.0)] {
        let d = mean(cfg, &[("platform.costs.gicv2_mmio_access", &dear)]) - mean(cfg, &[]);
        assert!((d / (100.0 * accesses) - 1.0).abs() < 0.1, "{cfg}: +{d} ns for {accesses} accesses");
    }
    // 8 list registers instead of 4: 4 more restored on the trap path, none more on native.
    let lrs = "{ value = 8, source = \"test\", basis = \"guess\" }";
    let d = mean("vwfi=trap", &[("platform.params.list_registers", lrs)]) - mean("vwfi=trap", &[]);
    assert!((d / 400.0 - 1.0).abs() < 0.1, "trap: +{d} ns for 4 more LRs");
    let d = mean("vwfi=native", &[("platform.params.list_registers", lrs)]) - mean("vwfi=native", &[]);
    assert!(d.abs() < 20.0, "native: {d}");
}

/// The tbm latency (native WFI, alone on its pCPU) with `busy` busy neighbours on the other
/// pCPUs of the cluster (0 = idle neighbours) and the profile's eviction fraction replaced by `evict`.
fn with_neighbours(busy: u32, evict: Option<&str>) -> f64 {
    let (pcpus, other) = if busy == 0 { ("[4]".to_string(), "[\"idle\"]") } else { (format!("[{}]", busy + 1), "[\"busy\"]") };
    let ev = evict.map(|e| format!("{{ value = {e}, source = \"test\", basis = \"guess\" }}"));
    let mut sets = vec![
        ("workload.samples", "400"),
        ("sweep:hypervisor.vwfi", "[\"native\"]"),
        ("sweep:workload.other", other),
        ("sweep:hypervisor.pcpus", pcpus.as_str()),
        ("sweep:hypervisor.vcpus_per_pcpu", "[1]"),
    ];
    if let Some(e) = ev.as_deref() {
        sets.push(("platform.params.l2_evict_per_busy_neighbour", e));
    }
    let r = run(&with(WFI, &sets), None);
    assert_eq!(r.configs.len(), 1);
    r.configs[0].classes["timer"].summary.mean
}

#[test]
fn busy_neighbours_on_the_shared_l2_inflate_the_path() {
    let (idle, one, three) = (with_neighbours(0, None), with_neighbours(1, None), with_neighbours(3, None));
    // One busy neighbour evicts half the path's lines (a warm path halfway to cold), three evict
    // all of it: the warm path costs cold_factor times more.
    assert!(one > idle * 1.08 && three > one * 1.08, "idle {idle}, 1 busy {one}, 3 busy {three}");
    // Cache colouring (no eviction): neighbours have no effect.
    let coloured = with_neighbours(3, Some("0.0"));
    assert!((coloured / idle - 1.0).abs() < 0.02, "coloured {coloured} vs idle {idle}");
}

#[test]
fn rtds_drains_the_budget_of_a_vcpu_sleeping_natively() {
    // RTDS charges a vCPU for the time it holds the pCPU; under vwfi=native that includes its
    // WFI sleep, so the 4 ms budget runs out in every 10 ms period and an interrupt landing in
    // the remaining 6 ms waits for the replenishment. Trapped WFI blocks instead: no drain.
    // (A 1.1 ms timer period: with S3's 0.5 s, a multiple of the RTDS period, tbm phase-locks to
    // the start of the budget window after its first wait and hardly ever waits again.)
    let r = |vwfi: &str, budget: &str| {
        let sets = [("hypervisor.scheduler", "\"rtds\""), ("workload.period_us", "1100"), ("hypervisor.rtds_budget_us", budget)];
        let sc = s3_only(vwfi, 2000, &sets);
        stat(&run(&sc, None), vwfi, "p99").max(stat(&run(&sc, None), vwfi, "max"))
    };
    let r99 = |vwfi: &str| {
        let sets = [("hypervisor.scheduler", "\"rtds\""), ("workload.period_us", "1100")];
        let res = run(&s3_only(vwfi, 2000, &sets), None);
        (stat(&res, vwfi, "p50"), stat(&res, vwfi, "p99"), stat(&res, vwfi, "max"))
    };
    let (p50, p99, max) = r99("vwfi=native");
    assert!(p50 < 5_000.0, "native p50 {p50}: rounds inside the budget window are fast");
    assert!(p99 > 1e6 && max <= 6.05e6, "native p99 {p99}, max {max}: up to period − budget = 6 ms");
    let (_, _, trap_max) = r99("vwfi=trap");
    assert!(trap_max < 20_000.0, "trap max {trap_max}");
    // A budget as long as the period leaves nothing to drain.
    assert!(r("vwfi=native", "10000") < 20_000.0, "full budget");
}

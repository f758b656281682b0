//! Boot the real benchmark guests. Run where /dev/kvm opens; skip with a printed reason elsewhere.
use std::time::{Duration, Instant};

use kvm::{kvm_available, run_bench, BenchConfig, BenchKind, DeviceVia, WaitMode};

macro_rules! need_kvm {
    () => {
        if let Err(why) = kvm_available() {
            println!("SKIP: {why}");
            return;
        }
    };
}

fn check(m: &kvm::Measurement, class: &str, n: u64) {
    assert!(m.error.is_none(), "{class}: {:?}", m.error);
    let (_, v) = m.classes.iter().find(|c| c.0 == class).unwrap_or_else(|| panic!("no class {class}: {:?}", m.classes));
    assert_eq!(v.len() as u64, n, "{class}: sample count");
    let mut s = v.clone();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = s[s.len() / 2];
    assert!(median > 0.0 && median < 1e9, "{class}: median {median} ns");
    assert!(m.counters.get("kvm.vcpu.exits").copied().unwrap_or(0) > 0, "exits counted: {:?}", m.counters);
    assert!(m.first_sample.is_some());
}

#[test]
fn timer_hlt() {
    need_kvm!();
    let cfg = BenchConfig { kind: BenchKind::Timer, samples: 300, period_us: 77.0, ..Default::default() };
    let m = run_bench(&cfg, &|_| {}).unwrap();
    check(&m, "timer", 300);
    assert!(m.counters.get("kvm.vcpu.halt_exits").copied().unwrap_or(0) > 0, "the guest waited in HLT");
}

#[test]
fn timer_busy_ring3() {
    need_kvm!();
    let cfg = BenchConfig { kind: BenchKind::Timer, samples: 200, period_us: 150.0, wait: WaitMode::Busy, ..Default::default() };
    let m = run_bench(&cfg, &|_| {}).unwrap();
    check(&m, "timer", 200);
}

#[test]
fn device_every_path() {
    need_kvm!();
    for via in [DeviceVia::Irqfd, DeviceVia::Msi, DeviceVia::Line, DeviceVia::Level] {
        let cfg = BenchConfig { kind: BenchKind::Device, samples: 200, period_us: 100.0, via, ..Default::default() };
        let m = run_bench(&cfg, &|_| {}).unwrap();
        check(&m, &format!("device_{}", format!("{via:?}").to_lowercase()), 200);
    }
}

#[test]
fn ipi_one_way_and_round_trip() {
    need_kvm!();
    let cfg = BenchConfig { kind: BenchKind::Ipi, vcpus: 2, samples: 100, period_us: 200.0, ..Default::default() };
    let m = run_bench(&cfg, &|_| {}).unwrap();
    check(&m, "ipi_one_way", 100);
    check(&m, "ipi_round_trip", 100);
    let one = &m.classes[0].1;
    let rt = &m.classes[1].1;
    assert!(one.iter().zip(rt).all(|(a, b)| b > a), "the reply comes after the arrival");
}

#[test]
fn pv_ipi_probe_is_bounded() {
    need_kvm!();
    let t = Instant::now();
    let verdict = kvm::probe_pv_ipi(Duration::from_secs(2)).unwrap();
    assert!(verdict.starts_with("supported") || verdict.starts_with("unsupported on this host"), "{verdict}");
    assert!(t.elapsed() < Duration::from_secs(10), "probe took {:?}", t.elapsed());
    println!("PV IPI: {verdict}");
}

#[test]
fn watchdog_waits_a_period_before_calling_a_stall() {
    need_kvm!();
    // A deadline 1.5 s ahead with a 0.5 s stall timeout is a slow guest, not a stalled one: the
    // watchdog allows one period on top of the timeout. A real stall, the PV IPI
    // livelock, is ended by the watchdog in `pv_ipi_probe_is_bounded`.
    let cfg = BenchConfig {
        kind: BenchKind::Timer,
        samples: 2,
        warmup: 1,
        period_us: 1_500_000.0,
        stall_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let t = Instant::now();
    let m = run_bench(&cfg, &|_| {}).unwrap();
    assert_eq!(m.error, None);
    assert!(t.elapsed() >= Duration::from_secs(3), "two periods: {:?}", t.elapsed());
}

#[test]
fn duration_ends_the_run_and_keeps_its_samples() {
    need_kvm!();
    let d = Duration::from_millis(600);
    let cfg = BenchConfig { kind: BenchKind::Timer, samples: kvm::layout::MAX_SAMPLES, period_us: 200.0, duration: Some(d), ..Default::default() };
    let t = Instant::now();
    let m = run_bench(&cfg, &|_| {}).unwrap();
    assert!(m.error.is_none(), "{:?}", m.error);
    assert_eq!(m.ended, Some(kvm::measurement::Ended::Duration));
    assert!(t.elapsed() >= d && t.elapsed() < d + Duration::from_secs(5), "{:?}", t.elapsed());
    let n = m.classes[0].1.len();
    assert!(n > 50 && n < 3000, "{n} samples of 200 µs in 0.6 s");
    assert_eq!(m.stamps.len(), n, "stamps align with the kept samples");
}

#[test]
fn stop_above_keeps_the_sample_that_crossed_last() {
    need_kvm!();
    for kind in [BenchKind::Timer, BenchKind::Device] {
        let cfg = BenchConfig { kind, samples: 500, period_us: 100.0, stop_above_ns: Some(1), ..Default::default() };
        let m = run_bench(&cfg, &|_| {}).unwrap();
        assert!(m.error.is_none(), "{:?}", m.error);
        let v = &m.classes[0].1;
        let Some(kvm::measurement::Ended::Above { index }) = m.ended else { panic!("{kind:?}: not stopped: {:?}", m.ended) };
        assert_eq!(index as usize + 1, v.len(), "{kind:?}: the crossing sample is the last kept");
        assert!(v[index as usize] > 1.0 && v[..index as usize].iter().all(|x| *x <= 1.0), "{kind:?}: {v:?}");
    }
}

#[test]
fn fifo_priority_and_the_cpus_used_are_recorded() {
    need_kvm!();
    let cfg = BenchConfig { kind: BenchKind::Ipi, vcpus: 2, samples: 50, period_us: 200.0, priority: Some(10), ..Default::default() };
    match run_bench(&cfg, &|_| {}) {
        Ok(m) => {
            assert!(m.error.is_none(), "{:?}", m.error);
            assert_eq!(m.cpus_used.len(), 2, "{:?}", m.cpus_used);
            let allowed = kvm::config::allowed_cpus();
            assert!(m.cpus_used.iter().all(|s| !s.is_empty() && s.iter().all(|c| allowed.contains(c))), "{:?}", m.cpus_used);
            assert_eq!(m.to_config_result("x").params["priority"], "SCHED_FIFO 10");
        }
        // Not root and no CAP_SYS_NICE: the refusal must say so.
        Err(e) => assert!(e.to_string().contains("--priority 10: cannot give the vCPU threads SCHED_FIFO"), "{e}"),
    }
}

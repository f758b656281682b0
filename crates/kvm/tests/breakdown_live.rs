//! `--breakdown` on this host's KVM: a short traced timer run splits (almost) every sample, its
//! segment means add up to the measured mean, and the tracefs instance is gone afterwards.
//! Skipped, with the reason printed, where /dev/kvm or tracefs (root) is unavailable.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]
use kvm::tracefs::{preflight, run_traced, TraceOptions};
use kvm::{BenchConfig, BenchKind};

fn usable(cfg: &BenchConfig) -> bool {
    if let Err(why) = kvm::kvm_available() {
        eprintln!("skipping: {why}");
        return false;
    }
    if let Err(why) = preflight(cfg) {
        eprintln!("skipping: {why}");
        return false;
    }
    true
}

#[test]
fn traced_runs_split_and_clean_up() {
    for kind in [BenchKind::Timer, BenchKind::Ipi] {
        let cfg = BenchConfig { kind, samples: 300, vcpus: if kind == BenchKind::Ipi { 2 } else { 1 }, ..Default::default() };
        if !usable(&cfg) {
            return;
        }
        let m = run_traced(&cfg, &|_| {}, &TraceOptions { keep_paths: 1, ..Default::default() }).expect("traced run");
        assert!(m.error.is_none(), "{:?}", m.error);
        let b = m.breakdown.as_ref().expect("a breakdown");
        let matched = b.counters["breakdown.samples_matched"];
        let unmatched = b.counters["breakdown.samples_unmatched"];
        assert_eq!(matched + unmatched, 300, "every sample is matched or counted");
        assert!(matched >= 270, "{matched} of 300 matched: {:?}", b.notes);
        assert_eq!(b.paths.len(), 1);
        let r = m.to_config_result("live");
        let dev = r.figures["breakdown_vs_measured_mean"].value;
        assert!(dev.abs() < 5.0, "segment means vs measured mean: {dev:+.2}% ({:?})", r.notes);
        let left: Vec<_> = std::fs::read_dir("/sys/kernel/tracing/instances")
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().to_string()).filter(|n| n.starts_with(&format!("irqlab-{}", std::process::id()))).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "instances left behind: {left:?}");
    }
}

//! `--breakdown` on this host's KVM: a short traced timer run splits (almost) every sample, its
//! segment means add up to the measured mean, and the tracefs instance is gone afterwards.
//! Needs /dev/kvm and tracefs with root: `#[ignore]`d with that reason, run by `scripts/test.sh`
//! (`--ignored needs_tracefs::`) where both are there; run without them, it fails with the reason.
mod needs_tracefs {
    use kvm::{preflight, run_traced, TraceOptions};
    use kvm::{Bench, BenchConfig};

    /// The tests share this process's tracefs instance names (`irqlab-<pid>-N`) and check that none
    /// is left: they take turns.
    static TRACEFS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn require(cfg: &BenchConfig) {
        kvm::kvm_available().unwrap_or_else(|why| panic!("this test needs /dev/kvm: {why}"));
        if let Err(why) = preflight(cfg) {
            panic!("this test needs tracefs (root): {why}");
        }
    }

    #[test]
    #[ignore = "needs /dev/kvm and tracefs (root): scripts/test.sh runs it where both are there"]
    fn traced_runs_split_and_clean_up() {
        testkit::require(testkit::Resource::Tracefs);
        let _turn = TRACEFS.lock().unwrap_or_else(|e| e.into_inner());
        for kind in [Bench::Timer, Bench::Ipi] {
            let cfg = BenchConfig { kind, samples: 300, vcpus: if kind == Bench::Ipi { 2 } else { 1 }, ..Default::default() };
            require(&cfg);
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

    /// Each device path is recognised by the trace event only it raises (irqfd and KVM_SIGNAL_MSI:
    /// `kvm_msi_set_irq` from the trigger thread; KVM_IRQ_LINE: `kvm_set_irq` from it; level irqfd:
    /// `kvm_set_irq` from KVM's kworker): a path that took another route would leave its samples
    /// unmatched.
    #[test]
    #[ignore = "needs /dev/kvm and tracefs (root): scripts/test.sh runs it where both are there"]
    fn every_device_path_raises_its_own_event() {
        testkit::require(testkit::Resource::Tracefs);
        let _turn = TRACEFS.lock().unwrap_or_else(|e| e.into_inner());
        for via in kvm::Via::ALL {
            let cfg = BenchConfig { kind: Bench::Device, samples: 200, period_us: 200.0, via, ..Default::default() };
            require(&cfg);
            let m = run_traced(&cfg, &|_| {}, &TraceOptions::default()).expect("traced run");
            assert!(m.error.is_none(), "{via:?}: {:?}", m.error);
            let b = m.breakdown.as_ref().expect("a breakdown");
            let matched = b.counters["breakdown.samples_matched"];
            assert!(matched >= 180, "{via:?}: {matched} of 200 samples show the path's own raise event: {:?}", b.notes);
            assert!(b.segments.iter().any(|s| s.segment.contains("irq raised")), "{via:?}: {:?}", b.segments);
        }
    }
}

//! `irqlab run … --breakdown`: flag errors, and on a host with /dev/kvm and tracefs (root) a run
//! that prints sample paths and a breakdown, records it like a simulated one (report and compare
//! read it), and saves a recording the splitter re-reads. KVM parts skip with a printed reason.
use std::process::Output;

testkit::irqlab_fn!();

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn trace_needs_breakdown() {
    let d = tempfile::tempdir().unwrap();
    let o = irqlab(&["run", "timer", "--trace", "3"], d.path());
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("--breakdown"), "{:?}", text(&o));
}

fn usable() -> Result<(), String> {
    kvm::kvm_available().map_err(|e| e.to_string())?;
    kvm::preflight(&kvm::BenchConfig::default()).map(|_| ()).map_err(|e| e.to_string())
}

mod needs_tracefs {
    use super::*;

    #[test]
    #[ignore = "needs /dev/kvm and tracefs (root): scripts/test.sh runs it where both are there"]
    fn breakdown_is_printed_recorded_and_reported() {
        testkit::require(testkit::Resource::Tracefs);
        usable().unwrap_or_else(|why| panic!("this test needs /dev/kvm and tracefs: {why}"));
        let d = tempfile::tempdir().unwrap();
        let o = irqlab(&["run", "device", "--samples", "300", "--breakdown", "--trace", "2", "--out", "m"], d.path());
        let (out, err) = text(&o);
        assert!(o.status.success(), "{out}\n{err}");
        assert!(out.contains("device_irqfd #0 @ tsc ") && out.contains("device_irqfd #1 @ tsc "), "{out}");
        assert!(out.contains("SEGMENT") && out.contains("irq raised") && out.contains("guest ISR"), "{out}");
        assert!(out.contains("tracing overhead"), "{out}");
        let r = results::read_json(&d.path().join("m/result.json")).unwrap();
        let c = &r.configs[0];
        let segs = &c.breakdown["device_irqfd"];
        assert_eq!(segs.first().map(|s| s.segment.as_str()), Some("irq raised"));
        let matched = c.counters["breakdown.samples_matched"];
        assert_eq!(matched + c.counters["breakdown.samples_unmatched"], 300);
        assert!(c.figures["breakdown_vs_measured_mean"].value.abs() < 5.0, "{:?}", c.notes);
        for f in ["untraced_p50", "untraced_p99", "traced_p50", "traced_p99"] {
            assert!(c.figures[f].value > 0.0, "{f}");
        }
        // The recording re-splits to the same segments.
        let rec_text = std::fs::read_to_string(d.path().join("m/trace-device.txt")).unwrap();
        let rec = kvm::tracefs::Recording::parse(&rec_text, "trace-device.txt").unwrap();
        let again = kvm::tracefs::analyse(&rec, "device_irqfd", 0).segments;
        assert_eq!(again.len(), segs.len());
        for (a, b) in again.iter().zip(segs) {
            assert_eq!((&a.segment, a.count), (&b.segment, b.count));
            assert!((a.mean_ns - b.mean_ns).abs() < 1e-6 * b.mean_ns.max(1.0), "{a:?} vs {b:?}");
        }
        // report and compare take it as they take a simulated result.
        let o = irqlab(&["report", "m/result.json", "-o", "r.html"], d.path());
        assert!(o.status.success(), "{:?}", text(&o));
        let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
        assert!(html.contains("irq raised") && html.contains("vCPU thread runs"), "the report shows the measured segments");
        let o = irqlab(&["compare", "m/result.json", "m/result.json"], d.path());
        assert!(o.status.success(), "{:?}", text(&o));
    }
}

//! The breakdown splitter on traces recorded with `irqlab run <bench> --samples 300 --breakdown`
//! on a nested kvm_pvm host (tests/data/pvm-*.txt), and on hand-edited copies with lost and
//! reordered events (tests/data/make_edited.py). No KVM or tracefs needed.
use kvm::tracefs::{analyse, Breakdown, Recording};

fn load(name: &str, text: &str) -> Recording {
    Recording::parse(text, name).unwrap_or_else(|e| panic!("{e}"))
}

/// Mean of arrival − start over every sample, ns: what the measured class's mean is made of.
fn measured_mean_ns(r: &Recording) -> f64 {
    let sum: f64 = r.stamps.iter().map(|s| (s.arrival - s.start) as f64).sum();
    sum / r.stamps.len() as f64 * 1e6 / r.tsc_khz as f64
}

fn counter(b: &Breakdown, k: &str) -> u64 {
    b.counters.get(k).copied().unwrap_or_else(|| panic!("counter {k} missing: {:?}", b.counters))
}

fn sum_of_means(b: &Breakdown) -> f64 {
    b.segments.iter().map(|s| s.mean_ns).sum()
}

/// The segment means add up to the mean of every sample's measured latency within `tol` (relative).
fn assert_adds_up(name: &str, b: &Breakdown, r: &Recording, tol: f64) {
    let (sum, mean) = (sum_of_means(b), measured_mean_ns(r));
    assert!((sum - mean).abs() / mean < tol, "{name}: segment means add up to {sum} ns, measured mean {mean} ns");
}

/// `unmatched` of 300 samples unmatched, the others through every segment.
fn assert_unmatched(b: &Breakdown, unmatched: u64) {
    assert_eq!(counter(b, "breakdown.samples_unmatched"), unmatched);
    assert_eq!(counter(b, "breakdown.samples_matched"), 300 - unmatched);
    assert!(b.segments.iter().all(|s| s.count == 300 - unmatched), "{:?}", b.segments);
}

fn segments(b: &Breakdown) -> Vec<&str> {
    b.segments.iter().map(|s| s.segment.as_str()).collect()
}

const TIMER: &str = include_str!("data/pvm-timer.txt");
const DEVICE: &str = include_str!("data/pvm-device.txt");
const IPI: &str = include_str!("data/pvm-ipi.txt");

#[test]
fn recorded_runs_split_completely_and_add_up() {
    for (name, text, class, path) in [
        ("pvm-timer.txt", TIMER, "timer", vec!["host timer fires", "vCPU woken", "vCPU thread runs", "interrupt accepted", "guest ISR"]),
        ("pvm-device.txt", DEVICE, "device_irqfd", vec!["irq raised", "interrupt accepted", "vCPU woken", "vCPU thread runs", "guest ISR"]),
        ("pvm-ipi.txt", IPI, "ipi_one_way", vec!["ICR write", "interrupt accepted", "vCPU woken", "vCPU thread runs", "guest ISR"]),
    ] {
        let r = load(name, text);
        assert_eq!(r.stamps.len(), 300, "{name}");
        let b = analyse(&r, class, 2);
        assert_eq!(counter(&b, "breakdown.samples_matched"), 300, "{name}: {:?}", b.notes);
        assert_eq!(counter(&b, "breakdown.samples_unmatched"), 0, "{name}");
        assert_eq!(segments(&b), path, "{name}");
        assert!(b.segments.iter().all(|s| s.count == 300), "{name}: every matched sample goes through every segment");
        // kvm_pvm does not emit kvm_entry: it is enabled, never fires, and the notes say so.
        assert!(b.notes.iter().any(|n| n.contains("never fired") && n.contains("kvm_entry")), "{name}: {:?}", b.notes);
        assert_adds_up(name, &b, &r, 0.001);
        assert_eq!(b.paths.len(), 2);
        let p50 = b.figures.iter().find(|f| f.0 == "breakdown_p50: guest ISR").map(|f| f.1).unwrap();
        assert!(p50 > 0.0 && p50 < b.segments.last().unwrap().mean_ns * 10.0, "{name}: {p50}");
        assert!(b.paths[0].starts_with(&format!("{class} #0 @ tsc ")), "{}", b.paths[0]);
    }
}

#[test]
fn timer_host_timer_fires_near_the_deadline() {
    // The emulated TSC deadline is an hrtimer on the host: it fires within tens of µs of the
    // deadline on this host (the scheduler, not the timer, is where the time goes).
    let b = analyse(&load("pvm-timer.txt", TIMER), "timer", 0);
    let fire = b.segments.iter().find(|s| s.segment == "host timer fires").unwrap();
    assert!(fire.mean_ns < 50_000.0, "{fire:?}");
}

#[test]
fn lost_events_are_counted_not_dropped() {
    let r = load("pvm-timer-lost.txt", include_str!("data/pvm-timer-lost.txt"));
    let b = analyse(&r, "timer", 0);
    assert_unmatched(&b, 10);
    assert_eq!(counter(&b, "breakdown.missing.kvm_apic_accept_irq"), 10);
    assert_eq!(counter(&b, "breakdown.events_lost"), 10, "the [LOST 10 EVENTS] marker");
    assert_eq!(counter(&b, "breakdown.events_out_of_order"), 0);
    assert!(b.notes.iter().any(|n| n.contains("10 of 300 samples unmatched")), "{:?}", b.notes);
    assert_adds_up("pvm-timer-lost.txt", &b, &r, 0.05);
}

#[test]
fn reordered_events_are_counted_not_dropped() {
    let r = load("pvm-ipi-reordered.txt", include_str!("data/pvm-ipi-reordered.txt"));
    let b = analyse(&r, "ipi_one_way", 0);
    assert_eq!(counter(&b, "breakdown.events_out_of_order"), 5);
    assert_unmatched(&b, 5);
    assert!(b.notes.iter().any(|n| n.contains("kvm_apic_accept_irq only before `ICR write`")), "{:?}", b.notes);
    assert_adds_up("pvm-ipi-reordered.txt", &b, &r, 0.05);
}

#[test]
fn breakdown_lands_in_the_result_like_a_simulated_one() {
    let b = analyse(&load("pvm-device.txt", DEVICE), "device_irqfd", 0);
    let mut r = results::ConfigResult::new("device");
    let mut rec = results::LatencyRecorder::new(0);
    let rd = load("pvm-device.txt", DEVICE);
    for s in &rd.stamps {
        rec.record(((s.arrival - s.start) as f64 * 1e6 / rd.tsc_khz as f64).round() as u64);
    }
    r.classes.insert("device_irqfd".into(), rec.finish());
    b.apply(&mut r);
    assert_eq!(r.breakdown["device_irqfd"], b.segments);
    assert!(r.figures["breakdown_vs_measured_mean"].value.abs() < 5.0);
    assert_eq!(r.counters["breakdown.samples_matched"], 300);
}

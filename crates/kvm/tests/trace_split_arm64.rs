//! The breakdown splitter on KVM/arm64 recordings: `irqlab run <bench> --breakdown --samples 50`
//! inside the Arm lab (Debian's 6.1 arm64 kernel under QEMU with `-icount`, so the times are
//! instruction counts, not hardware latencies; `scripts/arm-lab.sh kvm --gic v4 --icount -- run
//! … --breakdown`), in tests/data/lab-arm64-*.txt. The traces were taken with the `mono_raw`
//! clock and put on the counter (`tracefs::clock`) before they were saved. No KVM needed.
use kvm::tracefs::path::TraceArch;
use kvm::tracefs::{analyse, Breakdown, Recording};

fn counter(b: &Breakdown, k: &str) -> u64 {
    b.counters.get(k).copied().unwrap_or_else(|| panic!("counter {k} missing: {:?}", b.counters))
}

fn measured_mean_ns(r: &Recording) -> f64 {
    let sum: f64 = r.stamps.iter().map(|s| (s.arrival - s.start) as f64).sum();
    sum / r.stamps.len() as f64 * 1e6 / r.tsc_khz as f64
}

const RECORDINGS: [(&str, &str, &str, &[&str]); 9] = [
    (
        "lab-arm64-timer-wfi.txt",
        include_str!("data/lab-arm64-timer-wfi.txt"),
        "timer",
        &["host timer fires", "vCPU woken", "timer level raised", "vGIC pending", "vCPU leaves halt", "VM entry", "guest ISR"],
    ),
    ("lab-arm64-timer-busy.txt", include_str!("data/lab-arm64-timer-busy.txt"), "timer", &["timer level raised", "vGIC pending", "IRQ exit traced", "VM entry", "guest ISR"]),
    ("lab-arm64-ipi.txt", include_str!("data/lab-arm64-ipi.txt"), "ipi_one_way", &["SGI write traps", "vCPU woken", "vCPU leaves halt", "VM entry", "guest ISR"]),
    (
        "lab-arm64-device-line.txt",
        include_str!("data/lab-arm64-device-line.txt"),
        "device_line",
        &["irq line ioctl", "vGIC pending", "vCPU woken", "vCPU leaves halt", "VM entry", "guest ISR"],
    ),
    (
        "lab-arm64-device-level.txt",
        include_str!("data/lab-arm64-device-level.txt"),
        "device_level",
        &["irqfd raises the SPI", "vCPU woken", "vCPU leaves halt", "VM entry", "guest ISR"],
    ),
    ("lab-arm64-device-msi.txt", include_str!("data/lab-arm64-device-msi.txt"), "device_msi", &["vCPU woken", "vCPU leaves halt", "VM entry", "guest ISR"]),
    // QEMU's edu assigned with VFIO (`--device edu`), the guest raising it: with GICv4 (`--gic v4`)
    // the vLPI reaches the guest with no host event (all of it is the guest's segment); without
    // (`--gic v3`) every MSI passes the host's VFIO handler.
    ("lab-arm64-vfio-msi-gicv4.txt", include_str!("data/lab-arm64-vfio-msi-gicv4.txt"), "device_vfio-msi", &["vCPU woken", "VM entry", "guest ISR"]),
    (
        "lab-arm64-vfio-msi-software.txt",
        include_str!("data/lab-arm64-vfio-msi-software.txt"),
        "device_vfio-msi",
        &["host IRQ (VFIO handler)", "vCPU woken", "vCPU leaves halt", "VM entry", "guest ISR"],
    ),
    // INTx is never a vLPI: the host handler, the irqfd's inline SPI injection, the wake-up.
    (
        "lab-arm64-vfio-intx.txt",
        include_str!("data/lab-arm64-vfio-intx.txt"),
        "device_vfio-intx",
        &["host IRQ (VFIO handler)", "vGIC pending", "vCPU woken", "vCPU leaves halt", "VM entry", "guest ISR"],
    ),
];

#[test]
fn arm64_recordings_split_completely_along_kvm_arm64s_path() {
    for (name, text, class, path) in RECORDINGS {
        let r = Recording::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.arch, TraceArch::Aarch64, "{name}");
        assert_eq!(r.stamps.len(), 50, "{name}");
        let b = analyse(&r, class, 1);
        assert_eq!(counter(&b, "breakdown.samples_matched"), 50, "{name}: {:?}", b.notes);
        assert_eq!(counter(&b, "breakdown.events_out_of_order"), 0, "{name}");
        let segs: Vec<&str> = b.segments.iter().map(|s| s.segment.as_str()).collect();
        assert_eq!(segs, path, "{name}");
        let sum: f64 = b.segments.iter().map(|s| s.mean_ns).sum();
        let mean = measured_mean_ns(&r);
        assert!((sum - mean).abs() / mean < 1e-6, "{name}: segment means add up to {sum} ns, measured mean {mean} ns");
        assert!(b.segments.iter().all(|s| s.mean_ns >= 0.0 && s.count == 50), "{name}: {:?}", b.segments);
    }
}

/// The same recording read as if x86's KVM had written it follows x86's path: only the generic
/// events (hrtimer, sched_wakeup, kvm_vcpu_wakeup, kvm_entry) match, x86's own never fire. The
/// path is chosen by the recording's `arch`, not by the machine that reads it.
#[test]
fn the_path_follows_the_recordings_arch() {
    let (name, text, class, arm_path) = RECORDINGS[0];
    let as_x86 = text.replacen("# arch=aarch64 ", "# arch=x86_64 ", 1);
    let r = Recording::parse(&as_x86, name).unwrap();
    let b = analyse(&r, class, 0);
    let segs: Vec<&str> = b.segments.iter().map(|s| s.segment.as_str()).collect();
    assert_ne!(segs, arm_path);
    assert!(!segs.contains(&"timer level raised"), "{segs:?}");
    assert!(b.notes.iter().any(|n| n.contains("never fired") && n.contains("kvm_apic_accept_irq")), "{:?}", b.notes);
    let e = Recording::parse(&text.replacen("# arch=aarch64 ", "# arch=riscv64 ", 1), name).unwrap_err().to_string();
    assert!(e.contains(name) && e.contains("line 2") && e.contains("`arch`"), "{e}");
}

/// The WFI timer path in the lab: the trap, the block and the wake-up are most of the latency;
/// the busy path has none of them (the counts the S3 and KVM WFI models are checked against in
/// docs/arm64-lab.md).
#[test]
fn wfi_costs_the_wakeup_the_busy_path_does_not_have() {
    let seg = |i: usize, s: &str| {
        let (name, text, class, _) = RECORDINGS[i];
        let b = analyse(&Recording::parse(text, name).unwrap(), class, 0);
        b.segments.iter().find(|x| x.segment == s).map(|x| x.mean_ns)
    };
    let woken = seg(0, "vCPU woken").unwrap() + seg(0, "vCPU leaves halt").unwrap();
    assert!(woken > 0.3 * measured_mean_ns(&Recording::parse(RECORDINGS[0].1, "wfi").unwrap()), "wake-up {woken} ns");
    assert_eq!(seg(1, "vCPU woken"), None, "a spinning vCPU is never woken");
}

/// GICv4 direct injection takes the host out of the assigned device's interrupt: with it, no
/// host event lies between the guest's write and its handler; without, the host's VFIO handler,
/// the wake-up and the entry are most of the time.
#[test]
fn direct_injection_leaves_only_the_guests_segment() {
    let split = |i: usize| {
        let (name, text, class, _) = RECORDINGS[i];
        analyse(&Recording::parse(text, name).unwrap(), class, 0)
    };
    let direct = split(6);
    let guest = direct.segments.iter().find(|s| s.segment == "guest ISR").unwrap().mean_ns;
    let host: f64 = direct.segments.iter().filter(|s| s.segment != "guest ISR").map(|s| s.mean_ns).sum();
    assert_eq!(host, 0.0, "{:?}", direct.segments);
    assert!(guest > 0.0);
    assert_eq!(counter(&direct, "breakdown.skipped.kvm_entry"), 50, "the vCPU never left the guest");
    let software = split(7);
    let host: f64 = software.segments.iter().filter(|s| s.segment != "guest ISR").map(|s| s.mean_ns).sum();
    assert!(host > 10.0 * guest, "host part {host} ns vs the direct path's {guest} ns");
}

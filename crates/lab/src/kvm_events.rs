//! `irqlab-lab kvm --exit-reasons`: the lab's L1 kernel traces its own KVM while irqlab runs
//! (tracefs events `kvm:*`), and `/init` writes `kvm-exit-reasons.txt` into `--out`: every
//! `kvm_exit` counted by exception type and class, the trapping ones also by guest PC, and every
//! event counted by name; events this kernel does not have are listed as `missing`.
//!
//! Why: KVM/arm64's binary stats count exits only by a few reasons (wfi/wfe, hvc, mmio), so the
//! rest of "exits per interrupt" has no name there. `kvm_exit` (arch/arm64/kvm/trace_arm.h, Linux
//! 6.1: `TP_printk("%s: HSR_EC: 0x%04x (%s), PC: 0x%016lx", ...)`) names each one: IRQ (a host
//! interrupt while the guest ran), TRAP with its exception class (WFx, SYS64, DABT_LOW…).
//! Counting is done inside the lab with busybox (sed, awk, sort, uniq) so only the counts cross
//! the serial console.

/// The KVM/arm64 events enabled (Linux 6.1 names: arch/arm64/kvm/trace_arm.h, trace_handle_exit.h,
/// vgic/trace.h, include/trace/events/kvm.h).
pub const EVENTS: [&str; 11] = [
    "kvm_exit",
    "kvm_entry",
    "kvm_wfx_arm64",
    "kvm_sys_access",
    "kvm_mmio",
    "kvm_irq_line",
    "kvm_set_irq",
    "vgic_update_irq_pending",
    "kvm_timer_update_irq",
    "kvm_vcpu_wakeup",
    "kvm_userspace_exit",
];

/// The file `/init` writes into `--out`.
pub const FILE: &str = "kvm-exit-reasons.txt";

/// Shell lines run before irqlab: enable the events (a missing one is recorded, not fatal).
pub fn before() -> String {
    let evs = EVENTS.join(" ");
    format!(
        "T=/sys/kernel/tracing\necho 16384 > $T/buffer_size_kb\n: > /tmp/missing\nfor e in {evs}; do echo 1 > $T/events/kvm/$e/enable 2>/dev/null || echo $e >> /tmp/missing; done\necho 1 > $T/tracing_on\n"
    )
}

/// Shell lines run after irqlab (after its exit status was printed): stop tracing, count.
pub fn after() -> String {
    format!(
        r##"echo 0 > $T/tracing_on
( echo "# kvm_exit by type and exception class"
  sed -n 's/.*kvm_exit: \(.*\), PC: .*/\1/p' $T/trace | sort | uniq -c
  echo "# kvm_exit TRAP by exception class and guest PC"
  sed -n 's/.*kvm_exit: TRAP: \(.*\), PC: \(0x[0-9a-f]*\).*/\1 PC \2/p' $T/trace | sort | uniq -c
  echo "# events by name"
  awk '$1 !~ /^#/ {{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {{ print $(i+1); break }} }}' $T/trace | sort | uniq -c
  echo "# lost events (buffer overruns per CPU)"
  grep -h overrun $T/per_cpu/cpu*/stats
  for e in $(cat /tmp/missing); do echo "missing $e"; done ) > /out/{FILE}
"##
    )
}

/// A `kvm-exit-reasons.txt` read back: (count, text) per line of the first section.
pub fn exits_by_class(text: &str) -> Vec<(u64, String)> {
    text.lines()
        .skip_while(|l| !l.starts_with("# kvm_exit by type"))
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let l = l.trim();
            let (n, rest) = l.split_once(' ')?;
            Some((n.parse().ok()?, rest.trim().to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_enables_every_event_and_records_missing_ones() {
        let b = before();
        for e in EVENTS {
            assert!(b.contains(e), "{e}");
        }
        assert!(b.contains("|| echo $e >> /tmp/missing") && b.ends_with("echo 1 > $T/tracing_on\n"));
        let a = after();
        assert!(a.starts_with("echo 0 > $T/tracing_on\n") && a.contains("> /out/kvm-exit-reasons.txt"), "{a}");
        assert!(a.contains("{ print $(i+1); break }"), "awk braces survive format!: {a}");
    }

    #[test]
    fn the_first_section_is_read_back() {
        let t = "# kvm_exit by type and exception class\n    101 TRAP: HSR_EC: 0x0001 (WFx)\n     12 IRQ: HSR_EC: 0x0000 (UNKNOWN)\n# kvm_exit TRAP by exception class and guest PC\n    101 HSR_EC: 0x0001 (WFx) PC 0x40001000\n";
        assert_eq!(exits_by_class(t), vec![(101, "TRAP: HSR_EC: 0x0001 (WFx)".to_string()), (12, "IRQ: HSR_EC: 0x0000 (UNKNOWN)".to_string())]);
    }
}

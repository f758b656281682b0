//! How each interrupt of an assigned device reached the guest. With GICv4 direct injection the
//! ITS hands the vLPI to the resident vPE and neither the host nor KVM runs any code, so what is
//! counted is the other two ways, in the host's /proc/interrupts (kernel/irq/proc.c
//! `show_interrupts`: per-CPU counts, then chip name, hwirq, trigger and action name):
//! - **software**: the host's own VFIO handler ran (`vfio-msi[0](<BDF>)`, `vfio-intx(<BDF>)`,
//!   drivers/vfio/pci/vfio_pci_intrs.c `vfio_msihandler`/`vfio_intx_handler`): it signals the
//!   eventfd and KVM's irqfd injects — KVM's software path. With GICv4 forwarding in place the
//!   host LPI is unmapped (VMAPTI replaced it), so this stays 0;
//! - **doorbell**: a GICv4 vPE doorbell fired (chip `GICv4-vpe`, action `vcpu`,
//!   arch/arm64/kvm/vgic/vgic-v4.c `vgic_v4_doorbell_handler`): the vLPI arrived while its vPE was
//!   not resident and the host had to wake or reschedule the vCPU;
//! - **direct** = interrupts − software − doorbell (floored at 0): inferred, since a direct
//!   delivery leaves no trace on the host. Doorbells of vPEs of other VMs would be counted too;
//!   irqlab's VM is the only one in the lab.
use std::collections::BTreeMap;

/// Sum of the per-CPU counts of every /proc/interrupts line whose description (chip, hwirq,
/// trigger, action) contains `needle`.
pub fn count(interrupts: &str, needle: &str) -> u64 {
    let mut lines = interrupts.lines();
    let cpus = lines.next().map(|h| h.split_whitespace().filter(|w| w.starts_with("CPU")).count()).unwrap_or(0);
    lines
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            w.next().and_then(|irq| irq.strip_suffix(':')).filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))?;
            let counts: Vec<u64> = w.by_ref().take(cpus).map_while(|c| c.parse().ok()).collect();
            let rest: Vec<&str> = w.collect();
            rest.join(" ").contains(needle).then(|| counts.iter().sum::<u64>())
        })
        .sum()
}

/// The action name the host's VFIO handler has in /proc/interrupts for `bdf`.
pub fn host_handler_name(msi: bool, bdf: &str) -> String {
    if msi {
        format!("vfio-msi[0]({bdf})")
    } else {
        format!("vfio-intx({bdf})")
    }
}

/// The chip name of GICv4 vPE doorbells.
pub const DOORBELL_CHIP: &str = "GICv4-vpe";

/// /proc/interrupts counts of one path, read before and after a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub software: u64,
    pub doorbell: u64,
}

impl Snapshot {
    pub fn read(interrupts: &str, handler: &str) -> Snapshot {
        Snapshot { software: count(interrupts, handler), doorbell: count(interrupts, DOORBELL_CHIP) }
    }
}

/// The delivery counters for `interrupts` taken by the guest between `before` and `after`
/// (`delivery.*`, documented in docs/arm64-lab.md), and a note saying how they were obtained.
pub fn counters(interrupts: u64, before: Snapshot, after: Snapshot) -> (BTreeMap<String, u64>, String) {
    let software = after.software.saturating_sub(before.software);
    let doorbell = after.doorbell.saturating_sub(before.doorbell);
    let direct = interrupts.saturating_sub(software + doorbell);
    let mut m = BTreeMap::new();
    m.insert("delivery.interrupts".into(), interrupts);
    m.insert("delivery.software".into(), software);
    m.insert("delivery.doorbell".into(), doorbell);
    m.insert("delivery.direct".into(), direct);
    let over = if software + doorbell > interrupts {
        format!(" (software + doorbell exceed the {interrupts} interrupts: extra host interrupts or doorbells without a sample; direct floored at 0)")
    } else {
        String::new()
    };
    let note = format!(
        "delivery of the {interrupts} device interrupts: {software} through KVM's software path (the host's VFIO handler ran: /proc/interrupts), {doorbell} woke a non-resident vPE by its GICv4 doorbell (/proc/interrupts {DOORBELL_CHIP}), {direct} direct (inferred: the rest; a direct vLPI leaves no trace on the host){over}"
    );
    (m, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "           CPU0       CPU1       \n 11:       4375       4115     GICv3  27 Level     arch_timer\n 60:          0          0  ITS-MSI 16384 Edge      vfio-msi[0](0000:00:02.0)\n 61:          3          1 GICv4-vpe   0 Edge      vcpu\nIPI0:        10         12       Rescheduling interrupts\nErr:          0\n";
    const AFTER: &str = "           CPU0       CPU1       \n 11:       4400       4200     GICv3  27 Level     arch_timer\n 60:          7          2  ITS-MSI 16384 Edge      vfio-msi[0](0000:00:02.0)\n 61:         13          1 GICv4-vpe   0 Edge      vcpu\nIPI0:        10         12       Rescheduling interrupts\nErr:          0\n";

    #[test]
    fn lines_are_summed_over_cpus_by_their_description() {
        assert_eq!(count(BEFORE, "arch_timer"), 8490);
        assert_eq!(count(AFTER, &host_handler_name(true, "0000:00:02.0")), 9);
        assert_eq!(count(AFTER, DOORBELL_CHIP), 14);
        assert_eq!(count(AFTER, &host_handler_name(false, "0000:00:02.0")), 0);
        assert_eq!(count(AFTER, "Rescheduling"), 0, "IPI lines have no irq number and are not counted");
        assert_eq!(host_handler_name(false, "0000:00:02.0"), "vfio-intx(0000:00:02.0)");
    }

    #[test]
    fn direct_is_what_neither_host_path_saw() {
        let h = host_handler_name(true, "0000:00:02.0");
        let (m, note) = counters(101, Snapshot::read(BEFORE, &h), Snapshot::read(AFTER, &h));
        assert_eq!((m["delivery.software"], m["delivery.doorbell"], m["delivery.direct"], m["delivery.interrupts"]), (9, 10, 82, 101));
        assert!(note.contains("82 direct (inferred"), "{note}");
        let (m, note) = counters(5, Snapshot::read(BEFORE, &h), Snapshot::read(AFTER, &h));
        assert_eq!(m["delivery.direct"], 0);
        assert!(note.contains("floored at 0"), "{note}");
    }
}

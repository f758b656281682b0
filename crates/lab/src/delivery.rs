//! How each device interrupt was delivered, and what Xen did for it, from QEMU's own log
//! (`-d int -D FILE` plus the GIC trace events of [`TRACE_EVENTS`], QEMU 7.2 formats).
//!
//! Why QEMU's view: it is the GIC, so it sees every MSI translation and which kind of interrupt
//! table entry it hit, whatever Xen does. Per MSI write (`gicv3_its_translation_write`, ITS
//! `process_its_cmd`/`do_process_its_cmd` in hw/intc/arm_gicv3_its.c) the next
//! `gicv3_its_ite_read` says the entry's type:
//! - `inttype 0` (virtual, mapped by the series' VMAPTI, `its_vlpi_map` in 0006): the GIC makes the
//!   vLPI pending in the vPE's table itself; if the vPE is not resident it raises the entry's
//!   doorbell, a physical LPI Xen takes (`gicv4_doorbell` handling, patch 0017). Doorbells are
//!   counted as Xen's ICC_IAR1 reads returning a doorbell INTID (those named by VMAPTI/VMOVI or
//!   the entry), and **direct** = virtual translations − doorbells;
//! - `inttype 1` (physical): Xen takes the LPI (`gic_interrupt` → `vgic_vcpu_inject_lpi`,
//!   xen/arch/arm/gic-v3-lpi.c) and injects it through a list register: the **software path**.
//!
//! Xen's entries are the exceptions QEMU logs with target EL2 (`...from ELx to EL2`), by class.
//! Only the part of the log between two byte offsets is read: the lab notes the log's size when
//! dom0 prints the start and the end of a fio job, so boot work is not counted per I/O.
use std::collections::BTreeMap;

/// The events the lab asks QEMU for (each as one `-trace` argument).
pub const TRACE_EVENTS: [&str; 7] =
    ["gicv3_its_cmd_*", "gicv3_its_translation_write", "gicv3_its_ite_read", "gicv3_icc_iar1_read", "gicv3_icv_iar_read", "gicv3_ich_lr_write", "gicv3_redist_write"];

/// GICR_VPENDBASER's offset in a GICv4 redistributor (VLPI_base frame at +128 KiB, register +0x78).
const VPENDBASER: u64 = 0x2_0078;

/// The first LPI INTID (GICv3 architecture: LPIs start at 8192).
const LPI_BASE: u64 = 8192;
const SPURIOUS: u64 = 0x3ff;

/// This module's one error type: a log that is not QEMU's.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("QEMU log {0}: no exception or GIC trace lines (was QEMU run with -d int and the trace events?)")]
    Empty(String),
}

/// What one window of the log shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// MSI writes to the ITS (every device).
    pub msi: u64,
    /// … whose interrupt table entry was virtual (GICv4 VLPI mapping).
    pub msi_virtual: u64,
    /// … physical (Xen takes it).
    pub msi_physical: u64,
    /// … that hit no valid entry (the interrupt is lost).
    pub msi_unmapped: u64,
    /// Doorbell LPIs Xen acknowledged.
    pub doorbells: u64,
    /// LPIs dom0 acknowledged (ICV_IAR1 reads ≥ 8192).
    pub dom0_lpi_acks: u64,
    /// List-register writes carrying an LPI (Xen's software injection).
    pub lr_lpi_writes: u64,
    /// Exceptions taken to EL2, by QEMU's class name (`IRQ`, `Hypervisor Call`, `Data Abort`, …).
    pub el2_entries: BTreeMap<String, u64>,
    /// ITS commands by name (`VMAPTI`, `VMOVI`, `MAPTI`, `INV`, …).
    pub its_commands: BTreeMap<String, u64>,
    /// GICR_VPENDBASER writes making a vPE resident (Valid=1) and non-resident (Valid=0).
    pub vpe_resident: u64,
    pub vpe_non_resident: u64,
}

impl Counts {
    /// Virtual translations that were not doorbelled: the GIC delivered them to the resident vPE.
    pub fn direct(&self) -> u64 {
        self.msi_virtual.saturating_sub(self.doorbells)
    }
    /// LPIs Xen took and injected through its vITS.
    pub fn software(&self) -> u64 {
        self.msi_physical
    }
    pub fn el2_total(&self) -> u64 {
        self.el2_entries.values().sum()
    }
    /// (figure name, value, unit) for a result; per-I/O figures when `ios` > 0.
    pub fn figures(&self, ios: u64) -> Vec<(String, f64, &'static str)> {
        let mut v = vec![
            ("lab.lpi_direct".to_string(), self.direct() as f64, "interrupts"),
            ("lab.lpi_doorbell".to_string(), self.doorbells as f64, "interrupts"),
            ("lab.lpi_xen_software".to_string(), self.software() as f64, "interrupts"),
            ("lab.msi_unmapped".to_string(), self.msi_unmapped as f64, "interrupts"),
            ("lab.dom0_lpi_acks".to_string(), self.dom0_lpi_acks as f64, "interrupts"),
            ("lab.xen_entries".to_string(), self.el2_total() as f64, "exceptions to EL2"),
            ("lab.xen_irq_entries".to_string(), self.el2_entries.get("IRQ").copied().unwrap_or(0) as f64, "exceptions to EL2"),
            ("lab.xen_wfx_traps".to_string(), self.el2_entries.get("WFx trap").copied().unwrap_or(0) as f64, "exceptions to EL2"),
            ("lab.vpe_made_resident".to_string(), self.vpe_resident as f64, "GICR_VPENDBASER writes"),
            ("lab.vpe_made_non_resident".to_string(), self.vpe_non_resident as f64, "GICR_VPENDBASER writes"),
        ];
        if ios > 0 {
            let per = |x: u64| x as f64 / ios as f64;
            v.push(("lab.xen_entries_per_io".into(), per(self.el2_total()), "exceptions to EL2 per I/O"));
            v.push(("lab.xen_irq_entries_per_io".into(), per(self.el2_entries.get("IRQ").copied().unwrap_or(0)), "IRQ exceptions to EL2 per I/O"));
            v.push(("lab.xen_wfx_traps_per_io".into(), per(self.el2_entries.get("WFx trap").copied().unwrap_or(0)), "WFI/WFE traps to EL2 per I/O"));
            v.push(("lab.lpi_direct_per_io".into(), per(self.direct()), "per I/O"));
            v.push(("lab.lpi_doorbell_per_io".into(), per(self.doorbells), "per I/O"));
            v.push(("lab.lpi_xen_software_per_io".into(), per(self.software()), "per I/O"));
        }
        v
    }
}

/// `key 0x1a` / `key 1` → the number after `key ` in `line`.
fn field(line: &str, key: &str) -> Option<u64> {
    let i = line.find(key)? + key.len();
    let w = line[i..].split([' ', ',', ':']).next()?;
    match w.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => w.parse().ok(),
    }
}

/// One pass over a log window: the counts, and what a line leaves for the next ones.
#[derive(Default)]
struct Tally {
    c: Counts,
    doorbell_ids: std::collections::BTreeSet<u64>,
    /// A TRANSLATER write whose ITE read has not come yet.
    pending_translation: bool,
    /// The exception of a `Taking exception` line, until its `...from` line.
    exception: Option<String>,
    /// The last exception taken to EL2, until its `...with ESR` line.
    last_el2: Option<String>,
    iar1: Vec<u64>,
    seen: bool,
}

impl Tally {
    /// QEMU's `-d int` lines (`Taking exception …`, `...from … to EL2`, `...with ESR …`);
    /// true when `l` was one.
    fn exception_line(&mut self, l: &str) -> bool {
        if let Some(rest) = l.strip_prefix("Taking exception ") {
            self.seen = true;
            self.exception = rest.split_once('[').and_then(|(_, r)| r.split_once(']')).map(|(n, _)| n.to_string());
        } else if let Some(rest) = l.strip_prefix("...from ") {
            if let Some(n) = self.exception.take() {
                if rest.trim_end().ends_with("to EL2") {
                    *self.c.el2_entries.entry(n.clone()).or_default() += 1;
                    self.last_el2 = Some(n);
                }
            }
        } else if let Some(rest) = l.strip_prefix("...with ESR ") {
            self.syndrome(rest);
        } else {
            return false;
        }
        true
    }

    /// QEMU files trapped WFI/WFE (EC 0x01) and trapped system registers (EC 0x18) under
    /// "Undefined Instruction"; the syndrome's class names them.
    fn syndrome(&mut self, esr: &str) {
        let Some(n) = self.last_el2.take().filter(|n| n == "Undefined Instruction") else { return };
        let ec = esr.split('/').next().and_then(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok());
        let named = match ec {
            Some(0x01) => "WFx trap",
            Some(0x18) => "sysreg trap",
            _ => return,
        };
        let e = &mut self.c.el2_entries;
        *e.entry(n.clone()).or_default() -= 1;
        if e.get(&n) == Some(&0) {
            e.remove(&n);
        }
        *e.entry(named.into()).or_default() += 1;
    }

    /// One `gicv3_*` trace event.
    fn gic_event(&mut self, ev: &str, l: &str) {
        let c = &mut self.c;
        match ev {
            "gicv3_its_translation_write" => {
                c.msi += 1;
                self.pending_translation = true;
            }
            "gicv3_its_ite_read" if self.pending_translation => {
                self.pending_translation = false;
                match (field(l, "valid ") == Some(1), field(l, "inttype ")) {
                    (true, Some(0)) => {
                        c.msi_virtual += 1;
                        self.doorbell_ids.extend(field(l, "doorbell ").filter(|&d| d != SPURIOUS));
                    }
                    (true, Some(_)) => c.msi_physical += 1,
                    _ => c.msi_unmapped += 1,
                }
            }
            // GICR_VPENDBASER: Valid is bit 63.
            "gicv3_redist_write" if field(l, "offset ") == Some(VPENDBASER) => match field(l, "data ").is_some_and(|v| v >> 63 == 1) {
                true => c.vpe_resident += 1,
                false => c.vpe_non_resident += 1,
            },
            "gicv3_icc_iar1_read" => self.iar1.push(field(l, "value ").unwrap_or(SPURIOUS)),
            "gicv3_icv_iar_read" => c.dom0_lpi_acks += u64::from(field(l, "value ").is_some_and(|v| v >= LPI_BASE)),
            // ICH_LR<n>_EL2: vINTID in bits [31:0]; the value is printed in hex.
            "gicv3_ich_lr_write" => c.lr_lpi_writes += u64::from(field(l, "value ").is_some_and(|v| (v & 0xffff_ffff) >= LPI_BASE)),
            _ => {
                if let Some(cmd) = ev.strip_prefix("gicv3_its_cmd_") {
                    *c.its_commands.entry(cmd.to_uppercase()).or_default() += 1;
                    self.doorbell_ids.extend(field(l, "Dbell_pINTID ").filter(|&d| d != SPURIOUS));
                }
            }
        }
    }
}

/// Counts over `text` (one window of QEMU's `-D` log). The whole log's VMAPTI/VMOVI doorbells
/// are known before the window (mapping precedes use); [`count_window`] passes them in when the
/// window starts later.
pub fn count(text: &str, name: &str) -> Result<Counts, DeliveryError> {
    let mut t = Tally::default();
    for l in text.lines() {
        if t.exception_line(l) {
            continue;
        }
        if let Some(ev) = l.split(' ').next().filter(|e| e.starts_with("gicv3_")) {
            t.seen = true;
            t.gic_event(ev, l);
        }
    }
    if !t.seen {
        return Err(DeliveryError::Empty(name.into()));
    }
    t.c.doorbells = t.iar1.iter().filter(|v| t.doorbell_ids.contains(v)).count() as u64;
    Ok(t.c)
}

/// The doorbell INTIDs the whole log names (VMAPTI/VMOVI `Dbell_pINTID`, virtual entries' `doorbell`).
pub fn doorbell_intids(text: &str) -> Vec<u64> {
    let mut s = std::collections::BTreeSet::new();
    for l in text.lines() {
        if l.starts_with("gicv3_its_cmd_vmapti") || l.starts_with("gicv3_its_cmd_vmovi") {
            if let Some(d) = field(l, "Dbell_pINTID ").filter(|&d| d != SPURIOUS) {
                s.insert(d);
            }
        } else if l.starts_with("gicv3_its_ite_read") && field(l, "inttype ") == Some(0) {
            if let Some(d) = field(l, "doorbell ").filter(|&d| d != SPURIOUS) {
                s.insert(d);
            }
        }
    }
    s.into_iter().collect()
}

/// As [`count`], with doorbells recognised from the whole log (`all`), counted in `window`.
pub fn count_window(all: &str, window: &str, name: &str) -> Result<Counts, DeliveryError> {
    let mut c = count(window, name)?;
    let ids = doorbell_intids(all);
    c.doorbells = window.lines().filter(|l| l.starts_with("gicv3_icc_iar1_read")).filter_map(|l| field(l, "value ")).filter(|v| ids.contains(v)).count() as u64;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as QEMU 7.2 prints them (taken from a lab run of the series).
    const SERIES: &str = "gicv3_its_cmd_vmapti GICv3 ITS: command VMAPI DeviceID 0x10 EventID 0x1 vPEID 0x0 vINTID 0x2001 Dbell_pINTID 0x2000
Taking exception 2 [SVC] on CPU 0
...from EL0 to EL1
gicv3_its_translation_write GICv3 ITS TRANSLATER write: offset 0x40 data 0x1 size 4 requester_id 0x10
gicv3_its_ite_read GICv3 ITS: Interrupt Table read for ITTaddr 0xbdfc6000 EventID 0x1: valid 1 inttype 0 intid 0x2001 ICID 0x0 vPEID 0x0 doorbell 0x2000
Taking exception 14 [Virtual IRQ] on CPU 0
...from EL0 to EL1
gicv3_icv_iar_read GICv3 ICV_IAR1 read cpu 0x0 value 0x2001
gicv3_its_translation_write GICv3 ITS TRANSLATER write: offset 0x40 data 0x1 size 4 requester_id 0x10
gicv3_its_ite_read GICv3 ITS: Interrupt Table read for ITTaddr 0xbdfc6000 EventID 0x1: valid 1 inttype 0 intid 0x2001 ICID 0x0 vPEID 0x0 doorbell 0x2000
Taking exception 5 [IRQ] on CPU 0
...from EL1 to EL2
...with ESR 0x17/0x5e000000
gicv3_icc_iar1_read GICv3 ICC_IAR1 read cpu 0x0 value 0x2000
gicv3_icc_iar1_read GICv3 ICC_IAR1 read cpu 0x0 value 0x3ff
Taking exception 1 [Undefined Instruction] on CPU 0
...from EL1 to EL2
...with ESR 0x1/0x7e00000
Taking exception 1 [Undefined Instruction] on CPU 0
...from EL1 to EL2
...with ESR 0x18/0x62300001
gicv3_redist_write GICv3 redistributor 0x0 write: offset 0x20078 data 0xa0000000bfcd0780 size 8 secure 0
gicv3_redist_write GICv3 redistributor 0x0 write: offset 0x20078 data 0x20000000bfcd0780 size 8 secure 0
gicv3_redist_write GICv3 redistributor 0x0 write: offset 0x78 data 0x40000000bffd0780 size 8 secure 0
Taking exception 5 [IRQ] on CPU 0
...from EL1 to EL2
gicv3_icc_iar1_read GICv3 ICC_IAR1 read cpu 0x0 value 0x1b
gicv3_ich_lr_write GICv3 ICH_LR0_EL2 write cpu 0x0 value 0x50a000000000001b
";

    const BASE: &str = "gicv3_its_translation_write GICv3 ITS TRANSLATER write: offset 0x40 data 0x1 size 4 requester_id 0x10
gicv3_its_ite_read GICv3 ITS: Interrupt Table read for ITTaddr 0xbdfc6000 EventID 0x1: valid 1 inttype 1 intid 0x2021 ICID 0x0 vPEID 0x0 doorbell 0x3ff
Taking exception 5 [IRQ] on CPU 0
...from EL1 to EL2
gicv3_icc_iar1_read GICv3 ICC_IAR1 read cpu 0x0 value 0x2021
gicv3_ich_lr_write GICv3 ICH_LR0_EL2 write cpu 0x0 value 0x5000000000002001
gicv3_its_cmd_inv GICv3 ITS: command INV DeviceID 0x10 EventID 0x1
gicv3_its_translation_write GICv3 ITS TRANSLATER write: offset 0x40 data 0x7 size 4 requester_id 0x10
gicv3_its_ite_read GICv3 ITS: Interrupt Table read for ITTaddr 0xbdfc6000 EventID 0x7: valid 0 inttype 1 intid 0x0 ICID 0x0 vPEID 0x0 doorbell 0x3ff
";

    #[test]
    fn series_direct_and_doorbell() {
        let c = count(SERIES, "q.log").unwrap();
        assert_eq!((c.msi, c.msi_virtual, c.msi_physical), (2, 2, 0));
        assert_eq!(c.doorbells, 1, "0x2000 is the doorbell; 0x1b (a timer PPI) and 0x3ff are not");
        assert_eq!((c.direct(), c.software()), (1, 0));
        assert_eq!(c.dom0_lpi_acks, 1);
        assert_eq!(c.el2_entries.get("IRQ"), Some(&2));
        assert_eq!((c.el2_entries.get("WFx trap"), c.el2_entries.get("sysreg trap"), c.el2_entries.get("Undefined Instruction")), (Some(&1), Some(&1), None));
        assert_eq!(c.el2_total(), 4, "SVC and vIRQ to EL1 are not Xen entries");
        assert_eq!((c.vpe_resident, c.vpe_non_resident), (1, 1), "GICR_PENDBASER (0x78) is not the vPE's");
        assert_eq!(c.its_commands.get("VMAPTI"), Some(&1));
        assert_eq!(c.lr_lpi_writes, 0, "a PPI in a list register is not an LPI");
    }

    #[test]
    fn base_tree_software_path_and_lost_interrupts() {
        let c = count(BASE, "q.log").unwrap();
        assert_eq!((c.msi, c.msi_virtual, c.msi_physical, c.msi_unmapped), (2, 0, 1, 1));
        assert_eq!((c.direct(), c.doorbells, c.software()), (0, 0, 1));
        assert_eq!(c.lr_lpi_writes, 1);
        assert_eq!(c.its_commands.get("INV"), Some(&1));
        let f = c.figures(2);
        assert!(f.iter().any(|(k, v, _)| k == "lab.xen_entries_per_io" && (*v - 0.5).abs() < 1e-9), "{f:?}");
    }

    #[test]
    fn window_uses_the_whole_logs_doorbells() {
        let i = SERIES.find("Taking exception 5").unwrap();
        let c = count_window(SERIES, &SERIES[i..], "q.log").unwrap();
        assert_eq!(c.doorbells, 1, "the VMAPTI naming 0x2000 is outside the window");
        assert_eq!(c.msi, 0);
        assert!(count("no qemu here\n", "x.log").is_err());
    }
}

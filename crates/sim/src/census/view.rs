//! What the timing model needs of one census class, computed from the lab's file (no second
//! format: `results::census::PathCensus` as the lab wrote it).
//!
//! - **Kinds of code.** The file has instructions summed over the paths by exception level
//!   (`by_el`) and by function. EL2 instructions in the hypervisor's entry code — Xen's
//!   `xen/arch/arm/arm64/entry.S`: its local symbols, which Xen's `xen-syms.map` names
//!   `entry.o#…` (`guest_irq`, `guest_sync_slowpath`, `return_from_trap`, …), and the labels it
//!   exports ([`XEN_ENTRY_GLOBALS`]: the vector table, the SError window, the new-vCPU return,
//!   `__context_switch`) — are `hyp_entry`; the rest of EL2 is `hyp_c`; EL1 and EL0 are the
//!   guest's. A class without functions (a census without symbols) times all of EL2 as C and
//!   says so.
//! - **Spread.** The file gives the spread (median, min, max) of the instructions per path as a
//!   whole, not per level: a count at the min or the max keeps the mean per-path split by kind
//!   and scales it to that total. On the shipped runs the timer classes have no spread at all.
//! - **GIC accesses** per path by register class (`timing::GIC_CLASSES`), from the registers.
//!   Counted on QEMU's GICv3 (`gic-version=3`), they are the board's when it has a GICv3; on a
//!   GICv2 board (GIC-400) each CPU-interface system register is read as its GICv2 MMIO
//!   counterpart, register by register (IHI 0069 ch. 12 against IHI 0048 ch. 4–5: `ICC_IAR1_EL1`
//!   → GICC_IAR, `ICC_EOIR1_EL1` → GICC_EOIR, `ICC_DIR_EL1` → GICC_DIR, `ICH_LR<n>_EL2` →
//!   GICH_LR<n>, `ICH_HCR_EL2` → GICH_HCR, …, `ICC_SGI1R_EL1` → GICD_SGIR); `ICC_SRE_*` have no
//!   GICv2 counterpart and are dropped; a redistributor or ITS access has none either and is
//!   refused. The instructions stay those of Xen's GICv3 driver (`gic-v3.c`, `vgic-v3.c`): the
//!   segment says so ([`Translation`]). Timer (`CNT*`) and console registers are not GIC
//!   accesses: a core system-register move is an instruction, priced by its CPI.
//! - **Exceptions** per level from the vector names (`EL2 IRQ from lower EL` → el2), and
//!   **returns** from the `eret` count: one per EL2 entry first (every window ends back in the
//!   guest), any more are the guest's own (EL1).
use std::collections::BTreeMap;

use results::census::PathCensus;

use super::spec::GicIf;
use crate::platform::PathCounts;

/// Labels Xen 4.17's `xen/arch/arm/arm64/entry.S` exports (its other symbols are `entry.o#…`).
pub const XEN_ENTRY_GLOBALS: &[&str] = &["hyp_traps_vector", "abort_guest_exit_start", "abort_guest_exit_end", "return_to_new_vcpu32", "return_to_new_vcpu64", "__context_switch"];

/// Whether an EL2 symbol of Xen is entry code (timed at `cpi.hyp_entry`).
pub fn is_xen_entry(name: &str) -> bool {
    name.starts_with("entry.o#") || XEN_ENTRY_GLOBALS.contains(&name)
}

/// The exception level an exception class names first (`EL2 IRQ from lower EL` → `el2`).
pub fn exception_level(key: &str) -> Option<&'static str> {
    match key.split_whitespace().next() {
        Some("EL2") => Some("el2"),
        Some("EL1") => Some("el1"),
        Some("EL0") => Some("el0"),
        _ => None,
    }
}

/// How a class's GIC accesses were read for the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Translation {
    /// Counted on the board's own GIC generation.
    Same,
    /// Counted on GICv3, read register by register as the GICv2 board's MMIO accesses.
    V3AsV2,
}

/// The class of a GIC register on `board`; `Ok(None)` for a register that is not the GIC's (or
/// has no counterpart on the board and is dropped); `Err` for one the board cannot have.
fn gic_class(block: &str, register: &str, board: GicIf) -> Result<Option<(&'static str, Translation)>, String> {
    use Translation::*;
    Ok(match (board, block) {
        (GicIf::Sysreg, "ICC") => Some(("icc", Same)),
        (GicIf::Sysreg, "ICH") => Some(("ich", Same)),
        (_, "GICD") => Some(("gicd", Same)),
        (GicIf::Sysreg, "GICR") => Some(("gicr", Same)),
        (GicIf::Sysreg, "ITS") => Some(("its", Same)),
        (GicIf::Sysreg, "GICC" | "GICH" | "GICV") => {
            return Err(format!("{register} is a GICv2 register; the board has a GICv3 (ICC/ICH system registers): this census was counted on another GIC"))
        }
        (GicIf::Mmio, "ICC") if register.starts_with("ICC_SRE_") => None,
        (GicIf::Mmio, "ICC") if register.starts_with("ICC_SGI") || register.starts_with("ICC_ASGI") => Some(("gicd", V3AsV2)),
        (GicIf::Mmio, "ICC") => Some(("gicc", V3AsV2)),
        (GicIf::Mmio, "ICH") => Some(("gich", V3AsV2)),
        (GicIf::Mmio, "GICC") => Some(("gicc", Same)),
        (GicIf::Mmio, "GICH") => Some(("gich", Same)),
        (GicIf::Mmio, "GICV") => Some(("gicv", Same)),
        (GicIf::Mmio, "GICR" | "ITS") => return Err(format!("{register} ({block}) has no GICv2 counterpart; the board has a GICv2 (GIC-400): this path cannot be timed on it")),
        _ => None,
    })
}

/// One census class, per path, as the timing model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassView {
    /// Mean instructions per path by kind of code.
    pub hyp_entry: f64,
    pub hyp_c: f64,
    pub guest: f64,
    /// Whether the EL2 split came from functions (false: the class had none, EL2 is all C).
    pub split_known: bool,
    /// GIC accesses per path by `<class>_<read|write>`.
    pub gic: BTreeMap<String, f64>,
    /// Per exception level: (entries, returns) per path.
    pub exceptions: BTreeMap<String, (f64, f64)>,
    pub translation: Translation,
}

impl ClassView {
    /// The view of `c` on a `board` GIC; `is_entry` tells the hypervisor's entry code from its
    /// C paths by symbol ([`is_xen_entry`] for Xen). `trapped` is a register access (`"ICC_SGI1R_EL1 w"`)
    /// that is the path's own trap — the guest's write that Xen emulates, not an access that
    /// reaches the GIC — taken out once per path; `Err(key, why)` names the census key at fault.
    pub fn of(c: &PathCensus, board: GicIf, trapped: Option<&str>, is_entry: fn(&str) -> bool) -> Result<ClassView, (String, String)> {
        let n = c.paths as f64;
        let el = |k: &str| c.by_el.get(k).copied().unwrap_or(0) as f64;
        if el("unknown") > 0.0 {
            return Err(("by_el.unknown".into(), "instructions outside every known image: no kind of code to time them as".into()));
        }
        let hyp_fns: Vec<_> = c.functions.iter().filter(|f| f.el == "EL2").collect();
        let split_known = !hyp_fns.is_empty() || el("EL2") == 0.0;
        let entry = hyp_fns.iter().filter(|f| is_entry(&f.name)).map(|f| f.insns as f64).sum::<f64>().min(el("EL2"));
        let mut gic: BTreeMap<String, f64> = BTreeMap::new();
        let mut translation = Translation::Same;
        let mut trapped_seen = 0u64;
        for g in &c.gic {
            let mut count = g.count;
            if trapped == Some(format!("{} {}", g.register, g.rw).as_str()) {
                trapped_seen = g.count;
                count = count.saturating_sub(c.paths);
            }
            match gic_class(&g.block, &g.register, board).map_err(|m| (format!("gic.{} {}", g.register, g.rw), m))? {
                Some((class, t)) if count > 0 => {
                    if t == Translation::V3AsV2 {
                        translation = t;
                    }
                    let kind = if g.rw == "r" { "read" } else { "write" };
                    *gic.entry(format!("{class}_{kind}")).or_default() += count as f64 / n;
                }
                _ => {}
            }
        }
        if let Some(t) = trapped {
            if trapped_seen < c.paths {
                return Err((format!("gic.{t}"), format!("the path traps on `{t}` once per path; this class has it {trapped_seen} times in {} paths", c.paths)));
            }
        }
        let mut exceptions: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        for (k, v) in &c.exceptions {
            let lvl = exception_level(k).ok_or_else(|| (format!("exceptions.{k}"), "an exception named by its level first".to_string()))?;
            exceptions.entry(lvl.into()).or_default().0 += *v as f64 / n;
        }
        let mut erets = c.instructions_of_note.get("eret").copied().unwrap_or(0) as f64 / n;
        let el2 = exceptions.get("el2").map_or(0.0, |e| e.0);
        if el2 > 0.0 || erets > 0.0 {
            let back = erets.min(el2);
            exceptions.entry("el2".into()).or_default().1 = back;
            erets -= back;
        }
        if erets > 0.0 {
            exceptions.entry("el1".into()).or_default().1 = erets;
        }
        Ok(ClassView { hyp_entry: entry / n, hyp_c: (el("EL2") - entry) / n, guest: (el("EL1") + el("EL0")) / n, split_known, gic, exceptions, translation })
    }

    /// Mean instructions per path.
    pub fn instructions(&self) -> f64 {
        self.hyp_entry + self.hyp_c + self.guest
    }

    /// The counts at a path of `total` instructions (the class's median, min or max): the mean
    /// split by kind scaled to it; GIC accesses and exceptions as per path on average.
    pub fn counts_at(&self, total: f64) -> PathCounts {
        let mean = self.instructions();
        let k = if mean > 0.0 { total / mean } else { 0.0 };
        PathCounts { hyp_entry: self.hyp_entry * k, hyp_c: self.hyp_c * k, guest: self.guest * k, gic: self.gic.clone(), exceptions: self.exceptions.clone() }
    }
}

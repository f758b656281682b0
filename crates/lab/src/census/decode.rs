//! What an executed instruction or MMIO access was, for the census: A64 system-register moves
//! named for the GIC CPU interface (ICC_*), its virtualization control (ICH_*) and the generic
//! timer (CNT*), barriers, TLB/cache maintenance and exception-related instructions (Arm ARM
//! C5.2 "System instruction class encoding overview", C6.2 MRS/MSR/SYS; the GICv3 register
//! encodings of the GICv3/v4 architecture specification, IHI 0069, chapter 12); and physical
//! addresses of QEMU's `virt` board named by GIC block and register (hw/arm/virt.c `base_memmap`;
//! register offsets IHI 0069 chapter 12 and the GICv2 specification IHI 0048 chapter 4/5).

/// A system-register move: its name and whether it reads (`mrs`) or writes (`msr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysReg {
    /// `ICC`, `ICH`, `CNT` or `other`.
    pub block: &'static str,
    pub name: String,
    pub write: bool,
}

/// Decodes `mrs`/`msr` (register form): op0 = 2 + o0 (bit 19), op1, CRn, CRm, op2; L (bit 21) set
/// for a read.
pub fn sysreg(op: u32) -> Option<SysReg> {
    if op & 0xffd0_0000 != 0xd510_0000 {
        return None;
    }
    let write = op & (1 << 21) == 0;
    let op0 = 2 + ((op >> 19) & 1);
    let op1 = (op >> 16) & 7;
    let crn = (op >> 12) & 15;
    let crm = (op >> 8) & 15;
    let op2 = (op >> 5) & 7;
    let (block, name): (&'static str, String) = match (op0, op1, crn, crm, op2) {
        (3, 0, 4, 6, 0) => ("ICC", "ICC_PMR_EL1".into()),
        (3, 0, 12, 8, n) => {
            ("ICC", ["ICC_IAR0_EL1", "ICC_EOIR0_EL1", "ICC_HPPIR0_EL1", "ICC_BPR0_EL1"].get(n as usize).map(|s| s.to_string()).unwrap_or(format!("ICC_AP0R{}_EL1", n - 4)))
        }
        (3, 0, 12, 9, n) => ("ICC", format!("ICC_AP1R{n}_EL1")),
        (3, 0, 12, 11, 1) => ("ICC", "ICC_DIR_EL1".into()),
        (3, 0, 12, 11, 3) => ("ICC", "ICC_RPR_EL1".into()),
        (3, 0, 12, 11, 5) => ("ICC", "ICC_SGI1R_EL1".into()),
        (3, 0, 12, 11, 6) => ("ICC", "ICC_ASGI1R_EL1".into()),
        (3, 0, 12, 11, 7) => ("ICC", "ICC_SGI0R_EL1".into()),
        (3, 0, 12, 12, n) => {
            ("ICC", ["ICC_IAR1_EL1", "ICC_EOIR1_EL1", "ICC_HPPIR1_EL1", "ICC_BPR1_EL1", "ICC_CTLR_EL1", "ICC_SRE_EL1", "ICC_IGRPEN0_EL1", "ICC_IGRPEN1_EL1"][n as usize].into())
        }
        (3, 4, 12, 8, n) => ("ICH", format!("ICH_AP0R{n}_EL2")),
        (3, 4, 12, 9, 5) => ("ICC", "ICC_SRE_EL2".into()),
        (3, 4, 12, 9, n) if n < 4 => ("ICH", format!("ICH_AP1R{n}_EL2")),
        (3, 4, 12, 11, n) => ("ICH", ["ICH_HCR_EL2", "ICH_VTR_EL2", "ICH_MISR_EL2", "ICH_EISR_EL2", "ICH_11_4", "ICH_ELRSR_EL2", "ICH_11_6", "ICH_VMCR_EL2"][n as usize].into()),
        (3, 4, 12, 12, n) => ("ICH", format!("ICH_LR{n}_EL2")),
        (3, 4, 12, 13, n) => ("ICH", format!("ICH_LR{}_EL2", n + 8)),
        (3, 3, 14, 0, 0) => ("CNT", "CNTFRQ_EL0".into()),
        (3, 3, 14, 0, 1) => ("CNT", "CNTPCT_EL0".into()),
        (3, 3, 14, 0, 2) => ("CNT", "CNTVCT_EL0".into()),
        (3, 3 | 5, 14, 2 | 3, n @ 0..=2) => {
            let t = if crm == 2 { "CNTP" } else { "CNTV" };
            let el = if op1 == 5 { "EL02" } else { "EL0" };
            ("CNT", format!("{t}_{}_{el}", ["TVAL", "CTL", "CVAL"][n as usize]))
        }
        (3, 4, 14, 1, 0) => ("CNT", "CNTHCTL_EL2".into()),
        (3, 4, 14, 0, 3) => ("CNT", "CNTVOFF_EL2".into()),
        (3, 4, 14, 2, n @ 0..=2) => ("CNT", format!("CNTHP_{}_EL2", ["TVAL", "CTL", "CVAL"][n as usize])),
        _ => ("other", format!("S{op0}_{op1}_C{crn}_C{crm}_{op2}")),
    };
    Some(SysReg { block, name, write })
}

/// Barriers, maintenance and exception-related instructions worth counting on a path.
pub fn of_note(op: u32) -> Option<&'static str> {
    Some(match op {
        _ if op & 0xffff_f0ff == 0xd503_309f => "dsb",
        _ if op & 0xffff_f0ff == 0xd503_30bf => "dmb",
        _ if op & 0xffff_f0ff == 0xd503_30df => "isb",
        0xd69f_03e0 => "eret",
        0xd503_207f => "wfi",
        0xd503_205f => "wfe",
        _ if op & 0xffe0_001f == 0xd400_0002 => "hvc",
        _ if op & 0xffe0_001f == 0xd400_0003 => "smc",
        // SYS (op0 = 1): CRn 8 TLBI; CRn 7: CRm 1/5 IC, 8/9 AT, otherwise DC.
        _ if op & 0xfff8_0000 == 0xd508_0000 => match ((op >> 12) & 15, (op >> 8) & 15) {
            (8, _) => "tlbi",
            (7, 1 | 5) => "ic",
            (7, 8 | 9) => "at",
            (7, _) => "dc",
            _ => "sys",
        },
        _ => return None,
    })
}

/// A GIC MMIO register (or the console UART, which a path may touch) on QEMU's `virt` board:
/// block and register name.
pub fn virt_mmio(addr: u64) -> Option<(&'static str, String)> {
    let frame = |base: u64, len: u64| (addr >= base && addr < base + len).then(|| addr - base);
    if let Some(o) = frame(0x0800_0000, 0x1_0000) {
        return Some(("GICD", dist_reg(o)));
    }
    if let Some(o) = frame(0x0801_0000, 0x1_0000) {
        return Some(("GICC", cpu_reg(o)));
    }
    if let Some(o) = frame(0x0803_0000, 0x1_0000) {
        return Some(("GICH", hyp_reg(o)));
    }
    if let Some(o) = frame(0x0804_0000, 0x1_0000) {
        return Some(("GICV", cpu_reg(o)));
    }
    if let Some(o) = frame(0x0808_0000, 0x2_0000) {
        return Some(("ITS", its_reg(o)));
    }
    if let Some(o) = frame(0x0900_0000, 0x1000) {
        return Some(("UART", format!("pl011+{o:#x}")));
    }
    if let Some(o) = frame(0x080a_0000, 0xf6_0000) {
        let (cpu, o) = (o / 0x2_0000, o % 0x2_0000);
        let name = if o >= 0x1_0000 { format!("{} (SGI frame)", dist_reg(o - 0x1_0000).replace("GICD_", "GICR_")) } else { rd_reg(o) };
        return Some(("GICR", format!("{name} [{cpu}]")));
    }
    None
}

fn banked(name: &str, base: u64, o: u64, width: u64) -> String {
    format!("{name}{}", (o - base) / width)
}

fn dist_reg(o: u64) -> String {
    match o {
        0x0 => "GICD_CTLR".into(),
        0x4 => "GICD_TYPER".into(),
        0x8 => "GICD_IIDR".into(),
        0x80..=0xff => banked("GICD_IGROUPR", 0x80, o, 4),
        0x100..=0x17f => banked("GICD_ISENABLER", 0x100, o, 4),
        0x180..=0x1ff => banked("GICD_ICENABLER", 0x180, o, 4),
        0x200..=0x27f => banked("GICD_ISPENDR", 0x200, o, 4),
        0x280..=0x2ff => banked("GICD_ICPENDR", 0x280, o, 4),
        0x300..=0x37f => banked("GICD_ISACTIVER", 0x300, o, 4),
        0x380..=0x3ff => banked("GICD_ICACTIVER", 0x380, o, 4),
        0x400..=0x7fb => "GICD_IPRIORITYR".into(),
        0x800..=0xbfb => "GICD_ITARGETSR".into(),
        0xc00..=0xcff => banked("GICD_ICFGR", 0xc00, o, 4),
        0xf00 => "GICD_SGIR".into(),
        0x6000..=0x7fd8 => "GICD_IROUTER".into(),
        0xffd0..=0xfffc => "GICD_ID".into(),
        _ => format!("GICD+{o:#x}"),
    }
}

fn rd_reg(o: u64) -> String {
    match o {
        0x0 => "GICR_CTLR".into(),
        0x8 => "GICR_TYPER".into(),
        0x14 => "GICR_WAKER".into(),
        0x70 => "GICR_PROPBASER".into(),
        0x78 => "GICR_PENDBASER".into(),
        _ => format!("GICR+{o:#x}"),
    }
}

fn cpu_reg(o: u64) -> String {
    match o {
        0x0 => "CTLR".into(),
        0x4 => "PMR".into(),
        0xc => "IAR".into(),
        0x10 => "EOIR".into(),
        0x14 => "RPR".into(),
        0x18 => "HPPIR".into(),
        0x1000 => "DIR".into(),
        _ => format!("+{o:#x}"),
    }
}

fn hyp_reg(o: u64) -> String {
    match o {
        0x0 => "GICH_HCR".into(),
        0x4 => "GICH_VTR".into(),
        0x8 => "GICH_VMCR".into(),
        0x10 => "GICH_MISR".into(),
        0x20 | 0x24 => "GICH_EISR".into(),
        0x30 | 0x34 => "GICH_ELRSR".into(),
        0xf0 => "GICH_APR".into(),
        0x100..=0x1fc => banked("GICH_LR", 0x100, o, 4),
        _ => format!("GICH+{o:#x}"),
    }
}

fn its_reg(o: u64) -> String {
    match o {
        0x0 => "GITS_CTLR".into(),
        0x8 => "GITS_TYPER".into(),
        0x80 => "GITS_CBASER".into(),
        0x88 => "GITS_CWRITER".into(),
        0x90 => "GITS_CREADR".into(),
        0x100..=0x13f => "GITS_BASER".into(),
        0x1_0040 => "GITS_TRANSLATER".into(),
        _ => format!("GITS+{o:#x}"),
    }
}

/// The 16 entries of an AArch64 vector table (Arm ARM D1.10.2), by offset / 0x80.
pub fn vector_name(index: u64) -> &'static str {
    const NAMES: [&str; 16] = [
        "sync, current EL SP0",
        "IRQ, current EL SP0",
        "FIQ, current EL SP0",
        "SError, current EL SP0",
        "sync, current EL",
        "IRQ, current EL",
        "FIQ, current EL",
        "SError, current EL",
        "sync from lower EL",
        "IRQ from lower EL",
        "FIQ from lower EL",
        "SError from lower EL",
        "sync from lower EL (AArch32)",
        "IRQ from lower EL (AArch32)",
        "FIQ from lower EL (AArch32)",
        "SError from lower EL (AArch32)",
    ];
    NAMES.get(index as usize).copied().unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gic_system_registers() {
        // mrs x1, icc_iar1_el1 (the guest's handler, vectors.S); msr icc_sgi1r_el1, x3.
        assert_eq!(sysreg(0xd538_cc01), Some(SysReg { block: "ICC", name: "ICC_IAR1_EL1".into(), write: false }));
        assert_eq!(sysreg(0xd518_cba3), Some(SysReg { block: "ICC", name: "ICC_SGI1R_EL1".into(), write: true }));
        // msr ich_lr0_el2, x0 = S3_4_C12_C12_0; mrs x0, ich_misr_el2 = S3_4_C12_C11_2.
        assert_eq!(sysreg(0xd51c_cc00).unwrap().name, "ICH_LR0_EL2");
        assert_eq!(sysreg(0xd53c_cb40).unwrap().name, "ICH_MISR_EL2");
        assert_eq!(sysreg(0xd53c_cda0).unwrap().name, "ICH_LR13_EL2");
        // mrs x0, cntvct_el0; msr cntv_ctl_el0, xzr.
        assert_eq!(sysreg(0xd53b_e040).unwrap().name, "CNTVCT_EL0");
        assert_eq!(sysreg(0xd51b_e33f), Some(SysReg { block: "CNT", name: "CNTV_CTL_EL0".into(), write: true }));
        // mrs x0, esr_el2 (S3_4_C5_C2_0): another register.
        assert_eq!(sysreg(0xd53c_5200).unwrap().block, "other");
        assert_eq!(sysreg(0xd503_207f), None, "wfi is not a register move");
    }

    #[test]
    fn instructions_of_note() {
        assert_eq!(of_note(0xd503_3f9f), Some("dsb")); // dsb sy
        assert_eq!(of_note(0xd503_3bbf), Some("dmb")); // dmb ish
        assert_eq!(of_note(0xd503_3fdf), Some("isb"));
        assert_eq!(of_note(0xd69f_03e0), Some("eret"));
        assert_eq!(of_note(0xd400_0002), Some("hvc"));
        assert_eq!(of_note(0xd508_871f), Some("tlbi")); // tlbi vmalle1
        assert_eq!(of_note(0xd50b_7520), Some("ic")); // ic ivau, x0
        assert_eq!(of_note(0xd50b_7e20), Some("dc")); // dc civac, x0
        assert_eq!(of_note(0x9100_0000), None);
    }

    #[test]
    fn virt_board_gic_registers() {
        assert_eq!(virt_mmio(0x0800_0100), Some(("GICD", "GICD_ISENABLER0".into())));
        assert_eq!(virt_mmio(0x0800_6108), Some(("GICD", "GICD_IROUTER".into())));
        assert_eq!(virt_mmio(0x0801_000c), Some(("GICC", "IAR".into())));
        assert_eq!(virt_mmio(0x0803_0104), Some(("GICH", "GICH_LR1".into())));
        assert_eq!(virt_mmio(0x080a_0014), Some(("GICR", "GICR_WAKER [0]".into())));
        assert_eq!(virt_mmio(0x080c_0000 + 0x1_0100), Some(("GICR", "GICR_ISENABLER0 (SGI frame) [1]".into())));
        assert_eq!(virt_mmio(0x0808_0088), Some(("ITS", "GITS_CWRITER".into())));
        assert_eq!(virt_mmio(0x0900_0038), Some(("UART", "pl011+0x38".into())), "the console UART, named as such");
        assert_eq!(virt_mmio(0x0a00_0000), None);
        assert_eq!(vector_name(9), "IRQ from lower EL");
    }
}

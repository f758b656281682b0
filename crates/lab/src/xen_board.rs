//! The board Xen says it booted on, read from its console, against the one the lab asked QEMU
//! for (`--cpu`, `--gic`): a result records a board only when it took effect. Xen 4.17 prints
//! the boot CPU's MIDR (`Processor: <MIDR>: "ARM Limited", variant: …, part 0xd03,rev …`,
//! xen/arch/arm/setup.c `processor_id`) and which GIC driver it probed (`GICv2 initialization:`,
//! xen/arch/arm/gic-v2.c `gicv2_init`; `GICv3 initialization:`, gic-v3.c `gicv3_init`, which
//! also drives a GICv4 as a GICv3).
use crate::config::Gic;
use crate::qemu::Machine;

/// What Xen's console says of the board: the MIDR part number and the GIC driver's major version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seen {
    pub part: Option<u32>,
    pub gic_major: Option<u8>,
}

/// Reads the first `Processor:` and `GICvN initialization` lines of Xen's console.
pub fn seen(log: &str) -> Seen {
    let mut s = Seen::default();
    for line in log.lines() {
        if s.part.is_none() && line.contains("Processor:") {
            s.part = line.split("part 0x").nth(1).and_then(|r| u32::from_str_radix(r.split(|c: char| !c.is_ascii_hexdigit()).next().unwrap_or(""), 16).ok());
        }
        if s.gic_major.is_none() {
            if line.contains("GICv2 initialization") {
                s.gic_major = Some(2);
            } else if line.contains("GICv3 initialization") {
                s.gic_major = Some(3);
            }
        }
    }
    s
}

/// Why the board Xen reports is not the one asked for, or `None` when it is (or Xen did not
/// say: a console cut before the banner is another error).
pub fn mismatch(log: &str, m: &Machine) -> Option<String> {
    let s = seen(log);
    let want_gic = if m.gic == Gic::V2 { 2 } else { 3 };
    if let Some(g) = s.gic_major.filter(|&g| g != want_gic) {
        return Some(format!("lab: asked for --gic {} but Xen probed a GICv{g}", m.gic));
    }
    match (m.cpu.midr_part(), s.part) {
        (Some(want), Some(got)) if want != got => Some(format!("lab: asked for --cpu {} (MIDR part {want:#x}) but Xen reports part {got:#x}", m.cpu.qemu_name())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Cpu;

    const A57_V3: &str = "(XEN) Processor: 00000000411fd070: \"ARM Limited\", variant: 0x1, part 0xd07,rev 0x0\n(XEN) GICv3 initialization:\n";
    const A53_V2: &str = "(XEN) Processor: 00000000410fd034: \"ARM Limited\", variant: 0x0, part 0xd03,rev 0x4\n(XEN) GICv2 initialization:\n";

    #[test]
    fn reads_the_part_and_the_gic_driver() {
        assert_eq!(seen(A57_V3), Seen { part: Some(0xd07), gic_major: Some(3) });
        assert_eq!(seen(A53_V2), Seen { part: Some(0xd03), gic_major: Some(2) });
        assert_eq!(seen("no banner"), Seen::default());
    }

    #[test]
    fn a_board_that_did_not_take_is_named() {
        let a53v2 = Machine { cpu: Cpu::CortexA53, gic: Gic::V2, ..Machine::xen(1, None) };
        assert_eq!(mismatch(A53_V2, &a53v2), None);
        let e = mismatch(A57_V3, &a53v2).unwrap();
        assert!(e.contains("--gic v2 but Xen probed a GICv3"), "{e}");
        let e = mismatch(A57_V3, &Machine { gic: Gic::V3, ..a53v2.clone() }).unwrap();
        assert!(e.contains("--cpu cortex-a53 (MIDR part 0xd03) but Xen reports part 0xd07"), "{e}");
        // GICv4.0 is driven by Xen's GICv3 driver; `max` has no part of its own.
        assert_eq!(mismatch(A57_V3, &Machine { gic: Gic::V4_0, cpu: Cpu::Max, ..a53v2 }), None);
        assert_eq!(mismatch("cut short", &Machine::xen(1, None)), None);
    }
}

//! From the plugin's windows to the result's census: windows grouped into path classes, each PC
//! named by the image it lies in (and its function, where that image has symbols), instructions
//! decoded ([`super::decode`]). An image without symbols contributes counts by exception level
//! only, and the census says so: a function name is never guessed.
use std::collections::BTreeMap;

use results::census::{Census, FunctionCount, GicAccess, PathCensus, Spread};

use super::decode;
use super::symbols::Symbols;
use super::window::Window;

/// One image the census can name PCs in.
#[derive(Debug, Clone)]
pub struct Image {
    /// `hyp`, `guest`, `kernel`, ...; also the plugin's range name.
    pub side: String,
    /// `EL2`, `EL1`, `EL0`.
    pub el: String,
    pub range: (u64, u64),
    pub symbols: Option<Symbols>,
    /// The image's vector tables (VBARs) known: one for Xen; the host's and KVM's hyp vectors
    /// (with their hardened copies) for a VHE kernel.
    pub vectors: Vec<u64>,
    /// Why there are no symbols, for the census's notes.
    pub no_symbols: Option<String>,
}

impl Image {
    fn holds(&self, pc: u64) -> bool {
        pc >= self.range.0 && pc < self.range.1
    }
}

/// How windows become classes: the guest's dispatch labels (address → class name, e.g. the
/// guest's `irq_timer` → `timer`), and the guest's symbols to name where an SGI was sent from.
#[derive(Debug, Clone, Default)]
pub struct Classes {
    pub tags: BTreeMap<u64, String>,
    pub guest: Option<Symbols>,
}

impl Classes {
    /// The class of a window, or None for one that is not a path (overflow).
    pub fn of(&self, w: &Window) -> Option<String> {
        let tag = || self.tags.get(&w.tag).cloned().unwrap_or_else(|| "irq.delivered".to_string());
        match (w.kind.as_str(), w.end.as_str()) {
            (_, "overflow") => None,
            ("irq", "delivered") => Some(tag()),
            ("irq", _) => Some("irq.other".into()),
            ("wfi", "delivered") => Some(format!("{}.from-wfi", tag())),
            ("send", end) => {
                let from = self.guest.as_ref().and_then(|g| g.name_of(w.tag)).map(|f| format!(".from-{f}")).unwrap_or_default();
                Some(format!("ipi.send{from}{}", if end == "switched" { ".switched" } else { "" }))
            }
            ("after-send", "delivered") => Some(format!("{}.after-send", tag())),
            _ => None,
        }
    }
}

#[derive(Default)]
struct Acc {
    insns: Vec<u64>,
    by_el: BTreeMap<String, u64>,
    functions: BTreeMap<(String, String, String), u64>,
    gic: BTreeMap<(String, String, String, String), u64>,
    exceptions: BTreeMap<String, u64>,
    of_note: BTreeMap<String, u64>,
}

impl Acc {
    fn add(&mut self, w: &Window, images: &[Image]) {
        self.insns.push(w.insns);
        for (range, n) in &w.ranges {
            let el = images.iter().find(|i| &i.side == range).map(|i| i.el.clone()).unwrap_or_else(|| "unknown".into());
            *self.by_el.entry(el).or_insert(0) += n;
        }
        for &(pc, op, n) in &w.pcs {
            if let Some(img) = images.iter().find(|i| i.holds(pc)) {
                if let Some(name) = img.symbols.as_ref().and_then(|s| s.name_of(pc)) {
                    *self.functions.entry((img.side.clone(), name.to_string(), img.el.clone())).or_insert(0) += n;
                }
                if let Some(v) = img.vectors.iter().copied().find(|v| pc >= *v && pc < v + 0x800 && (pc - v) % 0x80 == 0) {
                    *self.exceptions.entry(format!("{} {}", img.el, decode::vector_name((pc - v) / 0x80))).or_insert(0) += n;
                }
            }
            if let Some(r) = decode::sysreg(op) {
                let rw = if r.write { "w" } else { "r" };
                if r.block == "other" {
                    *self.of_note.entry("mrs/msr (other registers)".into()).or_insert(0) += n;
                } else {
                    *self.gic.entry(("sysreg".into(), r.block.into(), r.name, rw.into())).or_insert(0) += n;
                }
            } else if let Some(k) = decode::of_note(op) {
                *self.of_note.entry(k.into()).or_insert(0) += n;
            }
        }
        for &(addr, rw, _size, n) in &w.mmio {
            let (block, reg) = decode::virt_mmio(addr).map(|(b, r)| (b.to_string(), r)).unwrap_or_else(|| ("other MMIO".into(), format!("{addr:#x}")));
            *self.gic.entry(("mmio".into(), block, reg, rw.to_string())).or_insert(0) += n;
        }
    }

    fn finish(self) -> PathCensus {
        let mut functions: Vec<FunctionCount> = self.functions.into_iter().map(|((side, name, el), insns)| FunctionCount { side, name, el, insns }).collect();
        functions.sort_by(|a, b| b.insns.cmp(&a.insns).then_with(|| a.name.cmp(&b.name)));
        let mut gic: Vec<GicAccess> = self.gic.into_iter().map(|((kind, block, register, rw), count)| GicAccess { kind, block, register, rw, count }).collect();
        gic.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.register.cmp(&b.register)));
        PathCensus {
            paths: self.insns.len() as u64,
            insns: Spread::of(&self.insns),
            by_el: self.by_el,
            functions,
            gic,
            exceptions: self.exceptions,
            instructions_of_note: self.of_note,
        }
    }
}

/// The census of `windows` over `images`; `method` says how it was counted.
pub fn census(windows: &[Window], images: &[Image], classes: &Classes, method: &str) -> Census {
    let mut accs: BTreeMap<String, Acc> = BTreeMap::new();
    let mut overflow = 0;
    let mut mmio_dropped = 0;
    for w in windows {
        mmio_dropped += w.mmio_dropped;
        match classes.of(w) {
            Some(c) => accs.entry(c).or_default().add(w, images),
            None => overflow += 1,
        }
    }
    let mut notes = Vec::new();
    let mut symbols = BTreeMap::new();
    for i in images {
        match (&i.symbols, &i.no_symbols) {
            (Some(s), _) => {
                symbols.insert(i.side.clone(), s.source.clone());
            }
            (None, why) => notes.push(format!(
                "{}: no symbols ({}): its instructions are counted by exception level ({}) only, with no per-function rows",
                i.side,
                why.as_deref().unwrap_or("none given"),
                i.el
            )),
        }
    }
    if overflow > 0 {
        notes.push(format!("{overflow} window(s) ran past the plugin's bounds (50 M instructions, 49,152 distinct PCs) or never closed and are not counted"));
    }
    if mmio_dropped > 0 {
        notes.push(format!("{mmio_dropped} MMIO access(es) fell beyond the plugin's 512 distinct addresses per path and are not in the GIC table"));
    }
    Census { method: method.into(), symbols, classes: accs.into_iter().map(|(k, a)| (k, a.finish())).collect(), notes }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn images(with_syms: bool) -> Vec<Image> {
        let xen = Symbols::parse("0x200000 T _stext\n0x257800 T hyp_traps_vector\n0x258000 T do_trap_irq\n0x259000 T _etext\n", "xen-syms.map", 0).unwrap();
        vec![
            Image {
                side: "hyp".into(),
                el: "EL2".into(),
                range: (0x200000, 0x259000),
                symbols: with_syms.then_some(xen),
                vectors: vec![0x257800],
                no_symbols: (!with_syms).then(|| "--xen without --xen-syms".into()),
            },
            Image { side: "guest".into(), el: "EL1".into(), range: (0x4008_0000, 0x4009_0000), symbols: None, vectors: Vec::new(), no_symbols: Some("test".into()) },
        ]
    }

    fn window(kind: &str, end: &str, tag: u64, insns: u64) -> Window {
        Window {
            kind: kind.into(),
            end: end.into(),
            tag,
            insns,
            ranges: [("hyp".to_string(), insns - 1), ("guest".to_string(), 1)].into(),
            // the IRQ vector from a lower EL, one ICC_IAR1_EL1 read in do_trap_irq, a dsb.
            pcs: vec![(0x257c80, 0x1400_0000, 1), (0x258000, 0xd538_cc01, 1), (0x258004, 0xd503_3f9f, 1), (0x258008, 0x9100_0000, insns - 4), (0x4008_1000, 0x9100_0000, 1)],
            mmio: vec![(0x0800_0100, 'w', 4, 2)],
            ..Window::default()
        }
    }

    #[test]
    fn classes_functions_gic_and_exceptions() {
        let classes = Classes { tags: [(0x4008_1800, "timer".to_string())].into(), guest: None };
        let ws = vec![window("irq", "delivered", 0x4008_1800, 100), window("irq", "delivered", 0x4008_1800, 102), window("irq", "other", 0, 10), window("wfi", "overflow", 0, 9)];
        let c = census(&ws, &images(true), &classes, "test");
        let t = &c.classes["timer"];
        assert_eq!(t.paths, 2);
        assert_eq!(t.insns, Spread { median: 101.0, min: 100, max: 102 });
        assert_eq!(t.by_el["EL2"], 99 + 101);
        assert_eq!(t.by_el["EL1"], 2);
        assert_eq!(t.functions[0].name, "do_trap_irq");
        assert_eq!(t.functions[0].insns, 2 * (1 + 1 + 96) + 2, "the other window's PCs are not in this class");
        assert!(t.gic.iter().any(|g| g.register == "ICC_IAR1_EL1" && g.rw == "r" && g.count == 2 && g.kind == "sysreg"));
        assert!(t.gic.iter().any(|g| g.register == "GICD_ISENABLER0" && g.kind == "mmio" && g.count == 4));
        assert_eq!(t.exceptions["EL2 IRQ from lower EL"], 2);
        assert_eq!(t.instructions_of_note["dsb"], 2);
        assert_eq!(c.classes["irq.other"].paths, 1);
        assert!(c.notes.iter().any(|n| n.contains("1 window(s) ran past")), "{:?}", c.notes);
        assert!(c.notes.iter().any(|n| n.starts_with("guest: no symbols")), "{:?}", c.notes);
    }

    #[test]
    fn a_send_is_named_by_the_guest_function_it_came_from() {
        let guest = Symbols::parse("0000000000000100 t ipi_loop\n0000000000000200 t irq_ping\n", "g", 0x4008_0000).unwrap();
        let classes = Classes { tags: BTreeMap::new(), guest: Some(guest) };
        let w = |tag| Window { kind: "send".into(), end: "returned".into(), tag, ..Window::default() };
        assert_eq!(classes.of(&w(0x4008_0140)).as_deref(), Some("ipi.send.from-ipi_loop"));
        assert_eq!(classes.of(&w(0x4008_0204)).as_deref(), Some("ipi.send.from-irq_ping"));
        assert_eq!(Classes::default().of(&w(0x4008_0204)).as_deref(), Some("ipi.send"));
        let switched = Window { end: "switched".into(), ..w(0x4008_0140) };
        assert_eq!(classes.of(&switched).as_deref(), Some("ipi.send.from-ipi_loop.switched"), "the hypervisor ran another vCPU before the sender");
    }

    #[test]
    fn without_symbols_no_function_is_named() {
        let c = census(&[window("irq", "delivered", 0, 50)], &images(false), &Classes::default(), "test");
        let t = &c.classes["irq.delivered"];
        assert!(t.functions.is_empty());
        assert_eq!(t.by_el["EL2"], 49);
        assert!(c.notes.iter().any(|n| n.starts_with("hyp: no symbols (--xen without --xen-syms)")), "{:?}", c.notes);
        assert!(c.symbols.is_empty());
    }
}

//! The path census: what the real hypervisor and guest code executed on each interrupt's path,
//! counted under emulation (the lab's QEMU TCG plugin, `crates/lab/src/census/`,
//! docs/path-census.md). Counts are exact for a given build and bench under `-icount`, so two
//! censuses are compared by difference ("B adds 212 instructions per timer interrupt, all in
//! `vgic_inject_irq`"), never by an interval.
//!
//! One [`PathCensus`] per path class (`timer`, `ipi.send`, `ipi.receive`, `irq.other`, ...):
//! instructions per path, their split by exception level and by function (named from the
//! images' symbols, or absent with the reason), GIC accesses by register, exceptions by vector,
//! barriers and TLB/cache maintenance. Per-path figures are per delivered interrupt (the median
//! over the paths counted; `min`/`max` show whether every path was the same).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A run's census: one entry per path class, in a stable order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Census {
    /// How it was counted (plugin, QEMU version, -icount setting) — never a hardware latency.
    pub method: String,
    /// The symbol tables used, `side → file`; a side without symbols is listed in `notes`.
    #[serde(default)]
    pub symbols: BTreeMap<String, String>,
    pub classes: BTreeMap<String, PathCensus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The census of one path class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PathCensus {
    /// Paths counted (delivered interrupts, or trapped writes for a sender class).
    pub paths: u64,
    /// Instructions per path: median, min and max over the paths.
    pub insns: Spread,
    /// Instructions summed over the paths, by exception level (`EL2`, `EL1`, `EL0`, `unknown`).
    pub by_el: BTreeMap<String, u64>,
    /// Instructions summed over the paths, by function, largest first; empty when the side had
    /// no symbols (then `by_el` is all there is, and the census's notes say so).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<FunctionCount>,
    /// GIC accesses summed over the paths, by register (`ICC_IAR1_EL1 r`, `GICD_ISENABLER w`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gic: Vec<GicAccess>,
    /// Exceptions entered, by vector (`EL2 IRQ from lower EL`, ...), summed over the paths.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exceptions: BTreeMap<String, u64>,
    /// Barriers (`dsb`, `dmb`, `isb`) and maintenance (`tlbi`, `dc`, `ic`), summed over the paths.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub instructions_of_note: BTreeMap<String, u64>,
}

/// Median, min, max of a per-path count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub min: u64,
    pub max: u64,
}

impl Spread {
    /// Of per-path counts; all zero for none.
    pub fn of(values: &[u64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        let mut v = values.to_vec();
        v.sort_unstable();
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] as f64 } else { (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0 };
        Spread { median, min: v[0], max: v[n - 1] }
    }
}

/// One function's share of a path class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCount {
    /// `hyp`, `guest`, `kernel`, ... (which image).
    pub side: String,
    pub name: String,
    pub el: String,
    /// Instructions executed in it, summed over the paths.
    pub insns: u64,
}

/// Accesses to one GIC register on the paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GicAccess {
    /// `sysreg` or `mmio`.
    pub kind: String,
    /// `ICC`, `ICH`, `GICD`, `GICR`, `GICC`, `GICH`, `ITS`, ...
    pub block: String,
    pub register: String,
    /// `r` or `w`.
    pub rw: String,
    pub count: u64,
}

/// One row of a census difference B − A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CensusDelta {
    pub class: String,
    /// `insns/path`, `EL2`, `fn hyp:vgic_inject_irq`, `gic ICC_IAR1_EL1 r`, ...
    pub item: String,
    /// Per path (the class total divided by its paths) on each side; None where absent.
    pub a: Option<f64>,
    pub b: Option<f64>,
}

impl CensusDelta {
    pub fn change(&self) -> f64 {
        self.b.unwrap_or(0.0) - self.a.unwrap_or(0.0)
    }
}

fn per_path(total: u64, paths: u64) -> f64 {
    if paths == 0 {
        0.0
    } else {
        total as f64 / paths as f64
    }
}

fn items(c: &PathCensus) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    m.insert("insns/path".to_string(), c.insns.median);
    for (el, n) in &c.by_el {
        m.insert(format!("{el} insns/path (mean)"), per_path(*n, c.paths));
    }
    for f in &c.functions {
        *m.entry(format!("fn {}:{}", f.side, f.name)).or_insert(0.0) += per_path(f.insns, c.paths);
    }
    for g in &c.gic {
        *m.entry(format!("gic {} {}", g.register, g.rw)).or_insert(0.0) += per_path(g.count, c.paths);
    }
    for (k, n) in &c.exceptions {
        m.insert(format!("exception {k}"), per_path(*n, c.paths));
    }
    for (k, n) in &c.instructions_of_note {
        m.insert(format!("insn {k}"), per_path(*n, c.paths));
    }
    m
}

/// B − A per class and item, per path, the largest changes first (ties by class, item); items
/// equal on both sides are left out. A class present on one side only shows all its items.
pub fn diff(a: &Census, b: &Census) -> Vec<CensusDelta> {
    let mut out = Vec::new();
    let classes: std::collections::BTreeSet<&String> = a.classes.keys().chain(b.classes.keys()).collect();
    for class in classes {
        let ia = a.classes.get(class).map(items).unwrap_or_default();
        let ib = b.classes.get(class).map(items).unwrap_or_default();
        let keys: std::collections::BTreeSet<&String> = ia.keys().chain(ib.keys()).collect();
        for k in keys {
            let d = CensusDelta { class: class.clone(), item: k.clone(), a: ia.get(k).copied(), b: ib.get(k).copied() };
            if d.a != d.b {
                out.push(d);
            }
        }
    }
    out.sort_by(|x, y| y.change().abs().total_cmp(&x.change().abs()).then_with(|| x.class.cmp(&y.class)).then_with(|| x.item.cmp(&y.item)));
    out
}

/// The one-line verdict of a census difference for a class: `identical` or `changed by N
/// instructions per path` (counts are exact: no interval).
pub fn verdict(a: &Census, b: &Census, class: &str) -> String {
    match (a.classes.get(class), b.classes.get(class)) {
        (Some(x), Some(y)) if x.insns == y.insns && items(x) == items(y) => "identical".to_string(),
        (Some(x), Some(y)) if x.insns.median == y.insns.median => {
            let (ix, iy) = (items(x), items(y));
            let n = ix.keys().chain(iy.keys()).collect::<std::collections::BTreeSet<_>>().into_iter().filter(|k| ix.get(*k) != iy.get(*k)).count();
            format!("changed: {n} items differ; the median path is {} instructions on both sides", x.insns.median)
        }
        (Some(x), Some(y)) => {
            let d = y.insns.median - x.insns.median;
            format!("changed by {d:+} instructions per path ({} → {})", x.insns.median, y.insns.median)
        }
        (None, Some(_)) => "only in B".to_string(),
        (Some(_), None) => "only in A".to_string(),
        (None, None) => "absent".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(paths: u64, per: u64, f: &[(&str, u64)]) -> PathCensus {
        PathCensus {
            paths,
            insns: Spread { median: per as f64, min: per, max: per },
            by_el: [("EL2".to_string(), per * paths)].into(),
            functions: f.iter().map(|(n, i)| FunctionCount { side: "hyp".into(), name: n.to_string(), el: "EL2".into(), insns: *i }).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn spread_of_even_and_odd() {
        assert_eq!(Spread::of(&[5, 1, 3]), Spread { median: 3.0, min: 1, max: 5 });
        assert_eq!(Spread::of(&[4, 2]), Spread { median: 3.0, min: 2, max: 4 });
        assert_eq!(Spread::of(&[]), Spread::default());
    }

    #[test]
    fn diff_is_per_path_and_largest_first() {
        let a = Census { classes: [("timer".to_string(), class(10, 100, &[("vgic_inject_irq", 500), ("schedule", 500)]))].into(), ..Default::default() };
        let b = Census { classes: [("timer".to_string(), class(20, 110, &[("vgic_inject_irq", 1200), ("schedule", 1000)]))].into(), ..Default::default() };
        let d = diff(&a, &b);
        // vgic_inject_irq: 50 → 60 per path (+10), insns/path +10, EL2 +10; schedule unchanged (50 → 50).
        assert!(d.iter().all(|x| x.item != "fn hyp:schedule"), "{d:?}");
        let v = d.iter().find(|x| x.item == "fn hyp:vgic_inject_irq").unwrap();
        assert_eq!((v.a, v.b), (Some(50.0), Some(60.0)));
        assert!(d.windows(2).all(|w| w[0].change().abs() >= w[1].change().abs()));
        assert_eq!(verdict(&a, &b, "timer"), "changed by +10 instructions per path (100 → 110)");
        assert_eq!(verdict(&a, &a, "timer"), "identical");
        let mut c = a.clone();
        c.classes.get_mut("timer").unwrap().functions[0].insns += 20;
        assert_eq!(verdict(&a, &c, "timer"), "changed: 1 items differ; the median path is 100 instructions on both sides");
        assert!(diff(&a, &a).is_empty());
    }

    #[test]
    fn a_class_on_one_side_shows_all_its_items() {
        let a = Census::default();
        let b = Census { classes: [("ipi.send".to_string(), class(2, 300, &[("do_trap_guest_sync", 600)]))].into(), ..Default::default() };
        let d = diff(&a, &b);
        assert!(d.iter().any(|x| x.item == "fn hyp:do_trap_guest_sync" && x.a.is_none() && x.b == Some(300.0)));
        assert_eq!(verdict(&a, &b, "ipi.send"), "only in B");
    }
}

//! The path census (`--census`): what the real hypervisor and guest code executed on each
//! interrupt's path, counted by a QEMU TCG plugin while the lab's bench runs (docs/path-census.md).
//!
//! - [`plugin`] builds the plugin against the installed QEMU's own plugin header;
//! - [`Plan`] says where paths start and end (the hypervisor's IRQ vectors, the guest's IRQ vector
//!   and dispatch labels, found in their symbols) and becomes QEMU's `-plugin` argument;
//! - [`window`] reads what the plugin wrote, [`aggregate`] names it ([`symbols`], [`decode`]) into
//!   `results::census::Census`, which goes into `result.json` beside the latency samples.
//!
//! Emulation counts instructions exactly; it does not time them. What QEMU does outside guest
//! code — the GIC's own state machine, the timer — is not an instruction and is not counted.
pub mod aggregate;
pub mod decode;
pub mod plugin;
pub mod symbols;
pub mod window;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use aggregate::{Classes, Image};
use symbols::Symbols;

/// The census's failures: bad input and a plugin that cannot be built are exit 2.
#[derive(Debug, thiserror::Error)]
pub enum CensusError {
    #[error("{0}")]
    Usage(String),
    #[error("census plugin: step `{step}` failed (log: {})", log.display())]
    Step { step: String, log: PathBuf },
    #[error("--xen-syms: {0}")]
    Symbols(#[from] symbols::SymbolError),
    #[error("census: {0}")]
    Output(#[from] window::WindowError),
    #[error("census: {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("census: {0} — the plugin did not load or wrote nothing; QEMU's messages are in the console log")]
    NoOutput(PathBuf),
}

impl CensusError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CensusError::Usage(_) | CensusError::Step { .. } | CensusError::Symbols(_) | CensusError::NoOutput(_) => 2,
            CensusError::Output(_) | CensusError::Io { .. } => 1,
        }
    }
}

impl From<CensusError> for crate::error::LabError {
    fn from(e: CensusError) -> Self {
        crate::error::LabError::Part { code: e.exit_code(), source: Box::new(e) }
    }
}

/// The largest plugin output read back (a census of a few hundred paths is a few MiB).
const MAX_OUTPUT: u64 = 1 << 30;

/// Where paths start and end, and the images to name PCs in.
#[derive(Debug, Clone)]
pub struct Plan {
    pub images: Vec<Image>,
    pub classes: Classes,
    /// Hypervisor IRQ vector entries (window starts).
    pub open: Vec<u64>,
    /// Guest IRQ vector entries (window ends).
    pub close: Vec<u64>,
    pub out: PathBuf,
}

/// The guest's dispatch labels and the classes they name (crates/armguest/guest/vectors.S).
const GUEST_TAGS: [(&str, &str); 4] = [("irq_timer", "timer"), ("irq_ping", "ipi.receive"), ("irq_pong", "ipi.reply"), ("irq_device", "device")];

/// The guest image as loaded at `base`: its range, vectors, ends and tags.
pub fn guest_image(base: u64, len: u64) -> Result<(Image, Vec<u64>, Classes), CensusError> {
    let text = armguest::symbols().map_err(|e| CensusError::Usage(format!("--census: {e}")))?;
    let syms = Symbols::parse(text, "armguest (nm of the assembled guest)", base)?;
    let vectors = syms.addr("vectors").ok_or_else(|| CensusError::Usage("--census: the guest has no `vectors` symbol".into()))?;
    let tags = GUEST_TAGS.iter().filter_map(|(sym, class)| syms.addr(sym).map(|a| (a, class.to_string()))).collect();
    // IRQ from the current EL with SP_EL0 (entry 1) or SP_ELx (entry 5): both go to irq_entry.
    let close = vec![vectors + 0x80, vectors + 0x280];
    let classes = Classes { tags, guest: Some(syms.clone()) };
    let img = Image { side: "guest".into(), el: "EL1".into(), range: (base, base + len), symbols: Some(syms), vectors: vec![vectors], no_symbols: None };
    Ok((img, close, classes))
}

/// A Xen census plan: Xen's symbols (or why there are none, with Xen's text range then taken as
/// `fallback_range`), the guest loaded at `guest_base`.
pub fn xen_plan(xen: Result<Symbols, String>, fallback_range: (u64, u64), guest_base: u64, guest_len: u64, out: PathBuf) -> Result<Plan, CensusError> {
    let (guest, close, classes) = guest_image(guest_base, guest_len)?;
    let (hyp, open) = match xen {
        Ok(s) => {
            let v = s.addr("hyp_traps_vector").ok_or_else(|| CensusError::Usage(format!("--census: {} has no hyp_traps_vector", s.source)))?;
            // Xen's arm64 vector table (xen/arch/arm/arm64/entry.S): IRQ at EL2h, IRQ from a lower EL.
            let img = Image { side: "hyp".into(), el: "EL2".into(), range: s.text_range(), vectors: vec![v], symbols: Some(s), no_symbols: None };
            (img, vec![v + 0x280, v + 0x480])
        }
        Err(why) => (Image { side: "hyp".into(), el: "EL2".into(), range: fallback_range, symbols: None, vectors: Vec::new(), no_symbols: Some(why) }, Vec::new()),
    };
    Ok(Plan { images: vec![hyp, guest], classes, open, close, out })
}

impl Plan {
    /// QEMU's `-plugin` argument for `plugin`.
    pub fn qemu_args(&self, plugin: &Path) -> Result<Vec<String>, CensusError> {
        for p in [plugin, self.out.as_path()] {
            if p.to_string_lossy().contains(',') {
                return Err(CensusError::Usage(format!("--census: {} has a comma, which QEMU's -plugin option cannot carry", p.display())));
            }
        }
        let mut a = format!("{},out={}", plugin.display(), self.out.display());
        for x in &self.open {
            a.push_str(&format!(",open={x:#x}"));
        }
        for x in &self.close {
            a.push_str(&format!(",close={x:#x}"));
        }
        for x in self.classes.tags.keys() {
            a.push_str(&format!(",tag={x:#x}"));
        }
        for i in &self.images {
            a.push_str(&format!(",range={:#x}:{:#x}:{}", i.range.0, i.range.1, i.side));
        }
        Ok(vec!["-plugin".into(), a])
    }

    /// Reads the plugin's output back into a census.
    pub fn collect(&self, method: &str) -> Result<results::census::Census, CensusError> {
        let io = |source| CensusError::Io { path: self.out.clone(), source };
        let meta = std::fs::metadata(&self.out).map_err(|_| CensusError::NoOutput(self.out.clone()))?;
        if !meta.is_file() || meta.len() > MAX_OUTPUT {
            return Err(CensusError::Usage(format!("census: {} is not a regular file under 1 GiB", self.out.display())));
        }
        let text = std::fs::read_to_string(&self.out).map_err(io)?;
        if text.is_empty() {
            return Err(CensusError::NoOutput(self.out.clone()));
        }
        let w = window::parse(&text, &self.out.display().to_string())?;
        let (windows, late) = until_last_delivery(w.windows);
        let mut c = aggregate::census(&windows, &self.images, &self.classes, method);
        if late > 0 {
            c.notes.push(format!(
                "{late} window(s) after the last delivered interrupt are not counted: what runs there (the console draining) depends on when QEMU was stopped, not on the bench"
            ));
        }
        if w.truncated > 0 {
            c.notes.push(format!("{} record(s) cut short when QEMU was stopped are not counted", w.truncated));
        }
        Ok(c)
    }
}

/// After the run: the census into the result's configuration (its `lab.path.*` figures, and a
/// note when nothing reached the guest's IRQ vector).
pub fn finish(plan: &Plan, plugin: &plugin::Plugin, icount: Option<&str>, c: &mut results::ConfigResult) -> Result<(), CensusError> {
    let timing = match icount {
        Some(ic) => format!("-icount {ic}"),
        None => "TCG without -icount (the paths taken can vary with host timing)".into(),
    };
    let method =
        format!("QEMU TCG plugin irqlab census ({}); {timing}; instructions counted per executed translation block — emulation counts, not hardware time", plugin.built_from);
    let census = plan.collect(&method)?;
    for (k, (v, unit)) in figures(&census) {
        c.set_figure(&k, v, unit);
    }
    let delivered: u64 = census.classes.iter().filter(|(k, _)| !k.starts_with("irq.other") && !k.ends_with(".from-wfi") && !k.starts_with("ipi.send")).map(|(_, p)| p.paths).sum();
    if delivered == 0 {
        let at = plan.close.first().map(|a| format!(" at {a:#x}")).unwrap_or_default();
        c.notes.push(format!("census: no path reached the guest's IRQ vector{at}: nothing was counted as delivered"));
    }
    c.census = Some(census);
    Ok(())
}

/// The windows up to the last delivered interrupt (in the plugin's order), and how many came
/// after it.
pub fn until_last_delivery(mut windows: Vec<window::Window>) -> (Vec<window::Window>, usize) {
    let Some(last) = windows.iter().filter(|w| w.end == "delivered").map(|w| w.seq).max() else {
        return (windows, 0);
    };
    let before = windows.len();
    windows.retain(|w| w.seq <= last);
    let late = before - windows.len();
    (windows, late)
}

/// `lab.path.*` figures of a census: per class, paths, instructions per path (median) and
/// per path by exception level.
pub fn figures(c: &results::census::Census) -> BTreeMap<String, (f64, &'static str)> {
    let mut f = BTreeMap::new();
    for (class, p) in &c.classes {
        f.insert(format!("lab.path.{class}.paths"), (p.paths as f64, "paths"));
        f.insert(format!("lab.path.{class}.insns"), (p.insns.median, "instructions per path (median; emulation count)"));
        for (el, n) in &p.by_el {
            f.insert(format!("lab.path.{class}.insns_{}", el.to_lowercase()), (*n as f64 / p.paths.max(1) as f64, "instructions per path (mean; emulation count)"));
        }
    }
    f
}

/// One A/B side's census from its runs (imported as repetitions, which keep no census): per
/// configuration the runs' censuses, equal under -icount; where they differ the first run's is
/// kept and a note names how many runs differ.
pub fn pool_side(runs: &[results::RunResult], into: &mut results::RunResult) {
    for c in &mut into.configs {
        let all: Vec<&results::census::Census> = runs.iter().filter_map(|r| r.configs.iter().find(|x| x.name == c.name)?.census.as_ref()).collect();
        let Some(first) = all.first() else { continue };
        let differ = all.iter().filter(|x| x.classes != first.classes).count();
        let mut census = (*first).clone();
        if differ > 0 {
            census.notes.push(format!("{differ} of {} runs counted other paths than the first (without -icount the paths taken vary); the first run's census is shown", all.len()));
        }
        c.census = Some(census);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xen_plan_without_symbols_has_no_irq_start_and_says_why() {
        let p = xen_plan(Err("--xen given without --xen-syms".into()), (0x200000, 0x300000), 0x4008_0000, 0x3000, "/o/census.txt".into()).unwrap();
        assert!(p.open.is_empty());
        assert_eq!(p.images[0].no_symbols.as_deref(), Some("--xen given without --xen-syms"));
        let a = p.qemu_args(Path::new("/c/libcensus.so")).unwrap();
        assert_eq!(a[0], "-plugin");
        assert!(a[1].starts_with("/c/libcensus.so,out=/o/census.txt,close=0x40081"), "{}", a[1]);
        assert!(a[1].contains(",range=0x200000:0x300000:hyp,range=0x40080000:0x40083000:guest"), "{}", a[1]);
    }

    #[test]
    fn windows_after_the_last_delivery_are_cut() {
        let w = |seq, end: &str| window::Window { seq, end: end.into(), ..Default::default() };
        let (kept, late) = until_last_delivery(vec![w(1, "other"), w(2, "delivered"), w(3, "other"), w(4, "delivered"), w(5, "other"), w(6, "other")]);
        assert_eq!((kept.iter().map(|w| w.seq).collect::<Vec<_>>(), late), (vec![1, 2, 3, 4], 2));
        assert_eq!(until_last_delivery(vec![w(1, "other")]).1, 0, "nothing delivered: nothing cut");
    }

    #[test]
    fn a_side_keeps_the_census_and_says_when_runs_differ() {
        let run = |n: u64| {
            let mut r = results::RunResult::new(results::RunMeta::named("t", "s", 1, results::ResultKind::Measured));
            let mut c = results::ConfigResult::new("x");
            let p = results::census::PathCensus { paths: n, ..Default::default() };
            c.census = Some(results::census::Census { classes: [("timer".to_string(), p)].into(), ..Default::default() });
            r.configs.push(c);
            r
        };
        let mut into = run(0);
        into.configs[0].census = None;
        pool_side(&[run(5), run(5)], &mut into);
        assert_eq!(into.configs[0].census.as_ref().unwrap().classes["timer"].paths, 5);
        assert!(into.configs[0].census.as_ref().unwrap().notes.is_empty());
        pool_side(&[run(5), run(6), run(7)], &mut into);
        assert!(into.configs[0].census.as_ref().unwrap().notes[0].starts_with("2 of 3 runs counted other paths"));
    }

    #[test]
    fn xen_plan_with_symbols_opens_at_the_irq_vectors() {
        let s = Symbols::parse("0x200000 T _stext\n0x257800 T hyp_traps_vector\n0x27476c T _etext\n", "xen-syms.map", 0).unwrap();
        let p = xen_plan(Ok(s), (0, 0), 0x4008_0000, 0x3000, "/o/c.txt".into()).unwrap();
        assert_eq!(p.open, vec![0x257a80, 0x257c80]);
        assert_eq!(p.images[0].range, (0x200000, 0x27476c));
        assert!(p.classes.tags.values().any(|c| c == "timer"));
        assert!(p.qemu_args(Path::new("/c,d/lib.so")).unwrap_err().to_string().contains("comma"));
    }
}

//! What a model expects of the census path behind one of its segments, and the segment's time.
//!
//! A model that takes a segment's cost from the census declares the path it stands for
//! ([`PathSpec`]): the census path class, the GIC generation the board has (a GICv2 board's path
//! reads GICC/GICH by MMIO, a GICv3 one's ICC/ICH system registers: a census of the other kind
//! was counted on another board), whether the path enters EL2 (a trap path with no exception
//! into EL2 is not that path), and which EL2 symbols are the hypervisor's entry code (its vector
//! and register save/restore: Xen `xen/arch/arm/arm64/entry.S`, KVM `arch/arm64/kvm/hyp/entry.S`
//! and `hyp-entry.S`). [`Segment::new`] checks the census against it and times it with the
//! board's [`CoreTiming`]; [`Spread`] is the time at the census's own min and max counts, the
//! band a model's path may differ from its census by.
use super::{Census, CensusError, CensusPath, Count};
use crate::platform::timing::{CoreTiming, PathTime, GIC_CLASSES};
use results::vocab::Gic;

/// The path a model segment stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct PathSpec {
    /// The census path class (`paths.<class>`).
    pub class: &'static str,
    /// The board's GIC generation (the shared vocabulary's word): GICv2 (GIC-400) reads its CPU
    /// and virtual interface by MMIO, GICv3 and later (GIC-500/600/700) the ICC/ICH system registers.
    pub gic: Gic,
    /// The path enters EL2 at least once (a trap or an interrupt taken by the hypervisor).
    pub enters_el2: bool,
    /// EL2 functions that are entry code (timed at `cpi.hyp_entry`).
    pub entry_symbols: &'static [&'static str],
}

/// The time a census path takes at its min, median and max instruction counts (ns, warm).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub min_ns: f64,
    pub median_ns: f64,
    pub max_ns: f64,
}

impl Spread {
    /// Whether a model's value for this path lies within the census's own spread (with a
    /// relative slack for rounding, 0.1 %).
    pub fn holds(&self, model_ns: f64) -> bool {
        model_ns >= self.min_ns * 0.999 && model_ns <= self.max_ns * 1.001
    }
}

/// A model segment timed from a census path.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// `<census file>#<class>`, and the lab run behind it, for the result's provenance.
    pub provenance: String,
    pub warm: PathTime,
    pub cold: PathTime,
    pub spread: Spread,
    /// Set when the census had no per-function counts (entry code timed as C).
    pub note: Option<String>,
}

fn is_sysreg(key: &str) -> bool {
    GIC_CLASSES.iter().any(|(c, sys)| *sys && key.starts_with(&format!("{c}_")))
}

impl PathSpec {
    /// Check that `census`'s path class is this path; errors name the census file and the key.
    pub fn check<'c>(&self, census: &'c Census) -> Result<&'c CensusPath, CensusError> {
        let p = census.path(self.class)?;
        let inv = |key: String, message: String| CensusError::Invalid { file: census.file.clone(), key, message };
        for k in p.gic.keys() {
            let sysreg = self.gic.sysreg_cpu_interface();
            let wrong = if sysreg { k.starts_with("gicc_") || k.starts_with("gich_") || k.starts_with("gicv_") } else { is_sysreg(k) };
            if wrong {
                let how = if sysreg { "ICC/ICH system registers" } else { "GICC/GICH by MMIO" };
                let want = format!("a {} board ({how})", self.gic.title());
                return Err(inv(format!("paths.{}.gic.{k}", self.class), format!("the scenario's path is on {want}; this census was counted on another GIC")));
            }
        }
        let el2_entries: f64 = p.exceptions.get("el2").map_or(0.0, |b| b.values().sum());
        if self.enters_el2 && el2_entries == 0.0 {
            return Err(inv(
                format!("paths.{}.exceptions.el2", self.class),
                "the scenario's path enters EL2 (a trap or an interrupt taken by the hypervisor); this census path takes no exception to EL2".into(),
            ));
        }
        if !self.enters_el2 && p.instructions.get("el2").is_some_and(|c| c.max > 0.0) {
            return Err(inv(format!("paths.{}.instructions.el2", self.class), "the scenario's path runs no hypervisor code; this census path does".into()));
        }
        Ok(p)
    }
}

impl Segment {
    /// Check `census` against `spec` and time the path on `timing`.
    pub fn new(census: &Census, spec: &PathSpec, timing: &CoreTiming) -> Result<Segment, CensusError> {
        let p = spec.check(census)?;
        let time = |pick: fn(&Count) -> f64, cold: bool| {
            let (c, _) = p.counts(spec.entry_symbols, pick);
            timing.time(&c, cold).map_err(|e| CensusError::Invalid { file: census.file.clone(), key: format!("paths.{}", spec.class), message: e.to_string() })
        };
        let warm = time(|c| c.median, false)?;
        let cold = time(|c| c.median, true)?;
        let spread = Spread { min_ns: time(|c| c.min, false)?.total_ns(), median_ns: warm.total_ns(), max_ns: time(|c| c.max, false)?.total_ns() };
        let (_, known) = p.counts(spec.entry_symbols, |c| c.median);
        let note = (!known).then(|| format!("{}#{}: no per-function counts, EL2 entry code timed as C", census.file, spec.class));
        let r = &census.run;
        Ok(Segment {
            provenance: format!("{}#{} (lab run: build {}; bench {}; commit {}; regenerate: {})", census.file, spec.class, r.build, r.bench, r.commit, r.command),
            warm,
            cold,
            spread,
            note,
        })
    }
}

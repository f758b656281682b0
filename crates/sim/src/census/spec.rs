//! What a model expects of the census path behind one of its segments, and the segment's time.
//!
//! A model segment taken from the census declares the path it stands for ([`PathSpec`]): the
//! census class, the lab run's parameters that make it that path (a virtual timer to a
//! *running* vCPU is a `vwfi=native` run: under `vwfi=trap` the same class is a blocked vCPU's
//! wake-up), the hypervisor, whether the path enters EL2, and the guest's trapping access if
//! the path is a trap. [`Segment::new`] checks a census against it — a mismatch is an error
//! naming the census file and the key ([`CensusError::Invalid`]) — and times the class with the
//! board's [`CoreTiming`]; [`Spread`] is the time at the class's own min and max counts, the band
//! a model's path may differ from its census by.
use super::view::{ClassView, Translation};
use super::{CensusError, LabCensus};
use crate::platform::timing::{CoreTiming, PathTime};

/// The GIC CPU interface a board has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GicIf {
    /// GICv2 (GIC-400): CPU and virtual interface by MMIO.
    Mmio,
    /// GICv3+ (GIC-500/600/700): ICC/ICH system registers.
    Sysreg,
}

/// The path a model segment stands for.
#[derive(Debug, Clone)]
pub struct PathSpec {
    /// The census class (`census.classes.<class>`).
    pub class: &'static str,
    /// `lab_run.platform.hypervisor` starts with this (`Xen`).
    pub hypervisor: &'static str,
    /// `lab_run.params` the run must have had (`vwfi` = `native`, `bench` = `timer`).
    pub params: &'static [(&'static str, &'static str)],
    /// The path enters EL2 at least once (a trap or an interrupt taken by the hypervisor).
    pub enters_el2: bool,
    /// The guest's access the path traps on (`"ICC_SGI1R_EL1 w"`), not a GIC access of its own.
    pub trapped: Option<&'static str>,
    /// Which EL2 symbols are the hypervisor's entry code (`view::is_xen_entry` for Xen; KVM's
    /// would name `__kvm_hyp_vector` and `arch/arm64/kvm/hyp/entry.S`).
    pub entry_code: fn(&str) -> bool,
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

/// A model segment timed from a census class.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// `<census file>#<class>` and the lab run behind it, for the result's provenance.
    pub provenance: String,
    /// The class at its median count, warm and on a first run after other work.
    pub warm: PathTime,
    pub cold: PathTime,
    pub spread: Spread,
    /// Instructions per path (median) and GIC accesses per path, for the notes.
    pub instructions: f64,
    pub gic_accesses: f64,
    /// What the timing had to assume (no functions: entry code as C; GICv3 counted, GICv2 board).
    pub notes: Vec<String>,
}

impl PathSpec {
    /// Check that `census`'s class is this path; errors name the census file and the key.
    pub fn check<'c>(&self, census: &'c LabCensus) -> Result<&'c results::census::PathCensus, CensusError> {
        let inv = |key: String, message: String| CensusError::Invalid { file: census.file.clone(), key, message };
        let hyp = census.run.platform.get("hypervisor").map_or("", |s| s.as_str());
        if !hyp.starts_with(self.hypervisor) {
            return Err(inv("lab_run.platform.hypervisor".into(), format!("a census of {} (the path this segment stands for), got `{hyp}`", self.hypervisor)));
        }
        for (k, want) in self.params {
            let got = census.run.params.get(*k).map_or("(absent)", |s| s.as_str());
            if got != *want {
                return Err(inv(format!("lab_run.params.{k}"), format!("{want}: the class `{}` is this segment's path only in a {k}={want} run; this run has {got}", self.class)));
            }
        }
        let p = census.class(self.class)?;
        let el2_entries: u64 = p.exceptions.iter().filter(|(k, _)| k.starts_with("EL2")).map(|(_, v)| v).sum();
        if self.enters_el2 && el2_entries == 0 {
            return Err(inv(
                format!("census.classes.{}.exceptions", self.class),
                "the segment's path enters EL2 (a trap or an interrupt taken by the hypervisor); this class takes no exception to EL2".into(),
            ));
        }
        if !self.enters_el2 && p.by_el.get("EL2").is_some_and(|n| *n > 0) {
            return Err(inv(format!("census.classes.{}.by_el.EL2", self.class), "the segment's path runs no hypervisor code; this class does".into()));
        }
        Ok(p)
    }

    /// The class's view on a `board` GIC, errors naming the census key.
    pub fn view(&self, census: &LabCensus, board: GicIf) -> Result<ClassView, CensusError> {
        let p = self.check(census)?;
        ClassView::of(p, board, self.trapped, self.entry_code).map_err(|(k, message)| CensusError::Invalid {
            file: census.file.clone(),
            key: format!("census.classes.{}.{k}", self.class),
            message,
        })
    }
}

impl Segment {
    /// Check `census` against `spec` and time its class on `timing` for a `board` GIC.
    pub fn new(census: &LabCensus, spec: &PathSpec, board: GicIf, timing: &CoreTiming) -> Result<Segment, CensusError> {
        let v = spec.view(census, board)?;
        let p = census.class(spec.class)?;
        let time = |total: f64, cold: bool| {
            timing.time(&v.counts_at(total), cold).map_err(|e| CensusError::Invalid {
                file: census.file.clone(),
                key: format!("census.classes.{}", spec.class),
                message: e.to_string(),
            })
        };
        let warm = time(p.insns.median, false)?;
        let cold = time(p.insns.median, true)?;
        let spread = Spread { min_ns: time(p.insns.min as f64, false)?.total_ns(), median_ns: warm.total_ns(), max_ns: time(p.insns.max as f64, false)?.total_ns() };
        let mut notes = Vec::new();
        if !v.split_known {
            notes.push(format!("{}#{}: no per-function counts, EL2 entry code timed as C", census.file, spec.class));
        }
        if v.translation == Translation::V3AsV2 {
            notes.push(format!(
                "{}#{}: counted on QEMU's GICv3 (Xen's gic-v3.c and vgic-v3.c); on this GICv2 board each ICC/ICH register access is timed as its GICv2 MMIO counterpart, the instructions as counted",
                census.file, spec.class
            ));
        }
        Ok(Segment {
            provenance: format!("{}#{} ({})", census.file, spec.class, census.run_line()),
            warm,
            cold,
            spread,
            instructions: p.insns.median,
            gic_accesses: v.gic.values().sum(),
            notes,
        })
    }
}

impl Segment {
    /// Result notes: the segment, its census and lab run, its counts and time on the board.
    pub fn describe(&self, name: &str) -> Vec<String> {
        let w = &self.warm;
        let mut v = vec![format!(
            "census segment {name}: {}; {:.0} instructions and {:.1} GIC accesses per path, {:.0} ns warm on this board (instructions {:.0}, GIC {:.0}, exceptions {:.0}), {:.0} ns on a first run; spread {:.0}–{:.0} ns",
            self.provenance,
            self.instructions,
            self.gic_accesses,
            w.total_ns(),
            w.instructions_ns,
            w.gic_ns,
            w.exceptions_ns,
            self.cold.total_ns(),
            self.spread.min_ns,
            self.spread.max_ns
        )];
        v.extend(self.notes.iter().cloned());
        v
    }
}

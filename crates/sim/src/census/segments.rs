//! The segments the models take from the lab's census (issue 43, item 2): one row per hypervisor
//! path a model charges, naming the census file (a stem under `crates/sim/census/lab/`) and the
//! class that counted it, and what the run must have been for the class to be that path.
//! Adding a path is a row here and a call in the model (`timed(ctx, NAME, gic)`); adding a lab
//! run is a file (and a line in `scripts/census-data.py`).
//!
//! A scenario may point a segment at another census file with a top-level table
//! `[census]`, `<segment> = "<shipped name or path.json>"`; the file is checked against the
//! segment's path like a shipped one (exit 2 naming the file and the key when it is not it).
use std::collections::BTreeMap;

use super::spec::{GicIf, PathSpec, Segment};
use super::view::is_xen_entry;
use super::LabCensus;
use crate::model::PointCtx;
use crate::scenario::ScenarioError;

/// One segment a model takes from the census.
#[derive(Debug, Clone)]
pub struct SegmentDef {
    /// The segment's name in the models and in `[census]`.
    pub name: &'static str,
    /// The census file it is counted in, by default (`crates/sim/census/lab/<census>.json`).
    pub census: &'static str,
    /// What the window covers, in a line.
    pub what: &'static str,
    pub spec: PathSpec,
}

const XEN_VTIMER: PathSpec =
    PathSpec { class: "timer", hypervisor: "Xen", params: &[("bench", "timer"), ("vwfi", "native")], enters_el2: true, trapped: None, entry_code: is_xen_entry };
const XEN_SGI_SEND: PathSpec = PathSpec {
    class: "ipi.send.from-ipi_loop",
    hypervisor: "Xen",
    params: &[("bench", "ipi"), ("vwfi", "native")],
    enters_el2: true,
    trapped: Some("ICC_SGI1R_EL1 w"),
    entry_code: is_xen_entry,
};

/// The segments, by name.
pub const SEGMENTS: &[SegmentDef] = &[
    SegmentDef {
        name: "xen-vtimer-running",
        census: "xen-timer-credit2-native",
        what: "Xen's virtual-timer interrupt to a running vCPU: from the EL2 IRQ vector (PPI 27) through gic_interrupt, time.c#vtimer_interrupt, vgic_inject_irq and the list-register write to the eret into the guest's IRQ vector",
        spec: XEN_VTIMER,
    },
    SegmentDef {
        name: "xen-sgi-send",
        census: "xen-ipi-credit2-native",
        what: "a guest's SGI write trapped by Xen with the target not blocked (vwfi=native): the trap, vgic_to_sgi, vgic_inject_irq, vcpu_kick, and the eret back to the sender",
        spec: XEN_SGI_SEND,
    },
];

/// The segment `name`'s row.
pub fn def(name: &str) -> Option<&'static SegmentDef> {
    SEGMENTS.iter().find(|s| s.name == name)
}

/// Why a census segment cannot be timed for a scenario (the CLI: exit 2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SegmentError {
    #[error("unknown census segment `{0}`")]
    Unknown(String),
    #[error(transparent)]
    Census(#[from] super::CensusError),
    #[error("key `platform.profile`: the census segment `{segment}` is timed by the board's per-core timing model; profile `{profile}` has no [timing] section")]
    NoTiming { segment: String, profile: String },
}

/// Load the census behind `def` (or `file`) and time it on `timing` for a `board` GIC.
pub fn time(def: &SegmentDef, file: Option<&str>, board: GicIf, timing: &crate::platform::CoreTiming) -> Result<Segment, SegmentError> {
    let census = LabCensus::load(file.unwrap_or(def.census))?;
    Ok(Segment::new(&census, &def.spec, board, timing)?)
}

/// The segment `name` for a scenario's point: its census (the scenario's `[census]` entry, or
/// the row's file), timed on the point's board.
pub fn timed(ctx: &PointCtx, name: &str, board: GicIf) -> Result<Segment, ScenarioError> {
    let wrap = |source: SegmentError| ScenarioError::Census { file: ctx.file.to_string(), source };
    let def = def(name).ok_or_else(|| wrap(SegmentError::Unknown(name.into())))?;
    let chosen: BTreeMap<String, String> = ctx.section("census")?;
    if let Some(k) = chosen.keys().find(|k| self::def(k).is_none()) {
        let known: Vec<&str> = SEGMENTS.iter().map(|s| s.name).collect();
        return Err(ctx.invalid(&format!("census.{k}"), &format!("a census segment, one of {}", known.join(", ")), k));
    }
    let timing = ctx.platform.timing.as_ref().ok_or_else(|| wrap(SegmentError::NoTiming { segment: name.into(), profile: ctx.platform.name.clone() }))?;
    time(def, chosen.get(name).map(String::as_str), board, timing).map_err(wrap)
}

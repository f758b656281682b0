//! What the interrupt hardware did, as seen from outside: the output of [`super::GicSystem`]
//! for a device event, an ITS command or a residency change. A timed model charges time per
//! effect (a vLPI to a resident vPE costs no hypervisor work; a doorbell is a physical LPI
//! that wakes the hypervisor).
use std::fmt;

use crate::arch::arm::its::{MemoryError, Violation};

/// Why a vLPI for a non-resident vPE rang no doorbell (it stays pending in the VPT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoDoorbell {
    /// v4.0: the ITE's doorbell is 1023.
    NoneConfigured,
    /// v4.0: the doorbell LPI is disabled in the configuration the redistributor holds (the
    /// hypervisor enables it only while the vCPU blocks, B.3); it is pending, masked.
    Masked,
    /// v4.1: the vPE was descheduled without DB (or its doorbell already rang, B.2).
    NotRequested,
    /// The doorbell LPI was already pending.
    AlreadyPending,
    /// GICR_CTLR.EnableLPIs = 0 at the redistributor.
    LpisDisabled,
}

/// Why an interrupt was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DropReason {
    /// The ITS could not translate it (unmapped device/event/collection/vPE, out of range).
    Untranslatable(Violation),
    /// GICR_CTLR.EnableLPIs = 0 at the target redistributor (A.5 step 3).
    LpisDisabled { rd: u16 },
    /// The INTID is beyond the redistributor's PROPBASER.IDbits (A.5) or the resident vPE's
    /// VPROPBASER.IDbits (B.4).
    BeyondIdBits { intid: u32 },
    /// A table or pending-table access hit a memory error.
    Memory(MemoryError),
}

/// One observable outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A physical LPI became pending at redistributor `rd`; `enabled` = its configuration
    /// byte's Enable as the redistributor caches it (a disabled LPI stays pending, silent).
    LpiPending { rd: u16, intid: u32, enabled: bool },
    /// A vLPI became pending for vPE `vpe`, resident on `rd`: its virtual IRQ line rises with no
    /// hypervisor involvement when `enabled`.
    VlpiToResident { rd: u16, vpe: u16, vintid: u32, enabled: bool },
    /// A vLPI became pending for a non-resident vPE and doorbell `doorbell` became a pending
    /// (enabled) physical LPI at `rd` (B.3, B.4).
    Doorbell { rd: u16, vpe: u16, vintid: u32, doorbell: u32 },
    /// A vLPI was recorded in a non-resident vPE's VPT without a doorbell.
    VlpiRecorded { vpe: u16, vintid: u32, why: NoDoorbell },
    /// The interrupt was already pending (merged).
    AlreadyPending { vpe: Option<u16>, intid: u32 },
    /// CLEAR / DISCARD / MOVI cleared a pending bit (`vpe` = None: physical at `rd`).
    Cleared { rd: Option<u16>, vpe: Option<u16>, intid: u32 },
    /// The interrupt went nowhere.
    Dropped(DropReason),
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Effect::LpiPending { rd, intid, enabled } => {
                write!(f, "physical LPI {intid} pending at redistributor {rd}{}", if *enabled { "" } else { " (disabled: silent)" })
            }
            Effect::VlpiToResident { rd, vpe, vintid, enabled } => {
                write!(f, "vLPI {vintid} pending for vPE {vpe} resident on redistributor {rd}{}", if *enabled { ": delivered" } else { " (disabled: not delivered)" })
            }
            Effect::Doorbell { rd, vpe, vintid, doorbell } => {
                write!(f, "vLPI {vintid} recorded for non-resident vPE {vpe}; doorbell LPI {doorbell} raised at redistributor {rd}")
            }
            Effect::VlpiRecorded { vpe, vintid, why } => write!(f, "vLPI {vintid} recorded for non-resident vPE {vpe}, no doorbell ({why:?})"),
            Effect::AlreadyPending { vpe: Some(v), intid } => write!(f, "vLPI {intid} of vPE {v} already pending (merged)"),
            Effect::AlreadyPending { vpe: None, intid } => write!(f, "LPI {intid} already pending (merged)"),
            Effect::Cleared { vpe: Some(v), intid, .. } => write!(f, "vLPI {intid} of vPE {v} cleared"),
            Effect::Cleared { rd, intid, .. } => write!(f, "LPI {intid} cleared at redistributor {}", rd.unwrap_or(0)),
            Effect::Dropped(DropReason::Untranslatable(v)) => write!(f, "dropped: {v}"),
            Effect::Dropped(DropReason::LpisDisabled { rd }) => write!(f, "dropped: EnableLPIs = 0 at redistributor {rd}"),
            Effect::Dropped(DropReason::BeyondIdBits { intid }) => write!(f, "dropped: INTID {intid} beyond IDbits"),
            Effect::Dropped(DropReason::Memory(e)) => write!(f, "dropped: {e}"),
        }
    }
}

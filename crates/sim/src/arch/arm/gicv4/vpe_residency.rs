//! The VLPI frame of one GICv4 redistributor: GICR_VPROPBASER and GICR_VPENDBASER with Valid,
//! Dirty and PendingLast, i.e. which vPE is resident and the schedule-in / schedule-out
//! handshake (docs/sources.md B.2).
//!
//! - v4.0: VPROPBASER = IDbits[4:0] | PA[51:12] of the VM's vLPI configuration table;
//!   VPENDBASER = PA[51:16] of the VPT | Dirty[60] | PendingLast[61] | IDAI[62] | Valid[63].
//! - v4.1: VPROPBASER describes the shared vPE table (Valid[63]); VPENDBASER = vPEID[15:0] |
//!   VGrp1En[58] | VGrp0En[59] | Dirty[60] | PendingLast[61] | DB[62] | Valid[63].
//!
//! A write that flips Valid starts a transition and sets Dirty (the redistributor is parsing or
//! flushing the VPT). The model has no time: the transition completes when software polls
//! ([`VlpiFrame::poll_dirty`]), which is what the timed model charges the poll loop for. Writing
//! VPENDBASER while Dirty = 1 is UNPREDICTABLE (B.2) and is reported; the write is ignored.
use results::vocab::Gic;

pub const VALID: u64 = 1 << 63;
pub const DIRTY: u64 = 1 << 60;
pub const PENDING_LAST: u64 = 1 << 61;
/// v4.0 IDAI[62] / v4.1 DB[62].
pub const IDAI_OR_DB: u64 = 1 << 62;
pub const VGRP1EN: u64 = 1 << 58;
pub const VGRP0EN: u64 = 1 << 59;
const PA_51_16: u64 = 0x000F_FFFF_FFFF_0000;

/// Which vPE a VPENDBASER value names: v4.0 by its VPT address, v4.1 by vPEID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResidentKey {
    Vpt(u64),
    VpeId(u16),
}

/// What a completed Dirty poll finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completed {
    /// Nothing was in progress.
    Idle,
    /// A schedule-in: the vPE is now resident; the caller drains its pending vLPIs.
    ScheduledIn(ResidentKey),
    /// A schedule-out: the caller computes PendingLast (any enabled vLPI pending) and, on
    /// v4.1, whether a doorbell was requested (DB).
    ScheduledOut { key: ResidentKey, doorbell_requested: bool },
}

/// Errors of the register interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ResidencyError {
    /// B.2: written while Dirty = 1.
    #[error("GICR_VPENDBASER written while Dirty = 1")]
    WriteWhileDirty,
}

/// GICR_VPROPBASER / GICR_VPENDBASER of one redistributor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlpiFrame {
    pub version: Gic,
    vpropbaser: u64,
    vpendbaser: u64,
    /// The transition Dirty stands for: `Some(previous VPENDBASER)`.
    in_flight: Option<u64>,
}

impl VlpiFrame {
    pub fn new(version: Gic) -> VlpiFrame {
        VlpiFrame { version, vpropbaser: 0, vpendbaser: 0, in_flight: None }
    }

    pub fn vpropbaser(&self) -> u64 {
        self.vpropbaser
    }

    /// Read GICR_VPENDBASER (Dirty set while a transition is in flight).
    pub fn vpendbaser(&self) -> u64 {
        self.vpendbaser | if self.in_flight.is_some() { DIRTY } else { 0 }
    }

    pub fn dirty(&self) -> bool {
        self.in_flight.is_some()
    }

    pub fn write_vpropbaser(&mut self, v: u64) {
        self.vpropbaser = v;
    }

    /// v4.0: the VM's vLPI configuration table (VPROPBASER.PA) and its INTID bits.
    pub fn vprop_table(&self) -> (u64, u32) {
        (self.vpropbaser & 0x000F_FFFF_FFFF_F000, (self.vpropbaser & 0x1f) as u32 + 1)
    }

    fn key(&self, v: u64) -> ResidentKey {
        match self.version {
            Gic::V4_1 => ResidentKey::VpeId(v as u16),
            _ => ResidentKey::Vpt(v & PA_51_16),
        }
    }

    /// The resident vPE, if VPENDBASER.Valid = 1 (including while the schedule-in is still Dirty).
    pub fn resident(&self) -> Option<ResidentKey> {
        (self.vpendbaser & VALID != 0).then(|| self.key(self.vpendbaser))
    }

    /// Write GICR_VPENDBASER. Flipping Valid starts a transition (Dirty = 1). Software's
    /// PendingLast/DB bits are kept as written until the transition completes.
    pub fn write_vpendbaser(&mut self, v: u64) -> Result<(), ResidencyError> {
        if self.dirty() {
            return Err(ResidencyError::WriteWhileDirty);
        }
        let old = self.vpendbaser;
        self.vpendbaser = v & !DIRTY;
        if (old ^ v) & VALID != 0 {
            self.in_flight = Some(old);
        }
        Ok(())
    }

    /// Poll until Dirty = 0: the transition in flight completes. For a schedule-out the
    /// caller then sets PendingLast with [`VlpiFrame::set_pending_last`].
    pub fn poll_dirty(&mut self) -> Completed {
        let Some(old) = self.in_flight.take() else { return Completed::Idle };
        if self.vpendbaser & VALID != 0 {
            Completed::ScheduledIn(self.key(self.vpendbaser))
        } else {
            let doorbell_requested = self.version == Gic::V4_1 && self.vpendbaser & IDAI_OR_DB != 0;
            Completed::ScheduledOut { key: self.key(old), doorbell_requested }
        }
    }

    /// PendingLast as the redistributor reports it after a schedule-out (B.2: 1 if an enabled
    /// vLPI is pending).
    pub fn set_pending_last(&mut self, on: bool) {
        if on {
            self.vpendbaser |= PENDING_LAST;
        } else {
            self.vpendbaser &= !PENDING_LAST;
        }
    }

    pub fn pending_last(&self) -> bool {
        self.vpendbaser & PENDING_LAST != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v40_schedule_in_poll_schedule_out_poll() {
        let mut f = VlpiFrame::new(Gic::V4_0);
        f.write_vpropbaser(0x4000_0000 | 15);
        f.write_vpendbaser(0x5000_0000 | PENDING_LAST | IDAI_OR_DB | VALID).unwrap();
        assert!(f.dirty() && f.vpendbaser() & DIRTY != 0);
        assert_eq!(f.resident(), Some(ResidentKey::Vpt(0x5000_0000)));
        assert_eq!(f.write_vpendbaser(0), Err(ResidencyError::WriteWhileDirty), "B.2: UNPREDICTABLE while Dirty");
        assert_eq!(f.poll_dirty(), Completed::ScheduledIn(ResidentKey::Vpt(0x5000_0000)));
        assert!(!f.dirty());
        f.write_vpendbaser(0x5000_0000).unwrap();
        assert_eq!(f.resident(), None);
        assert_eq!(f.poll_dirty(), Completed::ScheduledOut { key: ResidentKey::Vpt(0x5000_0000), doorbell_requested: false });
        f.set_pending_last(true);
        assert!(f.pending_last());
        assert_eq!(f.poll_dirty(), Completed::Idle);
    }

    #[test]
    fn v41_residency_by_vpe_id_and_db_request() {
        let mut f = VlpiFrame::new(Gic::V4_1);
        f.write_vpendbaser(VALID | VGRP1EN | 7).unwrap();
        assert_eq!(f.poll_dirty(), Completed::ScheduledIn(ResidentKey::VpeId(7)));
        f.write_vpendbaser(IDAI_OR_DB).unwrap();
        assert_eq!(f.poll_dirty(), Completed::ScheduledOut { key: ResidentKey::VpeId(7), doorbell_requested: true });
        f.write_vpendbaser(VALID | 7).unwrap();
        f.poll_dirty();
        f.write_vpendbaser(PENDING_LAST).unwrap();
        assert_eq!(f.poll_dirty(), Completed::ScheduledOut { key: ResidentKey::VpeId(7), doorbell_requested: false });
    }
}

//! The redistributor side of vLPIs (docs/sources.md B.2–B.4; QEMU `arm_gicv3_redist.c`
//! `gicv3_redist_process_vlpi`, `gicv3_redist_mov_vlpi`, `gicv3_redist_vinvall`): where a vLPI
//! goes (resident vPE, VPT + doorbell), and the VPROPBASER/VPENDBASER register interface with
//! the drain on schedule-in and PendingLast on schedule-out.
use super::effect::{DropReason, Effect, NoDoorbell};
use super::system::GicSystem;
use super::vpe_residency::{Completed, ResidentKey};
use crate::arch::arm::its::{MemoryError, Violation, Vte, FIRST_LPI, NO_DOORBELL};
use results::vocab::Gic;

impl GicSystem {
    fn frame_holds(&self, rd: usize, vpe: u16, vte: &Vte) -> bool {
        match self.frames.get(rd).and_then(|f| f.resident()) {
            Some(ResidentKey::Vpt(a)) => a == vte.vpt_addr,
            Some(ResidentKey::VpeId(id)) => id == vpe,
            None => false,
        }
    }

    /// The redistributor where `vpe` is resident. v4.0: only the VTE's redistributor counts
    /// (a vPE resident elsewhere without VMOVP gets doorbells, B.3); v4.1: any redistributor
    /// (shared vPE table).
    pub fn resident_rd(&self, vpe: u16, vte: &Vte) -> Option<u16> {
        if self.config.version == Gic::V4_1 {
            (0..self.frames.len()).find(|&rd| self.frame_holds(rd, vpe, vte)).map(|rd| rd as u16)
        } else {
            self.frame_holds(vte.rdbase as usize, vpe, vte).then_some(vte.rdbase)
        }
    }

    /// vINTID range and configuration table of a vPE: v4.0 from the VPROPBASER of the
    /// redistributor it is resident on, v4.1 from VMAPP's VConfAddr and VPT size.
    fn vlpi_table(&self, rd: u16, vte: &Vte) -> (u64, u64) {
        match self.config.version {
            Gic::V4_1 => (vte.vconf_addr, vte.vintids()),
            _ => {
                let (pa, bits) = self.frames[rd as usize].vprop_table();
                (pa, (1u64 << bits).min(vte.vintids()))
            }
        }
    }

    fn vlpi_enabled(&self, rd: u16, vte: &Vte, vintid: u32) -> Result<bool, MemoryError> {
        let (conf, _) = self.vlpi_table(rd, vte);
        let Some(off) = vintid.checked_sub(FIRST_LPI) else { return Ok(false) };
        Ok(self.mem.read_u8(conf.saturating_add(off as u64))? & 1 == 1)
    }

    /// B.4: a vLPI becomes pending for `vpe`.
    pub(super) fn vlpi_arrival(&mut self, vpe: u16, vte: &Vte, vintid: u32, doorbell: u32) -> Effect {
        if let Some(rd) = self.resident_rd(vpe, vte) {
            let (_, limit) = self.vlpi_table(rd, vte);
            if vintid as u64 >= limit {
                return Effect::Dropped(DropReason::BeyondIdBits { intid: vintid });
            }
            let r = self.mem.set_bit(vte.vpt_addr, vintid, true).and_then(|prev| Ok((prev, self.vlpi_enabled(rd, vte, vintid)?)));
            return match r {
                Err(e) => Effect::Dropped(DropReason::Memory(e)),
                Ok((true, _)) => Effect::AlreadyPending { vpe: Some(vpe), intid: vintid },
                Ok((false, enabled)) => {
                    if enabled {
                        if let Some(s) = self.vpes.get_mut(&vpe) {
                            s.delivered.insert(vintid);
                        }
                    }
                    Effect::VlpiToResident { rd, vpe, vintid, enabled }
                }
            };
        }
        if let Err(e) = self.mem.set_bit(vte.vpt_addr, vintid, true) {
            return Effect::Dropped(DropReason::Memory(e));
        }
        let rd = vte.rdbase;
        let db = match self.config.version {
            Gic::V4_1 => {
                let armed = self.vpes.get(&vpe).is_some_and(|s| s.doorbell_armed);
                if !armed || vte.default_doorbell == NO_DOORBELL {
                    return Effect::VlpiRecorded { vpe, vintid, why: NoDoorbell::NotRequested };
                }
                if let Some(s) = self.vpes.get_mut(&vpe) {
                    s.doorbell_armed = false;
                }
                vte.default_doorbell
            }
            _ if doorbell == NO_DOORBELL => return Effect::VlpiRecorded { vpe, vintid, why: NoDoorbell::NoneConfigured },
            _ => doorbell,
        };
        let why = match self.set_lpi(rd, db, true) {
            Effect::LpiPending { enabled: true, .. } => return Effect::Doorbell { rd, vpe, vintid, doorbell: db },
            Effect::LpiPending { enabled: false, .. } => NoDoorbell::Masked,
            Effect::AlreadyPending { .. } => NoDoorbell::AlreadyPending,
            Effect::Dropped(DropReason::LpisDisabled { .. }) => NoDoorbell::LpisDisabled,
            other => return other,
        };
        Effect::VlpiRecorded { vpe, vintid, why }
    }

    /// CLEAR / DISCARD of a vLPI: clear its VPT bit.
    pub(super) fn clear_vlpi(&mut self, vpe: u16, vte: &Vte, vintid: u32) -> Vec<Effect> {
        if let Some(s) = self.vpes.get_mut(&vpe) {
            s.delivered.remove(&vintid);
        }
        match self.mem.set_bit(vte.vpt_addr, vintid, false) {
            Ok(true) => vec![Effect::Cleared { rd: None, vpe: Some(vpe), intid: vintid }],
            Ok(false) => vec![],
            Err(e) => vec![Effect::Dropped(DropReason::Memory(e))],
        }
    }

    /// Pending and enabled vLPIs of `vpe` not yet signalled, signalled now (schedule-in drain;
    /// INV/VINVALL re-scan of the resident vPE only, B.4).
    pub(super) fn rescan(&mut self, vpe: u16, vte: &Vte) -> Vec<Effect> {
        let Some(rd) = self.resident_rd(vpe, vte) else { return vec![] };
        let (_, limit) = self.vlpi_table(rd, vte);
        let pending = match self.mem.set_bits(vte.vpt_addr, FIRST_LPI, limit.min(u32::MAX as u64) as u32) {
            Ok(p) => p,
            Err(e) => return vec![Effect::Dropped(DropReason::Memory(e))],
        };
        let mut out = Vec::new();
        for vintid in pending {
            let already = self.vpes.get(&vpe).is_some_and(|s| s.delivered.contains(&vintid));
            if !already && self.vlpi_enabled(rd, vte, vintid).unwrap_or(false) {
                if let Some(s) = self.vpes.get_mut(&vpe) {
                    s.delivered.insert(vintid);
                }
                out.push(Effect::VlpiToResident { rd, vpe, vintid, enabled: true });
            }
        }
        out
    }

    /// The guest acknowledged vLPI `vintid` of `vpe` (ICV_IAR read): its VPT bit clears.
    pub fn ack_vlpi(&mut self, vpe: u16, vintid: u32) {
        if let Some(s) = self.vpes.get_mut(&vpe) {
            s.delivered.remove(&vintid);
            let _ = self.mem.set_bit(s.vte.vpt_addr, vintid, false);
        }
    }

    fn rd_index(&self, rd: u64) -> Result<usize, Violation> {
        if rd >= self.frames.len() as u64 {
            return Err(Violation::NoSuchRedistributor { rd, limit: self.frames.len() as u64 });
        }
        Ok(rd as usize)
    }

    /// Write GICR_VPROPBASER of redistributor `rd` (B.2).
    pub fn write_vpropbaser(&mut self, rd: u64, v: u64) -> Result<(), Violation> {
        let i = self.rd_index(rd)?;
        self.frames[i].write_vpropbaser(v);
        Ok(())
    }

    /// The vPE a VPENDBASER key names.
    pub fn vpe_of(&self, key: ResidentKey) -> Option<u16> {
        match key {
            ResidentKey::VpeId(id) => Some(id),
            ResidentKey::Vpt(a) => self.vpes.iter().find(|(_, s)| s.vte.vpt_addr == a).map(|(v, _)| *v),
        }
    }

    /// Write GICR_VPENDBASER of redistributor `rd` (B.2). Writing it while Dirty = 1 is
    /// UNPREDICTABLE (ignored); so is making a vPE resident on two redistributors.
    pub fn write_vpendbaser(&mut self, rd: u64, v: u64) -> Result<(), Violation> {
        let i = self.rd_index(rd)?;
        if self.frames[i].dirty() {
            return Err(Violation::VpendbaserWhileDirty { rd: i as u16 });
        }
        if v & super::vpe_residency::VALID != 0 {
            let mut probe = super::vpe_residency::VlpiFrame::new(self.config.version);
            let _ = probe.write_vpendbaser(v);
            if let Some(vpe) = probe.resident().and_then(|k| self.vpe_of(k)) {
                let other = (0..self.frames.len()).find(|&o| o != i && self.frames[o].resident().and_then(|k| self.vpe_of(k)) == Some(vpe));
                if let Some(o) = other {
                    return Err(Violation::VpeResidentTwice { vpe, rd: i as u16, other: o as u16 });
                }
            }
        }
        self.frames[i].write_vpendbaser(v).map_err(|_| Violation::VpendbaserWhileDirty { rd: i as u16 })
    }

    /// Poll GICR_VPENDBASER.Dirty until 0 on redistributor `rd`: the schedule-in completes and
    /// the vPE's pending enabled vLPIs are signalled (drain), or the schedule-out completes and
    /// PendingLast reports whether an enabled vLPI is pending (v4.1 with DB = 1: the doorbell
    /// is armed).
    pub fn poll_dirty(&mut self, rd: u64) -> Result<Vec<Effect>, Violation> {
        let i = self.rd_index(rd)?;
        match self.frames[i].poll_dirty() {
            Completed::Idle => Ok(vec![]),
            Completed::ScheduledIn(key) => {
                let Some(vte) = self.vpe_of(key).and_then(|v| self.vpes.get(&v)).map(|s| s.vte) else { return Ok(vec![]) };
                let vpe = self.vpe_of(key).unwrap_or(0);
                if let Some(s) = self.vpes.get_mut(&vpe) {
                    s.doorbell_armed = false;
                }
                Ok(self.rescan(vpe, &vte))
            }
            Completed::ScheduledOut { key, doorbell_requested } => {
                let Some((vpe, vte)) = self.vpe_of(key).and_then(|v| self.vpes.get(&v).map(|s| (v, s.vte))) else {
                    self.frames[i].set_pending_last(false);
                    return Ok(vec![]);
                };
                let (conf, limit) = self.vlpi_table(i as u16, &vte);
                let pending = self.mem.set_bits(vte.vpt_addr, FIRST_LPI, limit.min(u32::MAX as u64) as u32).unwrap_or_default();
                let last = pending.iter().any(|&v| self.mem.read_u8(conf.saturating_add((v - FIRST_LPI) as u64)).unwrap_or(0) & 1 == 1);
                self.frames[i].set_pending_last(last);
                if let Some(s) = self.vpes.get_mut(&vpe) {
                    s.delivered.clear();
                    s.doorbell_armed = doorbell_requested;
                }
                Ok(vec![])
            }
        }
    }
}

//! What the virtual (GICv4) commands do (docs/sources.md B.1, B.4; QEMU `process_vmapp`,
//! `process_vmapti`, `process_vmovi`, `process_vmovp`, `process_vinvall`, `process_inv_db`).
//! The version gate (v4 / v4.1 only) is applied before these run ([`Its::execute`]).
use super::command::{Vmapp, NO_DOORBELL};
use super::tables::{self, Ite, Vte};
use super::violation::{Fault, Violation};
use super::{GuestMemory, Its, ItsAction};
use results::vocab::Gic;

impl Its {
    /// VMAPP: map a vPE to a redistributor and a VPT (v4.1: also its vLPI config table and
    /// default doorbell); V = 0 unmaps it.
    pub(super) fn vmapp(&mut self, mem: &mut GuestMemory, m: Vmapp, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        self.check_vpe(m.vpe)?;
        if !m.valid {
            self.tables.write_vte(mem, m.vpe, Vte { valid: false, vpt_size: 0, vpt_addr: 0, rdbase: 0, vconf_addr: 0, default_doorbell: 0 })?;
            out.push(ItsAction::VpeMapped { vpe: m.vpe, vte: None });
            return Ok(());
        }
        let rdbase = self.check_rdbase(m.rdbase)?;
        if m.vpt_size >= self.config.id_bits {
            let limit = 1u64 << self.config.id_bits;
            return Err(Violation::IntidOutOfRange { what: "VMAPP VPT size (vINTID bits)", intid: m.vpt_size as u32 + 1, min: 1, limit }.into());
        }
        let v41 = self.config.version == Gic::V4_1;
        let default_doorbell = if v41 { m.default_doorbell } else { NO_DOORBELL };
        if v41 && default_doorbell != NO_DOORBELL {
            self.check_lpi("default doorbell pINTID", default_doorbell)?;
        }
        let vte = Vte { valid: true, vpt_size: m.vpt_size, vpt_addr: m.vpt_addr, rdbase, vconf_addr: if v41 { m.vconf_addr } else { 0 }, default_doorbell };
        self.tables.write_vte(mem, m.vpe, vte)?;
        out.push(ItsAction::VpeMapped { vpe: m.vpe, vte: Some(vte) });
        Ok(())
    }

    /// The doorbell stored in a virtual ITE: v4.0 keeps the per-vLPI doorbell; v4.1 ignores it
    /// (1023; the doorbell is per vPE, B.3).
    fn ite_doorbell(&self, doorbell: u32) -> Result<u32, Violation> {
        if self.config.version == Gic::V4_1 || doorbell == NO_DOORBELL {
            return Ok(NO_DOORBELL);
        }
        self.check_lpi("doorbell pINTID", doorbell)?;
        Ok(doorbell)
    }

    /// The vINTID of a vLPI must be an LPI within the vPE's VPT.
    fn check_vintid(&self, vte: &Vte, vintid: u32) -> Result<(), Violation> {
        if vintid < super::FIRST_LPI || vintid as u64 >= vte.vintids() {
            return Err(Violation::IntidOutOfRange { what: "vINTID", intid: vintid, min: super::FIRST_LPI, limit: vte.vintids() });
        }
        Ok(())
    }

    /// VMAPTI / VMAPI: map an event to a vLPI of a vPE. Re-issuing it on a live mapping is
    /// UNPREDICTABLE (B.1), and so is any MAP over a valid ITE: DISCARD first.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn vmapti(&mut self, mem: &mut GuestMemory, device: u32, event: u32, vpe: u16, vintid: u32, doorbell: u32, name: &'static str) -> Result<(), Fault> {
        let dte = self.mapped_device(mem, device, event)?;
        let vte = self.mapped_vpe(mem, vpe)?;
        self.check_vintid(&vte, vintid)?;
        let doorbell = self.ite_doorbell(doorbell)?;
        if tables::read_ite(mem, dte.itt_addr, event)?.valid {
            return Err(Violation::RemapLiveMapping { command: name, device, event }.into());
        }
        let ite = Ite { valid: true, physical: false, intid: vintid, icid: 0, vpe, doorbell };
        tables::write_ite(mem, dte.itt_addr, event, ite)?;
        Ok(())
    }

    /// VMOVI: move a vLPI to another vPE (or the same one, to change the doorbell on v4.0),
    /// moving its pending bit between VPTs (B.4).
    pub(super) fn vmovi(&mut self, mem: &mut GuestMemory, device: u32, event: u32, vpe: u16, doorbell: Option<u32>, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        let (dte, mut ite) = self.mapped_event(mem, device, event)?;
        if ite.physical {
            return Err(Violation::WrongInterruptType { command: "VMOVI", device, event, found: "physical" }.into());
        }
        let from = self.mapped_vpe(mem, ite.vpe)?;
        let to = self.mapped_vpe(mem, vpe)?;
        self.check_vintid(&to, ite.intid)?;
        if let Some(d) = doorbell {
            ite.doorbell = self.ite_doorbell(d)?;
        }
        let from_vpe = ite.vpe;
        ite.vpe = vpe;
        tables::write_ite(mem, dte.itt_addr, event, ite)?;
        if from_vpe != vpe {
            out.push(ItsAction::MoveVlpi { from_vpe, from, to_vpe: vpe, to, vintid: ite.intid, doorbell: ite.doorbell });
        }
        Ok(())
    }

    /// VMOVP: move a vPE to another redistributor. With GITS_TYPER.VMOVP = 0 the same VMOVP
    /// (SeqNum, ITSList) must reach every ITS in the list in the same order (B.1); this ITS
    /// checks it is in the list, the system checks the cross-ITS order.
    pub(super) fn vmovp(&mut self, mem: &mut GuestMemory, seq: u16, its_list: u16, vpe: u16, rdbase: u64, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        let mut vte = self.mapped_vpe(mem, vpe)?;
        let to = self.check_rdbase(rdbase)?;
        if !self.config.vmovp_single && (self.id >= 16 || its_list >> self.id & 1 == 0) {
            return Err(Violation::VmovpNotInItsList { its: self.id, seq, its_list }.into());
        }
        let from = vte.rdbase;
        vte.rdbase = to;
        self.tables.write_vte(mem, vpe, vte)?;
        out.push(ItsAction::Vmovp { vpe, seq, its_list, from, to });
        Ok(())
    }
}

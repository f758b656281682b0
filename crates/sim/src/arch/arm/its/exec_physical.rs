//! What the physical commands do (docs/sources.md A.2, A.5; QEMU `arm_gicv3_its.c`
//! `process_mapd`, `process_mapc`, `process_mapti`, `process_movi`, `process_its_cmd`,
//! `process_movall`). Each returns `Err(Fault::Skip)` for an UNPREDICTABLE use (the command is
//! skipped, state untouched) and `Err(Fault::Memory)` when a table cannot be read (stall).
use super::tables::{self, Cte, Dte, Ite};
use super::violation::{Fault, Violation};
use super::{GuestMemory, Its, ItsAction};

impl Its {
    /// MAPD: V = 1 maps the device to an ITT of 2^(Size+1) events; V = 0 unmaps it.
    pub(super) fn mapd(&mut self, mem: &mut GuestMemory, device: u32, size: u8, itt_addr: u64, valid: bool) -> Result<(), Fault> {
        self.check_device(device)?;
        if valid && size >= self.config.id_bits {
            return Err(Violation::EventBitsTooLarge { device, bits: size as u32 + 1, max: self.config.id_bits as u32 }.into());
        }
        let dte = if valid { Dte { valid, size, itt_addr } } else { Dte { valid: false, size: 0, itt_addr: 0 } };
        self.tables.write_dte(mem, device, dte)?;
        Ok(())
    }

    /// MAPC: V = 1 maps the collection to a redistributor; V = 0 unmaps it.
    pub(super) fn mapc(&mut self, mem: &mut GuestMemory, icid: u16, rdbase: u64, valid: bool) -> Result<(), Fault> {
        self.check_icid(icid)?;
        let rd = if valid { self.check_rdbase(rdbase)? } else { 0 };
        self.tables.write_cte(mem, icid, Cte { valid, rdbase: rd })?;
        Ok(())
    }

    /// MAPTI / MAPI (pINTID = EventID): map an event to a physical LPI in a collection. The
    /// collection need not be mapped yet (QEMU checks only its range).
    pub(super) fn mapti(&mut self, mem: &mut GuestMemory, device: u32, event: u32, pintid: u32, icid: u16) -> Result<(), Fault> {
        let dte = self.mapped_device(mem, device, event)?;
        self.check_icid(icid)?;
        self.check_lpi("pINTID", pintid)?;
        let ite = Ite { valid: true, physical: true, intid: pintid, icid, vpe: 0, doorbell: 0 };
        tables::write_ite(mem, dte.itt_addr, event, ite)?;
        Ok(())
    }

    /// MOVI: retarget a physical LPI to another collection, moving its pending state.
    pub(super) fn movi(&mut self, mem: &mut GuestMemory, device: u32, event: u32, icid: u16, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        let (dte, mut ite) = self.mapped_event(mem, device, event)?;
        if !ite.physical {
            return Err(Violation::WrongInterruptType { command: "MOVI", device, event, found: "virtual" }.into());
        }
        let from = self.mapped_collection(mem, ite.icid)?;
        let to = self.mapped_collection(mem, icid)?;
        ite.icid = icid;
        tables::write_ite(mem, dte.itt_addr, event, ite)?;
        if from != to {
            out.push(ItsAction::MoveLpi { from, to, intid: ite.intid });
        }
        Ok(())
    }

    /// INT / CLEAR: make the event's interrupt pending / not pending, as a translation would.
    pub(super) fn int_clear(&mut self, mem: &mut GuestMemory, device: u32, event: u32, pending: bool, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        out.push(self.interrupt_action(mem, device, event, pending)?);
        Ok(())
    }

    /// DISCARD: clear the pending state and invalidate the ITE (A.5).
    pub(super) fn discard(&mut self, mem: &mut GuestMemory, device: u32, event: u32, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        let (dte, _) = self.mapped_event(mem, device, event)?;
        // Clearing the pending bit needs the collection / vPE; an ITE whose target was unmapped
        // meanwhile is still discarded (QEMU invalidates the ITE regardless).
        match self.interrupt_action(mem, device, event, false) {
            Ok(a) => out.push(a),
            Err(Fault::Memory(e)) => return Err(Fault::Memory(e)),
            Err(Fault::Skip(_)) => {}
        }
        tables::write_ite(mem, dte.itt_addr, event, Ite::INVALID)?;
        Ok(())
    }

    /// INV: reload the configuration of one interrupt (physical: its LPI config byte at the
    /// collection's redistributor; virtual: re-scan the resident vPE, B.4).
    pub(super) fn inv(&mut self, mem: &mut GuestMemory, device: u32, event: u32, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        let (_, ite) = self.mapped_event(mem, device, event)?;
        if ite.physical {
            let rd = self.mapped_collection(mem, ite.icid)?;
            out.push(ItsAction::InvLpi { rd, intid: ite.intid });
        } else {
            let vte = self.mapped_vpe(mem, ite.vpe)?;
            out.push(ItsAction::InvVpe { vpe: ite.vpe, vte });
        }
        Ok(())
    }

    /// INVALL: reload all configuration at the collection's redistributor.
    pub(super) fn invall(&mut self, mem: &mut GuestMemory, icid: u16, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        let rd = self.mapped_collection(mem, icid)?;
        out.push(ItsAction::InvAll { rd });
        Ok(())
    }

    /// MOVALL: move every pending LPI from one redistributor to another.
    pub(super) fn movall(&mut self, rdbase1: u64, rdbase2: u64, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        let from = self.check_rdbase(rdbase1)?;
        let to = self.check_rdbase(rdbase2)?;
        if from != to {
            out.push(ItsAction::MoveAll { from, to });
        }
        Ok(())
    }
}

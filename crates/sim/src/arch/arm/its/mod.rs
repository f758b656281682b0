//! GICv3 ITS (Interrupt Translation Service) with the GICv4.0 / GICv4.1 virtual commands, as a
//! pure state machine over a simulated guest-physical memory (docs/sources.md sections A, B.1).
//!
//! Why a functional model: the ITS is the part of direct vLPI injection that drivers get wrong
//! (ordering of VMAPP/VMAPTI/DISCARD, VMOVP across ITSs, doorbell invalidation), and its timing
//! only matters on the paths it decides. The ITS here turns commands and TRANSLATER writes into
//! [`ItsAction`]s for the redistributors (see `arch::arm::gicv4`, which owns them) and reports
//! every UNPREDICTABLE use as a [`Violation`] while carrying on as QEMU does.
//!
//! - [`memory`]: sparse guest-physical memory (tables, queue, pending tables live here);
//! - [`queue`]: GITS_CBASER / CWRITER / CREADR (A.1);
//! - [`command`]: the 32-byte commands, decode/encode, one function per command (A.2, B.1);
//! - [`tables`]: device, collection, ITT and vPE table entries, QEMU's layouts (A.3);
//! - `exec_physical` / `exec_virtual`: what each command does (A.2, A.5, B.1, B.4);
//! - [`violation`]: the typed UNPREDICTABLE uses.
//!
//! The version is a configuration ([`Gic`]) visible in GITS_TYPER ([`ItsConfig::typer`]).
pub mod command;
mod exec_physical;
mod exec_virtual;
pub mod memory;
pub mod queue;
pub mod tables;
pub mod violation;

pub use command::{Command, Vmapp, NO_DOORBELL};
pub use memory::{GuestMemory, MemoryError};
pub use queue::{CommandQueue, QueueError};
pub use tables::{Cte, Dte, Ite, Tables, Vte};
pub use violation::Violation;

use violation::Fault;

/// First LPI INTID (A.4: the first 8192 bits of a pending table are unused).
pub const FIRST_LPI: u32 = 8192;

/// Which GIC architecture the ITS implements: the shared vocabulary's word, GICv3 (physical
/// LPIs only), GICv4.0 (vLPIs, per-vLPI doorbells, VMOVP with SeqNum/ITSList) or GICv4.1
/// (shared vPE table, VMAPP v4.1 fields, INVDB, VSGI). GICv2 has no ITS: `GicSystem::new`
/// refuses it.
use results::vocab::Gic;

/// The ITS's configuration, i.e. what GITS_TYPER reports (A.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItsConfig {
    pub version: Gic,
    /// Devbits + 1: DeviceID width.
    pub device_bits: u8,
    /// IDbits + 1: EventID and INTID width.
    pub id_bits: u8,
    /// CIDbits + 1: collection ID width.
    pub collection_bits: u8,
    /// vPE ID width (16 at most: vPEID fields are 16 bits).
    pub vpe_bits: u8,
    /// GITS_TYPER.VMOVP: 1 = VMOVP needs no SeqNum/ITSList synchronisation across ITSs.
    pub vmovp_single: bool,
    /// Number of redistributors (processors); RDbase is a processor number (PTA = 0).
    pub redistributors: u16,
}

impl Default for ItsConfig {
    fn default() -> Self {
        ItsConfig { version: Gic::V4_1, device_bits: 16, id_bits: 16, collection_bits: 16, vpe_bits: 16, vmovp_single: false, redistributors: 4 }
    }
}

impl ItsConfig {
    /// GITS_TYPER: Physical[0], Virtual[1], ITT_entry_size[7:4] (bytes − 1), IDbits[12:8],
    /// Devbits[17:13], PTA[19] = 0, CIDbits[35:32], CIL[36] = 1, VMOVP[37], VMAPP[40] (= v4.1),
    /// SVPET[42:41] (v4.1: shared vPE table).
    pub fn typer(&self) -> u64 {
        let v4 = self.version >= Gic::V4_0;
        let v41 = self.version == Gic::V4_1;
        1 | (v4 as u64) << 1
            | (tables::ITE_BYTES - 1) << 4
            | ((self.id_bits as u64 - 1) & 0x1f) << 8
            | ((self.device_bits as u64 - 1) & 0x1f) << 13
            | ((self.collection_bits as u64 - 1) & 0xf) << 32
            | 1 << 36
            | (self.vmovp_single as u64) << 37
            | (v41 as u64) << 40
            | (v41 as u64) << 41
    }
}

/// What the ITS asks of the redistributors (and of whoever tracks vPEs). The redistributor side
/// (`gicv4::GicSystem`) turns these into effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItsAction {
    /// A.5 step 3, INT, CLEAR, DISCARD: set or clear a physical LPI's pending bit at `rd`.
    SetLpi { rd: u16, intid: u32, pending: bool },
    /// MOVI: move the LPI's pending state from `from` to `to`.
    MoveLpi { from: u16, to: u16, intid: u32 },
    /// INV on a physical ITE: reload the LPI's configuration byte at `rd`.
    InvLpi { rd: u16, intid: u32 },
    /// INVALL: reload every configuration byte at `rd`.
    InvAll { rd: u16 },
    /// MOVALL: move every pending LPI from `from` to `to`.
    MoveAll { from: u16, to: u16 },
    /// A.5 step 4 / B.4: a vLPI for `vpe` (pending = false: CLEAR or DISCARD).
    SetVlpi { vpe: u16, vte: Vte, vintid: u32, doorbell: u32, pending: bool },
    /// VMOVI: move the VPT bit from one vPE to another, ringing the new doorbell if needed.
    MoveVlpi { from_vpe: u16, from: Vte, to_vpe: u16, to: Vte, vintid: u32, doorbell: u32 },
    /// INV on a virtual ITE, VINVALL: re-scan the resident vPE (B.4).
    InvVpe { vpe: u16, vte: Vte },
    /// INVDB (v4.1): invalidate the vPE's doorbell configuration.
    InvDoorbell { vpe: u16, vte: Vte },
    /// VMAPP: the vPE was mapped (`Some`) or unmapped (`None`) on this ITS.
    VpeMapped { vpe: u16, vte: Option<Vte> },
    /// VMOVP: the vPE's redistributor changed.
    Vmovp { vpe: u16, seq: u16, its_list: u16, from: u16, to: u16 },
    /// VSGI (v4.1): update a virtual SGI's configuration or clear its pending state.
    Vsgi { vpe: u16, vintid: u8, enable: bool, clear: bool, group1: bool, priority: u8 },
}

/// The result of processing one command from the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    /// Index of the command since this ITS was created (0-based).
    pub index: u64,
    /// Its byte offset in the queue.
    pub offset: u64,
    pub words: [u64; 4],
    /// `None` when the opcode is unknown or the command could not be read.
    pub command: Option<Command>,
    pub actions: Vec<ItsAction>,
    /// What went wrong; a [`Violation::QueueStalled`] means the ITS stopped here.
    pub violation: Option<Violation>,
}

/// One ITS.
#[derive(Debug, Clone)]
pub struct Its {
    pub config: ItsConfig,
    /// This ITS's number (its bit in VMOVP's ITSList).
    pub id: usize,
    pub queue: CommandQueue,
    pub tables: Tables,
    enabled: bool,
    next_index: u64,
}

impl Its {
    /// An ITS whose tables sit at the given places (GITS_BASER<n> already programmed).
    pub fn new(id: usize, config: ItsConfig, tables: Tables) -> Its {
        Its { config, id, queue: CommandQueue::default(), tables, enabled: false, next_index: 0 }
    }

    /// GITS_CTLR.Enabled.
    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
    }
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Write GITS_CBASER (only while disabled, A.1).
    pub fn write_cbaser(&mut self, v: u64) -> Result<(), QueueError> {
        self.queue.write_cbaser(v, self.enabled)
    }

    /// Index the next command read from the queue will get.
    pub fn next_index(&self) -> u64 {
        self.next_index
    }

    /// Process one command at CREADR, if any (ITS must be enabled).
    pub fn step(&mut self, mem: &mut GuestMemory) -> Option<Processed> {
        if !self.enabled {
            return None;
        }
        let index = self.next_index;
        let (offset, words) = match self.queue.peek(mem)? {
            Ok(x) => x,
            Err(e) => {
                self.next_index += 1;
                return Some(Processed { index, offset: self.queue.creadr() & !1, words: [0; 4], command: None, actions: vec![], violation: Some(Violation::QueueStalled(e)) });
            }
        };
        self.next_index += 1;
        let mut actions = Vec::new();
        let (command, violation) = match Command::decode(words) {
            Err(e) => (None, Some(Violation::UnknownOpcode { opcode: e.0 })),
            Ok(c) => match self.execute(mem, c, &mut actions) {
                Ok(()) => (Some(c), None),
                Err(Fault::Skip(v)) => {
                    actions.clear();
                    (Some(c), Some(v))
                }
                Err(Fault::Memory(e)) => {
                    actions.clear();
                    self.queue.stall();
                    return Some(Processed { index, offset, words, command: Some(c), actions, violation: Some(Violation::QueueStalled(e)) });
                }
            },
        };
        self.queue.advance();
        Some(Processed { index, offset, words, command, actions, violation })
    }

    /// Process every queued command (stops early when the queue stalls).
    pub fn process(&mut self, mem: &mut GuestMemory) -> Vec<Processed> {
        let mut out = Vec::new();
        while let Some(p) = self.step(mem) {
            out.push(p);
        }
        out
    }

    fn execute(&mut self, mem: &mut GuestMemory, c: Command, out: &mut Vec<ItsAction>) -> Result<(), Fault> {
        let v = self.config.version;
        if c.is_virtual() && v == Gic::V3 {
            return Err(Violation::UnsupportedCommand { command: c.name(), needs: "GICv4 (GITS_TYPER.Virtual = 1)", have: v.title() }.into());
        }
        if c.is_v41_only() && v != Gic::V4_1 {
            return Err(Violation::UnsupportedCommand { command: c.name(), needs: "GICv4.1 (GITS_TYPER.VMAPP = 1)", have: v.title() }.into());
        }
        match c {
            Command::Mapd { device, size, itt_addr, valid } => self.mapd(mem, device, size, itt_addr, valid),
            Command::Mapc { icid, rdbase, valid } => self.mapc(mem, icid, rdbase, valid),
            Command::Mapti { device, event, pintid, icid } => self.mapti(mem, device, event, pintid, icid),
            Command::Mapi { device, event, icid } => self.mapti(mem, device, event, event, icid),
            Command::Movi { device, event, icid } => self.movi(mem, device, event, icid, out),
            Command::Int { device, event } => self.int_clear(mem, device, event, true, out),
            Command::Clear { device, event } => self.int_clear(mem, device, event, false, out),
            Command::Discard { device, event } => self.discard(mem, device, event, out),
            Command::Inv { device, event } => self.inv(mem, device, event, out),
            Command::Invall { icid } => self.invall(mem, icid, out),
            Command::Movall { rdbase1, rdbase2 } => self.movall(rdbase1, rdbase2, out),
            Command::Sync { rdbase } => self.check_rdbase(rdbase).map(|_| ()).map_err(Fault::from),
            Command::Vmapp(m) => self.vmapp(mem, m, out),
            Command::Vmapti { device, event, vpe, vintid, doorbell } => self.vmapti(mem, device, event, vpe, vintid, doorbell, "VMAPTI"),
            Command::Vmapi { device, event, vpe, doorbell } => self.vmapti(mem, device, event, vpe, event, doorbell, "VMAPI"),
            Command::Vmovi { device, event, vpe, db_valid, doorbell } => self.vmovi(mem, device, event, vpe, db_valid.then_some(doorbell), out),
            Command::Vmovp { seq, its_list, vpe, rdbase, .. } => self.vmovp(mem, seq, its_list, vpe, rdbase, out),
            // VSYNC is a barrier, like SYNC (which checks only its RDbase): the vPE ID must be in
            // range, but the vPE need not be mapped. Linux 6.1 on a GICv4.0 ITS follows every
            // VMAPP V=0 with a VSYNC of the vPE it has just unmapped (`its_build_vmapp_cmd`
            // returns the vPE, drivers/irqchip/irq-gic-v3-its.c; only on v4.1 does it return NULL,
            // "unmapping a VPE is self-synchronizing"), and QEMU's VSYNC looks nothing up
            // (`process_cmdq`). Found in the lab's real stream (examples/its/lab-*-v40.its).
            Command::Vsync { vpe } => self.check_vpe(vpe).map_err(Fault::from),
            Command::Vinvall { vpe } => {
                let vte = self.mapped_vpe(mem, vpe)?;
                out.push(ItsAction::InvVpe { vpe, vte });
                Ok(())
            }
            Command::Invdb { vpe } => {
                let vte = self.mapped_vpe(mem, vpe)?;
                out.push(ItsAction::InvDoorbell { vpe, vte });
                Ok(())
            }
            Command::Vsgi { vpe, vintid, enable, clear, group1, priority } => {
                self.mapped_vpe(mem, vpe)?;
                out.push(ItsAction::Vsgi { vpe, vintid, enable, clear, group1, priority });
                Ok(())
            }
        }
    }

    // ---- range checks shared by the commands (A.1: out of range = CONSTRAINED UNPREDICTABLE) ----

    fn device_limit(&self) -> u64 {
        (1u64 << self.config.device_bits).min(self.tables.device.entries())
    }

    fn check_device(&self, device: u32) -> Result<(), Violation> {
        let limit = self.device_limit();
        if device as u64 >= limit {
            return Err(Violation::DeviceOutOfRange { device, limit });
        }
        Ok(())
    }

    fn check_icid(&self, icid: u16) -> Result<(), Violation> {
        let limit = (1u64 << self.config.collection_bits).min(self.tables.collection.entries());
        if icid as u64 >= limit {
            return Err(Violation::CollectionOutOfRange { icid, limit });
        }
        Ok(())
    }

    fn check_vpe(&self, vpe: u16) -> Result<(), Violation> {
        let limit = (1u64 << self.config.vpe_bits).min(self.tables.vpe.entries());
        if vpe as u64 >= limit {
            return Err(Violation::VpeOutOfRange { vpe, limit });
        }
        Ok(())
    }

    fn check_rdbase(&self, rdbase: u64) -> Result<u16, Violation> {
        if rdbase >= self.config.redistributors as u64 {
            return Err(Violation::RdbaseOutOfRange { rdbase, limit: self.config.redistributors as u64 });
        }
        Ok(rdbase as u16)
    }

    /// An LPI INTID (pINTID or doorbell) must lie in [8192, 2^IDbits).
    fn check_lpi(&self, what: &'static str, intid: u32) -> Result<(), Violation> {
        let limit = 1u64 << self.config.id_bits;
        if intid < FIRST_LPI || intid as u64 >= limit {
            return Err(Violation::IntidOutOfRange { what, intid, min: FIRST_LPI, limit });
        }
        Ok(())
    }

    /// The valid DTE of `device`, with `event` in range (A.5 steps 1–2).
    fn mapped_device(&self, mem: &GuestMemory, device: u32, event: u32) -> Result<Dte, Fault> {
        self.check_device(device)?;
        let dte = self.tables.read_dte(mem, device)?;
        if !dte.valid {
            return Err(Violation::UnmappedDevice { device }.into());
        }
        if event as u64 >= dte.events() {
            return Err(Violation::EventOutOfRange { device, event, limit: dte.events() }.into());
        }
        Ok(dte)
    }

    /// The valid ITE of (`device`, `event`) and its DTE (A.5 steps 1–2).
    fn mapped_event(&self, mem: &GuestMemory, device: u32, event: u32) -> Result<(Dte, Ite), Fault> {
        let dte = self.mapped_device(mem, device, event)?;
        let ite = tables::read_ite(mem, dte.itt_addr, event)?;
        if !ite.valid {
            return Err(Violation::UnmappedEvent { device, event }.into());
        }
        Ok((dte, ite))
    }

    /// The redistributor of a valid collection.
    fn mapped_collection(&self, mem: &GuestMemory, icid: u16) -> Result<u16, Fault> {
        self.check_icid(icid)?;
        let cte = self.tables.read_cte(mem, icid)?;
        if !cte.valid {
            return Err(Violation::UnmappedCollection { icid }.into());
        }
        Ok(cte.rdbase)
    }

    /// The valid VTE of `vpe`.
    fn mapped_vpe(&self, mem: &GuestMemory, vpe: u16) -> Result<Vte, Fault> {
        self.check_vpe(vpe)?;
        let vte = self.tables.read_vte(mem, vpe)?;
        if !vte.valid {
            return Err(Violation::UnmappedVpe { vpe }.into());
        }
        Ok(vte)
    }

    /// GITS_TRANSLATER write of `event` from `device` (A.5): the action it causes, or why it was
    /// dropped. A memory error here is returned as [`Violation::QueueStalled`] too (the ITS
    /// cannot read its tables).
    pub fn translate(&self, mem: &GuestMemory, device: u32, event: u32) -> Result<ItsAction, Violation> {
        let r = self.interrupt_action(mem, device, event, true);
        r.map_err(|f| match f {
            Fault::Skip(v) => v,
            Fault::Memory(e) => Violation::QueueStalled(e),
        })
    }

    /// The action INT/CLEAR/TRANSLATER causes for a mapped event (A.5 steps 3–4).
    fn interrupt_action(&self, mem: &GuestMemory, device: u32, event: u32, pending: bool) -> Result<ItsAction, Fault> {
        let (_, ite) = self.mapped_event(mem, device, event)?;
        if ite.physical {
            let rd = self.mapped_collection(mem, ite.icid)?;
            Ok(ItsAction::SetLpi { rd, intid: ite.intid, pending })
        } else {
            let vte = self.mapped_vpe(mem, ite.vpe)?;
            Ok(ItsAction::SetVlpi { vpe: ite.vpe, vte, vintid: ite.intid, doorbell: ite.doorbell, pending })
        }
    }
}

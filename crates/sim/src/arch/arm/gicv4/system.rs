//! [`GicSystem`]: ITSs + redistributors + the guest-physical memory they share, wired as on a
//! GICv3/v4 machine. Commands go through the real queue, ITS actions are applied to the
//! redistributors, and everything observable comes out as [`Effect`]s and [`Violation`]s.
//!
//! Memory map of the model's own structures (above the guest's usual RAM, inside the 64 GiB
//! the model simulates): per ITS `ITS_BASE + i × 16 MiB` holds the device table (+0), the
//! collection table (+1 MiB), the vPE table (+2 MiB; v4.1 shares ITS 0's, B.3 "shared vPE
//! table") and the 64 KB command queue (+4 MiB, 2048 commands as Linux, A.1); the LPI
//! configuration table is at `PROP_BASE`, redistributor n's pending table at
//! `PEND_BASE + n × 64 KiB`; the KVM driver model (`kvm_driver`) puts the v4.0 doorbell proxy's
//! ITT at `PROXY_ITT` and allocates VPTs/ITTs from `ALLOC_BASE` upwards.
use results::vocab::Gic;
use std::collections::{BTreeMap, BTreeSet};

use super::effect::{DropReason, Effect};
use super::redistributor::Redistributor;
use super::vmovp_order::VmovpOrder;
use super::vpe_residency::VlpiFrame;
use crate::arch::arm::its::tables::{Baser, TableType, CTE_BYTES, DTE_BYTES, VTE_BYTES};
use crate::arch::arm::its::{Command, GuestMemory, Its, ItsAction, ItsConfig, QueueError, Tables, Violation, Vte};

pub const RAM_LIMIT: u64 = 1 << 36;
pub const ITS_BASE: u64 = 0xF_0000_0000;
pub const PROP_BASE: u64 = 0xE_0000_0000;
pub const PEND_BASE: u64 = 0xE_1000_0000;
pub const PROXY_ITT: u64 = 0xE_2000_0000;
pub const ALLOC_BASE: u64 = 0xD_0000_0000;
const QUEUE_PAGES: u64 = 16;

/// The machine: GIC version, CPUs (= redistributors), ITSs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GicConfig {
    pub version: Gic,
    pub cpus: u16,
    pub its_count: usize,
    /// GITS_TYPER.VMOVP of every ITS (1: no SeqNum/ITSList needed).
    pub vmovp_single: bool,
    /// LPI INTID bits (GITS_TYPER.IDbits + 1, GICR_PROPBASER.IDbits + 1).
    pub id_bits: u8,
    pub device_bits: u8,
}

impl Default for GicConfig {
    fn default() -> Self {
        GicConfig { version: Gic::V4_1, cpus: 4, its_count: 1, vmovp_single: true, id_bits: 16, device_bits: 16 }
    }
}

/// What the system knows of a vPE across ITSs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VpeState {
    /// The latest VTE written by VMAPP/VMOVP on any ITS.
    pub vte: Vte,
    /// ITSs where the vPE is mapped.
    pub mapped_on: BTreeSet<usize>,
    /// v4.1: descheduled with DB = 1 and the doorbell has not rung yet.
    pub doorbell_armed: bool,
    /// vLPIs signalled to the resident vPE and not yet acknowledged.
    pub delivered: BTreeSet<u32>,
    /// v4.1 vSGIs: vINTID → (enabled, group1, priority, pending).
    pub vsgi: BTreeMap<u8, (bool, bool, u8, bool)>,
}

/// One processed command with everything it caused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandReport {
    pub its: usize,
    /// Index of the command on its ITS.
    pub index: u64,
    pub words: [u64; 4],
    pub command: Option<Command>,
    pub effects: Vec<Effect>,
    pub violations: Vec<Violation>,
}

/// ITSs, redistributors and memory.
#[derive(Debug, Clone)]
pub struct GicSystem {
    pub config: GicConfig,
    pub mem: GuestMemory,
    pub its: Vec<Its>,
    pub rds: Vec<Redistributor>,
    pub frames: Vec<VlpiFrame>,
    pub vpes: BTreeMap<u16, VpeState>,
    pub(super) vmovp: VmovpOrder,
}

impl GicSystem {
    /// The hardware after firmware/driver probe: ITS tables and queues programmed (GITS_BASER,
    /// GITS_CBASER), ITSs enabled, every redistributor with PROPBASER/PENDBASER set and
    /// EnableLPIs = 1, v4.1 VPROPBASER pointing at the shared vPE table. No command sent yet.
    pub fn new(config: GicConfig) -> GicSystem {
        let cpus = config.cpus.max(1);
        let its_cfg = ItsConfig {
            version: config.version,
            device_bits: config.device_bits.clamp(1, 16),
            id_bits: config.id_bits.clamp(14, 24),
            collection_bits: 16,
            // A vPE table of 4096 entries (one 64 KB page): vPE IDs above are out of range.
            vpe_bits: 12,
            vmovp_single: config.vmovp_single,
            redistributors: cpus,
        };
        let mem = GuestMemory::new(RAM_LIMIT);
        let mut its = Vec::new();
        let shared_vpe = Baser::flat(TableType::Vpe, ITS_BASE + (2 << 20), VTE_BYTES, 1 << its_cfg.vpe_bits);
        for i in 0..config.its_count.clamp(1, 16) {
            let base = ITS_BASE + i as u64 * (16 << 20);
            let tables = Tables {
                device: Baser::flat(TableType::Device, base, DTE_BYTES, 1 << its_cfg.device_bits),
                collection: Baser::flat(TableType::Collection, base + (1 << 20), CTE_BYTES, 1 << its_cfg.collection_bits),
                vpe: if config.version == Gic::V4_1 { shared_vpe } else { Baser::flat(TableType::Vpe, base + (2 << 20), VTE_BYTES, 1 << its_cfg.vpe_bits) },
            };
            let mut it = Its::new(i, its_cfg, tables);
            let _ = it.write_cbaser(1 << 63 | (base + (4 << 20)) | (QUEUE_PAGES - 1));
            it.set_enabled(true);
            its.push(it);
        }
        let mut rds = Vec::new();
        let mut frames = Vec::new();
        for n in 0..cpus {
            let mut rd = Redistributor::new(n);
            rd.propbaser = PROP_BASE | (its_cfg.id_bits as u64 - 1);
            rd.pendbaser = PEND_BASE + n as u64 * 0x1_0000;
            rd.enable_lpis = true;
            rds.push(rd);
            let mut f = VlpiFrame::new(config.version);
            if config.version == Gic::V4_1 {
                f.write_vpropbaser(shared_vpe.base | 1 << 63);
            }
            frames.push(f);
        }
        let config = GicConfig { cpus, its_count: its.len(), id_bits: its_cfg.id_bits, device_bits: its_cfg.device_bits, ..config };
        GicSystem { config, mem, its, rds, frames, vpes: BTreeMap::new(), vmovp: VmovpOrder::default() }
    }

    /// Write one command into ITS `its`'s queue, advance CWRITER and let the ITS process it.
    pub fn submit(&mut self, its: usize, words: [u64; 4]) -> Result<Vec<CommandReport>, QueueError> {
        let Some(it) = self.its.get_mut(its) else { return Err(QueueError::NoQueue) };
        it.queue.push(&mut self.mem, words)?;
        Ok(self.process(its))
    }

    /// Submit a decoded command (see [`GicSystem::submit`]).
    pub fn submit_command(&mut self, its: usize, c: Command) -> Result<Vec<CommandReport>, QueueError> {
        self.submit(its, c.encode())
    }

    /// Let ITS `its` process everything queued.
    pub fn process(&mut self, its: usize) -> Vec<CommandReport> {
        let mut out = Vec::new();
        while let Some(p) = self.its[its].step(&mut self.mem) {
            let mut violations: Vec<Violation> = p.violation.into_iter().collect();
            let mut effects = Vec::new();
            for a in p.actions {
                self.apply(its, p.index, a, &mut effects, &mut violations);
            }
            out.push(CommandReport { its, index: p.index, words: p.words, command: p.command, effects, violations });
        }
        out
    }

    /// A device writes `event` to ITS `its`'s GITS_TRANSLATER with DeviceID `device` (A.5).
    pub fn translate(&mut self, its: usize, device: u32, event: u32) -> Vec<Effect> {
        let Some(it) = self.its.get(its) else {
            return vec![Effect::Dropped(DropReason::Untranslatable(Violation::NoSuchRedistributor { rd: its as u64, limit: self.its.len() as u64 }))];
        };
        match it.translate(&self.mem, device, event) {
            Err(Violation::QueueStalled(e)) => vec![Effect::Dropped(DropReason::Memory(e))],
            Err(v) => vec![Effect::Dropped(DropReason::Untranslatable(v))],
            Ok(a) => {
                let (mut effects, mut violations) = (Vec::new(), Vec::new());
                self.apply(its, u64::MAX, a, &mut effects, &mut violations);
                effects
            }
        }
    }

    fn apply(&mut self, its: usize, index: u64, a: ItsAction, effects: &mut Vec<Effect>, violations: &mut Vec<Violation>) {
        match a {
            ItsAction::SetLpi { rd, intid, pending } => effects.push(self.set_lpi(rd, intid, pending)),
            ItsAction::MoveLpi { from, to, intid } => {
                if let Ok(true) = self.rds[from as usize].set_pending(&mut self.mem, intid, false) {
                    effects.push(Effect::Cleared { rd: Some(from), vpe: None, intid });
                    effects.push(self.set_lpi(to, intid, true));
                }
            }
            ItsAction::InvLpi { rd, intid } => {
                self.rds[rd as usize].invalidate(intid);
                effects.extend(self.fire_if_enabled(rd, intid));
            }
            ItsAction::InvAll { rd } => {
                self.rds[rd as usize].invalidate_all();
                for intid in self.rds[rd as usize].pending_lpis(&self.mem).unwrap_or_default() {
                    effects.extend(self.fire_if_enabled(rd, intid));
                }
            }
            ItsAction::MoveAll { from, to } => {
                for intid in self.rds[from as usize].pending_lpis(&self.mem).unwrap_or_default() {
                    let _ = self.rds[from as usize].set_pending(&mut self.mem, intid, false);
                    effects.push(self.set_lpi(to, intid, true));
                }
            }
            ItsAction::SetVlpi { vpe, vte, vintid, doorbell, pending: true } => effects.push(self.vlpi_arrival(vpe, &vte, vintid, doorbell)),
            ItsAction::SetVlpi { vpe, vte, vintid, pending: false, .. } => effects.extend(self.clear_vlpi(vpe, &vte, vintid)),
            ItsAction::MoveVlpi { from_vpe, from, to_vpe, to, vintid, doorbell } => {
                if let Ok(true) = self.mem.set_bit(from.vpt_addr, vintid, false) {
                    effects.push(Effect::Cleared { rd: None, vpe: Some(from_vpe), intid: vintid });
                    if let Some(s) = self.vpes.get_mut(&from_vpe) {
                        s.delivered.remove(&vintid);
                    }
                    effects.push(self.vlpi_arrival(to_vpe, &to, vintid, doorbell));
                }
            }
            ItsAction::InvVpe { vpe, vte } => effects.extend(self.rescan(vpe, &vte)),
            ItsAction::InvDoorbell { .. } => {}
            ItsAction::VpeMapped { vpe, vte: Some(vte) } => {
                let s =
                    self.vpes.entry(vpe).or_insert_with(|| VpeState { vte, mapped_on: BTreeSet::new(), doorbell_armed: false, delivered: BTreeSet::new(), vsgi: BTreeMap::new() });
                s.vte = vte;
                s.mapped_on.insert(its);
            }
            ItsAction::VpeMapped { vpe, vte: None } => {
                if let Some(s) = self.vpes.get_mut(&vpe) {
                    s.mapped_on.remove(&its);
                    if s.mapped_on.is_empty() {
                        self.vpes.remove(&vpe);
                    }
                }
            }
            ItsAction::Vmovp { vpe, seq, its_list, to, .. } => {
                if !self.config.vmovp_single {
                    if let Some(v) = self.vmovp.record((its, index), self.its.len(), seq, vpe, to, its_list) {
                        violations.push(v);
                    }
                }
                if let Some(s) = self.vpes.get_mut(&vpe) {
                    s.vte.rdbase = to;
                }
            }
            ItsAction::Vsgi { vpe, vintid, enable, clear, group1, priority } => {
                if let Some(s) = self.vpes.get_mut(&vpe) {
                    let e = s.vsgi.entry(vintid).or_insert((false, false, 0, false));
                    *e = (enable, group1, priority, e.3 && !clear);
                }
            }
        }
    }

    /// Set or clear a physical LPI's pending bit at `rd` (A.5 step 3).
    pub fn set_lpi(&mut self, rd: u16, intid: u32, pending: bool) -> Effect {
        let r = &mut self.rds[rd as usize];
        if !pending {
            return match r.set_pending(&mut self.mem, intid, false) {
                Ok(_) => Effect::Cleared { rd: Some(rd), vpe: None, intid },
                Err(e) => Effect::Dropped(DropReason::Memory(e)),
            };
        }
        if !r.enable_lpis {
            return Effect::Dropped(DropReason::LpisDisabled { rd });
        }
        if !r.in_range(intid) {
            return Effect::Dropped(DropReason::BeyondIdBits { intid });
        }
        match r.set_pending(&mut self.mem, intid, true).and_then(|prev| Ok((prev, r.enabled(&self.mem, intid)?))) {
            Ok((true, _)) => Effect::AlreadyPending { vpe: None, intid },
            Ok((false, enabled)) => Effect::LpiPending { rd, intid, enabled },
            Err(e) => Effect::Dropped(DropReason::Memory(e)),
        }
    }

    /// After an invalidation: a pending LPI that is now enabled is signalled.
    fn fire_if_enabled(&mut self, rd: u16, intid: u32) -> Option<Effect> {
        let r = &mut self.rds[rd as usize];
        (r.pending(&self.mem, intid).unwrap_or(false) && r.enabled(&self.mem, intid).unwrap_or(false)).then_some(Effect::LpiPending { rd, intid, enabled: true })
    }

    /// The hypervisor (or guest) acknowledged physical LPI `intid` at `rd`: clear its pending bit.
    pub fn ack_lpi(&mut self, rd: u16, intid: u32) {
        if let Some(r) = self.rds.get_mut(rd as usize) {
            let _ = r.set_pending(&mut self.mem, intid, false);
        }
    }

    /// Write a configuration byte (priority, Enable) in the shared LPI configuration table
    /// (A.4). Takes effect at a redistributor only after an invalidation.
    pub fn write_lpi_config(&mut self, intid: u32, priority: u8, enable: bool) -> Result<(), crate::arch::arm::its::MemoryError> {
        let b = (priority & 0xfc) | super::redistributor::LPI_RES1 | enable as u8;
        self.mem.write_u8(PROP_BASE + (intid.saturating_sub(crate::arch::arm::its::FIRST_LPI)) as u64, b)
    }

    /// End of a stream: the cross-ITS VMOVP rule's leftovers (a VMOVP some listed ITS never got),
    /// with the (ITS, command index) of the first copy.
    pub fn finish(&self) -> Vec<((usize, u64), Violation)> {
        if self.config.vmovp_single {
            return vec![];
        }
        self.vmovp.finish(self.its.len())
    }

    /// VPENDBASER of redistributor `rd` (with Dirty).
    pub fn vpendbaser(&self, rd: u16) -> Option<u64> {
        self.frames.get(rd as usize).map(|f| f.vpendbaser())
    }
}

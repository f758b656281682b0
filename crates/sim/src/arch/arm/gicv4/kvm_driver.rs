//! The software side of GICv4 direct injection as Linux/KVM drive it, on top of the hardware
//! model [`GicSystem`]: the API a timed model uses. Sequences from docs/sources.md B.1–B.3
//! (Linux `irq-gic-v3-its.c` `its_vlpi_map`, `its_send_vmovp`, `its_vpe_db_proxy_*`;
//! KVM `vgic-v4.c` `vgic_v4_load` / `vgic_v4_put`).
//!
//! - [`KvmGicV4::boot`]: one collection per CPU (MAPC + INVALL, A.2), the v4.0 doorbell proxy.
//! - [`KvmGicV4::add_vpe`] / [`KvmGicV4::map_device_lpis`] / [`KvmGicV4::map_vlpi`]: a vCPU's vPE,
//!   a device's MSIs as physical LPIs, then one of them forwarded as a vLPI (`its_vlpi_map`:
//!   VMAPP + VINVALL if the VM is new on this ITS, config byte, DISCARD, VMAPTI).
//! - [`KvmGicV4::make_resident`] / [`KvmGicV4::make_non_resident`]: the residency protocol with
//!   VMOVP when the vPE moved (v4.0), doorbell mask/unmask (v4.0 proxy INV; v4.1 DB bit).
//! - [`KvmGicV4::deliver`]: a device event → one [`Effect`].
//!
//! Every call returns the ITS commands it issued (for the timed model to charge) and effects.
use results::vocab::Gic;
use std::collections::BTreeMap;

use super::doorbell::ProxyDevice;
use super::effect::{DropReason, Effect};
use super::system::{CommandReport, GicConfig, GicSystem, ALLOC_BASE, PROXY_ITT};
use super::vpe_residency::{IDAI_OR_DB, PENDING_LAST, VALID, VGRP1EN};
use crate::arch::arm::its::{Command, Violation, Vmapp, NO_DOORBELL};

/// Default priority KVM/Linux give LPIs (`LPI_PROP_DEFAULT_PRIO`).
pub const DEFAULT_PRIORITY: u8 = 0xa0;

/// What the driver keeps per vPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverVpe {
    pub vpt: u64,
    /// The VM's vLPI configuration table (v4.0: VPROPBASER; v4.1: VMAPP VConfAddr).
    pub vconf: u64,
    pub vintid_bits: u8,
    /// The vPE's doorbell LPI.
    pub doorbell: u32,
    /// v4.0: the doorbell LPI is currently enabled (vCPU blocked).
    pub doorbell_enabled: bool,
    /// The redistributor the vPE was last made resident on (its "home").
    pub rd: u16,
}

/// The result of a driver operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// ITS commands issued, in order, with their effects and violations.
    pub commands: Vec<CommandReport>,
    /// Effects of register writes (e.g. the drain at schedule-in).
    pub effects: Vec<Effect>,
    pub violations: Vec<Violation>,
    /// After a schedule-out: GICR_VPENDBASER.PendingLast.
    pub pending_last: bool,
}

/// KVM + the Linux ITS driver over a GIC model.
#[derive(Debug, Clone)]
pub struct KvmGicV4 {
    pub gic: GicSystem,
    pub vpes: BTreeMap<u16, DriverVpe>,
    /// v4.0 only.
    pub proxy: Option<ProxyDevice>,
    next_alloc: u64,
    vmovp_seq: u16,
}

impl KvmGicV4 {
    /// Build the GIC and boot the driver: MAPC + INVALL per CPU and SYNC on every ITS; on v4.0
    /// the doorbell proxy device (last DeviceID) is created with MAPD on ITS 0.
    pub fn boot(config: GicConfig) -> (KvmGicV4, Outcome) {
        let gic = GicSystem::new(config);
        let mut d = KvmGicV4 { gic, vpes: BTreeMap::new(), proxy: None, next_alloc: ALLOC_BASE, vmovp_seq: 0 };
        let mut out = Outcome::default();
        for its in 0..d.gic.its.len() {
            for cpu in 0..d.gic.config.cpus {
                d.send(its, Command::Mapc { icid: cpu, rdbase: cpu as u64, valid: true }, &mut out);
                d.send(its, Command::Invall { icid: cpu }, &mut out);
            }
            d.send(its, Command::Sync { rdbase: 0 }, &mut out);
        }
        if d.gic.config.version == Gic::V4_0 {
            let p = ProxyDevice::new((1u32 << d.gic.config.device_bits) - 1, d.gic.config.cpus as u32, PROXY_ITT);
            d.send(0, p.mapd(), &mut out);
            d.proxy = Some(p);
        }
        (d, out)
    }

    fn send(&mut self, its: usize, c: Command, out: &mut Outcome) {
        match self.gic.submit_command(its, c) {
            Ok(r) => out.commands.extend(r),
            Err(e) => out.violations.push(Violation::CommandNotQueued { reason: e.to_string() }),
        }
    }

    fn alloc(&mut self, bytes: u64) -> u64 {
        let a = self.next_alloc;
        self.next_alloc += bytes.div_ceil(0x1_0000).max(1) * 0x1_0000;
        a
    }

    /// Register a vCPU's vPE (KVM `vgic_v4_init`): a VPT and configuration table for
    /// `vintid_bits`-bit vINTIDs and a doorbell LPI. No command yet: VMAPP is sent when the
    /// first vLPI is mapped on an ITS.
    pub fn add_vpe(&mut self, vpe: u16, rd: u16, vintid_bits: u8) -> DriverVpe {
        let bits = vintid_bits.clamp(14, self.gic.config.id_bits);
        let vpt = self.alloc(1u64 << (bits - 3));
        let vconf = self.alloc(1u64 << bits);
        let doorbell = (1u32 << self.gic.config.id_bits) - 1 - vpe as u32 % 4096;
        let dv = DriverVpe { vpt, vconf, vintid_bits: bits, doorbell, doorbell_enabled: false, rd };
        self.vpes.insert(vpe, dv);
        // The doorbell LPI starts disabled on v4.0 (enabled only while blocked) and enabled on
        // v4.1 (it stays enabled; DB decides, B.3).
        let _ = self.gic.write_lpi_config(doorbell, DEFAULT_PRIORITY, self.gic.config.version == Gic::V4_1);
        dv
    }

    /// A device's MSIs as physical LPIs (the host driver / VFIO before forwarding): MAPD with an
    /// ITT for `nr_events`, then MAPTI event → `first_pintid + event` in collection `cpu`, each
    /// LPI enabled and invalidated.
    pub fn map_device_lpis(&mut self, its: usize, device: u32, nr_events: u32, first_pintid: u32, cpu: u16) -> Outcome {
        let mut out = Outcome::default();
        let n = nr_events.max(2).next_power_of_two();
        let itt = self.alloc(n as u64 * 12);
        self.send(its, Command::Mapd { device, size: (n.trailing_zeros() - 1) as u8, itt_addr: itt, valid: true }, &mut out);
        for event in 0..nr_events {
            let pintid = first_pintid + event;
            let _ = self.gic.write_lpi_config(pintid, DEFAULT_PRIORITY, true);
            self.send(its, Command::Mapti { device, event, pintid, icid: cpu }, &mut out);
            self.send(its, Command::Inv { device, event }, &mut out);
        }
        out
    }

    /// Forward (device, event) as vLPI `vintid` of `vpe` (`its_vlpi_map`, B.1).
    pub fn map_vlpi(&mut self, its: usize, device: u32, event: u32, vpe: u16, vintid: u32) -> Outcome {
        let mut out = Outcome::default();
        let Some(dv) = self.vpes.get(&vpe).copied() else {
            out.violations.push(Violation::UnmappedVpe { vpe });
            return out;
        };
        if !self.gic.vpes.get(&vpe).is_some_and(|s| s.mapped_on.contains(&its)) {
            let v41 = self.gic.config.version == Gic::V4_1;
            let m = Vmapp {
                vpe,
                rdbase: dv.rd as u64,
                valid: true,
                vpt_size: dv.vintid_bits - 1,
                vpt_addr: dv.vpt,
                alloc: v41,
                ptz: true,
                vconf_addr: if v41 { dv.vconf } else { 0 },
                default_doorbell: if v41 { dv.doorbell } else { NO_DOORBELL },
            };
            self.send(its, Command::Vmapp(m), &mut out);
            self.send(its, Command::Vinvall { vpe }, &mut out);
        }
        let _ = self.gic.mem.write_u8(dv.vconf + (vintid.saturating_sub(8192)) as u64, DEFAULT_PRIORITY | 2 | 1);
        self.send(its, Command::Discard { device, event }, &mut out);
        let doorbell = if self.gic.config.version == Gic::V4_0 { dv.doorbell } else { NO_DOORBELL };
        self.send(its, Command::Vmapti { device, event, vpe, vintid, doorbell }, &mut out);
        self.send(its, Command::Vsync { vpe }, &mut out);
        out
    }

    /// v4.0: enable or mask the vPE's doorbell (config byte + INV on the proxy, B.3).
    fn set_doorbell(&mut self, vpe: u16, enable: bool, out: &mut Outcome) {
        let Some(dv) = self.vpes.get(&vpe).copied() else { return };
        if dv.doorbell_enabled == enable {
            return;
        }
        let _ = self.gic.write_lpi_config(dv.doorbell, DEFAULT_PRIORITY, enable);
        if let Some(p) = self.proxy.as_mut() {
            for c in p.invalidate(vpe, dv.doorbell, dv.rd) {
                self.send(0, c, out);
            }
        }
        if let Some(v) = self.vpes.get_mut(&vpe) {
            v.doorbell_enabled = enable;
        }
    }

    /// KVM `vgic_v4_load` (B.2): VMOVP if the vPE moved (v4.0; v4.1 shares the vPE table and
    /// only updates it), make it resident on `rd`, (v4.0) mask the doorbell and clear a pending
    /// one through the proxy, poll Dirty. `effects` holds the drained vLPIs.
    pub fn make_resident(&mut self, vpe: u16, rd: u16) -> Outcome {
        let mut out = Outcome::default();
        let Some(dv) = self.vpes.get(&vpe).copied() else {
            out.violations.push(Violation::UnmappedVpe { vpe });
            return out;
        };
        if dv.rd != rd {
            self.move_vpe(vpe, rd, &mut out);
        }
        let v41 = self.gic.config.version == Gic::V4_1;
        let r = if v41 {
            self.gic.write_vpendbaser(rd as u64, VALID | VGRP1EN | vpe as u64)
        } else {
            let _ = self.gic.write_vpropbaser(rd as u64, dv.vconf | (dv.vintid_bits as u64 - 1));
            self.gic.write_vpendbaser(rd as u64, dv.vpt | PENDING_LAST | IDAI_OR_DB | VALID)
        };
        out.violations.extend(r.err());
        if !v41 {
            self.set_doorbell(vpe, false, &mut out);
            // KVM clears a doorbell left pending (`irq_set_irqchip_state(PENDING, false)`),
            // which on v4.0 without DirectLPI maps the doorbell into the proxy and sends CLEAR.
            if let Some(p) = self.proxy.as_mut() {
                for c in p.set_pending(vpe, dv.doorbell, rd, false) {
                    self.send(0, c, &mut out);
                }
            }
        }
        match self.gic.poll_dirty(rd as u64) {
            Ok(e) => out.effects.extend(e),
            Err(v) => out.violations.push(v),
        }
        out
    }

    fn move_vpe(&mut self, vpe: u16, rd: u16, out: &mut Outcome) {
        if let Some(v) = self.vpes.get_mut(&vpe) {
            v.rd = rd;
        }
        let Some(state) = self.gic.vpes.get(&vpe).cloned() else { return };
        if self.gic.config.version == Gic::V4_1 {
            let mut vte = state.vte;
            vte.rdbase = rd;
            let _ = self.gic.its[0].tables.write_vte(&mut self.gic.mem, vpe, vte);
            if let Some(s) = self.gic.vpes.get_mut(&vpe) {
                s.vte.rdbase = rd;
            }
            return;
        }
        let seq = self.vmovp_seq;
        self.vmovp_seq = self.vmovp_seq.wrapping_add(1);
        let its_list = state.mapped_on.iter().filter(|&&i| i < 16).fold(0u16, |m, &i| m | 1 << i);
        for its in state.mapped_on {
            self.send(its, Command::Vmovp { seq, its_list, vpe, rdbase: rd as u64, db: false, default_doorbell: NO_DOORBELL }, out);
        }
        if let Some(p) = self.proxy.as_ref() {
            for c in p.moved(vpe, rd) {
                self.send(0, c, out);
            }
        }
    }

    /// KVM `vgic_v4_put` (B.2): make the vPE non-resident, asking for a doorbell if the vCPU is
    /// about to block (v4.0: unmask the doorbell via the proxy; v4.1: DB = 1, else PendingLast),
    /// poll Dirty, read PendingLast.
    pub fn make_non_resident(&mut self, vpe: u16, wants_doorbell: bool) -> Outcome {
        let mut out = Outcome::default();
        let Some(dv) = self.vpes.get(&vpe).copied() else {
            out.violations.push(Violation::UnmappedVpe { vpe });
            return out;
        };
        let v41 = self.gic.config.version == Gic::V4_1;
        if !v41 {
            self.set_doorbell(vpe, wants_doorbell, &mut out);
        }
        let val = match (v41, wants_doorbell) {
            (true, true) => IDAI_OR_DB,
            (true, false) => PENDING_LAST,
            (false, _) => dv.vpt,
        };
        if let Err(v) = self.gic.write_vpendbaser(dv.rd as u64, val) {
            out.violations.push(v);
        }
        match self.gic.poll_dirty(dv.rd as u64) {
            Ok(e) => out.effects.extend(e),
            Err(v) => out.violations.push(v),
        }
        out.pending_last = self.gic.frames[dv.rd as usize].pending_last();
        out
    }

    /// A device MSI: DeviceID `device` writes EventID `event` to ITS `its`'s GITS_TRANSLATER.
    pub fn deliver(&mut self, its: usize, device: u32, event: u32) -> Effect {
        self.gic.translate(its, device, event).into_iter().next().unwrap_or(Effect::Dropped(DropReason::LpisDisabled { rd: 0 }))
    }

    /// The guest acknowledged a vLPI (its VPT bit clears).
    pub fn ack_vlpi(&mut self, vpe: u16, vintid: u32) {
        self.gic.ack_vlpi(vpe, vintid);
    }

    /// The hypervisor handled a doorbell (or any physical LPI) at `rd`.
    pub fn ack_lpi(&mut self, rd: u16, intid: u32) {
        self.gic.ack_lpi(rd, intid);
    }
}

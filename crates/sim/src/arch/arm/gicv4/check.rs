//! The checker behind `irqlab its-check`: runs a parsed [`Script`] through a [`GicSystem`] and
//! reports each line in words, every violation with its line, and the final mappings (device
//! and collection tables, ITTs, vPEs and where they are resident). Commands go through the real
//! command queue one at a time, so a stream longer than the queue wraps around it.
use results::vocab::Gic;
use std::collections::BTreeSet;

use serde::Serialize;

use super::script::{Item, RdOp, Script};
use super::system::{CommandReport, GicConfig, GicSystem, PROP_BASE};
use crate::arch::arm::its::{tables, Violation, FIRST_LPI, NO_DOORBELL};

/// One input line, described.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepReport {
    pub line: usize,
    /// ITS a command or translation went to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub its: Option<usize>,
    /// Command index on that ITS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// The line in words.
    pub decoded: String,
    pub effects: Vec<String>,
}

/// One violation, with the line that caused it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ViolationReport {
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub its: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_index: Option<u64>,
    pub kind: &'static str,
    pub message: String,
}

/// One mapped event of a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventMapping {
    pub event: u32,
    /// `"lpi"` or `"vlpi"`.
    pub kind: &'static str,
    pub intid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vpe: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doorbell: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceMapping {
    pub its: usize,
    pub device: u32,
    pub event_bits: u32,
    pub itt: u64,
    pub events: Vec<EventMapping>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CollectionMapping {
    pub its: usize,
    pub collection: u16,
    pub redistributor: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VpeMapping {
    pub vpe: u16,
    pub its: Vec<usize>,
    pub redistributor: u16,
    pub vpt: u64,
    pub vintid_bits: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resident_on: Option<u16>,
    pub pending_vlpis: Vec<u32>,
}

/// The final state of the tables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Mappings {
    pub devices: Vec<DeviceMapping>,
    pub collections: Vec<CollectionMapping>,
    pub vpes: Vec<VpeMapping>,
    /// (redistributor, pending physical LPIs).
    pub pending_lpis: Vec<(u16, Vec<u32>)>,
}

/// Everything `its-check` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    pub gic: &'static str,
    pub cpus: u16,
    pub its_count: usize,
    pub vmovp: bool,
    pub steps: Vec<StepReport>,
    pub violations: Vec<ViolationReport>,
    pub mappings: Mappings,
}

/// Run a stream.
pub fn run(script: &Script) -> CheckReport {
    let h = script.header;
    let vmovp_single = h.vmovp_single.unwrap_or(h.version == Gic::V4_1);
    let mut gic = GicSystem::new(GicConfig { version: h.version, cpus: h.cpus, its_count: h.its_count, vmovp_single, ..GicConfig::default() });
    let mut steps = Vec::new();
    let mut violations = Vec::new();
    let mut origin_line = std::collections::BTreeMap::new();
    let mut its = 0usize;
    let mut stalled = BTreeSet::new();
    for &(line, item) in &script.items {
        let mut step = StepReport { line, its: None, index: None, decoded: String::new(), effects: vec![] };
        let mut bad =
            |v: Violation, its: Option<usize>, index: Option<u64>| violations.push(ViolationReport { line, its, command_index: index, kind: v.kind(), message: v.to_string() });
        match item {
            Item::SelectIts(n) => {
                its = n;
                step.decoded = format!("commands now go to ITS {n}");
            }
            Item::Command(w) => {
                step.its = Some(its);
                match gic.submit(its, w) {
                    Err(e) => {
                        step.decoded = format!("not processed: {e}");
                        if stalled.insert(its) {
                            bad(Violation::CommandNotQueued { reason: e.to_string() }, Some(its), None);
                        }
                    }
                    Ok(reports) => {
                        for CommandReport { index, command, effects, violations: vs, .. } in reports {
                            origin_line.insert((its, index), line);
                            step.index = Some(index);
                            step.decoded = command.map_or_else(|| format!("{:#x} {:#x} {:#x} {:#x}", w[0], w[1], w[2], w[3]), |c| c.to_string());
                            step.effects.extend(effects.iter().map(|e| e.to_string()));
                            for v in vs {
                                bad(v, Some(its), Some(index));
                            }
                        }
                    }
                }
            }
            Item::Translate { device, event } => {
                step.its = Some(its);
                step.decoded = format!("GITS_TRANSLATER: device {device:#x} event {event}");
                step.effects = gic.translate(its, device, event).iter().map(|e| e.to_string()).collect();
            }
            Item::Rd { rd, op } => {
                let r = match op {
                    RdOp::Vpropbaser(v) => {
                        step.decoded = format!("redistributor {rd}: GICR_VPROPBASER = {v:#x}");
                        gic.write_vpropbaser(rd, v).map(|_| vec![])
                    }
                    RdOp::Vpendbaser(v) => {
                        step.decoded = format!("redistributor {rd}: GICR_VPENDBASER = {v:#x} ({})", describe_vpendbaser(h.version, v));
                        gic.write_vpendbaser(rd, v).map(|_| vec![])
                    }
                    RdOp::PollDirty => {
                        let r = gic.poll_dirty(rd);
                        let after = gic.vpendbaser(rd as u16).unwrap_or(0);
                        step.decoded = format!("redistributor {rd}: poll GICR_VPENDBASER.Dirty until 0 (now {after:#x}, PendingLast {})", after >> 61 & 1);
                        r
                    }
                };
                match r {
                    Ok(e) => step.effects = e.iter().map(|e| e.to_string()).collect(),
                    Err(v) => bad(v, None, None),
                }
            }
            Item::LpiConfig { intid, enable, priority } => {
                step.decoded = format!("LPI {intid} configuration: priority {priority:#04x}, {}", if enable { "enabled" } else { "disabled" });
                if let Err(e) = gic.write_lpi_config(intid, priority, enable) {
                    step.effects.push(format!("not written: {e} (table at {PROP_BASE:#x})"));
                }
            }
            Item::VlpiConfig { table, vintid, enable, priority } => {
                step.decoded = format!("vLPI {vintid} configuration in table {table:#x}: priority {priority:#04x}, {}", if enable { "enabled" } else { "disabled" });
                let b = (priority & 0xfc) | 2 | enable as u8;
                if table.checked_add((vintid - FIRST_LPI) as u64).ok_or(()).and_then(|a| gic.mem.write_u8(a, b).map_err(|_| ())).is_err() {
                    step.effects.push("not written: address outside RAM".to_string());
                }
            }
            Item::AckVlpi { vpe, vintid } => {
                step.decoded = format!("guest acknowledges vLPI {vintid} of vPE {vpe}");
                gic.ack_vlpi(vpe, vintid);
            }
            Item::AckLpi { rd, intid } => {
                step.decoded = format!("acknowledge LPI {intid} at redistributor {rd}");
                gic.ack_lpi(rd, intid);
            }
        }
        steps.push(step);
    }
    for ((its, index), v) in gic.finish() {
        let line = origin_line.get(&(its, index)).copied().unwrap_or(0);
        violations.push(ViolationReport { line, its: Some(its), command_index: Some(index), kind: v.kind(), message: v.to_string() });
    }
    violations.sort_by_key(|v| v.line);
    CheckReport { gic: h.version.title(), cpus: gic.config.cpus, its_count: gic.its.len(), vmovp: vmovp_single, steps, violations, mappings: mappings(&gic) }
}

fn describe_vpendbaser(v: Gic, x: u64) -> String {
    let b = |n: u32| x >> n & 1;
    match v {
        Gic::V4_1 => format!("Valid {}, vPEID {}, DB {}, PendingLast {}, VGrp1En {}", b(63), x & 0xffff, b(62), b(61), b(58)),
        _ => format!("Valid {}, VPT {:#x}, IDAI {}, PendingLast {}", b(63), x & 0x000F_FFFF_FFFF_0000, b(62), b(61)),
    }
}

/// Indices of the entries of a table at `base` that lie in written memory.
fn entries_in_use(gic: &GicSystem, base: u64, entry: u64, count: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for (a0, a1) in gic.mem.touched(base, base.saturating_add(count.saturating_mul(entry))) {
        let first = ((a0 - base) / entry).max(out.last().map_or(0, |l| l + 1));
        let last = (a1 - base).div_ceil(entry).min(count);
        out.extend(first..last);
    }
    out
}

/// Walk the tables in memory.
pub fn mappings(gic: &GicSystem) -> Mappings {
    let mut m = Mappings::default();
    for it in &gic.its {
        let t = it.tables;
        for d in entries_in_use(gic, t.device.base, tables::DTE_BYTES, t.device.entries()) {
            let Ok(dte) = t.read_dte(&gic.mem, d as u32) else { continue };
            if !dte.valid {
                continue;
            }
            let mut events = Vec::new();
            for e in entries_in_use(gic, dte.itt_addr, tables::ITE_BYTES, dte.events()) {
                let Ok(ite) = tables::read_ite(&gic.mem, dte.itt_addr, e as u32) else { continue };
                if ite.valid {
                    events.push(EventMapping {
                        event: e as u32,
                        kind: if ite.physical { "lpi" } else { "vlpi" },
                        intid: ite.intid,
                        collection: ite.physical.then_some(ite.icid),
                        vpe: (!ite.physical).then_some(ite.vpe),
                        doorbell: (!ite.physical && ite.doorbell != NO_DOORBELL).then_some(ite.doorbell),
                    });
                }
            }
            m.devices.push(DeviceMapping { its: it.id, device: d as u32, event_bits: dte.size as u32 + 1, itt: dte.itt_addr, events });
        }
        for c in entries_in_use(gic, t.collection.base, tables::CTE_BYTES, t.collection.entries()) {
            if let Ok(cte) = t.read_cte(&gic.mem, c as u16) {
                if cte.valid {
                    m.collections.push(CollectionMapping { its: it.id, collection: c as u16, redistributor: cte.rdbase });
                }
            }
        }
    }
    for (&vpe, s) in &gic.vpes {
        let limit = s.vte.vintids().min(u32::MAX as u64) as u32;
        m.vpes.push(VpeMapping {
            vpe,
            its: s.mapped_on.iter().copied().collect(),
            redistributor: s.vte.rdbase,
            vpt: s.vte.vpt_addr,
            vintid_bits: s.vte.vpt_size as u32 + 1,
            resident_on: gic
                .resident_rd(vpe, &s.vte)
                .or_else(|| (0..gic.frames.len() as u16).find(|&r| gic.frames[r as usize].resident().and_then(|k| gic.vpe_of(k)) == Some(vpe))),
            pending_vlpis: gic.mem.set_bits(s.vte.vpt_addr, FIRST_LPI, limit.max(FIRST_LPI)).unwrap_or_default(),
        });
    }
    for rd in &gic.rds {
        let p = rd.pending_lpis(&gic.mem).unwrap_or_default();
        if !p.is_empty() {
            m.pending_lpis.push((rd.index, p));
        }
    }
    m
}

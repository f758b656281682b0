//! ITS commands: the 32-byte queue entries decoded from their real bit layouts, one function per
//! command as QEMU's `arm_gicv3_its.c` does, and encoded back (for drivers built on the model:
//! the v4.0 doorbell proxy, tests, examples).
//!
//! Layouts: docs/sources.md A.2 (physical commands) and B.1 (virtual commands). A command is
//! four little-endian 64-bit words DW0–DW3; the opcode is DW0[7:0] (A.1). Decoding never fails
//! except on an unknown opcode: whether a field is in range depends on the ITS configuration
//! and is checked when the command executes.
use std::fmt;

/// Extract bits `[hi:lo]` of `v`.
pub fn bits(v: u64, hi: u32, lo: u32) -> u64 {
    (v >> lo) & (u64::MAX >> (63 - (hi - lo)))
}

/// Place `x` into bits `[hi:lo]`.
fn put(x: u64, hi: u32, lo: u32) -> u64 {
    (x & (u64::MAX >> (63 - (hi - lo)))) << lo
}

/// "No doorbell" pINTID in VMAPTI/VMAPI/VMOVI (B.1).
pub const NO_DOORBELL: u32 = 1023;

/// One decoded ITS command. Field names follow the GIC architecture; addresses are byte
/// addresses (the encoded fields are shifted back). RDbase is the processor number (the model
/// runs with GITS_TYPER.PTA = 0, A.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Movi { device: u32, event: u32, icid: u16 },
    Int { device: u32, event: u32 },
    Clear { device: u32, event: u32 },
    Sync { rdbase: u64 },
    Mapd { device: u32, size: u8, itt_addr: u64, valid: bool },
    Mapc { icid: u16, rdbase: u64, valid: bool },
    Mapti { device: u32, event: u32, pintid: u32, icid: u16 },
    Mapi { device: u32, event: u32, icid: u16 },
    Inv { device: u32, event: u32 },
    Invall { icid: u16 },
    Movall { rdbase1: u64, rdbase2: u64 },
    Discard { device: u32, event: u32 },
    Vmovi { device: u32, event: u32, vpe: u16, db_valid: bool, doorbell: u32 },
    Vmovp { seq: u16, its_list: u16, vpe: u16, rdbase: u64, db: bool, default_doorbell: u32 },
    Vsgi { vpe: u16, vintid: u8, enable: bool, clear: bool, group1: bool, priority: u8 },
    Vsync { vpe: u16 },
    Vmapp(Vmapp),
    Vmapti { device: u32, event: u32, vpe: u16, vintid: u32, doorbell: u32 },
    Vmapi { device: u32, event: u32, vpe: u16, doorbell: u32 },
    Vinvall { vpe: u16 },
    Invdb { vpe: u16 },
}

/// VMAPP's fields (B.1), with the v4.1 additions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vmapp {
    pub vpe: u16,
    pub rdbase: u64,
    pub valid: bool,
    /// VPT_size: vINTID bits − 1.
    pub vpt_size: u8,
    pub vpt_addr: u64,
    /// v4.1: Alloc, PTZ, VConfAddr, default doorbell.
    pub alloc: bool,
    pub ptz: bool,
    pub vconf_addr: u64,
    pub default_doorbell: u32,
}

/// Opcodes (A.2, B.1).
pub mod op {
    pub const MOVI: u8 = 0x01;
    pub const INT: u8 = 0x03;
    pub const CLEAR: u8 = 0x04;
    pub const SYNC: u8 = 0x05;
    pub const MAPD: u8 = 0x08;
    pub const MAPC: u8 = 0x09;
    pub const MAPTI: u8 = 0x0A;
    pub const MAPI: u8 = 0x0B;
    pub const INV: u8 = 0x0C;
    pub const INVALL: u8 = 0x0D;
    pub const MOVALL: u8 = 0x0E;
    pub const DISCARD: u8 = 0x0F;
    pub const VMOVI: u8 = 0x21;
    pub const VMOVP: u8 = 0x22;
    pub const VSGI: u8 = 0x23;
    pub const VSYNC: u8 = 0x25;
    pub const VMAPP: u8 = 0x29;
    pub const VMAPTI: u8 = 0x2A;
    pub const VMAPI: u8 = 0x2B;
    pub const VINVALL: u8 = 0x2D;
    pub const INVDB: u8 = 0x2E;
}

/// An opcode the ITS does not implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown ITS command opcode {0:#04x}")]
pub struct UnknownOpcode(pub u8);

type W = [u64; 4];

fn dev(w: &W) -> u32 {
    bits(w[0], 63, 32) as u32
}
fn ev(w: &W) -> u32 {
    bits(w[1], 31, 0) as u32
}
fn icid(w: &W) -> u16 {
    bits(w[2], 15, 0) as u16
}
fn rdbase(x: u64) -> u64 {
    bits(x, 51, 16)
}
fn vpe(w: &W) -> u16 {
    bits(w[1], 47, 32) as u16
}

fn decode_movi(w: &W) -> Command {
    Command::Movi { device: dev(w), event: ev(w), icid: icid(w) }
}
fn decode_int(w: &W) -> Command {
    Command::Int { device: dev(w), event: ev(w) }
}
fn decode_clear(w: &W) -> Command {
    Command::Clear { device: dev(w), event: ev(w) }
}
fn decode_sync(w: &W) -> Command {
    Command::Sync { rdbase: rdbase(w[2]) }
}
fn decode_mapd(w: &W) -> Command {
    Command::Mapd { device: dev(w), size: bits(w[1], 4, 0) as u8, itt_addr: bits(w[2], 51, 8) << 8, valid: w[2] >> 63 == 1 }
}
fn decode_mapc(w: &W) -> Command {
    Command::Mapc { icid: icid(w), rdbase: rdbase(w[2]), valid: w[2] >> 63 == 1 }
}
fn decode_mapti(w: &W) -> Command {
    Command::Mapti { device: dev(w), event: ev(w), pintid: bits(w[1], 63, 32) as u32, icid: icid(w) }
}
fn decode_mapi(w: &W) -> Command {
    Command::Mapi { device: dev(w), event: ev(w), icid: icid(w) }
}
fn decode_inv(w: &W) -> Command {
    Command::Inv { device: dev(w), event: ev(w) }
}
fn decode_invall(w: &W) -> Command {
    Command::Invall { icid: icid(w) }
}
fn decode_movall(w: &W) -> Command {
    Command::Movall { rdbase1: rdbase(w[2]), rdbase2: rdbase(w[3]) }
}
fn decode_discard(w: &W) -> Command {
    Command::Discard { device: dev(w), event: ev(w) }
}
fn decode_vmovi(w: &W) -> Command {
    Command::Vmovi { device: dev(w), event: ev(w), vpe: vpe(w), db_valid: w[2] & 1 == 1, doorbell: bits(w[2], 63, 32) as u32 }
}
fn decode_vmovp(w: &W) -> Command {
    Command::Vmovp {
        seq: bits(w[0], 47, 32) as u16,
        its_list: bits(w[1], 15, 0) as u16,
        vpe: vpe(w),
        rdbase: rdbase(w[2]),
        db: w[2] >> 63 == 1,
        default_doorbell: bits(w[3], 31, 0) as u32,
    }
}
fn decode_vsgi(w: &W) -> Command {
    Command::Vsgi {
        vpe: vpe(w),
        vintid: bits(w[0], 35, 32) as u8,
        enable: bits(w[0], 8, 8) == 1,
        clear: bits(w[0], 9, 9) == 1,
        group1: bits(w[0], 10, 10) == 1,
        priority: (bits(w[0], 23, 20) as u8) << 4,
    }
}
fn decode_vsync(w: &W) -> Command {
    Command::Vsync { vpe: vpe(w) }
}
fn decode_vmapp(w: &W) -> Command {
    Command::Vmapp(Vmapp {
        vpe: vpe(w),
        rdbase: rdbase(w[2]),
        valid: w[2] >> 63 == 1,
        vpt_size: bits(w[3], 4, 0) as u8,
        vpt_addr: bits(w[3], 51, 16) << 16,
        alloc: bits(w[0], 8, 8) == 1,
        ptz: bits(w[0], 9, 9) == 1,
        vconf_addr: bits(w[0], 51, 16) << 16,
        default_doorbell: bits(w[1], 31, 0) as u32,
    })
}
fn decode_vmapti(w: &W) -> Command {
    Command::Vmapti { device: dev(w), event: ev(w), vpe: vpe(w), vintid: bits(w[2], 31, 0) as u32, doorbell: bits(w[2], 63, 32) as u32 }
}
fn decode_vmapi(w: &W) -> Command {
    Command::Vmapi { device: dev(w), event: ev(w), vpe: vpe(w), doorbell: bits(w[2], 63, 32) as u32 }
}
fn decode_vinvall(w: &W) -> Command {
    Command::Vinvall { vpe: vpe(w) }
}
fn decode_invdb(w: &W) -> Command {
    Command::Invdb { vpe: vpe(w) }
}

impl Command {
    /// Decode the four words of one queue entry.
    pub fn decode(w: [u64; 4]) -> Result<Command, UnknownOpcode> {
        let f: fn(&W) -> Command = match (w[0] & 0xff) as u8 {
            op::MOVI => decode_movi,
            op::INT => decode_int,
            op::CLEAR => decode_clear,
            op::SYNC => decode_sync,
            op::MAPD => decode_mapd,
            op::MAPC => decode_mapc,
            op::MAPTI => decode_mapti,
            op::MAPI => decode_mapi,
            op::INV => decode_inv,
            op::INVALL => decode_invall,
            op::MOVALL => decode_movall,
            op::DISCARD => decode_discard,
            op::VMOVI => decode_vmovi,
            op::VMOVP => decode_vmovp,
            op::VSGI => decode_vsgi,
            op::VSYNC => decode_vsync,
            op::VMAPP => decode_vmapp,
            op::VMAPTI => decode_vmapti,
            op::VMAPI => decode_vmapi,
            op::VINVALL => decode_vinvall,
            op::INVDB => decode_invdb,
            o => return Err(UnknownOpcode(o)),
        };
        Ok(f(&w))
    }

    /// The command's name as the architecture spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Movi { .. } => "MOVI",
            Command::Int { .. } => "INT",
            Command::Clear { .. } => "CLEAR",
            Command::Sync { .. } => "SYNC",
            Command::Mapd { .. } => "MAPD",
            Command::Mapc { .. } => "MAPC",
            Command::Mapti { .. } => "MAPTI",
            Command::Mapi { .. } => "MAPI",
            Command::Inv { .. } => "INV",
            Command::Invall { .. } => "INVALL",
            Command::Movall { .. } => "MOVALL",
            Command::Discard { .. } => "DISCARD",
            Command::Vmovi { .. } => "VMOVI",
            Command::Vmovp { .. } => "VMOVP",
            Command::Vsgi { .. } => "VSGI",
            Command::Vsync { .. } => "VSYNC",
            Command::Vmapp(_) => "VMAPP",
            Command::Vmapti { .. } => "VMAPTI",
            Command::Vmapi { .. } => "VMAPI",
            Command::Vinvall { .. } => "VINVALL",
            Command::Invdb { .. } => "INVDB",
        }
    }

    /// True for the commands only a GICv4.1 ITS implements (INVDB, VSGI; B.1).
    pub fn is_v41_only(&self) -> bool {
        matches!(self, Command::Invdb { .. } | Command::Vsgi { .. })
    }

    /// True for the virtual (GICv4) commands, which a GICv3-only ITS does not implement.
    pub fn is_virtual(&self) -> bool {
        matches!(
            self,
            Command::Vmovi { .. }
                | Command::Vmovp { .. }
                | Command::Vsgi { .. }
                | Command::Vsync { .. }
                | Command::Vmapp(_)
                | Command::Vmapti { .. }
                | Command::Vmapi { .. }
                | Command::Vinvall { .. }
                | Command::Invdb { .. }
        )
    }

    /// Encode into the four queue words (the inverse of [`Command::decode`] for in-range fields).
    pub fn encode(&self) -> [u64; 4] {
        let d = |device: u32, opc: u8| put(device as u64, 63, 32) | opc as u64;
        let rd = |r: u64| put(r, 51, 16);
        let vp = |v: u16| put(v as u64, 47, 32);
        match *self {
            Command::Movi { device, event, icid } => [d(device, op::MOVI), event as u64, icid as u64, 0],
            Command::Int { device, event } => [d(device, op::INT), event as u64, 0, 0],
            Command::Clear { device, event } => [d(device, op::CLEAR), event as u64, 0, 0],
            Command::Sync { rdbase } => [op::SYNC as u64, 0, rd(rdbase), 0],
            Command::Mapd { device, size, itt_addr, valid } => [d(device, op::MAPD), put(size as u64, 4, 0), put(itt_addr >> 8, 51, 8) | (valid as u64) << 63, 0],
            Command::Mapc { icid, rdbase, valid } => [op::MAPC as u64, 0, icid as u64 | rd(rdbase) | (valid as u64) << 63, 0],
            Command::Mapti { device, event, pintid, icid } => [d(device, op::MAPTI), event as u64 | put(pintid as u64, 63, 32), icid as u64, 0],
            Command::Mapi { device, event, icid } => [d(device, op::MAPI), event as u64, icid as u64, 0],
            Command::Inv { device, event } => [d(device, op::INV), event as u64, 0, 0],
            Command::Invall { icid } => [op::INVALL as u64, 0, icid as u64, 0],
            Command::Movall { rdbase1, rdbase2 } => [op::MOVALL as u64, 0, rd(rdbase1), rd(rdbase2)],
            Command::Discard { device, event } => [d(device, op::DISCARD), event as u64, 0, 0],
            Command::Vmovi { device, event, vpe, db_valid, doorbell } => [d(device, op::VMOVI), event as u64 | vp(vpe), db_valid as u64 | put(doorbell as u64, 63, 32), 0],
            Command::Vmovp { seq, its_list, vpe, rdbase, db, default_doorbell } => {
                [op::VMOVP as u64 | put(seq as u64, 47, 32), its_list as u64 | vp(vpe), rd(rdbase) | (db as u64) << 63, default_doorbell as u64]
            }
            Command::Vsgi { vpe, vintid, enable, clear, group1, priority } => [
                op::VSGI as u64 | (enable as u64) << 8 | (clear as u64) << 9 | (group1 as u64) << 10 | put((priority >> 4) as u64, 23, 20) | put(vintid as u64, 35, 32),
                vp(vpe),
                0,
                0,
            ],
            Command::Vsync { vpe } => [op::VSYNC as u64, vp(vpe), 0, 0],
            Command::Vmapp(m) => [
                op::VMAPP as u64 | (m.alloc as u64) << 8 | (m.ptz as u64) << 9 | put(m.vconf_addr >> 16, 51, 16),
                m.default_doorbell as u64 | vp(m.vpe),
                rd(m.rdbase) | (m.valid as u64) << 63,
                put(m.vpt_size as u64, 4, 0) | put(m.vpt_addr >> 16, 51, 16),
            ],
            Command::Vmapti { device, event, vpe, vintid, doorbell } => [d(device, op::VMAPTI), event as u64 | vp(vpe), vintid as u64 | put(doorbell as u64, 63, 32), 0],
            Command::Vmapi { device, event, vpe, doorbell } => [d(device, op::VMAPI), event as u64 | vp(vpe), put(doorbell as u64, 63, 32), 0],
            Command::Vinvall { vpe } => [op::VINVALL as u64, vp(vpe), 0, 0],
            Command::Invdb { vpe } => [op::INVDB as u64, vp(vpe), 0, 0],
        }
    }
}

fn db(d: u32) -> String {
    if d == NO_DOORBELL {
        "none (1023)".to_string()
    } else {
        d.to_string()
    }
}

/// The command in words, e.g. `MAPTI device 0x10 event 3 -> pINTID 8195, collection 1`.
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.name();
        match *self {
            Command::Movi { device, event, icid } => write!(f, "{n} device {device:#x} event {event} to collection {icid}"),
            Command::Int { device, event } | Command::Clear { device, event } | Command::Inv { device, event } | Command::Discard { device, event } => {
                write!(f, "{n} device {device:#x} event {event}")
            }
            Command::Sync { rdbase } => write!(f, "{n} redistributor {rdbase}"),
            Command::Mapd { device, size, itt_addr, valid: true } => {
                write!(f, "{n} device {device:#x} valid, {} event ID bits, ITT at {itt_addr:#x}", size as u32 + 1)
            }
            Command::Mapd { device, valid: false, .. } => write!(f, "{n} device {device:#x} unmap"),
            Command::Mapc { icid, rdbase, valid: true } => write!(f, "{n} collection {icid} -> redistributor {rdbase}"),
            Command::Mapc { icid, valid: false, .. } => write!(f, "{n} collection {icid} unmap"),
            Command::Mapti { device, event, pintid, icid } => {
                write!(f, "{n} device {device:#x} event {event} -> pINTID {pintid}, collection {icid}")
            }
            Command::Mapi { device, event, icid } => write!(f, "{n} device {device:#x} event {event} -> pINTID {event}, collection {icid}"),
            Command::Invall { icid } => write!(f, "{n} collection {icid}"),
            Command::Movall { rdbase1, rdbase2 } => write!(f, "{n} redistributor {rdbase1} -> redistributor {rdbase2}"),
            Command::Vmovi { device, event, vpe, db_valid, doorbell } => {
                write!(f, "{n} device {device:#x} event {event} to vPE {vpe}")?;
                if db_valid {
                    write!(f, ", doorbell {}", db(doorbell))?;
                }
                Ok(())
            }
            Command::Vmovp { seq, its_list, vpe, rdbase, db: dbit, default_doorbell } => {
                write!(f, "{n} vPE {vpe} -> redistributor {rdbase} (SeqNum {seq}, ITSList {its_list:#06x}, DB {}, default doorbell {})", dbit as u8, db(default_doorbell))
            }
            Command::Vsgi { vpe, vintid, enable, clear, group1, priority } => {
                write!(f, "{n} vPE {vpe} vSGI {vintid}: enable {}, clear {}, group {}, priority {priority:#04x}", enable as u8, clear as u8, group1 as u8)
            }
            Command::Vsync { vpe } | Command::Vinvall { vpe } | Command::Invdb { vpe } => write!(f, "{n} vPE {vpe}"),
            Command::Vmapp(m) if m.valid => write!(
                f,
                "{n} vPE {} -> redistributor {}, VPT at {:#x} ({} vINTID bits), v4.1: alloc {} PTZ {} VConf {:#x} default doorbell {}",
                m.vpe,
                m.rdbase,
                m.vpt_addr,
                m.vpt_size as u32 + 1,
                m.alloc as u8,
                m.ptz as u8,
                m.vconf_addr,
                db(m.default_doorbell)
            ),
            Command::Vmapp(m) => write!(f, "{n} vPE {} unmap", m.vpe),
            Command::Vmapti { device, event, vpe, vintid, doorbell } => {
                write!(f, "{n} device {device:#x} event {event} -> vPE {vpe} vINTID {vintid}, doorbell {}", db(doorbell))
            }
            Command::Vmapi { device, event, vpe, doorbell } => {
                write!(f, "{n} device {device:#x} event {event} -> vPE {vpe} vINTID {event}, doorbell {}", db(doorbell))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_documented_field_positions() {
        // MAPTI: DeviceID DW0[63:32], EventID DW1[31:0], pINTID DW1[63:32], ICID DW2[15:0] (A.2).
        let w = [0x0000_0010_0000_000a, 0x0000_2003_0000_0003, 0x1, 0];
        assert_eq!(Command::decode(w).unwrap(), Command::Mapti { device: 0x10, event: 3, pintid: 0x2003, icid: 1 });
        // MAPD: Size DW1[4:0], ITT_addr DW2[51:8], V DW2[63].
        let w = [0x0000_0005_0000_0008, 4, 0x8000_0000_1234_5600, 0];
        assert_eq!(Command::decode(w).unwrap(), Command::Mapd { device: 5, size: 4, itt_addr: 0x1234_5600, valid: true });
        // VMAPTI: vPEID DW1[47:32], vINTID DW2[31:0], doorbell DW2[63:32] (B.1).
        let w = [0x0000_0007_0000_002a, 0x0000_0002_0000_0001, 0x0000_03ff_0000_2000, 0];
        assert_eq!(Command::decode(w).unwrap(), Command::Vmapti { device: 7, event: 1, vpe: 2, vintid: 8192, doorbell: NO_DOORBELL });
        // VMOVP: SeqNum DW0[47:32], ITSList DW1[15:0], RDbase DW2[51:16].
        let w = [0x0000_0009_0000_0022, 0x0000_0004_0000_0003, 0x0000_0000_0002_0000, 0];
        assert_eq!(Command::decode(w).unwrap(), Command::Vmovp { seq: 9, its_list: 3, vpe: 4, rdbase: 2, db: false, default_doorbell: 0 });
        // VSGI: Priority DW0[23:20], vINTID DW0[35:32].
        let w = [0x0000_0005_00a0_0323, 0x0000_0001_0000_0000, 0, 0];
        assert_eq!(Command::decode(w).unwrap(), Command::Vsgi { vpe: 1, vintid: 5, enable: true, clear: true, group1: false, priority: 0xa0 });
    }

    #[test]
    fn unknown_opcode_is_an_error() {
        assert_eq!(Command::decode([0x20, 0, 0, 0]), Err(UnknownOpcode(0x20)));
        assert_eq!(Command::decode([0xff, 1, 2, 3]), Err(UnknownOpcode(0xff)));
    }

    #[test]
    fn every_opcode_round_trips_through_encode() {
        for opc in 0u8..=0xff {
            let w = [opc as u64 | 0xdead_beef_0000_0000, 0x0000_1234_0000_0042, 0x8000_0000_0003_0001, 0x0000_0000_0005_0003];
            if let Ok(c) = Command::decode(w) {
                assert_eq!(Command::decode(c.encode()).unwrap(), c, "{}", c.name());
                assert!(!c.to_string().is_empty());
            }
        }
    }
}

//! The ITS tables in guest memory: device table (DTE), collection table (CTE), per-device
//! interrupt translation tables (ITE) and the vPE table (VTE), located by GITS_BASER<n>.
//!
//! Entry formats are IMPLEMENTATION DEFINED; the model uses QEMU's (docs/sources.md A.3):
//! DTE 8 B: Valid[0], Size[5:1], ITT_addr[49:6] (= PA[51:8]); CTE 8 B: Valid[0], RDbase[16:1];
//! ITE 12 B: Valid[0], IntType[1] (1 physical), INTID[25:2], ICID[47:32], vPEID[63:48], then a
//! 32-bit word with Doorbell[24:0]; VTE: Valid[0], VPT_size[5:1], VPT_addr[41:6] (PA >> 16),
//! RDbase[57:42]. The model's VTE has a second 64-bit word for the GICv4.1 VMAPP fields QEMU
//! keeps elsewhere: VConfAddr[35:0] (PA >> 16), default doorbell[59:36]. Tables are flat
//! (Indirect = 0) with 64 KB pages.
use super::command::bits;
use super::memory::{GuestMemory, MemoryError};

/// GITS_BASER<n>.Type (A.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableType {
    Device = 1,
    Vpe = 2,
    Collection = 4,
}

/// Entry sizes in bytes.
pub const DTE_BYTES: u64 = 8;
pub const CTE_BYTES: u64 = 8;
pub const ITE_BYTES: u64 = 12;
pub const VTE_BYTES: u64 = 16;
const PAGE_64K: u64 = 64 * 1024;

/// A decoded GITS_BASER<n>: where a table is and how many entries it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Baser {
    pub ty: TableType,
    pub base: u64,
    pub entry_bytes: u64,
    pub pages: u64,
}

impl Baser {
    /// A flat table of at least `entries` entries at `base` (rounded up to 64 KB pages, at most
    /// 256 pages: Size[7:0]).
    pub fn flat(ty: TableType, base: u64, entry_bytes: u64, entries: u64) -> Baser {
        let pages = (entries * entry_bytes).div_ceil(PAGE_64K).clamp(1, 256);
        Baser { ty, base, entry_bytes, pages }
    }

    /// Number of entries the table holds.
    pub fn entries(&self) -> u64 {
        self.pages * PAGE_64K / self.entry_bytes
    }

    /// The register value: Size[7:0] = pages − 1, PageSize[9:8] = 2 (64 KB), PA[47:12],
    /// EntrySize[52:48] = bytes − 1, Type[58:56], Valid[63].
    pub fn encode(&self) -> u64 {
        (self.pages - 1) | 2 << 8 | (self.base & 0x0000_FFFF_FFFF_F000) | (self.entry_bytes - 1) << 48 | (self.ty as u64) << 56 | 1 << 63
    }

    fn addr(&self, index: u64) -> u64 {
        self.base + index * self.entry_bytes
    }
}

/// Device table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dte {
    pub valid: bool,
    /// EventID bits − 1.
    pub size: u8,
    pub itt_addr: u64,
}

impl Dte {
    pub fn encode(&self) -> u64 {
        self.valid as u64 | (self.size as u64 & 0x1f) << 1 | (self.itt_addr >> 8) << 6
    }
    pub fn decode(v: u64) -> Dte {
        Dte { valid: v & 1 == 1, size: bits(v, 5, 1) as u8, itt_addr: bits(v, 49, 6) << 8 }
    }
    /// Number of EventIDs the device's ITT covers: 2^(Size + 1).
    pub fn events(&self) -> u64 {
        1u64 << (self.size as u32 + 1)
    }
}

/// Collection table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cte {
    pub valid: bool,
    pub rdbase: u16,
}

impl Cte {
    pub fn encode(&self) -> u64 {
        self.valid as u64 | (self.rdbase as u64) << 1
    }
    pub fn decode(v: u64) -> Cte {
        Cte { valid: v & 1 == 1, rdbase: bits(v, 16, 1) as u16 }
    }
}

/// Interrupt translation entry: physical (INTID + collection) or virtual (vINTID + vPE +
/// doorbell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ite {
    pub valid: bool,
    pub physical: bool,
    pub intid: u32,
    pub icid: u16,
    pub vpe: u16,
    pub doorbell: u32,
}

impl Ite {
    pub const INVALID: Ite = Ite { valid: false, physical: false, intid: 0, icid: 0, vpe: 0, doorbell: 0 };

    pub fn encode(&self) -> (u64, u32) {
        let w = self.valid as u64 | (self.physical as u64) << 1 | (self.intid as u64 & 0xFF_FFFF) << 2 | (self.icid as u64) << 32 | (self.vpe as u64) << 48;
        (w, self.doorbell & 0x1FF_FFFF)
    }
    pub fn decode(w: u64, db: u32) -> Ite {
        Ite { valid: w & 1 == 1, physical: w >> 1 & 1 == 1, intid: bits(w, 25, 2) as u32, icid: bits(w, 47, 32) as u16, vpe: bits(w, 63, 48) as u16, doorbell: db & 0x1FF_FFFF }
    }
}

/// vPE table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vte {
    pub valid: bool,
    /// vINTID bits − 1.
    pub vpt_size: u8,
    pub vpt_addr: u64,
    pub rdbase: u16,
    /// v4.1: the VM's vLPI configuration table (VMAPP VConfAddr).
    pub vconf_addr: u64,
    /// v4.1: the vPE's default doorbell pINTID (1023 = none).
    pub default_doorbell: u32,
}

impl Vte {
    pub fn encode(&self) -> (u64, u64) {
        let w0 = self.valid as u64 | (self.vpt_size as u64 & 0x1f) << 1 | ((self.vpt_addr >> 16) & 0xF_FFFF_FFFF) << 6 | (self.rdbase as u64) << 42;
        let w1 = ((self.vconf_addr >> 16) & 0xF_FFFF_FFFF) | (self.default_doorbell as u64 & 0xFF_FFFF) << 36;
        (w0, w1)
    }
    pub fn decode(w0: u64, w1: u64) -> Vte {
        Vte {
            valid: w0 & 1 == 1,
            vpt_size: bits(w0, 5, 1) as u8,
            vpt_addr: bits(w0, 41, 6) << 16,
            rdbase: bits(w0, 57, 42) as u16,
            vconf_addr: bits(w1, 35, 0) << 16,
            default_doorbell: bits(w1, 59, 36) as u32,
        }
    }
    /// Number of vINTIDs the VPT covers: 2^(VPT_size + 1).
    pub fn vintids(&self) -> u64 {
        1u64 << (self.vpt_size as u32 + 1)
    }
}

/// The four tables of one ITS; every accessor returns a memory error rather than panicking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tables {
    pub device: Baser,
    pub collection: Baser,
    pub vpe: Baser,
}

impl Tables {
    pub fn read_dte(&self, mem: &GuestMemory, device: u32) -> Result<Dte, MemoryError> {
        Ok(Dte::decode(mem.read_u64(self.device.addr(device as u64))?))
    }
    pub fn write_dte(&self, mem: &mut GuestMemory, device: u32, d: Dte) -> Result<(), MemoryError> {
        mem.write_u64(self.device.addr(device as u64), d.encode())
    }
    pub fn read_cte(&self, mem: &GuestMemory, icid: u16) -> Result<Cte, MemoryError> {
        Ok(Cte::decode(mem.read_u64(self.collection.addr(icid as u64))?))
    }
    pub fn write_cte(&self, mem: &mut GuestMemory, icid: u16, c: Cte) -> Result<(), MemoryError> {
        mem.write_u64(self.collection.addr(icid as u64), c.encode())
    }
    pub fn read_vte(&self, mem: &GuestMemory, vpe: u16) -> Result<Vte, MemoryError> {
        let a = self.vpe.addr(vpe as u64);
        Ok(Vte::decode(mem.read_u64(a)?, mem.read_u64(a + 8)?))
    }
    pub fn write_vte(&self, mem: &mut GuestMemory, vpe: u16, v: Vte) -> Result<(), MemoryError> {
        let a = self.vpe.addr(vpe as u64);
        let (w0, w1) = v.encode();
        mem.write_u64(a, w0)?;
        mem.write_u64(a + 8, w1)
    }
}

/// Read the ITE of `event` in the ITT at `itt_addr`.
pub fn read_ite(mem: &GuestMemory, itt_addr: u64, event: u32) -> Result<Ite, MemoryError> {
    let a = itt_addr + event as u64 * ITE_BYTES;
    Ok(Ite::decode(mem.read_u64(a)?, mem.read_u32(a + 8)?))
}

/// Write the ITE of `event` in the ITT at `itt_addr`.
pub fn write_ite(mem: &mut GuestMemory, itt_addr: u64, event: u32, ite: Ite) -> Result<(), MemoryError> {
    let a = itt_addr + event as u64 * ITE_BYTES;
    let (w, db) = ite.encode();
    mem.write_u64(a, w)?;
    mem.write_u32(a + 8, db)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_in_qemu_layout() {
        let d = Dte { valid: true, size: 7, itt_addr: 0x4_5678_9a00 };
        assert_eq!(Dte::decode(d.encode()), d);
        assert_eq!(d.encode() & 0x3f, 1 | 7 << 1);
        let c = Cte { valid: true, rdbase: 3 };
        assert_eq!(c.encode(), 0b111);
        let i = Ite { valid: true, physical: false, intid: 8300, icid: 0, vpe: 9, doorbell: 8200 };
        let (w, db) = i.encode();
        assert_eq!(Ite::decode(w, db), i);
        assert_eq!(w >> 48, 9);
        let v = Vte { valid: true, vpt_size: 15, vpt_addr: 0x1234_0000, rdbase: 5, vconf_addr: 0x5_0000, default_doorbell: 8201 };
        let (a, b) = v.encode();
        assert_eq!(Vte::decode(a, b), v);
        assert_eq!(a >> 42, 5);
    }

    #[test]
    fn baser_encodes_type_size_and_valid() {
        let b = Baser::flat(TableType::Device, 0x8000_0000, DTE_BYTES, 1 << 16);
        assert_eq!(b.pages, 8);
        assert_eq!(b.entries(), 1 << 16);
        let v = b.encode();
        assert_eq!(v >> 56 & 7, 1);
        assert_eq!(v >> 63, 1);
        assert_eq!(v & 0xff, 7);
        assert_eq!(v >> 48 & 0x1f, 7);
    }
}

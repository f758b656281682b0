//! One redistributor's physical LPI state: GICR_CTLR.EnableLPIs, GICR_PROPBASER (the LPI
//! configuration table, shared by all redistributors), GICR_PENDBASER (this redistributor's
//! pending table), and the configuration cache that INV / INVALL / GICR_INVLPIR refresh
//! (docs/sources.md A.4, A.5).
//!
//! The cache is what makes invalidation matter: a configuration byte is read from memory the
//! first time the redistributor needs it and then only re-read on an invalidation, so a driver
//! that changes a byte (say, enables a v4.0 doorbell) without INV keeps the old behaviour — as
//! on hardware that caches, which the architecture allows.
use std::collections::BTreeMap;

use crate::arch::arm::its::{GuestMemory, MemoryError, FIRST_LPI};

/// Configuration byte: priority [7:2], bit 1 RES1, Enable [0] (A.4).
pub const LPI_ENABLE: u8 = 1;
pub const LPI_RES1: u8 = 2;

/// The physical LPI side of one redistributor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redistributor {
    pub index: u16,
    pub enable_lpis: bool,
    /// GICR_PROPBASER: IDbits[4:0], PA[51:12].
    pub propbaser: u64,
    /// GICR_PENDBASER: PA[51:16], PTZ[62].
    pub pendbaser: u64,
    cache: BTreeMap<u32, u8>,
}

impl Redistributor {
    pub fn new(index: u16) -> Redistributor {
        Redistributor { index, enable_lpis: false, propbaser: 0, pendbaser: 0, cache: BTreeMap::new() }
    }

    /// Number of INTID bits the configuration table covers (PROPBASER.IDbits + 1).
    pub fn id_bits(&self) -> u32 {
        (self.propbaser & 0x1f) as u32 + 1
    }
    fn prop_pa(&self) -> u64 {
        self.propbaser & 0x000F_FFFF_FFFF_F000
    }
    fn pend_pa(&self) -> u64 {
        self.pendbaser & 0x000F_FFFF_FFFF_0000
    }

    /// True when `intid` is an LPI this redistributor can hold (A.5 step 3: within IDbits).
    pub fn in_range(&self, intid: u32) -> bool {
        intid >= FIRST_LPI && (intid as u64) < 1u64 << self.id_bits()
    }

    /// The configuration byte as the redistributor sees it (cached after the first read).
    pub fn config(&mut self, mem: &GuestMemory, intid: u32) -> Result<u8, MemoryError> {
        if intid < FIRST_LPI {
            return Ok(0);
        }
        if let Some(b) = self.cache.get(&intid) {
            return Ok(*b);
        }
        let b = mem.read_u8(self.prop_pa() + (intid - FIRST_LPI) as u64)?;
        self.cache.insert(intid, b);
        Ok(b)
    }

    /// Enabled according to the cached configuration.
    pub fn enabled(&mut self, mem: &GuestMemory, intid: u32) -> Result<bool, MemoryError> {
        Ok(self.config(mem, intid)? & LPI_ENABLE != 0)
    }

    /// INV / GICR_INVLPIR: forget the cached byte of `intid`.
    pub fn invalidate(&mut self, intid: u32) {
        self.cache.remove(&intid);
    }

    /// INVALL / GICR_INVALLR: forget every cached byte.
    pub fn invalidate_all(&mut self) {
        self.cache.clear();
    }

    pub fn pending(&self, mem: &GuestMemory, intid: u32) -> Result<bool, MemoryError> {
        mem.bit(self.pend_pa(), intid)
    }

    /// Set or clear the pending bit; returns the previous value.
    pub fn set_pending(&mut self, mem: &mut GuestMemory, intid: u32, on: bool) -> Result<bool, MemoryError> {
        mem.set_bit(self.pend_pa(), intid, on)
    }

    /// Every pending LPI, in INTID order.
    pub fn pending_lpis(&self, mem: &GuestMemory) -> Result<Vec<u32>, MemoryError> {
        mem.set_bits(self.pend_pa(), FIRST_LPI, (1u64 << self.id_bits()).min(u32::MAX as u64) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rd() -> (Redistributor, GuestMemory) {
        let mut r = Redistributor::new(0);
        r.propbaser = 0x10_0000 | 15;
        r.pendbaser = 0x20_0000;
        r.enable_lpis = true;
        (r, GuestMemory::new(1 << 24))
    }

    #[test]
    fn config_is_cached_until_invalidated() {
        let (mut r, mut m) = rd();
        assert!(!r.enabled(&m, 8200).unwrap());
        m.write_u8(0x10_0000 + 8, 0xa0 | LPI_RES1 | LPI_ENABLE).unwrap();
        assert!(!r.enabled(&m, 8200).unwrap(), "stale until INV (A.4: software must INV after a change)");
        r.invalidate(8200);
        assert!(r.enabled(&m, 8200).unwrap());
        m.write_u8(0x10_0000 + 8, 0).unwrap();
        r.invalidate_all();
        assert!(!r.enabled(&m, 8200).unwrap());
    }

    #[test]
    fn pending_bits_live_in_the_pending_table() {
        let (mut r, mut m) = rd();
        assert!(!r.set_pending(&mut m, 9000, true).unwrap());
        assert!(m.bit(0x20_0000, 9000).unwrap());
        assert_eq!(r.pending_lpis(&m).unwrap(), vec![9000]);
        assert!(r.in_range(9000) && !r.in_range(1 << 16) && !r.in_range(8191));
    }
}

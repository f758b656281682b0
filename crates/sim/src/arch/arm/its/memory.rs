//! Simulated guest-physical memory holding the ITS command queue and every table the ITS and the
//! redistributors use (device, collection, ITT, vPE tables; LPI configuration and pending tables;
//! virtual pending tables).
//!
//! The hardware reads these structures from memory, so the model does too: a driver that points
//! an ITT at the wrong place, or forgets to clear a table, gets what the hardware would give it.
//! Memory is sparse (4 KB pages allocated on first write, zero when never written) and bounded
//! by a RAM limit: an access beyond it is a memory error, which for a command read sets
//! GITS_CREADR.Stalled (docs/sources.md A.1, "a memory error reading a command sets
//! CREADR.Stalled and stops processing (QEMU)").
use std::collections::BTreeMap;

const PAGE: u64 = 4096;

/// A guest-physical access outside RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("memory error: guest-physical access of {len} bytes at {pa:#x} is outside RAM (limit {limit:#x})")]
pub struct MemoryError {
    pub pa: u64,
    pub len: u64,
    pub limit: u64,
}

/// Sparse guest-physical memory of `ram_limit` bytes starting at PA 0.
#[derive(Debug, Clone)]
pub struct GuestMemory {
    pages: BTreeMap<u64, Box<[u8; PAGE as usize]>>,
    ram_limit: u64,
}

impl GuestMemory {
    /// RAM covers `[0, ram_limit)`.
    pub fn new(ram_limit: u64) -> GuestMemory {
        GuestMemory { pages: BTreeMap::new(), ram_limit }
    }

    pub fn ram_limit(&self) -> u64 {
        self.ram_limit
    }

    fn check(&self, pa: u64, len: u64) -> Result<(), MemoryError> {
        match pa.checked_add(len) {
            Some(end) if end <= self.ram_limit => Ok(()),
            _ => Err(MemoryError { pa, len, limit: self.ram_limit }),
        }
    }

    /// Read `buf.len()` bytes at `pa`.
    pub fn read(&self, pa: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        self.check(pa, buf.len() as u64)?;
        for (i, b) in buf.iter_mut().enumerate() {
            let a = pa + i as u64;
            *b = self.pages.get(&(a / PAGE)).map_or(0, |p| p[(a % PAGE) as usize]);
        }
        Ok(())
    }

    /// Write `data` at `pa`.
    pub fn write(&mut self, pa: u64, data: &[u8]) -> Result<(), MemoryError> {
        self.check(pa, data.len() as u64)?;
        for (i, b) in data.iter().enumerate() {
            let a = pa + i as u64;
            self.pages.entry(a / PAGE).or_insert_with(|| Box::new([0; PAGE as usize]))[(a % PAGE) as usize] = *b;
        }
        Ok(())
    }

    pub fn read_u64(&self, pa: u64) -> Result<u64, MemoryError> {
        let mut b = [0u8; 8];
        self.read(pa, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    pub fn write_u64(&mut self, pa: u64, v: u64) -> Result<(), MemoryError> {
        self.write(pa, &v.to_le_bytes())
    }

    pub fn read_u32(&self, pa: u64) -> Result<u32, MemoryError> {
        let mut b = [0u8; 4];
        self.read(pa, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub fn write_u32(&mut self, pa: u64, v: u32) -> Result<(), MemoryError> {
        self.write(pa, &v.to_le_bytes())
    }

    pub fn read_u8(&self, pa: u64) -> Result<u8, MemoryError> {
        let mut b = [0u8; 1];
        self.read(pa, &mut b)?;
        Ok(b[0])
    }

    pub fn write_u8(&mut self, pa: u64, v: u8) -> Result<(), MemoryError> {
        self.write(pa, &[v])
    }

    /// Bit `n` of the bitmap at `base` (pending tables: one bit per INTID, A.4).
    pub fn bit(&self, base: u64, n: u32) -> Result<bool, MemoryError> {
        Ok(self.read_u8(base + (n / 8) as u64)? >> (n % 8) & 1 == 1)
    }

    /// Set or clear bit `n` of the bitmap at `base`; returns the previous value.
    pub fn set_bit(&mut self, base: u64, n: u32, on: bool) -> Result<bool, MemoryError> {
        let a = base + (n / 8) as u64;
        let byte = self.read_u8(a)?;
        let mask = 1u8 << (n % 8);
        self.write_u8(a, if on { byte | mask } else { byte & !mask })?;
        Ok(byte & mask != 0)
    }

    /// The parts of `[start, end)` that lie in pages ever written (everything else reads 0):
    /// lets a table walk skip the empty bulk of a sparse table.
    pub fn touched(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        if end <= start {
            return vec![];
        }
        self.pages.range(start / PAGE..=(end - 1) / PAGE).map(|(&p, _)| ((p * PAGE).max(start), ((p + 1) * PAGE).min(end))).collect()
    }

    /// Set bits of the bitmap at `base` among `[from, to)`, in increasing order; pages never
    /// written are skipped without reading them, so a scan of a large table stays cheap.
    pub fn set_bits(&self, base: u64, from: u32, to: u32) -> Result<Vec<u32>, MemoryError> {
        if to <= from {
            return Ok(vec![]);
        }
        self.check(base.saturating_add((from / 8) as u64), ((to - from) as u64).div_ceil(8))?;
        let mut out = Vec::new();
        let (first, last) = (base + (from / 8) as u64, base + (to as u64).div_ceil(8));
        for (&pno, page) in self.pages.range(first / PAGE..=last.saturating_sub(1) / PAGE) {
            // Only the bytes of this page inside [first, last), eight at a time: a pending
            // table is mostly zeros (this scan was most of an xen-gicv4 run byte by byte).
            let start = pno * PAGE;
            let (lo, hi) = (first.max(start) - start, last.min(start + PAGE) - start);
            let bytes = &page[lo as usize..hi as usize];
            let mut push_bits = |off: usize, byte: u8| {
                let a = start + lo + off as u64;
                let mut rest = byte;
                while rest != 0 {
                    let n = (a - base) * 8 + rest.trailing_zeros() as u64;
                    rest &= rest - 1;
                    if n >= from as u64 && n < to as u64 {
                        out.push(n as u32);
                    }
                }
            };
            let words = bytes.chunks_exact(8);
            let tail = words.remainder();
            for (c, w) in words.enumerate() {
                if u64::from_le_bytes(w.try_into().expect("chunks of 8")) != 0 {
                    w.iter().enumerate().for_each(|(k, &b)| push_bits(c * 8 + k, b));
                }
            }
            let tail_off = bytes.len() - tail.len();
            tail.iter().enumerate().for_each(|(k, &b)| push_bits(tail_off + k, b));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_memory_reads_zero_and_writes_round_trip() {
        let mut m = GuestMemory::new(1 << 20);
        assert_eq!(m.read_u64(0x1000).unwrap(), 0);
        m.write_u64(0xffc, 0x1122_3344_5566_7788).unwrap(); // straddles a page boundary
        assert_eq!(m.read_u64(0xffc).unwrap(), 0x1122_3344_5566_7788);
        assert_eq!(m.read_u32(0x1000).unwrap(), 0x1122_3344);
    }

    #[test]
    fn access_beyond_ram_is_a_memory_error() {
        let mut m = GuestMemory::new(0x2000);
        assert!(m.read_u64(0x1ff8).is_ok());
        assert_eq!(m.read_u64(0x1ffc), Err(MemoryError { pa: 0x1ffc, len: 8, limit: 0x2000 }));
        assert!(m.write_u8(u64::MAX, 1).is_err(), "overflowing address is an error, not a panic");
    }

    #[test]
    fn bitmap_bits_set_clear_and_scan() {
        let mut m = GuestMemory::new(1 << 20);
        assert!(!m.set_bit(0x8000, 8195, true).unwrap());
        assert!(m.set_bit(0x8000, 8195, true).unwrap());
        m.set_bit(0x8000, 9000, true).unwrap();
        assert!(m.bit(0x8000, 8195).unwrap());
        assert_eq!(m.set_bits(0x8000, 8192, 1 << 16).unwrap(), vec![8195, 9000]);
        assert_eq!(m.set_bits(0x8000, 8196, 9000).unwrap(), Vec::<u32>::new());
        m.set_bit(0x8000, 8195, false).unwrap();
        assert_eq!(m.set_bits(0x8000, 0, 1 << 16).unwrap(), vec![9000]);
    }

    proptest::proptest! {
        /// The word-at-a-time scan finds exactly the bits `bit` reports, for any range, across
        /// page boundaries and an unaligned base.
        #[test]
        fn scan_equals_bit_by_bit(bits in proptest::collection::vec(0u32..70_000, 0..60), from in 0u32..70_000, len in 0u32..70_000, base_off in 0u64..4) {
            let base = 0x7ff0 + base_off;
            let mut m = GuestMemory::new(1 << 20);
            for &b in &bits {
                m.set_bit(base, b, true).unwrap();
            }
            let to = from.saturating_add(len);
            let want: Vec<u32> = (from..to).filter(|&n| m.bit(base, n).unwrap()).collect();
            proptest::prop_assert_eq!(m.set_bits(base, from, to).unwrap(), want);
        }
    }
}

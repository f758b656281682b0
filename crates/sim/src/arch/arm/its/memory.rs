//! Simulated guest-physical memory holding the ITS command queue and every table the ITS and the
//! redistributors use (device, collection, ITT, vPE tables; LPI configuration and pending tables;
//! virtual pending tables).
//!
//! The hardware reads these structures from memory, so the model does too: a driver that points
//! an ITT at the wrong place, or forgets to clear a table, gets what the hardware would give it.
//! Memory is sparse (4 KB pages allocated on first write, zero when never written) and bounded
//! by a RAM limit: an access beyond it is a memory error, which for a command read sets
//! GITS_CREADR.Stalled (architecture.md A.1, "a memory error reading a command sets
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
        GuestMemory {
            pages: BTreeMap::new(),
            ram_limit,
        }
    }

    pub fn ram_limit(&self) -> u64 {
        self.ram_limit
    }

    fn check(&self, pa: u64, len: u64) -> Result<(), MemoryError> {
        match pa.checked_add(len) {
            Some(end) if end <= self.ram_limit => Ok(()),
            _ => Err(MemoryError {
                pa,
                len,
                limit: self.ram_limit,
            }),
        }
    }

    /// Read `buf.len()` bytes at `pa`.
    pub fn read(&self, pa: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        self.check(pa, buf.len() as u64)?;
        let off = (pa % PAGE) as usize;
        if off + buf.len() <= PAGE as usize {
            match self.pages.get(&(pa / PAGE)) {
                Some(p) => buf.copy_from_slice(&p[off..off + buf.len()]),
                None => buf.fill(0),
            }
            return Ok(());
        }
        for (i, b) in buf.iter_mut().enumerate() {
            let a = pa + i as u64;
            *b = self.pages.get(&(a / PAGE)).map_or(0, |p| p[(a % PAGE) as usize]);
        }
        Ok(())
    }

    /// Write `data` at `pa`.
    pub fn write(&mut self, pa: u64, data: &[u8]) -> Result<(), MemoryError> {
        self.check(pa, data.len() as u64)?;
        let off = (pa % PAGE) as usize;
        if off + data.len() <= PAGE as usize {
            let p = self.pages.entry(pa / PAGE).or_insert_with(|| Box::new([0; PAGE as usize]));
            p[off..off + data.len()].copy_from_slice(data);
            return Ok(());
        }
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
        self.pages
            .range(start / PAGE..=(end - 1) / PAGE)
            .map(|(&p, _)| ((p * PAGE).max(start), ((p + 1) * PAGE).min(end)))
            .collect()
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
            for (w, word) in page.chunks_exact(8).enumerate() {
                if word.iter().all(|&b| b == 0) {
                    continue;
                }
                for (k, &byte) in word.iter().enumerate() {
                    let off = w * 8 + k;
                    if byte == 0 {
                        continue;
                    }
                    let a = pno * PAGE + off as u64;
                    if a < first || a >= last {
                        continue;
                    }
                    for bit in 0..8 {
                        let n = (a - base) * 8 + bit;
                        if byte >> bit & 1 == 1 && n >= from as u64 && n < to as u64 {
                            out.push(n as u32);
                        }
                    }
                }
            }
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
        assert_eq!(
            m.read_u64(0x1ffc),
            Err(MemoryError {
                pa: 0x1ffc,
                len: 8,
                limit: 0x2000
            })
        );
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
}

//! The ITS command queue: GITS_CBASER, GITS_CWRITER, GITS_CREADR (docs/sources.md A.1).
//!
//! The queue is a ring of 32-byte commands in guest memory at CBASER.PA, of (Size + 1) 4 KB
//! pages. Software writes commands at CWRITER and advances it; the ITS consumes at CREADR.
//! Empty when CREADR == CWRITER; full when (CWRITER + 32) mod size == CREADR (one slot is
//! always left free, as Linux's `its_allocate_entry` does). Writing CBASER resets CREADR to 0
//! and is only allowed while the ITS is disabled. A memory error reading a command sets
//! CREADR.Stalled[0] and processing stops until software rewrites CBASER (QEMU's behaviour).
use super::memory::{GuestMemory, MemoryError};

/// Size of one command in bytes (A.1).
pub const CMD_BYTES: u64 = 32;
const OFFSET_MASK: u64 = 0xF_FFE0; // Offset[19:5]

/// Errors of the driver-side queue operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// GITS_CBASER is writable only while the ITS is disabled (GITS_CTLR.Enabled = 0).
    #[error("GITS_CBASER written while the ITS is enabled (ignored)")]
    CbaserWhileEnabled,
    /// CBASER.Valid is 0: there is no queue.
    #[error("GITS_CBASER.Valid is 0: no command queue")]
    NoQueue,
    /// The CWRITER offset is beyond the end of the queue.
    #[error("GITS_CWRITER offset {offset:#x} is outside the {size:#x}-byte queue (ignored)")]
    CwriterOutOfRange { offset: u64, size: u64 },
    /// The queue is full: (CWRITER + 32) mod size == CREADR.
    #[error("command queue full")]
    Full,
    /// The queue is stalled after a memory error; software must rewrite CBASER.
    #[error("command queue stalled (GITS_CREADR.Stalled = 1)")]
    Stalled,
    /// The command could not be written to guest memory.
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

/// GITS_CBASER / GITS_CWRITER / GITS_CREADR.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandQueue {
    cbaser: u64,
    cwriter: u64,
    creadr: u64,
}

impl CommandQueue {
    /// Write GITS_CBASER (Size[7:0], PA[51:12], Valid[63]); resets CREADR (and CWRITER, as the
    /// offsets refer to the old queue).
    pub fn write_cbaser(&mut self, v: u64, its_enabled: bool) -> Result<(), QueueError> {
        if its_enabled {
            return Err(QueueError::CbaserWhileEnabled);
        }
        self.cbaser = v;
        self.creadr = 0;
        self.cwriter = 0;
        Ok(())
    }

    pub fn cbaser(&self) -> u64 {
        self.cbaser
    }
    pub fn cwriter(&self) -> u64 {
        self.cwriter
    }
    /// GITS_CREADR including Stalled[0].
    pub fn creadr(&self) -> u64 {
        self.creadr
    }
    pub fn valid(&self) -> bool {
        self.cbaser >> 63 == 1
    }
    /// Queue base PA (CBASER.PA[51:12]).
    pub fn base(&self) -> u64 {
        self.cbaser & 0x000F_FFFF_FFFF_F000
    }
    /// Queue size in bytes: (Size + 1) × 4 KB.
    pub fn size(&self) -> u64 {
        ((self.cbaser & 0xff) + 1) * 4096
    }
    pub fn stalled(&self) -> bool {
        self.creadr & 1 == 1
    }
    fn read_off(&self) -> u64 {
        self.creadr & OFFSET_MASK
    }
    fn write_off(&self) -> u64 {
        self.cwriter & OFFSET_MASK
    }
    pub fn is_empty(&self) -> bool {
        self.read_off() == self.write_off()
    }
    pub fn is_full(&self) -> bool {
        (self.write_off() + CMD_BYTES) % self.size() == self.read_off()
    }
    /// Commands waiting to be processed.
    pub fn pending(&self) -> u64 {
        (self.write_off() + self.size() - self.read_off()) % self.size() / CMD_BYTES
    }

    /// Write GITS_CWRITER (Offset[19:5]; Retry[0] is accepted and ignored: the model never stalls
    /// a command it can retry).
    pub fn write_cwriter(&mut self, v: u64) -> Result<(), QueueError> {
        let offset = v & OFFSET_MASK;
        if offset >= self.size() {
            return Err(QueueError::CwriterOutOfRange { offset, size: self.size() });
        }
        self.cwriter = offset;
        Ok(())
    }

    /// Driver side: write one command at CWRITER and advance CWRITER (wrapping at the end).
    pub fn push(&mut self, mem: &mut GuestMemory, words: [u64; 4]) -> Result<(), QueueError> {
        if !self.valid() {
            return Err(QueueError::NoQueue);
        }
        if self.stalled() {
            return Err(QueueError::Stalled);
        }
        if self.is_full() {
            return Err(QueueError::Full);
        }
        let pa = self.base() + self.write_off();
        for (i, w) in words.iter().enumerate() {
            mem.write_u64(pa + 8 * i as u64, *w)?;
        }
        self.cwriter = (self.write_off() + CMD_BYTES) % self.size();
        Ok(())
    }

    /// ITS side: read the command at CREADR without consuming it. `None` when empty, stalled or
    /// invalid. A memory error sets Stalled and is returned.
    pub fn peek(&mut self, mem: &GuestMemory) -> Option<Result<(u64, [u64; 4]), MemoryError>> {
        if !self.valid() || self.stalled() || self.is_empty() {
            return None;
        }
        let off = self.read_off();
        let mut w = [0u64; 4];
        for (i, slot) in w.iter_mut().enumerate() {
            match mem.read_u64(self.base() + off + 8 * i as u64) {
                Ok(v) => *slot = v,
                Err(e) => {
                    self.stall();
                    return Some(Err(e));
                }
            }
        }
        Some(Ok((off, w)))
    }

    /// ITS side: the command at CREADR is done; advance with wrap-around.
    pub fn advance(&mut self) {
        self.creadr = (self.read_off() + CMD_BYTES) % self.size();
    }

    /// Set CREADR.Stalled (a memory error while processing the current command).
    pub fn stall(&mut self) {
        self.creadr |= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(pages: u64) -> (CommandQueue, GuestMemory) {
        let mut q = CommandQueue::default();
        q.write_cbaser(1 << 63 | 0x10_0000 | (pages - 1), false).unwrap();
        (q, GuestMemory::new(1 << 30))
    }

    #[test]
    fn empty_full_and_wrap_around() {
        let (mut q, mut m) = queue(1); // 4 KB = 128 slots
        assert!(q.is_empty() && !q.is_full());
        for i in 0..127 {
            q.push(&mut m, [i, 0, 0, 0]).unwrap();
        }
        assert!(q.is_full(), "127 commands fill a 128-slot ring (one slot kept free)");
        assert_eq!(q.push(&mut m, [0; 4]), Err(QueueError::Full));
        for i in 0..100 {
            let (_, w) = q.peek(&m).unwrap().unwrap();
            assert_eq!(w[0], i);
            q.advance();
        }
        for i in 0..100 {
            q.push(&mut m, [1000 + i, 0, 0, 0]).unwrap();
        }
        assert!(q.cwriter() < q.creadr(), "writer wrapped past the end");
        assert_eq!(q.pending(), 127);
        let mut seen = vec![];
        while let Some(r) = q.peek(&m) {
            seen.push(r.unwrap().1[0]);
            q.advance();
        }
        assert!(q.is_empty());
        assert_eq!(seen.len(), 127);
        assert_eq!(seen[0], 100);
        assert_eq!(seen[126], 1099);
    }

    #[test]
    fn memory_error_stalls_until_cbaser_is_rewritten() {
        let mut q = CommandQueue::default();
        let mut m = GuestMemory::new(0x1_0000);
        q.write_cbaser(1 << 63 | 0x2_0000, false).unwrap(); // queue outside RAM
        q.write_cwriter(0x20).unwrap();
        assert!(matches!(q.peek(&m), Some(Err(_))));
        assert!(q.stalled() && q.creadr() & 1 == 1);
        assert!(q.peek(&m).is_none(), "no processing while stalled");
        assert_eq!(q.push(&mut m, [0; 4]), Err(QueueError::Stalled));
        q.write_cbaser(1 << 63 | 0x1000, false).unwrap();
        assert!(!q.stalled() && q.creadr() == 0);
    }

    #[test]
    fn cbaser_only_while_disabled_and_cwriter_bounded() {
        let (mut q, _) = queue(1);
        assert_eq!(q.write_cbaser(0, true), Err(QueueError::CbaserWhileEnabled));
        assert!(matches!(q.write_cwriter(0x1000), Err(QueueError::CwriterOutOfRange { .. })));
        q.write_cwriter(0x40 | 1).unwrap();
        assert_eq!(q.cwriter(), 0x40);
    }
}

//! Local APIC interrupt acceptance: IRR, ISR, TPR, PPR and EOI (Intel SDM vol. 3 ch. 11.8, as
//! summarised in docs/sources.md D.1/D.3). Vectors 0–15 are reserved and never accepted.
//!
//! Priority class = vector >> 4. PPR = max(TPR, highest in-service vector) by class; an IRR
//! vector is deliverable when its class is above PPR's class.

/// A 256-bit vector set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VecSet([u64; 4]);

impl VecSet {
    pub fn set(&mut self, v: u8) -> bool {
        let (w, b) = (v as usize / 64, v as u32 % 64);
        let was = self.0[w] >> b & 1 == 1;
        self.0[w] |= 1 << b;
        !was
    }
    pub fn clear(&mut self, v: u8) {
        self.0[v as usize / 64] &= !(1u64 << (v % 64));
    }
    pub fn contains(&self, v: u8) -> bool {
        self.0[v as usize / 64] >> (v % 64) & 1 == 1
    }
    /// Highest set vector.
    pub fn highest(&self) -> Option<u8> {
        (0..4).rev().find(|w| self.0[*w] != 0).map(|w| (w * 64 + 63 - self.0[w].leading_zeros() as usize) as u8)
    }
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
    /// Move every vector of `other` into `self`, emptying `other` (posted-interrupt PIR sync).
    pub fn drain_into(&mut self, other: &mut VecSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter_mut()) {
            *a |= *b;
            *b = 0;
        }
    }
}

/// What happened when an interrupt was offered to the APIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept {
    /// Newly pending in IRR.
    Pending,
    /// The vector was already pending: the two coalesce into one interrupt.
    Coalesced,
    /// Vectors 0–15 are illegal for fixed delivery (an APIC error, not delivered).
    Illegal,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lapic {
    pub irr: VecSet,
    pub isr: VecSet,
    pub tpr: u8,
}

impl Lapic {
    /// Offer a fixed interrupt.
    pub fn accept(&mut self, vector: u8) -> Accept {
        if vector < 16 {
            Accept::Illegal
        } else if self.irr.set(vector) {
            Accept::Pending
        } else {
            Accept::Coalesced
        }
    }

    /// Processor priority: TPR or the in-service class, whichever is higher (SDM 11.8.3.1).
    pub fn ppr(&self) -> u8 {
        let isrv = self.isr.highest().unwrap_or(0);
        if self.tpr >> 4 >= isrv >> 4 {
            self.tpr
        } else {
            isrv & 0xF0
        }
    }

    /// The vector the CPU would take now, if any (class above PPR's class).
    pub fn deliverable(&self) -> Option<u8> {
        self.irr.highest().filter(|v| v >> 4 > self.ppr() >> 4)
    }

    /// The CPU acknowledges the highest deliverable vector: IRR → ISR.
    pub fn ack(&mut self) -> Option<u8> {
        let v = self.deliverable()?;
        self.irr.clear(v);
        self.isr.set(v);
        Some(v)
    }

    /// EOI: retire the highest in-service vector.
    pub fn eoi(&mut self) -> Option<u8> {
        let v = self.isr.highest()?;
        self.isr.clear(v);
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ppr_masks_lower_and_equal_classes() {
        let mut a = Lapic::default();
        assert_eq!(a.accept(0x41), Accept::Pending);
        assert_eq!(a.accept(0x41), Accept::Coalesced);
        a.tpr = 0x40;
        assert_eq!(a.deliverable(), None, "same class as TPR is masked");
        a.tpr = 0x3F;
        assert_eq!(a.ack(), Some(0x41));
        // In service 0x41: a 0x4F (same class) waits, a 0x50 preempts.
        a.accept(0x4F);
        assert_eq!(a.deliverable(), None);
        a.accept(0x50);
        assert_eq!(a.ack(), Some(0x50));
        assert_eq!(a.ppr(), 0x50);
        assert_eq!(a.eoi(), Some(0x50));
        assert_eq!(a.eoi(), Some(0x41));
        assert_eq!(a.ack(), Some(0x4F));
    }

    #[test]
    fn illegal_vectors_and_highest() {
        let mut a = Lapic::default();
        assert_eq!(a.accept(3), Accept::Illegal);
        assert!(a.irr.is_empty());
        let mut s = VecSet::default();
        for v in [16u8, 200, 64, 255] {
            s.set(v);
        }
        assert_eq!(s.highest(), Some(255));
        s.clear(255);
        assert_eq!(s.highest(), Some(200));
        let mut t = VecSet::default();
        t.drain_into(&mut s);
        assert!(s.is_empty() && t.contains(64) && t.contains(16));
    }
}

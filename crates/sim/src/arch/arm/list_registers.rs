//! GIC virtual CPU interface: the list-register file a hypervisor uses to inject virtual
//! interrupts (GICv2 `GICH_LR<n>`, GICv3 `ICH_LR<n>_EL2`), as a pure state machine.
//!
//! Facts from docs/sources.md:
//! - B.5: field layouts of `ICH_LR<n>_EL2` (vINTID[31:0], pINTID[41:32] when HW = 1, EOI[41] when
//!   HW = 0, Priority[55:48], Group[60], HW[61], State[63:62]: 0 invalid, 1 pending, 2 active,
//!   3 pending+active) and GICv2 `GICH_LR` (VirtualID[9:0], PhysicalID[19:10] when HW = 1 else
//!   CPUID[12:10] + EOI[19], Priority[27:23] (5 bits), State[29:28], Grp1[30], HW[31]);
//!   `ICH_HCR`: En, UIE (underflow: at most one valid LR), LRENPIE, NPIE (no pending LR);
//!   `ICH_MISR`: EOI, U, LRENP, NP. Maintenance interrupt is PPI 25.
//! - C: HW = 1 → the GIC deactivates the physical interrupt when the guest deactivates the
//!   virtual one, so completion needs no exit; never Pending+Active with HW = 1. HW = 0 with the
//!   EOI bit → a maintenance interrupt when the guest EOIs (the "exit #2" of the resample path).
//!
//! The guest's acknowledge (IAR read) and EOI (EOIR write) go to the GIC virtual CPU interface
//! directly: **no exit** (they cost a few tens of ns; docs/sources.md E: "eoi 14–26 ns" on modern
//! cores, 103 ns on A53). Everything here is function only; the timed model charges the time.
use std::collections::VecDeque;

/// PPI used by the GIC for the maintenance interrupt (docs/sources.md B.5, [spec, not re-read]).
pub const MAINTENANCE_PPI: u32 = 25;

/// The GIC generation (the shared vocabulary's word): here it changes only the list registers'
/// encoding, GICH_LR<n> (GICv2) or ICH_LR<n>_EL2 (GICv3 and the GICv4s).
use results::vocab::Gic;

/// State[63:62] / State[29:28] of a list register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LrState {
    Invalid = 0,
    Pending = 1,
    Active = 2,
    PendingActive = 3,
}

impl LrState {
    fn from_bits(b: u64) -> LrState {
        match b & 3 {
            0 => LrState::Invalid,
            1 => LrState::Pending,
            2 => LrState::Active,
            _ => LrState::PendingActive,
        }
    }
}

/// One list register's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListRegister {
    pub vintid: u32,
    /// `Some(pINTID)` when HW = 1 (a forwarded physical interrupt).
    pub hw: Option<u32>,
    /// Lower is higher priority, as in the GIC.
    pub priority: u8,
    pub group1: bool,
    /// EOI bit (HW = 0 only): request a maintenance interrupt when the guest EOIs.
    pub eoi_maintenance: bool,
    pub state: LrState,
}

impl ListRegister {
    pub const EMPTY: ListRegister = ListRegister { vintid: 0, hw: None, priority: 0, group1: true, eoi_maintenance: false, state: LrState::Invalid };

    /// Encode as GICv3 `ICH_LR<n>_EL2` (docs/sources.md B.5).
    pub fn encode_v3(&self) -> u64 {
        let mut v = self.vintid as u64;
        match self.hw {
            Some(p) => v |= ((p as u64) & 0x3ff) << 32 | 1 << 61,
            None => {
                if self.eoi_maintenance {
                    v |= 1 << 41;
                }
            }
        }
        v |= (self.priority as u64) << 48;
        if self.group1 {
            v |= 1 << 60;
        }
        v | (self.state as u64) << 62
    }

    /// Decode a GICv3 `ICH_LR<n>_EL2` value.
    pub fn decode_v3(v: u64) -> ListRegister {
        let hw = v >> 61 & 1 == 1;
        ListRegister {
            vintid: v as u32,
            hw: hw.then_some((v >> 32 & 0x3ff) as u32),
            priority: (v >> 48) as u8,
            group1: v >> 60 & 1 == 1,
            eoi_maintenance: !hw && v >> 41 & 1 == 1,
            state: LrState::from_bits(v >> 62),
        }
    }

    /// Encode as GICv2 `GICH_LR` (32 bits; priority keeps its top 5 bits).
    pub fn encode_v2(&self) -> u32 {
        let mut v = self.vintid & 0x3ff;
        match self.hw {
            Some(p) => v |= (p & 0x3ff) << 10 | 1 << 31,
            None => {
                if self.eoi_maintenance {
                    v |= 1 << 19;
                }
            }
        }
        v |= ((self.priority >> 3) as u32 & 0x1f) << 23;
        v |= (self.state as u32) << 28;
        if self.group1 {
            v |= 1 << 30;
        }
        v
    }

    /// Decode a GICv2 `GICH_LR` value.
    pub fn decode_v2(v: u32) -> ListRegister {
        let hw = v >> 31 == 1;
        ListRegister {
            vintid: v & 0x3ff,
            hw: hw.then_some(v >> 10 & 0x3ff),
            priority: ((v >> 23 & 0x1f) << 3) as u8,
            group1: v >> 30 & 1 == 1,
            eoi_maintenance: !hw && v >> 19 & 1 == 1,
            state: LrState::from_bits((v >> 28) as u64),
        }
    }
}

/// `ICH_HCR_EL2` / `GICH_HCR` maintenance enables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hcr {
    pub en: bool,
    /// Underflow: maintenance while at most one LR is valid (used to refill from a software queue).
    pub uie: bool,
    /// EOI of an interrupt not in any LR (EOIcount increments).
    pub lrenpie: bool,
    /// No LR in the pending state.
    pub npie: bool,
}

/// `ICH_MISR_EL2` / `GICH_MISR`: why the maintenance interrupt is asserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Misr {
    pub eoi: bool,
    pub underflow: bool,
    pub lrenp: bool,
    pub no_pending: bool,
}

impl Misr {
    pub fn any(&self) -> bool {
        self.eoi || self.underflow || self.lrenp || self.no_pending
    }
}

/// Result of asking to inject a virtual interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectOutcome {
    /// Written to list register `n` in the pending state.
    Written(usize),
    /// Already pending in LR `n`: an edge coalesces (nothing changes).
    Coalesced(usize),
    /// Active in LR `n` (HW = 0): now pending+active, re-delivered after EOI.
    PendingActive(usize),
    /// No free LR (or the HW interrupt is still active): queued in software; the hypervisor has
    /// set `UIE` to get a maintenance interrupt when LRs free up.
    Queued,
}

/// What a guest's EOI caused outside the CPU interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EoiEffect {
    /// HW = 1: the GIC deactivates this physical INTID at the distributor (no exit).
    DeactivatePhysical(u32),
    /// The maintenance interrupt (PPI 25) is asserted to the hypervisor, with the reasons.
    Maintenance(Misr),
}

/// An interrupt waiting in the hypervisor's software queue for a free LR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedVirq {
    pub vintid: u32,
    pub priority: u8,
    pub hw: Option<u32>,
}

/// Errors a guest or hypervisor action can cause (model bugs or guest misbehaviour).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LrError {
    #[error("EOI of vINTID {0}, which is not active in any list register")]
    NotActive(u32),
}

/// The list-register file of one vCPU (saved and restored with the vCPU on a context switch).
#[derive(Debug, Clone)]
pub struct LrFile {
    pub version: Gic,
    lrs: Vec<ListRegister>,
    pub hcr: Hcr,
    /// Latched EOI maintenance status (ICH_EISR-like), cleared by [`LrFile::maintenance`].
    eoi_latched: bool,
    lrenp_latched: bool,
    /// EOIcount (for EOIs of interrupts not present in any LR).
    pub eoi_count: u32,
    /// The hypervisor's software queue of interrupts that did not fit (Xen's `lr_pending`).
    pub overflow: VecDeque<QueuedVirq>,
}

impl LrFile {
    /// `n` list registers (GIC-400 has 4; GICv3 implementations 4–16).
    pub fn new(version: Gic, n: usize) -> LrFile {
        assert!(n > 0 && n <= 16, "a GIC has 1..=16 list registers");
        LrFile {
            version,
            lrs: vec![ListRegister::EMPTY; n],
            hcr: Hcr { en: true, ..Default::default() },
            eoi_latched: false,
            lrenp_latched: false,
            eoi_count: 0,
            overflow: VecDeque::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.lrs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lrs.is_empty()
    }

    pub fn lr(&self, n: usize) -> &ListRegister {
        &self.lrs[n]
    }

    /// Raw register value as the hypervisor would read it.
    pub fn read_raw(&self, n: usize) -> u64 {
        match self.version {
            Gic::V2 => self.lrs[n].encode_v2() as u64,
            Gic::V3 | Gic::V4_0 | Gic::V4_1 => self.lrs[n].encode_v3(),
        }
    }

    pub fn valid_count(&self) -> usize {
        self.lrs.iter().filter(|l| l.state != LrState::Invalid).count()
    }

    /// Whether the virtual CPU interface signals a virtual IRQ to the vCPU (some LR pending).
    pub fn has_pending(&self) -> bool {
        self.lrs.iter().any(|l| matches!(l.state, LrState::Pending | LrState::PendingActive))
    }

    /// Inject `vintid` at `priority`, HW-mapped to `hw` if given (docs/sources.md C).
    /// `eoi_maintenance` requests a maintenance interrupt on EOI (HW = 0 only; ignored for HW = 1).
    pub fn inject(&mut self, vintid: u32, priority: u8, hw: Option<u32>, eoi_maintenance: bool) -> InjectOutcome {
        if let Some(n) = self.lrs.iter().position(|l| l.state != LrState::Invalid && l.vintid == vintid) {
            let l = &mut self.lrs[n];
            return match l.state {
                LrState::Pending | LrState::PendingActive => InjectOutcome::Coalesced(n),
                LrState::Active if l.hw.is_none() => {
                    l.state = LrState::PendingActive;
                    InjectOutcome::PendingActive(n)
                }
                // HW = 1 and still active: never Pending+Active with HW = 1 (docs/sources.md C).
                // The physical side cannot re-fire before deactivation anyway; queue it.
                _ => self.queue(vintid, priority, hw),
            };
        }
        match self.lrs.iter().position(|l| l.state == LrState::Invalid) {
            Some(n) => {
                self.lrs[n] = ListRegister { vintid, hw, priority, group1: true, eoi_maintenance: hw.is_none() && eoi_maintenance, state: LrState::Pending };
                InjectOutcome::Written(n)
            }
            None => self.queue(vintid, priority, hw),
        }
    }

    fn queue(&mut self, vintid: u32, priority: u8, hw: Option<u32>) -> InjectOutcome {
        if !self.overflow.iter().any(|q| q.vintid == vintid) {
            self.overflow.push_back(QueuedVirq { vintid, priority, hw });
        }
        self.hcr.uie = true;
        InjectOutcome::Queued
    }

    /// Guest reads IAR (`ICC_IAR1_EL1` / `GICV_IAR`): the highest-priority pending LR becomes
    /// active (pending+active is already active, so it is not acknowledged again until EOI).
    /// Returns the vINTID, or `None` (spurious, 1023). No exit.
    pub fn guest_ack(&mut self) -> Option<u32> {
        let n = self.lrs.iter().enumerate().filter(|(_, l)| l.state == LrState::Pending).min_by_key(|(i, l)| (l.priority, *i)).map(|(i, _)| i)?;
        self.lrs[n].state = LrState::Active;
        Some(self.lrs[n].vintid)
    }

    /// Guest EOIs (with EOImode 0: priority drop + deactivate) `vintid`. No exit by itself; the
    /// effects say whether the GIC deactivates a physical interrupt and whether the maintenance
    /// interrupt fires (which *is* an exit to the hypervisor).
    pub fn guest_eoi(&mut self, vintid: u32) -> Result<Vec<EoiEffect>, LrError> {
        let mut effects = Vec::new();
        let found = self.lrs.iter().position(|l| l.vintid == vintid && matches!(l.state, LrState::Active | LrState::PendingActive));
        match found {
            Some(n) => {
                let l = &mut self.lrs[n];
                l.state = if l.state == LrState::PendingActive { LrState::Pending } else { LrState::Invalid };
                if let Some(p) = l.hw {
                    effects.push(EoiEffect::DeactivatePhysical(p));
                } else if l.eoi_maintenance && l.state == LrState::Invalid {
                    self.eoi_latched = true;
                }
            }
            None => {
                // Not in an LR (it was evicted to memory): EOIcount increments, LRENP if enabled.
                self.eoi_count += 1;
                if self.hcr.lrenpie {
                    self.lrenp_latched = true;
                } else {
                    return Err(LrError::NotActive(vintid));
                }
            }
        }
        let m = self.misr();
        if m.any() {
            effects.push(EoiEffect::Maintenance(m));
        }
        Ok(effects)
    }

    /// Current maintenance status (`ICH_MISR`): level-sensitive conditions from `ICH_HCR`.
    pub fn misr(&self) -> Misr {
        if !self.hcr.en {
            return Misr::default();
        }
        Misr {
            eoi: self.eoi_latched,
            underflow: self.hcr.uie && self.valid_count() <= 1,
            lrenp: self.hcr.lrenpie && self.lrenp_latched,
            no_pending: self.hcr.npie && !self.has_pending(),
        }
    }

    /// The hypervisor's maintenance handler: clear the latched EOI status, move queued interrupts
    /// into free LRs, and drop UIE when the queue is empty. Returns the LRs written.
    pub fn maintenance(&mut self) -> Vec<usize> {
        self.eoi_latched = false;
        self.lrenp_latched = false;
        let mut written = Vec::new();
        while let Some(q) = self.overflow.front().copied() {
            // A HW interrupt still active in an LR cannot be made pending again yet.
            if self.lrs.iter().any(|l| l.vintid == q.vintid && l.state != LrState::Invalid) {
                break;
            }
            let Some(n) = self.lrs.iter().position(|l| l.state == LrState::Invalid) else { break };
            self.overflow.pop_front();
            self.lrs[n] = ListRegister { vintid: q.vintid, hw: q.hw, priority: q.priority, group1: true, eoi_maintenance: false, state: LrState::Pending };
            written.push(n);
        }
        self.hcr.uie = !self.overflow.is_empty();
        written
    }

    /// Invariant check (for tests and debug assertions): no HW LR is pending+active.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (i, l) in self.lrs.iter().enumerate() {
            if l.hw.is_some() && l.state == LrState::PendingActive {
                return Err(format!("LR{i}: pending+active with HW = 1"));
            }
            if l.hw.is_some() && l.eoi_maintenance {
                return Err(format!("LR{i}: EOI maintenance bit with HW = 1"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inject_ack_eoi_software_irq_without_exit() {
        let mut f = LrFile::new(Gic::V2, 4);
        assert_eq!(f.inject(30, 0xa0, None, false), InjectOutcome::Written(0));
        assert_eq!(f.lr(0).state, LrState::Pending);
        assert!(f.has_pending());
        assert_eq!(f.guest_ack(), Some(30));
        assert_eq!(f.lr(0).state, LrState::Active);
        assert_eq!(f.guest_ack(), None, "nothing else pending: spurious");
        assert_eq!(f.guest_eoi(30).unwrap(), vec![], "HW = 0, no EOI bit: no effect, no exit");
        assert_eq!(f.lr(0).state, LrState::Invalid);
    }

    #[test]
    fn hw_bit_deactivates_physical_on_eoi() {
        let mut f = LrFile::new(Gic::V3, 4);
        assert_eq!(f.inject(27, 0xa0, Some(27), true), InjectOutcome::Written(0));
        assert!(!f.lr(0).eoi_maintenance, "EOI bit is not available with HW = 1");
        f.guest_ack();
        assert_eq!(f.guest_eoi(27).unwrap(), vec![EoiEffect::DeactivatePhysical(27)]);
        assert_eq!(f.lr(0).state, LrState::Invalid);
    }

    #[test]
    fn eoi_bit_raises_maintenance_interrupt() {
        let mut f = LrFile::new(Gic::V3, 4);
        f.inject(40, 0x80, None, true);
        f.guest_ack();
        let e = f.guest_eoi(40).unwrap();
        assert_eq!(e, vec![EoiEffect::Maintenance(Misr { eoi: true, ..Default::default() })]);
        assert!(f.misr().eoi, "level until the hypervisor handles it");
        f.maintenance();
        assert!(!f.misr().any());
    }

    #[test]
    fn edge_while_active_becomes_pending_active_then_pending() {
        let mut f = LrFile::new(Gic::V2, 4);
        f.inject(30, 0xa0, None, false);
        f.guest_ack();
        assert_eq!(f.inject(30, 0xa0, None, false), InjectOutcome::PendingActive(0));
        assert_eq!(f.lr(0).state, LrState::PendingActive);
        assert_eq!(f.guest_ack(), None, "already active: not acknowledged again before EOI");
        f.guest_eoi(30).unwrap();
        assert_eq!(f.lr(0).state, LrState::Pending);
        assert_eq!(f.guest_ack(), Some(30));
        // And a second injection while pending coalesces.
        f.guest_eoi(30).unwrap();
        f.inject(30, 0xa0, None, false);
        assert_eq!(f.inject(30, 0xa0, None, false), InjectOutcome::Coalesced(0));
    }

    #[test]
    fn never_pending_active_with_hw() {
        let mut f = LrFile::new(Gic::V3, 4);
        f.inject(27, 0xa0, Some(27), false);
        f.guest_ack();
        assert_eq!(f.inject(27, 0xa0, Some(27), false), InjectOutcome::Queued);
        assert_eq!(f.lr(0).state, LrState::Active);
        f.check_invariants().unwrap();
        assert!(f.hcr.uie);
        let e = f.guest_eoi(27).unwrap();
        assert_eq!(e[0], EoiEffect::DeactivatePhysical(27));
        assert!(matches!(e[1], EoiEffect::Maintenance(m) if m.underflow));
        assert_eq!(f.maintenance(), vec![0]);
        assert_eq!(f.lr(0).state, LrState::Pending);
        assert!(!f.hcr.uie);
    }

    #[test]
    fn full_lrs_queue_and_underflow_refills() {
        let mut f = LrFile::new(Gic::V2, 4);
        for i in 0..4 {
            assert_eq!(f.inject(32 + i, 0xa0, None, false), InjectOutcome::Written(i as usize));
        }
        assert_eq!(f.inject(40, 0xa0, None, false), InjectOutcome::Queued);
        assert_eq!(f.inject(41, 0xa0, None, false), InjectOutcome::Queued);
        assert!(f.hcr.uie);
        assert!(!f.misr().underflow, "4 valid LRs: no underflow yet");
        let mut maint = None;
        for i in 0..4 {
            assert_eq!(f.guest_ack(), Some(32 + i));
            let e = f.guest_eoi(32 + i).unwrap();
            if let Some(EoiEffect::Maintenance(m)) = e.first() {
                maint.get_or_insert((i, *m));
            }
        }
        let (at, m) = maint.expect("underflow maintenance");
        assert_eq!(at, 2, "fires once at most one LR is valid");
        assert!(m.underflow);
        assert_eq!(f.maintenance().len(), 2);
        assert!(!f.hcr.uie, "queue drained");
        assert_eq!(f.guest_ack(), Some(40));
    }

    #[test]
    fn ack_picks_highest_priority() {
        let mut f = LrFile::new(Gic::V3, 4);
        f.inject(50, 0xc0, None, false);
        f.inject(51, 0x20, None, false);
        f.inject(52, 0x20, None, false);
        assert_eq!(f.guest_ack(), Some(51), "lowest value wins, then lowest LR");
        assert_eq!(f.guest_ack(), Some(52));
        assert_eq!(f.guest_ack(), Some(50));
    }

    #[test]
    fn no_pending_maintenance_and_lrenp() {
        let mut f = LrFile::new(Gic::V3, 4);
        f.hcr.npie = true;
        assert!(f.misr().no_pending);
        f.inject(30, 0, None, false);
        assert!(!f.misr().no_pending);
        assert_eq!(f.guest_eoi(99), Err(LrError::NotActive(99)));
        f.hcr.lrenpie = true;
        let e = f.guest_eoi(99).unwrap();
        assert!(matches!(e[0], EoiEffect::Maintenance(m) if m.lrenp));
        assert_eq!(f.eoi_count, 2);
    }

    #[test]
    fn encodings_match_architecture_md_b5() {
        let l = ListRegister { vintid: 27, hw: Some(27), priority: 0xa0, group1: true, eoi_maintenance: false, state: LrState::Pending };
        let v3 = l.encode_v3();
        assert_eq!(v3 & 0xffff_ffff, 27);
        assert_eq!(v3 >> 32 & 0x3ff, 27);
        assert_eq!(v3 >> 61 & 1, 1);
        assert_eq!(v3 >> 62, 1);
        assert_eq!(v3 >> 48 & 0xff, 0xa0);
        assert_eq!(ListRegister::decode_v3(v3), l);
        let v2 = l.encode_v2();
        assert_eq!(v2 & 0x3ff, 27);
        assert_eq!(v2 >> 10 & 0x3ff, 27);
        assert_eq!(v2 >> 31, 1);
        assert_eq!(v2 >> 28 & 3, 1);
        assert_eq!(ListRegister::decode_v2(v2), l);
        let s = ListRegister { vintid: 30, hw: None, priority: 0x80, group1: false, eoi_maintenance: true, state: LrState::PendingActive };
        assert_eq!(s.encode_v3() >> 41 & 1, 1);
        assert_eq!(s.encode_v2() >> 19 & 1, 1);
        assert_eq!(ListRegister::decode_v3(s.encode_v3()), s);
        assert_eq!(ListRegister::decode_v2(s.encode_v2()), s);
        let f = LrFile::new(Gic::V2, 4);
        assert_eq!(f.read_raw(0), 0x4000_0000, "empty LR: group 1 only");
    }
}

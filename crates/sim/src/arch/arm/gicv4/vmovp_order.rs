//! The cross-ITS VMOVP rule: when GITS_TYPER.VMOVP = 0, a VMOVP carries a SeqNum and an ITSList
//! and "must reach every ITS in the same order" (docs/sources.md B.1; Linux serialises them
//! under `vmovp_lock` with one global `vmovp_seq_num`). This tracker sees every VMOVP each ITS
//! executes and reports the sequences that differ between ITSs: the same SeqNum with other
//! fields, a VMOVP seen out of the order another ITS saw, and (at the end) an ITS of the list
//! that never got it.
use std::collections::BTreeMap;

use crate::arch::arm::its::Violation;

/// Where a VMOVP came from: (ITS, command index on that ITS).
pub type Origin = (usize, u64);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Op {
    seq: u16,
    vpe: u16,
    to: u16,
    its_list: u16,
    first: Origin,
    seen: u32,
}

/// The VMOVP log across all ITSs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmovpOrder {
    ops: Vec<Op>,
    /// ITS → position (in `ops`) of the last VMOVP it executed.
    last: BTreeMap<usize, usize>,
}

impl VmovpOrder {
    fn complete(op: &Op, its_count: usize) -> bool {
        (0..its_count.min(16)).all(|i| op.its_list >> i & 1 == 0 || op.seen >> i & 1 == 1)
    }

    /// ITS `its` executed VMOVP (seq, vpe → to, its_list). Returns the violation, if any.
    pub fn record(&mut self, origin: Origin, its_count: usize, seq: u16, vpe: u16, to: u16, its_list: u16) -> Option<Violation> {
        let its = origin.0;
        let bit = 1u32 << its.min(31);
        let open = self.ops.iter().position(|o| o.seq == seq && o.seen & bit == 0 && !Self::complete(o, its_count));
        let Some(pos) = open else {
            self.ops.push(Op { seq, vpe, to, its_list, first: origin, seen: bit });
            self.last.insert(its, self.ops.len() - 1);
            return None;
        };
        let op = &mut self.ops[pos];
        op.seen |= bit;
        if (op.vpe, op.to, op.its_list) != (vpe, to, its_list) {
            let detail = format!("vPE {vpe} -> redistributor {to}, ITSList {its_list:#06x} here; vPE {} -> redistributor {}, ITSList {:#06x} there", op.vpe, op.to, op.its_list);
            return Some(Violation::VmovpMismatch { its, first_its: op.first.0, seq, detail });
        }
        let prev = self.last.insert(its, pos);
        match prev {
            Some(p) if p > pos => {
                let later = self.ops[p].seq;
                self.last.insert(its, p);
                Some(Violation::VmovpOutOfOrder { its, seq, later })
            }
            _ => None,
        }
    }

    /// At the end of the stream: every VMOVP that some ITS of its ITSList never got, with the
    /// origin of its first copy.
    pub fn finish(&self, its_count: usize) -> Vec<(Origin, Violation)> {
        let mut out = Vec::new();
        for op in &self.ops {
            for i in 0..16usize {
                if op.its_list >> i & 1 == 1 && (i >= its_count || op.seen >> i & 1 == 0) {
                    out.push((op.first, Violation::VmovpMissing { seq: op.seq, missing: i, its_list: op.its_list }));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_order_on_both_itss_is_clean() {
        let mut t = VmovpOrder::default();
        assert_eq!(t.record((0, 0), 2, 1, 5, 1, 0b11), None);
        assert_eq!(t.record((0, 1), 2, 2, 5, 2, 0b11), None);
        assert_eq!(t.record((1, 0), 2, 1, 5, 1, 0b11), None);
        assert_eq!(t.record((1, 1), 2, 2, 5, 2, 0b11), None);
        assert!(t.finish(2).is_empty());
    }

    #[test]
    fn reversed_order_differing_fields_and_missing_its_are_reported() {
        let mut t = VmovpOrder::default();
        t.record((0, 0), 2, 1, 5, 1, 0b11);
        t.record((0, 1), 2, 2, 5, 2, 0b11);
        assert!(t.record((1, 0), 2, 2, 5, 2, 0b11).is_none());
        assert_eq!(t.record((1, 1), 2, 1, 5, 1, 0b11), Some(Violation::VmovpOutOfOrder { its: 1, seq: 1, later: 2 }));

        let mut t = VmovpOrder::default();
        t.record((0, 0), 2, 7, 5, 1, 0b11);
        assert!(matches!(t.record((1, 0), 2, 7, 5, 3, 0b11), Some(Violation::VmovpMismatch { seq: 7, .. })));

        let mut t = VmovpOrder::default();
        t.record((0, 4), 2, 9, 5, 1, 0b11);
        assert_eq!(t.finish(2), vec![((0, 4), Violation::VmovpMissing { seq: 9, missing: 1, its_list: 0b11 })]);
    }
}

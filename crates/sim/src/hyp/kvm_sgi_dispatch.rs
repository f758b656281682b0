//! How KVM/arm64 finds the vCPUs an `ICC_SGI1R_EL1` write names (`hypervisor.mpidr_lookup`).
//!
//! - `walk`: `arch/arm64/kvm/vgic/vgic-mmio-v3.c:vgic_v3_dispatch_sgi` before Linux 6.8:
//!   `kvm_for_each_vcpu` over the VM in index order, `match_mpidr` on each (read the vCPU's
//!   MPIDR, compare Aff3.Aff2.Aff1, test its Aff0 bit in the target list), clearing a target's
//!   bit when it is queued and leaving the loop when the list is empty ("This avoids iterating
//!   through all VCPUs when most of the times we just signal a single VCPU"). The number of
//!   vCPUs visited for a unicast is the target's index + 1; a broadcast (IRM) visits every vCPU.
//! - `table`: Linux 6.8+ (`arch/arm64/kvm/arm.c:kvm_mpidr_to_vcpu` with `kvm->arch.mpidr_data`,
//!   built by `kvm_init_mpidr_data`): `vgic_v3_dispatch_sgi` iterates over the set Aff0 bits and
//!   indexes a compressed-MPIDR → vCPU-index table, one lookup per target whatever the index.
//!   When the table's vCPU does not carry the MPIDR asked for (no such vCPU), `kvm_mpidr_to_vcpu`
//!   falls back to `kvm_for_each_vcpu` over the whole VM (since the RCU rework of the table), so
//!   a miss costs one lookup plus a full walk.
//!
//! This module counts the steps (vCPUs visited, lookups); the timed model charges them.
use serde::Deserialize;

use crate::arch::arm::sgi::Sgi1r;

/// `hypervisor.mpidr_lookup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MpidrLookup {
    Walk,
    Table,
}

/// What one dispatch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// vCPU indices queued, in the order KVM queued them.
    pub targets: Vec<u32>,
    /// vCPUs whose MPIDR a walk compared (`walk`; `table` only after a miss).
    pub visited: u32,
    /// Table lookups (`table`), 0 for `walk`.
    pub lookups: u32,
}

/// Dispatch `reg` written by `sender` in a VM whose vCPU `i` has MPIDR `mpidrs[i]`.
pub fn dispatch(lookup: MpidrLookup, reg: u64, sender: u32, mpidrs: &[u64]) -> Dispatch {
    let sgi = Sgi1r::decode(reg);
    if sgi.broadcast {
        // Both versions: kvm_for_each_vcpu, skip the caller.
        let targets = (0..mpidrs.len() as u32).filter(|i| *i != sender).collect();
        return Dispatch { targets, visited: mpidrs.len() as u32, lookups: 0 };
    }
    match lookup {
        MpidrLookup::Walk => {
            let mut left = sgi.target_list;
            let (mut targets, mut visited) = (Vec::new(), 0);
            for (i, m) in mpidrs.iter().enumerate() {
                if left == 0 {
                    break;
                }
                visited += 1;
                // match_mpidr: Aff3.Aff2.Aff1 equal and this vCPU's Aff0 bit set in the list.
                let aff0 = m & 0xff;
                if m & !0xff == sgi.aff_upper && aff0 < 16 && left & (1 << aff0) != 0 {
                    left &= !(1 << aff0);
                    targets.push(i as u32);
                }
            }
            Dispatch { targets, visited, lookups: 0 }
        }
        MpidrLookup::Table => {
            let (mut targets, mut lookups, mut visited) = (Vec::new(), 0, 0);
            for m in sgi.target_mpidrs() {
                lookups += 1;
                match mpidrs.iter().position(|x| *x == m) {
                    Some(i) => targets.push(i as u32),
                    None => visited += mpidrs.len() as u32,
                }
            }
            Dispatch { targets, visited, lookups }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::arm::sgi::kvm_default_mpidr;

    fn vm(n: u32) -> Vec<u64> {
        (0..n).map(kvm_default_mpidr).collect()
    }

    #[test]
    fn walk_visits_grow_with_the_target_index_table_does_not() {
        let m = vm(64);
        let mut last = 0;
        for t in [1u32, 15, 16, 31, 63] {
            let reg = Sgi1r::encode_unicast(kvm_default_mpidr(t), 1);
            let w = dispatch(MpidrLookup::Walk, reg, 0, &m);
            let tb = dispatch(MpidrLookup::Table, reg, 0, &m);
            assert_eq!(w.targets, vec![t]);
            assert_eq!(tb.targets, vec![t]);
            assert_eq!(w.visited, t + 1, "the walk stops at its target");
            assert!(w.visited > last);
            last = w.visited;
            assert_eq!((tb.visited, tb.lookups), (0, 1));
        }
    }

    #[test]
    fn walk_cost_does_not_depend_on_vm_size_beyond_the_target() {
        let reg = Sgi1r::encode_unicast(kvm_default_mpidr(3), 1);
        assert_eq!(dispatch(MpidrLookup::Walk, reg, 0, &vm(4)).visited, dispatch(MpidrLookup::Walk, reg, 0, &vm(64)).visited);
    }

    #[test]
    fn broadcast_visits_all_and_skips_the_sender() {
        let d = dispatch(MpidrLookup::Table, 1 << 40, 2, &vm(8));
        assert_eq!(d.targets, vec![0, 1, 3, 4, 5, 6, 7]);
        assert_eq!(d.visited, 8);
    }

    #[test]
    fn a_target_outside_the_vm_is_not_queued() {
        let reg = Sgi1r::encode_unicast(kvm_default_mpidr(40), 1);
        let w = dispatch(MpidrLookup::Walk, reg, 0, &vm(32));
        assert!(w.targets.is_empty());
        assert_eq!(w.visited, 32, "the walk found nothing and went to the end");
        let t = dispatch(MpidrLookup::Table, reg, 0, &vm(32));
        assert!(t.targets.is_empty());
        assert_eq!((t.lookups, t.visited), (1, 32), "a table miss falls back to the full walk");
    }
}

//! Destination resolution and how a guest splits a multicast IPI into ICR writes
//! (docs/sources.md D.1; Linux `arch/x86/kernel/apic/x2apic_cluster.c`, `x2apic_phys.c`).
//!
//! - x2APIC physical: ICR Dest[63:32] = one APIC ID → one ICR write per destination.
//! - x2APIC cluster (logical): LDR = ((id >> 4) << 16) | (1 << (id & 0xF)); a logical destination
//!   is cluster[31:16] + a 16-bit mask → one ICR write per cluster of 16 IDs.
//! - xAPIC flat (logical): an 8-bit mask, at most 8 CPUs → one write for up to 8 destinations.
//! - xAPIC cluster: cluster[7:4] + mask[3:0] → one write per cluster of 4.
//! - Shorthands (self, all including self, all excluding self) need no destination field.

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApicMode {
    XapicPhysical,
    XapicFlat,
    XapicCluster,
    X2apicPhysical,
    X2apicCluster,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shorthand {
    None,
    SelfOnly,
    AllIncludingSelf,
    AllExcludingSelf,
}

/// x2APIC logical ID derived from the APIC ID (SDM 10.12.10.2).
pub fn x2apic_ldr(id: u32) -> u32 {
    ((id >> 4) << 16) | (1 << (id & 0xF))
}

/// One ICR write's destination field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IcrDest {
    Physical(u32),
    /// Logical destination as written (x2APIC: cluster << 16 | mask; xAPIC: 8-bit MDA).
    Logical(u32),
}

/// The APIC IDs a destination reaches, among `ids` (all APIC IDs present), in `mode`.
pub fn resolve(mode: ApicMode, dest: IcrDest, shorthand: Shorthand, self_id: u32, ids: &[u32]) -> Vec<u32> {
    match shorthand {
        Shorthand::SelfOnly => return vec![self_id],
        Shorthand::AllIncludingSelf => return ids.to_vec(),
        Shorthand::AllExcludingSelf => return ids.iter().copied().filter(|i| *i != self_id).collect(),
        Shorthand::None => {}
    }
    match dest {
        IcrDest::Physical(id) => {
            let bcast = if matches!(mode, ApicMode::X2apicPhysical | ApicMode::X2apicCluster) { u32::MAX } else { 0xFF };
            if id == bcast {
                ids.to_vec()
            } else {
                ids.iter().copied().filter(|i| *i == id).collect()
            }
        }
        IcrDest::Logical(l) => ids
            .iter()
            .copied()
            .filter(|id| match mode {
                ApicMode::X2apicCluster | ApicMode::X2apicPhysical => {
                    let ldr = x2apic_ldr(*id);
                    ldr >> 16 == l >> 16 && ldr & l & 0xFFFF != 0
                }
                ApicMode::XapicFlat | ApicMode::XapicPhysical => *id < 8 && (l & 0xFF) & (1 << id) != 0,
                ApicMode::XapicCluster => {
                    let (cluster, bit) = (id / 4, 1u32 << (id % 4));
                    (l >> 4) & 0xF == cluster && l & 0xF & bit != 0
                }
            })
            .collect(),
    }
}

/// The ICR writes a guest issues to reach `targets` (sorted or not) in `mode`, grouped the way
/// Linux does it.
pub fn icr_writes(mode: ApicMode, targets: &[u32]) -> Vec<IcrDest> {
    let mut ids = targets.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let group = |per: u32, enc: &dyn Fn(u32, u32) -> u32| {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for id in &ids {
            let (c, bit) = (id / per, 1u32 << (id % per));
            match out.last_mut() {
                Some((lc, m)) if *lc == c => *m |= bit,
                _ => out.push((c, bit)),
            }
        }
        out.into_iter().map(|(c, m)| IcrDest::Logical(enc(c, m))).collect::<Vec<_>>()
    };
    match mode {
        ApicMode::X2apicPhysical | ApicMode::XapicPhysical => ids.into_iter().map(IcrDest::Physical).collect(),
        ApicMode::X2apicCluster => group(16, &|c, m| (c << 16) | m),
        ApicMode::XapicCluster => group(4, &|c, m| (c << 4) | m),
        ApicMode::XapicFlat => {
            if ids.iter().all(|i| *i < 8) {
                vec![IcrDest::Logical(ids.iter().fold(0, |m, i| m | (1 << i)))]
            } else {
                // Flat logical mode addresses at most 8 CPUs; Linux falls back to physical.
                ids.into_iter().map(IcrDest::Physical).collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldr_matches_the_formula() {
        assert_eq!(x2apic_ldr(0), 0x0000_0001);
        assert_eq!(x2apic_ldr(17), 0x0001_0002);
        assert_eq!(x2apic_ldr(79), 0x0004_8000);
    }

    #[test]
    fn multicast_write_counts_per_mode() {
        let all_but_0: Vec<u32> = (1..80).collect();
        assert_eq!(icr_writes(ApicMode::X2apicPhysical, &all_but_0).len(), 79);
        assert_eq!(icr_writes(ApicMode::X2apicCluster, &all_but_0).len(), 5);
        assert_eq!(icr_writes(ApicMode::XapicCluster, &[1, 2, 3, 4, 9]).len(), 3);
        assert_eq!(icr_writes(ApicMode::XapicFlat, &[1, 2, 7]), vec![IcrDest::Logical(0b1000_0110)]);
        assert_eq!(icr_writes(ApicMode::XapicFlat, &[1, 9]).len(), 2, "flat cannot reach ID 9");
    }

    #[test]
    fn cluster_writes_resolve_back_to_the_targets() {
        let ids: Vec<u32> = (0..80).collect();
        let targets: Vec<u32> = vec![1, 5, 16, 31, 33, 79];
        for mode in [ApicMode::X2apicCluster, ApicMode::X2apicPhysical] {
            let mut got: Vec<u32> = icr_writes(mode, &targets).into_iter().flat_map(|d| resolve(mode, d, Shorthand::None, 0, &ids)).collect();
            got.sort_unstable();
            assert_eq!(got, targets, "{mode:?}");
        }
        let xc: Vec<u32> = (0..16).collect();
        let mut got: Vec<u32> = icr_writes(ApicMode::XapicCluster, &[2, 3, 13]).into_iter().flat_map(|d| resolve(ApicMode::XapicCluster, d, Shorthand::None, 0, &xc)).collect();
        got.sort_unstable();
        assert_eq!(got, vec![2, 3, 13]);
    }

    #[test]
    fn shorthands_and_broadcast() {
        let ids = [0, 1, 2, 3];
        assert_eq!(resolve(ApicMode::X2apicPhysical, IcrDest::Physical(0), Shorthand::AllExcludingSelf, 2, &ids), vec![0, 1, 3]);
        assert_eq!(resolve(ApicMode::X2apicPhysical, IcrDest::Physical(0), Shorthand::SelfOnly, 2, &ids), vec![2]);
        assert_eq!(resolve(ApicMode::X2apicPhysical, IcrDest::Physical(u32::MAX), Shorthand::None, 2, &ids).len(), 4);
        assert_eq!(resolve(ApicMode::XapicPhysical, IcrDest::Physical(0xFF), Shorthand::None, 2, &ids).len(), 4);
        assert_eq!(resolve(ApicMode::X2apicCluster, IcrDest::Logical(0x0000_0006), Shorthand::None, 0, &ids), vec![1, 2]);
    }
}

//! KVM PV IPI (KVM_HC_SEND_IPI, hypercall 10): the guest packs destinations into 128-bit windows
//! anchored at the lowest APIC ID of the window (docs/sources.md D.5; Linux `__send_ipi_mask` in
//! `arch/x86/kernel/kvm.c`, window = 2 × BITS_PER_LONG), and the host delivers each set bit.

/// Destinations per hypercall in 64-bit mode.
pub const WINDOW: u32 = 128;

/// One hypercall: a0/a1 = `bitmap` low/high, a2 = `min` (APIC ID of bit 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendIpiCall {
    pub min: u32,
    pub bitmap: u128,
}

impl SendIpiCall {
    /// The APIC IDs this call delivers to (the host side of the hypercall).
    pub fn destinations(&self) -> impl Iterator<Item = u32> + '_ {
        (0..WINDOW).filter(|b| self.bitmap >> b & 1 == 1).map(|b| self.min + b)
    }
}

/// Pack APIC IDs in the order the guest walks its cpumask, exactly as the guest does:
/// empty window → start at id; id below min but within a window of max → shift the bitmap left
/// and lower min; id inside [min, min + window) → set it; otherwise issue the call and restart.
pub fn pack(ids: impl IntoIterator<Item = u32>) -> Vec<SendIpiCall> {
    let mut calls = Vec::new();
    let mut cur: Option<(u32, u32, u128)> = None; // (min, max, bitmap)
    for id in ids {
        let (min, max, bitmap) = match cur {
            None => (id, id, 0u128),
            Some((min, max, bm)) if id < min && max - id < WINDOW => (id, max, bm << (min - id)),
            Some((min, max, bm)) if id >= min && id < min + WINDOW => (min, max.max(id), bm),
            Some((min, _, bm)) => {
                calls.push(SendIpiCall { min, bitmap: bm });
                (id, id, 0)
            }
        };
        cur = Some((min, max, bitmap | 1u128 << (id - min)));
    }
    if let Some((min, _, bitmap)) = cur {
        calls.push(SendIpiCall { min, bitmap });
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn eighty_cpus_fit_one_call() {
        let calls = pack(1..80);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].min, 1);
        assert_eq!(calls[0].destinations().count(), 79);
    }

    #[test]
    fn id_outside_window_starts_a_new_call() {
        let calls = pack([0, 5, 127, 128, 300]);
        assert_eq!(calls.len(), 3);
        assert_eq!((calls[0].min, calls[0].bitmap), (0, 1 | 1 << 5 | 1 << 127));
        assert_eq!(calls[1].min, 128);
        assert_eq!(calls[2].min, 300);
    }

    #[test]
    fn id_below_min_shifts_the_window() {
        let calls = pack([10, 12, 4]);
        assert_eq!(calls, vec![SendIpiCall { min: 4, bitmap: 1 | 1 << 6 | 1 << 8 }]);
        // Below min but too far from max: a new call.
        let calls = pack([200, 60]);
        assert_eq!(calls.len(), 2);
    }

    proptest! {
        /// Every ID is delivered exactly once, and no call spans more than the window.
        #[test]
        fn delivers_each_id_once(ids in proptest::collection::btree_set(0u32..1000, 1..200), rev in proptest::bool::ANY) {
            let mut order: Vec<u32> = ids.iter().copied().collect();
            if rev { order.reverse(); }
            let calls = pack(order.iter().copied());
            let mut got: Vec<u32> = calls.iter().flat_map(|c| c.destinations().collect::<Vec<_>>()).collect();
            got.sort_unstable();
            prop_assert_eq!(got, ids.iter().copied().collect::<Vec<_>>());
        }
    }
}

//! APICv virtual-interrupt delivery (docs/sources.md D.3): RVI/SVI in GUEST_INTR_STATUS and the
//! EOI-exit bitmap. With APICv, a virtual EOI exits only for vectors in the bitmap (level-triggered
//! or ones the hypervisor must observe); without it, every EOI write traps.

use super::lapic::VecSet;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Apicv {
    pub enabled: bool,
    pub eoi_exit_bitmap: VecSet,
}

impl Apicv {
    /// Does the guest's EOI of `vector` cause a VM exit?
    pub fn eoi_exits(&self, vector: u8) -> bool {
        !self.enabled || self.eoi_exit_bitmap.contains(vector)
    }

    /// Virtual interrupt delivery evaluates RVI against VPPR: deliver when RVI[7:4] > VPPR[7:4].
    pub fn delivers(rvi: u8, vppr: u8) -> bool {
        rvi >> 4 > vppr >> 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eoi_exit_rules() {
        let mut a = Apicv::default();
        assert!(a.eoi_exits(0xF7), "without APICv every EOI traps");
        a.enabled = true;
        assert!(!a.eoi_exits(0xF7));
        a.eoi_exit_bitmap.set(0xF7);
        assert!(a.eoi_exits(0xF7));
        assert!(Apicv::delivers(0x51, 0x40) && !Apicv::delivers(0x4F, 0x40));
    }
}

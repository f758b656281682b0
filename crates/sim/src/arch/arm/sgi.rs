//! Software-generated interrupts (SGIs) as pure register decoding, no time inside.
//!
//! - GICv2 `GICD_SGIR` (IHI 0048B §4.3.15): bits [25:24] TargetListFilter (0 = the CPUs in
//!   CPUTargetList, 1 = all but self, 2 = self only), [23:16] CPUTargetList (one bit per CPU
//!   interface 0..7), [3:0] SGIINTID. Xen emulates the write in
//!   `xen/arch/arm/vgic-v2.c:vgic_v2_to_sgi` → `vgic.c:vgic_to_sgi`.
//! - GICv3 `ICC_SGI1R_EL1` (IHI 0069 §12.2.22 in issue H): [55:48] Aff3, [40] IRM (1 = all but
//!   self), [39:32] Aff2, [27:24] INTID, [23:16] Aff1, [15:0] TargetList (one bit per Aff0 value
//!   0..15 within Aff3.Aff2.Aff1). KVM handles the trapped write in
//!   `arch/arm64/kvm/vgic/vgic-mmio-v3.c:vgic_v3_dispatch_sgi`.
//! - KVM/arm64's default vCPU MPIDR (`arch/arm64/kvm/sys_regs.c:reset_mpidr`): Aff0 = vcpu_id
//!   bits [3:0], Aff1 = bits [11:4], Aff2 = bits [19:12] — 16 vCPUs per Aff1 group, because the
//!   ICC_SGI1R target list only covers Aff0 0..15.

/// One decoded `ICC_SGI1R_EL1` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sgi1r {
    pub intid: u8,
    /// Aff3.Aff2.Aff1 of the targets, as MPIDR bits (Aff1 at [15:8], Aff2 at [23:16], Aff3 at [39:32]).
    pub aff_upper: u64,
    pub target_list: u16,
    /// IRM: all PEs but the sender.
    pub broadcast: bool,
}

/// MPIDR affinity bits of a KVM vCPU with index `vcpu_id` (`reset_mpidr`).
pub fn kvm_default_mpidr(vcpu_id: u32) -> u64 {
    let id = vcpu_id as u64;
    (id & 0xf) | (((id >> 4) & 0xff) << 8) | (((id >> 12) & 0xff) << 16)
}

impl Sgi1r {
    /// Decode the 64-bit register value.
    pub fn decode(reg: u64) -> Self {
        let aff3 = (reg >> 48) & 0xff;
        let aff2 = (reg >> 32) & 0xff;
        let aff1 = (reg >> 16) & 0xff;
        Sgi1r { intid: ((reg >> 24) & 0xf) as u8, aff_upper: (aff3 << 32) | (aff2 << 16) | (aff1 << 8), target_list: (reg & 0xffff) as u16, broadcast: reg & (1 << 40) != 0 }
    }

    /// The value a guest writes to reach the PE with affinity `mpidr` (Linux
    /// `gic_send_sgi` for a single target).
    pub fn encode_unicast(mpidr: u64, intid: u8) -> u64 {
        let aff0 = mpidr & 0xf;
        let aff1 = (mpidr >> 8) & 0xff;
        let aff2 = (mpidr >> 16) & 0xff;
        let aff3 = (mpidr >> 32) & 0xff;
        (aff3 << 48) | (aff2 << 32) | ((intid as u64 & 0xf) << 24) | (aff1 << 16) | (1 << aff0)
    }

    /// The MPIDRs named by a non-broadcast write, lowest Aff0 first.
    pub fn target_mpidrs(&self) -> impl Iterator<Item = u64> + '_ {
        (0..16u64).filter(|a| self.target_list & (1 << a) != 0).map(|a| self.aff_upper | a)
    }
}

/// One decoded GICv2 `GICD_SGIR` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sgir {
    pub intid: u8,
    pub filter: SgirFilter,
    pub cpu_targets: u8,
}

/// `GICD_SGIR.TargetListFilter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SgirFilter {
    List,
    AllButSelf,
    SelfOnly,
    /// 0b11: reserved.
    Reserved,
}

impl Sgir {
    pub fn decode(v: u32) -> Self {
        let filter = match (v >> 24) & 3 {
            0 => SgirFilter::List,
            1 => SgirFilter::AllButSelf,
            2 => SgirFilter::SelfOnly,
            _ => SgirFilter::Reserved,
        };
        Sgir { intid: (v & 0xf) as u8, filter, cpu_targets: ((v >> 16) & 0xff) as u8 }
    }

    pub fn encode_list(targets: u8, intid: u8) -> u32 {
        ((targets as u32) << 16) | (intid as u32 & 0xf)
    }

    /// The vCPU (CPU interface) indices this write signals from `sender` in a VM of `vcpus`
    /// (at most 8: GICv2 has 8 CPU interfaces). Xen's `vgic_to_sgi` ignores targets beyond the
    /// domain's vCPUs and, for a reserved filter, signals nobody.
    pub fn targets(&self, sender: u32, vcpus: u32) -> Vec<u32> {
        let n = vcpus.min(8);
        match self.filter {
            SgirFilter::List => (0..n).filter(|i| self.cpu_targets & (1 << i) != 0).collect(),
            SgirFilter::AllButSelf => (0..n).filter(|i| *i != sender).collect(),
            SgirFilter::SelfOnly => vec![sender],
            SgirFilter::Reserved => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kvm_mpidr_puts_sixteen_vcpus_per_aff1() {
        assert_eq!(kvm_default_mpidr(0), 0);
        assert_eq!(kvm_default_mpidr(15), 0xf);
        assert_eq!(kvm_default_mpidr(16), 0x100);
        assert_eq!(kvm_default_mpidr(31), 0x10f);
        assert_eq!(kvm_default_mpidr(63), 0x30f);
    }

    #[test]
    fn sgi1r_round_trip_names_the_one_target() {
        for v in [1u32, 15, 16, 31, 63] {
            let m = kvm_default_mpidr(v);
            let d = Sgi1r::decode(Sgi1r::encode_unicast(m, 3));
            assert_eq!((d.intid, d.broadcast), (3, false));
            assert_eq!(d.target_mpidrs().collect::<Vec<_>>(), vec![m]);
        }
        assert!(Sgi1r::decode(1 << 40).broadcast);
    }

    #[test]
    fn sgir_filters() {
        let s = Sgir::decode(Sgir::encode_list(0b10, 5));
        assert_eq!((s.intid, s.targets(0, 4)), (5, vec![1]));
        assert_eq!(Sgir::decode(1 << 24).targets(2, 4), vec![0, 1, 3]);
        assert_eq!(Sgir::decode(2 << 24).targets(2, 4), vec![2]);
        assert!(Sgir::decode(3 << 24).targets(0, 4).is_empty());
        assert_eq!(Sgir::decode(Sgir::encode_list(0xff, 0)).targets(0, 4), vec![0, 1, 2, 3], "targets beyond the VM are ignored");
    }
}

//! The KVM lab's host board from `--cpu` and `--gic` (issue 42 item 3: a Neoverse-N1 class CPU
//! with GICv3 for KVM/arm64), what it cannot boot refused before anything is fetched, and what
//! ran recorded in every measured result. QEMU applies `-cpu` and `gic-version=` as given or
//! does not start, so the recorded board is the one that ran.
use std::collections::BTreeMap;

use crate::config::{Gic, KvmConfig, LabDevice};
use crate::error::LabError;
use crate::qemu::{self, Machine};

/// The host: `Machine::kvm_host` (the ITS, `-cpu max`) with `--cpu` and the SMMUv3 of `--device edu`.
pub fn host_board(k: &KvmConfig) -> Machine {
    let mut m = Machine::kvm_host(k.gic, k.icount.then(|| qemu::ICOUNT_DEFAULT.to_string()));
    if let Some(c) = k.cpu {
        m.cpu = c;
    }
    if k.device == Some(LabDevice::Edu) {
        m.iommu = Some(crate::vfio::IOMMU);
    }
    m
}

/// Refusals (exit 2): a GICv2 host (irqlab's arm64 VMM creates a vGICv3 with an ITS,
/// crates/kvm/src/arch/aarch64/vm.rs, which KVM offers only on a GICv3 host), then what QEMU
/// 7.2 cannot build (`qemu::check_board`: GICv4.1).
pub fn check(k: &KvmConfig) -> Result<(), LabError> {
    if k.gic == Gic::V2 {
        return Err(LabError::Usage(
            "--gic v2: irqlab's arm64 VMM creates a vGICv3 and an ITS (KVM_DEV_TYPE_ARM_VGIC_V3, crates/kvm/src/arch/aarch64/vm.rs), which KVM offers only on a GICv3 or later host; \
             the GICv2 board is the Xen mode's (xen --cpu cortex-a53 --gic 2)"
                .into(),
        ));
    }
    qemu::check_board(&host_board(k), "the KVM host (MSIs as LPIs)")?;
    Ok(())
}

/// What a measured result's platform records of the board.
pub fn record(k: &KvmConfig) -> BTreeMap<String, String> {
    let m = host_board(k);
    BTreeMap::from([("machine".to_string(), m.describe()), ("lab.cpu".to_string(), m.cpu.qemu_name().to_string()), ("lab.gic".to_string(), m.gic.name().to_string())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Cpu;

    #[test]
    fn the_host_board_is_the_one_asked_for() {
        let k = KvmConfig { cpu: Some(Cpu::NeoverseN1), gic: Gic::V3, ..KvmConfig::default() };
        assert!(check(&k).is_ok());
        let r = record(&k);
        assert_eq!((r["lab.cpu"].as_str(), r["lab.gic"].as_str()), ("neoverse-n1", "v3"));
        assert_eq!(r["machine"], "QEMU virt, GICv3 (ITS), neoverse-n1, 2 CPUs, TCG");
        assert_eq!(host_board(&KvmConfig::default()).cpu, Cpu::Max);
    }

    #[test]
    fn what_the_kvm_lab_cannot_boot_is_refused_naming_why() {
        let e = check(&KvmConfig { gic: Gic::V2, ..KvmConfig::default() }).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("vGICv3"), "{e}");
        let e = check(&KvmConfig { gic: Gic::V4_1, ..KvmConfig::default() }).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("QEMU 7.2 emulates GICv4.0"), "{e}");
    }
}

//! The timed model's window on the functional GICv4.1 model ([`KvmGicV4`] over
//! [`crate::arch::arm::gicv4::GicSystem`]): every delivery decision comes from it, and every
//! vPE context switch of the Xen core is applied to it, so the two cannot drift apart unnoticed.
//!
//! Setup (docs/sources.md B.1, Linux `its_vlpi_map` order): boot the GIC (MAPC + INVALL per
//! CPU), one vPE per dom0 vCPU (redistributor = its pCPU), the NVMe device's MSIs as physical
//! LPIs (event v → LPI 8192 + v in collection v), then each job's event forwarded as vLPI
//! 8192 + v of vPE v (VMAPP + VINVALL, DISCARD, VMAPTI). At run time:
//! - context switch in → `make_resident` (GICR_VPENDBASER Valid, Dirty poll, B.2);
//! - context switch out → `make_non_resident`, with DB when the vCPU blocks in WFI (v4.1);
//! - device MSI → `deliver` → [`VlpiRoute`] (B.4): resident → direct; out with DB → doorbell;
//!   out without DB → recorded in the VPT; already pending → merged.
use crate::arch::arm::gicv4::{Effect, GicConfig, KvmGicV4, Outcome};
use results::vocab::Gic;

/// The NVMe controller's DeviceID on the ITS.
const DEVICE: u32 = 1;
/// First LPI INTID (docs/sources.md A.4): event / vLPI of vCPU v is LPI_BASE + v.
pub const LPI_BASE: u32 = 8192;

/// What the GIC did with a device MSI for a job's vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VlpiRoute {
    /// Delivered straight to the resident vPE: no hypervisor.
    Direct,
    /// VPT bit set and the vPE's doorbell raised as a physical LPI at its redistributor.
    Doorbell,
    /// VPT bit set only; taken when the vPE is next made resident.
    PendingInVpt,
    /// The vLPI was already pending (edge merged).
    AlreadyPending,
}

/// The functional GIC, driven by the timed model.
pub struct Gicv4 {
    kvm: KvmGicV4,
    /// UNPREDICTABLE uses / errors the functional model reported (must stay 0).
    pub violations: u64,
    /// ITS commands issued after setup (v4.1 residency changes need none).
    pub commands: u64,
    /// Effects that were neither a delivery decision nor expected (must stay 0).
    pub unexpected: u64,
}

impl Gicv4 {
    /// A GICv4.1 with `cpus` redistributors; vPEs for every vCPU; `jobs` vCPUs get a vLPI.
    pub fn new(cpus: usize, jobs: impl Iterator<Item = usize>) -> Gicv4 {
        let config = GicConfig { version: Gic::V4_1, cpus: cpus as u16, ..GicConfig::default() };
        let (kvm, boot) = KvmGicV4::boot(config);
        let mut g = Gicv4 { kvm, violations: 0, commands: 0, unexpected: 0 };
        g.tally(&boot);
        for v in 0..cpus as u16 {
            // 14 vINTID bits (the minimum; vLPIs 8192 + v fit): the Dirty-poll scan of the VPT stays small.
            g.kvm.add_vpe(v, v, 14);
        }
        let o = g.kvm.map_device_lpis(0, DEVICE, cpus as u32, LPI_BASE, 0);
        g.tally(&o);
        for v in jobs {
            let o = g.kvm.map_vlpi(0, DEVICE, v as u32, v as u16, LPI_BASE + v as u32);
            g.tally(&o);
        }
        g.commands = 0;
        g
    }

    fn tally(&mut self, o: &Outcome) {
        self.violations += o.violations.len() as u64 + o.commands.iter().map(|c| c.violations.len() as u64).sum::<u64>();
        self.commands += o.commands.len() as u64;
    }

    /// The Xen core switched vCPU `v` in on pCPU `v` (VPENDBASER.Valid + Dirty poll).
    pub fn schedule_in(&mut self, v: usize) {
        let o = self.kvm.make_resident(v as u16, v as u16);
        self.tally(&o);
    }

    /// The Xen core switched `v` out; `blocking`: it blocked in WFI (DB = 1).
    pub fn schedule_out(&mut self, v: usize, blocking: bool) {
        let o = self.kvm.make_non_resident(v as u16, blocking);
        self.tally(&o);
    }

    /// The device wrote vCPU `v`'s MSI to GITS_TRANSLATER.
    pub fn msi(&mut self, v: usize) -> VlpiRoute {
        match self.kvm.deliver(0, DEVICE, v as u32) {
            Effect::VlpiToResident { enabled: true, .. } => VlpiRoute::Direct,
            Effect::Doorbell { .. } => VlpiRoute::Doorbell,
            Effect::VlpiRecorded { .. } => VlpiRoute::PendingInVpt,
            Effect::AlreadyPending { .. } => VlpiRoute::AlreadyPending,
            _ => {
                self.unexpected += 1;
                VlpiRoute::AlreadyPending
            }
        }
    }

    /// The guest acknowledged vCPU `v`'s vLPI.
    pub fn ack_vlpi(&mut self, v: usize) {
        self.kvm.ack_vlpi(v as u16, LPI_BASE + v as u32);
    }

    /// Xen handled vPE `v`'s doorbell LPI at its redistributor.
    pub fn ack_doorbell(&mut self, v: usize) {
        if let Some(dv) = self.kvm.vpes.get(&(v as u16)).copied() {
            self.kvm.ack_lpi(dv.rd, dv.doorbell);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residency_decides_the_route() {
        let mut g = Gicv4::new(4, 1..3);
        g.schedule_in(1);
        assert_eq!(g.msi(1), VlpiRoute::Direct);
        assert_eq!(g.msi(1), VlpiRoute::AlreadyPending, "not acknowledged yet");
        g.ack_vlpi(1);
        // Blocking in WFI: DB set, the next vLPI rings the doorbell (once).
        g.schedule_out(1, true);
        assert_eq!(g.msi(1), VlpiRoute::Doorbell);
        g.ack_doorbell(1);
        g.schedule_in(1);
        g.ack_vlpi(1);
        // Preempted while runnable: no doorbell, the vLPI waits in the VPT.
        g.schedule_out(1, false);
        assert_eq!(g.msi(1), VlpiRoute::PendingInVpt);
        g.schedule_in(2);
        assert_eq!(g.msi(2), VlpiRoute::Direct);
        assert_eq!((g.violations, g.unexpected, g.commands), (0, 0, 0), "v4.1 residency issues no ITS command");
    }
}

//! An assigned platform device's interrupt on KVM/Arm (VFIO platform + irqfd), as a pure state
//! machine: the device's physical line, the GIC's state for that SPI, VFIO's mask, the irqfd /
//! resampler, and the vCPU's list registers. Three completion paths (docs/sources.md C, S4):
//!
//! - [`IrqPath::Resample`] — level IRQ through irqfd + resamplefd (Linux "KVM: Add resampling
//!   irqfds for level triggered interrupts", 2012; VFIO's virqfd unmask handler). The host takes
//!   the physical IRQ, VFIO **masks** the line (`disable_irq_nosync`) and EOIs it, signals the
//!   irqfd eventfd; KVM writes an LR with HW = 0 and the **EOI bit**. The guest's EOI raises the
//!   maintenance interrupt (**an exit**); KVM's ack notifier de-asserts the virtual line and
//!   signals the resamplefd; VFIO **unmasks** — and if the device still asserts its line the
//!   physical IRQ fires again at once.
//! - [`IrqPath::Forwarded`] — the HW bit (`Documentation/virtual/kvm/arm/vgic-mapped-irqs.txt`):
//!   the host runs EOImode = 1, so its EOI only drops the running priority and the SPI stays
//!   **active** (a level line cannot re-fire). KVM writes an LR with HW = 1 and the pINTID; the
//!   guest's deactivation deactivates the physical SPI in the GIC. No mask, no unmask, no exit at
//!   completion. If the line is still high at that moment the SPI becomes pending again.
//! - [`IrqPath::Edge`] — contrast: an edge (MSI-like) interrupt needs no completion handshake;
//!   the host acks and EOIs, the irqfd injects with HW = 0 and no EOI bit.
//!
//! Inputs are the events; outputs are [`Effect`]s in the order they happen, which the timed model
//! (`models::kvm_arm_fwd`) charges time for. Nothing here knows about time.
use crate::arch::arm::list_registers::{EoiEffect, InjectOutcome, LrFile};
use results::vocab::Gic;

/// How the assigned interrupt is delivered to the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqPath {
    Resample,
    Forwarded,
    Edge,
}

/// The physical SPI's state in the GIC distributor (GICv2 §3.2 state machine, no pending+active:
/// a level SPI that is active cannot become pending until deactivated, which is all we need).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhysState {
    Inactive,
    Pending,
    Active,
}

/// Something that happened outside the guest, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The physical SPI was signalled to the host CPU (the host must take it).
    PhysFires,
    /// The host acknowledged the SPI (GICC_IAR): it is active.
    HostAck,
    /// VFIO masked the line (`disable_irq_nosync`, a distributor ICENABLER write).
    VfioMask,
    /// The host's EOI deactivated the SPI (EOImode = 0, or EOIR + DIR).
    HostEoi,
    /// EOImode = 1: the host's EOI only dropped the running priority; the SPI stays active.
    PriorityDrop,
    /// VFIO signalled the irqfd eventfd and KVM's irqfd wake-up asserted the virtual line.
    IrqfdSignal,
    /// KVM wrote the virtual interrupt into a list register (`hw`: HW = 1 with the pINTID).
    LrInject { hw: bool, eoi_maintenance: bool },
    /// The guest's EOI deactivated the physical SPI through the HW bit (no exit).
    GicDeactivate,
    /// The guest's EOI raised the maintenance interrupt: an exit to the host.
    MaintenanceExit,
    /// KVM's ack notifier de-asserted the virtual line and signalled the resamplefd.
    ResampleSignal,
    /// VFIO's resamplefd handler unmasked the line (ISENABLER write).
    VfioUnmask,
}

/// Errors from driving the state machine out of order (model bugs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignedIrqError {
    /// The host was asked to handle an SPI that is not pending.
    #[error("host handles SPI {0}, which is not pending")]
    NotPending(u32),
    /// The guest acknowledged but no virtual interrupt was pending in its list registers.
    #[error("guest acknowledge found no pending virtual interrupt")]
    Spurious,
    /// The guest EOI'd an interrupt the list registers do not hold as active.
    #[error("guest EOI: {0}")]
    Eoi(String),
    /// The list registers were full (a single-device model never fills four LRs).
    #[error("no free list register for vINTID {0}")]
    NoLr(u32),
}

/// Counts of the mechanism's steps since creation (what the exit counter is built from).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub phys_fires: u64,
    pub vfio_masks: u64,
    pub vfio_unmasks: u64,
    pub irqfd_signals: u64,
    pub resample_signals: u64,
    pub maintenance_exits: u64,
    pub gic_deactivations: u64,
    /// Physical fires caused by a still-asserted line at unmask / deactivation.
    pub refires: u64,
}

/// One assigned interrupt line routed to one vCPU.
#[derive(Debug, Clone)]
pub struct AssignedIrq {
    pub path: IrqPath,
    pub pintid: u32,
    pub vintid: u32,
    /// The device's output (level). For `Edge` it is the pulse that triggers the SPI.
    line: bool,
    phys: PhysState,
    /// VFIO's mask (the SPI disabled at the distributor).
    masked: bool,
    /// KVM's virtual line level (irqfd asserted, resampler not yet run).
    virt_line: bool,
    lrs: LrFile,
    pub counts: Counts,
}

impl AssignedIrq {
    /// `pintid` routed to the guest as `vintid`; `lrs` list registers (GIC-400: 4).
    pub fn new(path: IrqPath, pintid: u32, vintid: u32, gic: Gic, lrs: usize) -> AssignedIrq {
        AssignedIrq { path, pintid, vintid, line: false, phys: PhysState::Inactive, masked: false, virt_line: false, lrs: LrFile::new(gic, lrs), counts: Counts::default() }
    }

    pub fn phys_state(&self) -> PhysState {
        self.phys
    }
    pub fn masked(&self) -> bool {
        self.masked
    }
    pub fn line(&self) -> bool {
        self.line
    }
    pub fn lrs(&self) -> &LrFile {
        &self.lrs
    }

    /// The SPI becomes pending if the line is high, it is enabled and not active (level
    /// sensitivity: the GIC samples the line; GICv2 §3.2.4).
    fn sample(&mut self, out: &mut Vec<Effect>) -> bool {
        if self.line && !self.masked && self.phys == PhysState::Inactive {
            self.phys = PhysState::Pending;
            self.counts.phys_fires += 1;
            out.push(Effect::PhysFires);
            return true;
        }
        false
    }

    /// The device raises its interrupt output.
    pub fn device_assert(&mut self) -> Vec<Effect> {
        let mut out = Vec::new();
        self.line = true;
        self.sample(&mut out);
        if self.path == IrqPath::Edge {
            // A pulse: the edge is latched by the GIC, the line itself does not stay high.
            self.line = false;
        }
        out
    }

    /// The device drops its output (the guest driver cleared the status, xgmac W1C of DMA_STATUS).
    /// A pending-but-not-taken level SPI stops being pending.
    pub fn device_deassert(&mut self) {
        self.line = false;
        if self.phys == PhysState::Pending && self.path != IrqPath::Edge {
            self.phys = PhysState::Inactive;
        }
    }

    /// The host takes the physical SPI (its CPU left the guest or woke from idle for it) and runs
    /// VFIO's handler and the irqfd path up to the list-register write.
    pub fn host_handle(&mut self) -> Result<Vec<Effect>, AssignedIrqError> {
        if self.phys != PhysState::Pending {
            return Err(AssignedIrqError::NotPending(self.pintid));
        }
        self.phys = PhysState::Active;
        let mut out = vec![Effect::HostAck];
        let (hw, eoi_bit) = match self.path {
            IrqPath::Resample => {
                self.masked = true;
                self.counts.vfio_masks += 1;
                out.push(Effect::VfioMask);
                self.phys = PhysState::Inactive;
                out.push(Effect::HostEoi);
                (None, true)
            }
            IrqPath::Forwarded => {
                out.push(Effect::PriorityDrop);
                (Some(self.pintid), false)
            }
            IrqPath::Edge => {
                self.phys = PhysState::Inactive;
                out.push(Effect::HostEoi);
                (None, false)
            }
        };
        self.counts.irqfd_signals += 1;
        out.push(Effect::IrqfdSignal);
        self.virt_line = self.path == IrqPath::Resample;
        match self.lrs.inject(self.vintid, 0xa0, hw, eoi_bit) {
            InjectOutcome::Written(_) => out.push(Effect::LrInject { hw: hw.is_some(), eoi_maintenance: eoi_bit }),
            InjectOutcome::Coalesced(_) | InjectOutcome::PendingActive(_) => {}
            InjectOutcome::Queued => return Err(AssignedIrqError::NoLr(self.vintid)),
        }
        // A stale edge re-latched while we handled it (edge only) would sample here.
        self.sample(&mut out);
        Ok(out)
    }

    /// The guest reads IAR (no exit): returns the vINTID.
    pub fn guest_ack(&mut self) -> Result<u32, AssignedIrqError> {
        self.lrs.guest_ack().ok_or(AssignedIrqError::Spurious)
    }

    /// The guest writes EOIR (EOImode 0: drop + deactivate). No exit by itself; see the effects.
    pub fn guest_eoi(&mut self) -> Result<Vec<Effect>, AssignedIrqError> {
        let effects = self.lrs.guest_eoi(self.vintid).map_err(|e| AssignedIrqError::Eoi(e.to_string()))?;
        let mut out = Vec::new();
        for e in effects {
            match e {
                EoiEffect::DeactivatePhysical(p) if p == self.pintid => {
                    self.phys = PhysState::Inactive;
                    self.counts.gic_deactivations += 1;
                    out.push(Effect::GicDeactivate);
                    if self.sample(&mut out) {
                        self.counts.refires += 1;
                    }
                }
                EoiEffect::DeactivatePhysical(p) => return Err(AssignedIrqError::Eoi(format!("HW LR carried pINTID {p}, expected {}", self.pintid))),
                EoiEffect::Maintenance(m) if m.eoi => {
                    self.counts.maintenance_exits += 1;
                    out.push(Effect::MaintenanceExit);
                }
                EoiEffect::Maintenance(_) => {}
            }
        }
        Ok(out)
    }

    /// The host handles the maintenance interrupt (after [`Effect::MaintenanceExit`]): clear the
    /// EOI status, run the ack notifier (resampler), and let VFIO unmask. Returns the effects;
    /// [`Effect::PhysFires`] at the end means the still-asserted line fired again.
    pub fn maintenance(&mut self) -> Vec<Effect> {
        self.lrs.maintenance();
        let mut out = Vec::new();
        if self.path == IrqPath::Resample && self.virt_line {
            self.virt_line = false;
            self.counts.resample_signals += 1;
            out.push(Effect::ResampleSignal);
            self.masked = false;
            self.counts.vfio_unmasks += 1;
            out.push(Effect::VfioUnmask);
            if self.sample(&mut out) {
                self.counts.refires += 1;
            }
        }
        out
    }

    /// Invariants: HW LRs never pending+active; a masked line only on the resample path while the
    /// virtual line is asserted; a forwarded SPI active exactly while its LR is valid.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.lrs.check_invariants()?;
        if self.masked && !(self.path == IrqPath::Resample && self.virt_line) {
            return Err("line masked outside the resample window".into());
        }
        if self.path == IrqPath::Forwarded {
            let in_lr = self.lrs.valid_count() > 0;
            if in_lr != (self.phys == PhysState::Active) {
                return Err(format!("forwarded SPI {:?} but LR valid = {in_lr}", self.phys));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Effect::*;

    fn irq(path: IrqPath) -> AssignedIrq {
        AssignedIrq::new(path, 80, 80, Gic::V2, 4)
    }

    /// Drive one interrupt through; the driver clears the device status in its handler unless
    /// `still_asserted`. Returns every effect in order.
    fn one(a: &mut AssignedIrq, still_asserted: bool) -> Vec<Effect> {
        let mut all = a.device_assert();
        all.extend(a.host_handle().unwrap());
        assert_eq!(a.guest_ack().unwrap(), 80);
        if !still_asserted {
            a.device_deassert();
        }
        let eoi = a.guest_eoi().unwrap();
        let maint = eoi.contains(&MaintenanceExit);
        all.extend(eoi);
        if maint {
            all.extend(a.maintenance());
        }
        a.check_invariants().unwrap();
        all
    }

    #[test]
    fn resample_completion_is_an_exit_and_a_mask_unmask() {
        let mut a = irq(IrqPath::Resample);
        let e = one(&mut a, false);
        assert_eq!(e, vec![PhysFires, HostAck, VfioMask, HostEoi, IrqfdSignal, LrInject { hw: false, eoi_maintenance: true }, MaintenanceExit, ResampleSignal, VfioUnmask]);
        assert_eq!((a.counts.maintenance_exits, a.counts.vfio_masks, a.counts.vfio_unmasks), (1, 1, 1));
        assert!(!a.masked());
        assert_eq!(a.phys_state(), PhysState::Inactive);
    }

    #[test]
    fn forwarded_completion_has_no_exit_and_no_mask() {
        let mut a = irq(IrqPath::Forwarded);
        let e = one(&mut a, false);
        assert_eq!(e, vec![PhysFires, HostAck, PriorityDrop, IrqfdSignal, LrInject { hw: true, eoi_maintenance: false }, GicDeactivate]);
        assert_eq!(a.counts.maintenance_exits, 0);
        assert_eq!(a.counts.vfio_masks + a.counts.vfio_unmasks, 0);
        assert_eq!(a.counts.gic_deactivations, 1);
    }

    #[test]
    fn forwarded_spi_stays_active_until_guest_deactivates() {
        let mut a = irq(IrqPath::Forwarded);
        a.device_assert();
        a.host_handle().unwrap();
        assert_eq!(a.phys_state(), PhysState::Active, "EOImode 1: priority drop only");
        // The line is still high but an active level SPI cannot fire again.
        assert_eq!(a.device_assert(), vec![]);
        a.guest_ack().unwrap();
        a.check_invariants().unwrap();
        let e = a.guest_eoi().unwrap();
        assert_eq!(e, vec![GicDeactivate, PhysFires], "deactivation with the line high re-fires");
        assert_eq!(a.counts.refires, 1);
    }

    #[test]
    fn resample_still_asserted_line_refires_after_unmask() {
        let mut a = irq(IrqPath::Resample);
        a.device_assert();
        a.host_handle().unwrap();
        assert!(a.masked());
        // Masked: the line staying high does not reach the CPU.
        assert_eq!(a.device_assert(), vec![]);
        a.guest_ack().unwrap();
        assert_eq!(a.guest_eoi().unwrap(), vec![MaintenanceExit]);
        assert_eq!(a.maintenance(), vec![ResampleSignal, VfioUnmask, PhysFires]);
        assert_eq!(a.counts.refires, 1);
        assert_eq!(a.phys_state(), PhysState::Pending);
        // And the re-fire goes round again.
        let again = a.host_handle().unwrap();
        assert!(again.contains(&VfioMask));
    }

    #[test]
    fn deasserted_line_does_not_refire() {
        for path in [IrqPath::Resample, IrqPath::Forwarded] {
            let mut a = irq(path);
            let e = one(&mut a, false);
            assert_eq!(e.iter().filter(|x| **x == PhysFires).count(), 1, "{path:?}");
            assert_eq!(a.counts.refires, 0);
        }
    }

    #[test]
    fn edge_needs_no_completion_handshake() {
        let mut a = irq(IrqPath::Edge);
        let e = one(&mut a, true);
        assert_eq!(e, vec![PhysFires, HostAck, HostEoi, IrqfdSignal, LrInject { hw: false, eoi_maintenance: false }]);
        assert!(!a.line(), "an edge does not stay asserted");
        // A second edge while the first is still active in the guest becomes pending+active.
        a.device_assert();
        a.host_handle().unwrap();
        a.guest_ack().unwrap();
        a.device_assert();
        a.host_handle().unwrap();
        assert_eq!(a.guest_eoi().unwrap(), vec![]);
        assert_eq!(a.guest_ack().unwrap(), 80, "the second edge is delivered after the first EOI");
    }

    #[test]
    fn out_of_order_is_an_error() {
        let mut a = irq(IrqPath::Forwarded);
        assert_eq!(a.host_handle(), Err(AssignedIrqError::NotPending(80)));
        assert_eq!(a.guest_ack(), Err(AssignedIrqError::Spurious));
        assert!(a.guest_eoi().is_err());
    }

    #[test]
    fn many_rounds_keep_counts_per_interrupt() {
        for (path, exits, masks) in [(IrqPath::Resample, 1, 1), (IrqPath::Forwarded, 0, 0), (IrqPath::Edge, 0, 0)] {
            let mut a = irq(path);
            for _ in 0..10 {
                one(&mut a, false);
            }
            assert_eq!(a.counts.phys_fires, 10);
            assert_eq!(a.counts.maintenance_exits, 10 * exits, "{path:?}");
            assert_eq!(a.counts.vfio_masks, 10 * masks);
            assert_eq!(a.counts.vfio_unmasks, 10 * masks);
        }
    }
}

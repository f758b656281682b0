//! One NIC interrupt on the node under test, from the device asserting its line to the end of the
//! driver's hard-IRQ handler, as costed segments. The guest paths drive the functional
//! [`AssignedIrq`] and charge a segment for each [`Effect`] it reports, so which exits and eventfd
//! hops an interrupt pays comes from the mechanism, not from this file:
//!
//! | path | segments (vCPU blocked in WFI, host idle) |
//! |---|---|
//! | native | idle-wakeup → irq-entry → gic-ack → nic-irq-handler → gic-eoi |
//! | resample | idle-wakeup → irq-entry → gic-ack → vfio-mask → gic-eoi → irqfd-inject → vcpu-wakeup → world-switch-in → guest-gic-ack → nic-irq-handler → guest-gic-eoi → maintenance-exit → vgic-maintenance → resamplefd-signal → vfio-unmask → world-switch-in |
//! | forwarded | idle-wakeup → irq-entry → gic-ack → priority-drop → irqfd-inject → vcpu-wakeup → world-switch-in → guest-gic-ack → nic-irq-handler → guest-gic-eoi (GIC deactivates the SPI) |
//! | edge | as forwarded, with a full host EOI and no HW bit |
//!
//! With the vCPU running instead of blocked, `idle-wakeup` and `vcpu-wakeup` give way to
//! `irq-exit` (the physical IRQ forces a world switch out).
use super::Costs;
use crate::engine::{CostDist, SimTime};
use crate::hyp::assigned_irq::{AssignedIrq, Effect, IrqPath};
use crate::model::SimError;
use results::vocab::Gic;

/// `hypervisor.irq_path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Path {
    /// No hypervisor: the node runs Linux on the metal.
    Native,
    /// Level IRQ through irqfd + resamplefd (VFIO masks, maintenance exit, unmask).
    Resample,
    /// Forwarded IRQ: HW bit in the list register.
    Forwarded,
    /// Contrast: an edge / MSI-like interrupt through irqfd (no completion handshake).
    Edge,
}

impl Path {
    pub fn as_str(self) -> &'static str {
        match self {
            Path::Native => "native",
            Path::Resample => "resample",
            Path::Forwarded => "forwarded",
            Path::Edge => "edge",
        }
    }

    /// The guest's assigned-IRQ state for this path (None: native, no hypervisor). The xgmac SPI
    /// and the guest's vINTID: any SPI works; 80 keeps them clear of SGIs and PPIs.
    pub fn assigned_irq(self, list_registers: usize) -> Option<AssignedIrq> {
        let ip = match self {
            Path::Native => return None,
            Path::Resample => IrqPath::Resample,
            Path::Forwarded => IrqPath::Forwarded,
            Path::Edge => IrqPath::Edge,
        };
        Some(AssignedIrq::new(ip, 80, 80, Gic::V2, list_registers))
    }
}

/// Where the node's CPU is when the interrupt arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuAt {
    /// Executing (native code, or the guest in guest mode).
    Running,
    /// Idle: native in WFI, or the vCPU blocked after a trapped WFI with the host in WFI.
    Idle,
    /// The vCPU is blocked but the host is still finishing a path (no idle wake-up to pay).
    HostBusy,
}

/// What one interrupt cost besides time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IrqOutcome {
    /// Exits caused: a physical IRQ while the guest ran, and the maintenance interrupt.
    pub irq_exits: u64,
    pub maintenance_exits: u64,
    /// Offset from the line's assertion to the driver's handler start.
    pub to_handler: SimTime,
    /// The line fired again at completion (a still-asserted level line).
    pub refired: bool,
}

/// Charges one segment: returns its duration (sampled for a simulation, the mean for the
/// analytic stream model) and records it wherever the caller wants.
pub type Charge<'a> = dyn FnMut(&'static str, &CostDist) -> SimTime + 'a;

/// Run one interrupt through `path`. `irq` is the node's assigned-IRQ state (None for native).
pub fn interrupt(path: Path, at: CpuAt, irq: Option<&mut AssignedIrq>, c: &Costs, charge: &mut Charge) -> Result<IrqOutcome, SimError> {
    let mut out = IrqOutcome::default();
    let mut t = SimTime::ZERO;
    let mut seg = |name: &'static str, d: &CostDist, t: &mut SimTime| *t += charge(name, d);
    let Some(a) = irq else {
        if at == CpuAt::Idle {
            seg("idle-wakeup", &c.idle_wakeup, &mut t);
        }
        seg("irq-entry", &c.irq_entry, &mut t);
        seg("gic-ack", &c.gic_ack, &mut t);
        out.to_handler = t;
        seg("nic-irq-handler", &c.nic_irq_handler, &mut t);
        seg("gic-eoi", &c.gic_eoi, &mut t);
        return Ok(out);
    };
    let err = |e: crate::hyp::assigned_irq::AssignedIrqError| SimError(format!("assigned IRQ ({}): {e}", path.as_str()));
    if !a.device_assert().contains(&Effect::PhysFires) {
        return Err(SimError(format!("{}: the NIC's SPI did not fire (masked or still active)", path.as_str())));
    }
    match at {
        CpuAt::Running => {
            out.irq_exits += 1;
            seg("irq-exit", &c.world_switch_out, &mut t);
        }
        CpuAt::Idle => seg("idle-wakeup", &c.idle_wakeup, &mut t),
        CpuAt::HostBusy => {}
    }
    seg("irq-entry", &c.irq_entry, &mut t);
    for e in a.host_handle().map_err(err)? {
        match e {
            Effect::HostAck => seg("gic-ack", &c.gic_ack, &mut t),
            Effect::VfioMask => seg("vfio-mask", &c.vfio_mask, &mut t),
            Effect::HostEoi => seg("gic-eoi", &c.gic_eoi, &mut t),
            Effect::PriorityDrop => seg("priority-drop", &c.gic_eoi, &mut t),
            Effect::IrqfdSignal => seg("irqfd-inject", &c.irqfd_inject, &mut t),
            // The LR is written as part of restoring the VGIC on entry.
            _ => {}
        }
    }
    if at != CpuAt::Running {
        seg("vcpu-wakeup", &c.vcpu_wakeup, &mut t);
    }
    seg("world-switch-in", &c.world_switch_in, &mut t);
    a.guest_ack().map_err(err)?;
    seg("guest-gic-ack", &c.gic_ack, &mut t);
    out.to_handler = t;
    seg("nic-irq-handler", &c.nic_irq_handler, &mut t);
    // xgmac_interrupt clears DMA_STATUS (W1C) and masks RI: the line drops before the EOI.
    a.device_deassert();
    seg("guest-gic-eoi", &c.gic_eoi, &mut t);
    let mut effects = a.guest_eoi().map_err(err)?;
    if effects.contains(&Effect::MaintenanceExit) {
        out.maintenance_exits += 1;
        seg("maintenance-exit", &c.world_switch_out, &mut t);
        seg("vgic-maintenance", &c.vgic_maintenance, &mut t);
        let m = a.maintenance();
        for e in &m {
            match e {
                Effect::ResampleSignal => seg("resamplefd-signal", &c.resamplefd_signal, &mut t),
                Effect::VfioUnmask => seg("vfio-unmask", &c.vfio_unmask, &mut t),
                _ => {}
            }
        }
        seg("world-switch-in", &c.world_switch_in, &mut t);
        effects.extend(m);
    }
    out.refired = effects.contains(&Effect::PhysFires);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    fn costs() -> Costs {
        Costs::from_platform(&Platform::shipped("calxeda-midway").unwrap(), "test").unwrap()
    }

    /// Run one interrupt with mean costs; returns the outcome and the segment names in order.
    fn run(path: Path, at: CpuAt) -> (IrqOutcome, Vec<&'static str>, SimTime) {
        let c = costs();
        let mut irq = path.assigned_irq(4);
        let mut names = Vec::new();
        let mut total = SimTime::ZERO;
        let mut charge = |n: &'static str, d: &CostDist| {
            names.push(n);
            let x = SimTime::from_ns_f64(d.mean_ns());
            total += x;
            x
        };
        let o = interrupt(path, at, irq.as_mut(), &c, &mut charge).unwrap();
        // The functional state is back to quiescent after every path.
        if let Some(a) = &irq {
            a.check_invariants().unwrap();
            assert!(!a.masked());
        }
        (o, names, total)
    }

    #[test]
    fn resample_pays_the_maintenance_round_trip_forwarded_does_not() {
        let (r, rn, rt) = run(Path::Resample, CpuAt::Idle);
        let (f, fn_, ft) = run(Path::Forwarded, CpuAt::Idle);
        assert_eq!((r.maintenance_exits, f.maintenance_exits), (1, 0));
        let after_eoi: Vec<_> = rn.iter().skip_while(|n| **n != "guest-gic-eoi").skip(1).copied().collect();
        assert_eq!(after_eoi, ["maintenance-exit", "vgic-maintenance", "resamplefd-signal", "vfio-unmask", "world-switch-in"]);
        assert_eq!(fn_.last(), Some(&"guest-gic-eoi"), "forwarded: nothing after the guest's EOI");
        assert!(rn.contains(&"vfio-mask") && !fn_.contains(&"vfio-mask"));
        assert!(fn_.contains(&"priority-drop"));
        // Same delivery to the handler apart from mask vs priority drop; resample costs more after.
        assert!(rt > ft);
        assert!(r.to_handler >= f.to_handler);
    }

    #[test]
    fn running_vcpu_exits_blocked_vcpu_is_woken() {
        let (o, names, _) = run(Path::Forwarded, CpuAt::Running);
        assert_eq!(o.irq_exits, 1);
        assert_eq!(names[0], "irq-exit");
        assert!(!names.contains(&"vcpu-wakeup") && !names.contains(&"idle-wakeup"));
        let (o, names, _) = run(Path::Forwarded, CpuAt::HostBusy);
        assert_eq!(o.irq_exits, 0);
        assert!(names.contains(&"vcpu-wakeup") && !names.contains(&"idle-wakeup"));
    }

    #[test]
    fn native_has_no_hypervisor_segments() {
        let (o, names, _) = run(Path::Native, CpuAt::Idle);
        assert_eq!(names, ["idle-wakeup", "irq-entry", "gic-ack", "nic-irq-handler", "gic-eoi"]);
        assert_eq!(o.irq_exits + o.maintenance_exits, 0);
        let (_, names, _) = run(Path::Native, CpuAt::Running);
        assert_eq!(names[0], "irq-entry");
    }

    #[test]
    fn edge_completes_like_forwarded() {
        let (e, en, _) = run(Path::Edge, CpuAt::Idle);
        assert_eq!(e.maintenance_exits, 0);
        assert_eq!(en.last(), Some(&"guest-gic-eoi"));
        assert!(en.contains(&"gic-eoi") && !en.contains(&"priority-drop"));
    }
}

//! Arm: GIC distributor/redistributor, list registers, ITS, GICv4 vPEs, generic timer.
//!
//! - [`list_registers`]: the GIC virtual CPU interface (GICv2 `GICH_LR`, GICv3 `ICH_LR<n>_EL2`):
//!   injection, guest ack/EOI without exits, HW-bit deactivation, maintenance interrupts.
//! - [`generic_timer`]: the EL1 physical/virtual timers and how a hypervisor forwards them.
//! - [`its`]: the GICv3 ITS with the GICv4 virtual commands (command queue, tables, translation).
//! - [`sgi`]: SGI generation registers (GICv2 `GICD_SGIR`, GICv3 `ICC_SGI1R_EL1`) and KVM's
//!   default vCPU MPIDR.
//! - [`gicv4`]: redistributors, vPE residency, doorbells, and the KVM driver model over them.

pub mod generic_timer;
pub mod gicv4;
pub mod its;
pub mod list_registers;
pub mod sgi;

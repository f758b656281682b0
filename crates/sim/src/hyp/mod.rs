//! Hypervisor policies over the mechanisms: scheduling, idle (WFI/HLT) handling, injection paths.
//!
//! - [`scheduler`]: Xen-like null / credit2-like / RTDS-like runqueues (one per pCPU, vCPUs pinned).
//! - [`vwfi`]: WFI/WFE trapping policy `trap | native | adaptive` and the adaptive switching rule.
//! - [`assigned_irq`]: an assigned device's interrupt through VFIO + irqfd: resamplefd (mask,
//!   maintenance exit, unmask) versus HW-bit forwarding versus edge.
//! - [`halt_poll`]: KVM host-side halt polling (per-vCPU window, grow/shrink, defaults by kernel).
//! - [`masked_windows`]: a pCPU running the hypervisor with interrupts masked (ticks, rare stalls);
//!   an interrupt routed there waits for the window's end.
//! - [`credit2_runtime`]: credit2's `csched2_runtime`: how long the vCPU it picks may run.
//! - [`credit2_tickle`]: credit2's `runq_tickle` pCPU choice for a waking vCPU (migrate or not).
//! - [`lapic_timer_advance`]: KVM's adaptive LAPIC timer advance (fire early, spin to the deadline).
//! - [`kvm_sgi_dispatch`]: how KVM/arm64 finds an SGI's target vCPUs by MPIDR (walk or table).
//! - [`debug_build`]: a DEBUG hypervisor build as a multiplier on hypervisor-path costs.

pub mod assigned_irq;
pub mod credit2_runtime;
pub mod credit2_tickle;
pub mod debug_build;
pub mod halt_poll;
pub mod kvm_sgi_dispatch;
pub mod lapic_timer_advance;
pub mod masked_windows;
pub mod scheduler;
pub mod vwfi;

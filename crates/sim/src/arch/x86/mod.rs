//! x86 interrupt hardware as pure state machines (no time inside): the local APIC's request and
//! service registers with priority masking, destination resolution for xAPIC/x2APIC modes, the
//! KVM PV IPI hypercall's destination packing, VMX posted-interrupt descriptors and APICv
//! virtual-interrupt delivery, IPI virtualization (`ipiv`: which ICR writes the CPU posts without an exit), and the TSC-deadline timer with the rule that picks how KVM serves
//! it (`apic_timer`). Timed models (`models/kvm_ipi`) charge costs around these.
//! Facts: docs/sources.md section D.

pub mod apic_timer;
pub mod apicv;
pub mod destination;
pub mod ipiv;
pub mod lapic;
pub mod posted_interrupt;
pub mod pv_ipi;

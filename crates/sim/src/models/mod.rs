//! Timed models: each combines mechanisms (`arch`), policies (`hyp`) and a workload into a
//! simulation of one scenario point. Add a model by implementing [`crate::model::Model`] and
//! listing it in [`REGISTRY`].

pub mod kvm_arm_fwd;
pub mod kvm_arm_sgi;
pub mod kvm_ipi;
pub mod kvm_x86;
pub mod path;
pub mod timer_inject;
pub mod workload;
pub mod xen_arm;
pub mod xen_core;
pub mod xen_dom0less;
pub mod xen_gicv4;

use crate::model::Model;

/// Every model, by `scenario.model` name.
pub static REGISTRY: &[&dyn Model] = &[
    &timer_inject::TimerInject,
    &xen_arm::XenArm,
    &kvm_ipi::KvmIpi,
    &kvm_x86::KvmX86,
    &kvm_arm_fwd::KvmArmPassthrough,
    &xen_gicv4::XenGicv4,
    &kvm_arm_sgi::KvmArm64Sgi,
    &xen_dom0less::XenArmDom0less,
];

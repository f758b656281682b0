//! Scenario sections of `kvm-ipi` and their validation.
use serde::Deserialize;

use crate::arch::x86::destination::ApicMode;
use crate::engine::CostDist;
use crate::model::PointCtx;
use crate::scenario::ScenarioError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Hypervisor {
    /// The guest's APIC mode: decides how many ICR writes a multicast takes.
    pub apic_mode: ApicMode,
    /// Guest uses KVM_HC_SEND_IPI for multicasts (unicasts still write the ICR).
    #[serde(default)]
    pub pv_ipi: bool,
    /// APICv virtual-interrupt delivery: without it every guest EOI exits.
    #[serde(default = "yes")]
    pub apicv: bool,
    /// Posted interrupts: a target in guest mode gets the IPI without a VM exit.
    #[serde(default = "yes")]
    pub posted_interrupts: bool,
    /// How long a halted vCPU polls before blocking (KVM halt polling), ns.
    #[serde(default)]
    pub halt_poll_ns: u64,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Vm {
    pub vcpus: u32,
    /// pCPU of each vCPU; default: vCPU i on pCPU i.
    #[serde(default)]
    pub pin: Vec<u32>,
}

/// A row of the benchmark's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Row {
    DryRun,
    SelfIpi,
    NormalIpi,
    BroadcastIpi,
    BroadcastLock,
}

impl Row {
    pub fn key(self) -> &'static str {
        match self {
            Row::DryRun => "dry_run",
            Row::SelfIpi => "self_ipi",
            Row::NormalIpi => "normal_ipi",
            Row::BroadcastIpi => "broadcast_ipi",
            Row::BroadcastLock => "broadcast_lock",
        }
    }
}

fn all_rows() -> Vec<Row> {
    vec![Row::DryRun, Row::SelfIpi, Row::NormalIpi, Row::BroadcastIpi, Row::BroadcastLock]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Workload {
    /// Operations per row (the module's NTIMES; 100,000 in the public copy).
    pub iterations: u64,
    #[serde(default = "all_rows")]
    pub rows: Vec<Row>,
    /// APIC ID of the Normal IPI target.
    #[serde(default = "one")]
    pub normal_target: u32,
    /// Function-call IPI vector (Linux CALL_FUNCTION_VECTOR).
    #[serde(default = "call_function_vector")]
    pub vector: u8,
    #[serde(default)]
    pub warmup: u64,
}

fn one() -> u32 {
    1
}
fn call_function_vector() -> u8 {
    0xFB
}

/// Every cost the model charges (profile key → field).
pub(super) struct Costs {
    pub loop_overhead: CostDist,
    pub self_call_delivery: CostDist,
    pub self_call_total: CostDist,
    pub guest_send_per_dest: CostDist,
    pub icr_write_exit: CostDist,
    pub vmcall_exit: CostDist,
    pub pv_ipi_handler: CostDist,
    pub deliver_to_polling: CostDist,
    pub deliver_to_blocked: CostDist,
    pub icr_multicast_extra: CostDist,
    pub wake_from_poll: CostDist,
    pub wake_from_block: CostDist,
    pub handler_and_ack: CostDist,
    pub eoi_exit: CostDist,
    pub lock_hold: CostDist,
}

pub(super) struct Prepared {
    pub hyp: Hypervisor,
    pub vcpus: u32,
    pub wl: Workload,
    pub costs: Costs,
    pub seed: u64,
}

pub(super) fn prepare(ctx: &PointCtx, model: &str) -> Result<Prepared, ScenarioError> {
    let hyp: Hypervisor = ctx.section("hypervisor")?;
    let vm: Vm = ctx.single_vm()?;
    let wl: Workload = ctx.section("workload")?;
    if vm.vcpus < 2 {
        return Err(ctx.invalid("vm[0].vcpus", "at least 2 vCPUs (a sender and a target)", vm.vcpus));
    }
    let pcpus = ctx.platform.cpus;
    if vm.pin.is_empty() && vm.vcpus > pcpus {
        return Err(ctx.invalid("vm[0].vcpus", &format!("at most {pcpus} vCPUs (one per pCPU of `{}`) unless `pin` is given", ctx.platform.name), vm.vcpus));
    }
    if !vm.pin.is_empty() {
        ctx.check_pins("vm[0].pin", &vm.pin, vm.vcpus)?;
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some((i, p)) = vm.pin.iter().enumerate().find(|(_, p)| !seen.insert(**p)) {
        return Err(ctx.invalid(&format!("vm[0].pin[{i}]"), "one vCPU per pCPU (this model does not time-share pCPUs)", p));
    }
    if matches!(hyp.apic_mode, ApicMode::XapicPhysical | ApicMode::XapicFlat | ApicMode::XapicCluster) && vm.vcpus > 255 {
        return Err(ctx.invalid("vm[0].vcpus", "at most 255 vCPUs in xAPIC mode", vm.vcpus));
    }
    ctx.check_count("workload.iterations", wl.iterations, 1, crate::model::MAX_SAMPLES)?;
    if wl.rows.is_empty() {
        return Err(ctx.invalid("workload.rows", "at least one row", "[]"));
    }
    if wl.normal_target == 0 || wl.normal_target >= vm.vcpus {
        return Err(ctx.invalid("workload.normal_target", &format!("an APIC ID from 1 to {} (0 is the sender)", vm.vcpus - 1), wl.normal_target));
    }
    if wl.vector < 16 {
        return Err(ctx.invalid("workload.vector", "a vector from 16 to 255 (0-15 are reserved)", wl.vector));
    }
    let c = |k: &str| ctx.platform.cost(k, model).cloned().map_err(|e| ctx.platform_err(e));
    let costs = Costs {
        loop_overhead: c("loop_overhead")?,
        self_call_delivery: c("self_call_delivery")?,
        self_call_total: c("self_call_total")?,
        guest_send_per_dest: c("guest_send_per_dest")?,
        icr_write_exit: c("icr_write_exit")?,
        vmcall_exit: c("vmcall_exit")?,
        pv_ipi_handler: c("pv_ipi_handler")?,
        deliver_to_polling: c("deliver_to_polling")?,
        deliver_to_blocked: c("deliver_to_blocked")?,
        icr_multicast_extra: c("icr_multicast_extra")?,
        wake_from_poll: c("wake_from_poll")?,
        wake_from_block: c("wake_from_block")?,
        handler_and_ack: c("handler_and_ack")?,
        eoi_exit: c("eoi_exit")?,
        lock_hold: c("lock_hold")?,
    };
    Ok(Prepared { vcpus: vm.vcpus, hyp, wl, costs, seed: ctx.seed })
}

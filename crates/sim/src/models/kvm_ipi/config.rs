//! Scenario sections of `kvm-ipi` and their validation.
use serde::Deserialize;

use crate::arch::x86::destination::ApicMode;
use crate::engine::CostDist;
use crate::hyp::halt_poll::{HaltPollParams, KernelDefaults};
use crate::model::PointCtx;
use crate::scenario::ScenarioError;

use super::icr_exit::{Access, IcrExit, IcrExitCosting};

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
    /// The host's halt-polling rule: a kernel's adaptive per-vCPU window (`hyp::halt_poll`), or
    /// `fixed` (a window of `halt_poll_ns` that never adapts: the first reproduction's shortcut).
    #[serde(default = "linux4_17")]
    pub halt_poll: HaltPollPolicy,
    /// `fixed`: the window; a kernel rule: its maximum (module parameter `halt_poll_ns`; default:
    /// that kernel's). ns.
    #[serde(default)]
    pub halt_poll_ns: Option<u64>,
    /// HLT exits to the host (default). `false`: KVM_CAP_X86_DISABLE_EXITS(HLT) — an idle vCPU
    /// stays in guest mode, so IPIs reach it by the posted-interrupt notification vector.
    #[serde(default = "yes")]
    pub hlt_exits: bool,
    /// VMX IPI virtualization (`arch::x86::ipiv`): a fixed, physical, no-shorthand ICR write is
    /// posted by the CPU without a VM exit. Needs APICv and posted interrupts.
    #[serde(default)]
    pub ipiv: bool,
    /// How the sender's ICR-write exit is costed (`icr_exit.rs`): S2's lumped fit, or composed
    /// per APIC access kind from KVM's exit paths.
    #[serde(default = "fitted")]
    pub icr_exit: IcrExitCosting,
}

fn fitted() -> IcrExitCosting {
    IcrExitCosting::Fitted
}

/// `hypervisor.halt_poll`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HaltPollPolicy {
    Fixed,
    #[serde(rename = "linux-4.17")]
    Linux4_17,
    #[serde(rename = "linux-5.1")]
    Linux5_1,
    ShrinkTwo,
}

/// How a target's poll window is decided.
#[derive(Debug, Clone, Copy)]
pub(super) enum PollRule {
    /// Polls when it has idled less than this many ns.
    Fixed(u64),
    /// KVM's grow/shrink rule with these parameters.
    Adaptive(HaltPollParams),
}

fn yes() -> bool {
    true
}
fn linux4_17() -> HaltPollPolicy {
    HaltPollPolicy::Linux4_17
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
    /// kvm-unit-tests `x86/vmexit.c` test `ipi`: `on_cpu(1, nop)` — an IPI to CPU 1 (idle in
    /// HLT) and a spin until it has run; class `ipi_xapic` or `ipi_x2apic` by the APIC mode.
    VmexitIpi,
}

impl Row {
    pub fn key(self) -> &'static str {
        match self {
            Row::DryRun => "dry_run",
            Row::SelfIpi => "self_ipi",
            Row::NormalIpi => "normal_ipi",
            Row::BroadcastIpi => "broadcast_ipi",
            Row::BroadcastLock => "broadcast_lock",
            Row::VmexitIpi => "vmexit_ipi",
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
    /// Report `*.total`/`*.delivery`/`*.lock_wait` as totals over this many operations (the
    /// benchmark's NTIMES) whatever `iterations` is run, so a shorter run (a fit, a test) stays
    /// comparable with the published totals. Default: `iterations`.
    #[serde(default)]
    pub totals_over: Option<u64>,
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
    /// The sender's ICR-write exit (`icr_exit.rs`).
    pub icr_exit: IcrExit,
    pub icr_logical_decode: CostDist,
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
    pub line_transfer_same_socket: CostDist,
    pub line_transfer_cross_socket: CostDist,
    pub pi_notification_send: CostDist,
    pub pi_notification_to_handler: CostDist,
    pub kick_exit_to_handler: CostDist,
    /// IPIv only: the CPU's post of a virtualized ICR write (`ipiv_post`).
    pub ipiv_post: Option<CostDist>,
    /// IPIv only: the wake-up vector's handler on a blocked target's pCPU (`pi_wakeup_handler`).
    pub pi_wakeup_handler: Option<CostDist>,
    /// IPIv only: a halt-polling target finds the posted vector and re-enters (`ipiv_poll_wake`);
    /// without IPIv this is inside KVM's `deliver_to_polling` + `wake_from_poll`.
    pub ipiv_poll_wake: Option<CostDist>,
}

pub(super) struct Prepared {
    pub hyp: Hypervisor,
    pub vcpus: u32,
    pub wl: Workload,
    pub costs: Costs,
    pub poll: PollRule,
    /// Socket of each vCPU's pCPU (the lock line moves between sockets or not).
    pub socket: Vec<u32>,
    /// Core clock (cycles figures of the vmexit row).
    pub cpu_ghz: f64,
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
    if let Some(n) = wl.totals_over {
        ctx.check_count("workload.totals_over", n, 1, crate::model::MAX_SAMPLES)?;
    }
    if wl.rows.is_empty() {
        return Err(ctx.invalid("workload.rows", "at least one row", "[]"));
    }
    if wl.normal_target == 0 || wl.normal_target >= vm.vcpus {
        return Err(ctx.invalid("workload.normal_target", &format!("an APIC ID from 1 to {} (0 is the sender)", vm.vcpus - 1), wl.normal_target));
    }
    if wl.vector < 16 {
        return Err(ctx.invalid("workload.vector", "a vector from 16 to 255 (0-15 are reserved)", wl.vector));
    }
    let max_ns = |default: u64| match hyp.halt_poll_ns {
        Some(n) if n > 100_000_000 => Err(ctx.invalid("hypervisor.halt_poll_ns", "ns from 0 to 100,000,000", n)),
        Some(n) => Ok(n),
        None => Ok(default),
    };
    let kernel = |k: KernelDefaults| -> Result<PollRule, ScenarioError> {
        let p = k.params();
        Ok(PollRule::Adaptive(HaltPollParams { max_ns: max_ns(p.max_ns)?, ..p }))
    };
    let poll = match hyp.halt_poll {
        HaltPollPolicy::Fixed if hyp.halt_poll_ns.is_none() => {
            return Err(ctx.invalid("hypervisor.halt_poll_ns", "a window in ns (required with halt_poll = \"fixed\")", "nothing"))
        }
        HaltPollPolicy::Fixed => PollRule::Fixed(max_ns(0)?),
        HaltPollPolicy::Linux4_17 => kernel(KernelDefaults::Linux4_17X86)?,
        HaltPollPolicy::Linux5_1 => kernel(KernelDefaults::Linux5_1)?,
        HaltPollPolicy::ShrinkTwo => kernel(KernelDefaults::ShrinkTwo)?,
    };
    let sockets: u32 = match ctx.platform.facts.get("sockets") {
        None => 1,
        Some(s) => s
            .parse()
            .ok()
            .filter(|n| (1..=pcpus.max(1)).contains(n))
            .ok_or_else(|| ctx.invalid("platform facts.sockets", &format!("a whole number of sockets from 1 to {pcpus}"), s))?,
    };
    // pCPUs are numbered socket by socket (contiguous halves on two sockets): an assumption about
    // the host's enumeration, stated in docs/kvm-pv-ipi.md.
    let per_socket = pcpus.div_ceil(sockets).max(1);
    let socket = (0..vm.vcpus).map(|v| vm.pin.get(v as usize).copied().unwrap_or(v) / per_socket).collect();
    if hyp.ipiv && !(hyp.apicv && hyp.posted_interrupts) {
        return Err(ctx.invalid("hypervisor.ipiv", "false unless hypervisor.apicv and hypervisor.posted_interrupts are true (IPIv posts into posted-interrupt descriptors)", true));
    }
    let c = |k: &str| ctx.platform.cost(k, model).cloned().map_err(|e| ctx.platform_err(e));
    let xapic = matches!(hyp.apic_mode, ApicMode::XapicPhysical | ApicMode::XapicFlat | ApicMode::XapicCluster);
    let costs = Costs {
        ipiv_post: if hyp.ipiv { Some(c("ipiv_post")?) } else { None },
        pi_wakeup_handler: if hyp.ipiv { Some(c("pi_wakeup_handler")?) } else { None },
        ipiv_poll_wake: if hyp.ipiv { Some(c("ipiv_poll_wake")?) } else { None },
        loop_overhead: c("loop_overhead")?,
        self_call_delivery: c("self_call_delivery")?,
        self_call_total: c("self_call_total")?,
        guest_send_per_dest: c("guest_send_per_dest")?,
        icr_exit: match hyp.icr_exit {
            IcrExitCosting::Fitted => IcrExit::Fitted { exit: c("icr_write_exit")?, xapic_extra: if xapic { Some(c("xapic_icr_exit_extra")?) } else { None } },
            IcrExitCosting::KvmFastpath => IcrExit::Mechanism {
                access: match (xapic, hyp.apicv) {
                    (false, _) => Access::X2apic,
                    (true, true) => Access::XapicApicv,
                    (true, false) => Access::XapicEmulated,
                },
                roundtrip: c("vmexit_roundtrip")?,
                fastpath_skip: c("fastpath_skip")?,
                apic_write_nodecode: c("apic_write_nodecode")?,
                insn_decode_emulate: c("insn_decode_emulate")?,
                icr_emulate: c("icr_emulate")?,
            },
        },
        icr_logical_decode: c("icr_logical_decode")?,
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
        line_transfer_same_socket: c("line_transfer_same_socket")?,
        line_transfer_cross_socket: c("line_transfer_cross_socket")?,
        pi_notification_send: c("pi_notification_send")?,
        pi_notification_to_handler: c("pi_notification_to_handler")?,
        kick_exit_to_handler: c("kick_exit_to_handler")?,
    };
    Ok(Prepared { vcpus: vm.vcpus, hyp, wl, costs, poll, socket, cpu_ghz: ctx.platform.cpu_ghz, seed: ctx.seed })
}

//! `xen-gicv4`: the S1 prediction (S1, the GICv4 direct-LPI RFC for Xen on Arm, xen-devel, Feb 2026). fio random reads from an EBS-like NVMe volume
//! in Xen's dom0 on Arm, with device completion MSIs delivered either by Xen's GICv3 software
//! path or by GICv4.1 direct vLPI injection, under credit2 or null; plus bare-metal Linux.
//!
//! Layout: dom0 has `hypervisor.dom0_vcpus` vCPUs, vCPU i on pCPU i (the null scheduler pins
//! them so; credit2 keeps a vCPU where it is while its pCPU is idle, which is the S1 setting:
//! only dom0, 64 pCPUs). fio's `numjobs` threads run on vCPUs `first_vcpu ..`; each thread's
//! NVMe queue interrupts its own vCPU (Linux managed affinity). The paths (trace segments):
//!
//! - software (`direct_lpi = off`): Xen maps every host LPI to pCPU 0 (xen/arch/arm/gic-v3-its.c,
//!   `gicv3_its_map_host_events`: "For now we map every host LPI to host CPU 0"). On pCPU 0:
//!   `its-translate` → idle-wakeup / trap → `xen-lpi-handler` (gicv3_do_LPI,
//!   vgic_vcpu_inject_lpi) → (vcpu-wake) → `sgi-to-vcpu-pcpu` (vcpu_kick / tickle) → on the
//!   vCPU's pCPU: idle-wakeup / trap → `xen-sgi-handler` → the core's path (sched, context
//!   restore, lr-write, eret, guest-ack).
//! - direct (`direct_lpi = on`), vPE resident: `its-translate` → `vlpi-deliver` → (wfi-exit) →
//!   guest-ack. No hypervisor segment.
//! - direct, vPE out with DB (blocked in WFI): `its-translate` → `doorbell-lpi` → idle-wakeup →
//!   `xen-doorbell-handler` → vcpu-wake → runq-tickle → schedule → context-restore → `vpe-schedule-in` → eret →
//!   guest-ack. Under credit2 a woken vCPU may land on another pCPU: `vmovp`.
//! - bare metal: `its-translate` → (wfi-exit) → guest-ack (the CPU's own GIC CPU interface).
//!
//! Then the guest: `guest-irq-entry` + `guest-io-complete` per reaped completion (+
//! `guest-io-submit` to keep `iodepth` in flight). Class `io` = submission to reaped completion
//! (fio's clat); figure `iops`.
//!
//! pCPU 0 also runs dom0 vCPU 0, whose activity masks it (hyp::masked_windows): dom0's tick
//! (`hypervisor.pcpu0_tick_hz`, each window Xen's wake + block paths) and rare long stalls
//! (`pcpu0_stall_rate_hz` × `pcpu0_stall_us`: no source gives them; the S1 scenario fits the
//! rate to its one published figure). A software-path MSI arriving in a window waits for its end
//! (`pcpu0-masked` segment, `lpi.held_by_pcpu0_window`); doorbells and direct vLPIs never go to
//! pCPU 0. Where a woken vCPU runs is credit2's `runq_tickle` choice (hyp::credit2_tickle):
//! its own idle pCPU here, so no VMOVP unless `credit2_migrate_prob` adds random migrations.
//!
//! Simplifications: guest work (submission, the completion handler) runs as an atomic path on
//! the pCPU, so an interrupt arriving meanwhile is taken when it ends (`cpu-busy` on its trace);
//! an NVMe handler reaps every CQE posted by the time it runs, so a second MSI whose vLPI / LR
//! is still pending merges (`interrupts.coalesced`). A credit2 migration is charged (VMOVP) but
//! the vCPU keeps its pCPU index: with 56 idle pCPUs the pool is symmetric.
use serde::Deserialize;

use crate::engine::rng::derive_seed;
use crate::engine::{CostDist, SimTime};
use crate::hyp::masked_windows::{self, Arrivals, MaskError};
use crate::hyp::scheduler::SchedKind;
use crate::hyp::vwfi::Vwfi;
use crate::model::{Model, PointCtx, PreparedPoint};
use crate::models::workload::fio::{DeviceSpec, FioJob};
use crate::models::xen_core::config::{self, DEFAULT_KNOBS};
use crate::models::xen_core::CacheShare;
use crate::models::xen_core::{VpeCosts, XenSetup};
use crate::scenario::ScenarioError;

mod sim;
pub mod vpe;

/// The model (`scenario.model = "xen-gicv4"`).
pub struct XenGicv4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Xen,
    BareMetal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnOff {
    Off,
    On,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Hypervisor {
    mode: Mode,
    scheduler: SchedKind,
    direct_lpi: OnOff,
    #[serde(default = "trap")]
    vwfi: Vwfi,
    dom0_vcpus: u32,
    /// credit2: probability that a woken vCPU is run on another pCPU (VMOVP with direct LPIs).
    #[serde(default)]
    credit2_migrate_prob: f64,
    #[serde(default = "one")]
    debug_multiplier: f64,
    /// dom0 vCPU 0's timer tick (Hz) handled by Xen on pCPU 0 (`vtimer_interrupt` → inject):
    /// each one masks pCPU 0 for trap + handler + LR write + eret (profile costs). 0 = none.
    #[serde(default)]
    pcpu0_tick_hz: f64,
    /// Rare long masked windows on pCPU 0 (Poisson, Hz). No source gives the rate: the S1
    /// scenario fits it (the one free parameter). 0 = none.
    #[serde(default)]
    pcpu0_stall_rate_hz: f64,
    /// Length of one such window (µs, a labelled guess; docs/xen-gicv4-fio.md sweeps it).
    #[serde(default)]
    pcpu0_stall_us: f64,
    /// With direct LPIs and `vwfi = trap`: does a vCPU's trapped WFI block it (vPE out, doorbell
    /// on) or return at once? The series as posted (xen-gicv4-rfc) returns at once: `vgic_vcpu_pending_irq`
    /// (xen/arch/arm/gic-vgic.c, patch 0013 "arm/gic: VPE scheduling") answers 1 whenever the vPE's
    /// `pending_last` is set, and nothing clears it (it is set from GICR_VPENDBASER.PendingLast in
    /// `its_make_vpe_non_resident`, which `its_make_vpe_resident` writes as 1, and by the doorbell
    /// in `gicv3_do_LPI`, patch 0017), so `vcpu_block_unless_event_pending` never blocks; doorbells
    /// are masked by `vgic_v4_load` and `vgic_v4_put(v, false)` never unmasks them. The lab sees
    /// it: 0 doorbells, 0 vPE residency changes during fio, 4–14 WFI traps per I/O
    /// (docs/xen-gicv4-lab.md). `blocks` is the model before the lab (doorbell path).
    #[serde(default = "spins")]
    direct_wfi: DirectWfi,
}

/// How a trapped WFI of a vCPU with direct LPIs behaves (see `Hypervisor::direct_wfi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DirectWfi {
    /// The vCPU blocks, its vPE goes out with the doorbell on (GICv4.1 as designed).
    Blocks,
    /// The trap returns at once (the series' sticky `pending_last`): the vCPU stays running, its
    /// vPE resident, and a vLPI finds it in its WFI → trap → eret loop.
    Spins,
}

fn spins() -> DirectWfi {
    DirectWfi::Spins
}

fn trap() -> Vwfi {
    Vwfi::Trap
}
fn one() -> f64 {
    1.0
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Workload {
    job: String,
    completions: u64,
    #[serde(default)]
    warmup: u64,
    #[serde(default = "one_u32")]
    first_vcpu: u32,
    /// Common random numbers: when set, device service times are drawn from this seed (and the
    /// job), so every configuration of a job sees the same device and differences are the
    /// interrupt path's. Unset: from the point's seed.
    #[serde(default)]
    device_seed: Option<u64>,
}

fn one_u32() -> u32 {
    1
}

/// Costs this model charges beyond the shared core's (profile keys in parentheses).
#[derive(Debug, Clone)]
pub(crate) struct Costs {
    /// MSI write → ITS translation → (v)LPI at the redistributor (`its_translate`).
    pub its_translate: CostDist,
    /// Redistributor sets the VPT bit and raises the virtual IRQ (`vlpi_deliver`).
    pub vlpi_deliver: CostDist,
    /// Xen's LPI handler: gicv3_do_LPI + vgic_vcpu_inject_lpi (`xen_lpi_handler`).
    pub lpi_handler: CostDist,
    /// Physical SGI from pCPU 0 to the vCPU's pCPU (`sgi_latency`).
    pub sgi: CostDist,
    /// Xen's SGI / schedule-softirq entry on the target pCPU (`xen_sgi_handler`).
    pub sgi_handler: CostDist,
    /// Xen's doorbell handler: LPI ack, vPE lookup (`xen_doorbell_handler`).
    pub doorbell_handler: CostDist,
    /// ITS VMOVP + VSYNC, waited for (`vmovp`).
    pub vmovp: CostDist,
    /// Guest kernel IRQ entry/exit around the NVMe handler (`guest_irq_entry`).
    pub irq_entry: CostDist,
    /// Guest: fio + syscall + block layer + nvme_queue_rq + SQ doorbell (`guest_io_submit`).
    pub submit: CostDist,
    /// Guest: CQE + blk-mq completion + waking fio + return to user (`guest_io_complete`).
    pub complete: CostDist,
}

/// pCPU 0's masked-window sources (see [`crate::hyp::masked_windows`]).
#[derive(Debug, Clone)]
pub(crate) struct Pcpu0Windows {
    pub tick: Option<Arrivals>,
    pub stall: Option<Arrivals>,
    pub stall_len: SimTime,
    /// As written, for the result's note.
    pub stall_hz: f64,
}

pub(crate) struct Prepared {
    pub mode: Mode,
    /// A vCPU's trapped WFI returns at once (the series' `direct_wfi = spins`).
    pub wfi_spins: bool,
    pub windows: Pcpu0Windows,
    pub direct: bool,
    pub xen: XenSetup,
    pub costs: Costs,
    pub device: DeviceSpec,
    pub job: FioJob,
    pub job_name: String,
    pub vcpus: usize,
    /// The platform's pCPUs (the ones beyond `vcpus` are idle).
    pub pcpus: usize,
    pub first_vcpu: usize,
    pub migrate_prob: f64,
    pub completions: u64,
    pub warmup: u64,
    pub seed: u64,
    /// Seed of the device's service-time stream.
    pub device_seed: u64,
}

impl Model for XenGicv4 {
    fn name(&self) -> &'static str {
        "xen-gicv4"
    }
    fn summary(&self) -> &'static str {
        "Xen on Arm dom0 fio random reads on an EBS-like NVMe volume: GICv3 software LPI path vs GICv4.1 direct vLPI (doorbells, VPENDBASER, VMOVP), credit2/null, bare metal"
    }

    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError> {
        let hyp: Hypervisor = ctx.section("hypervisor")?;
        let wl: Workload = ctx.section("workload")?;
        let plat = ctx.platform;
        let name = self.name();
        let job = FioJob::named(&wl.job).ok_or_else(|| ctx.invalid("workload.job", &format!("one of {}", FioJob::names()), &wl.job))?;
        if hyp.dom0_vcpus == 0 || hyp.dom0_vcpus > plat.cpus {
            return Err(ctx.invalid("hypervisor.dom0_vcpus", &format!("1..={} (platform `{}` CPUs)", plat.cpus, plat.name), hyp.dom0_vcpus));
        }
        if wl.first_vcpu + job.numjobs > hyp.dom0_vcpus {
            return Err(ctx.invalid("workload.first_vcpu", &format!("first_vcpu + numjobs ({}) <= dom0_vcpus ({})", job.numjobs, hyp.dom0_vcpus), wl.first_vcpu));
        }
        if !(hyp.credit2_migrate_prob.is_finite() && (0.0..=1.0).contains(&hyp.credit2_migrate_prob)) {
            return Err(ctx.invalid("hypervisor.credit2_migrate_prob", "a probability 0..=1", hyp.credit2_migrate_prob));
        }
        let masked = |e: MaskError| match e {
            MaskError::OutOfRange { key, expected, value } => ctx.invalid(&key, expected, value),
        };
        let windows = Pcpu0Windows {
            tick: Arrivals::periodic_hz("hypervisor.pcpu0_tick_hz", hyp.pcpu0_tick_hz).map_err(masked)?,
            stall: Arrivals::poisson_hz("hypervisor.pcpu0_stall_rate_hz", hyp.pcpu0_stall_rate_hz).map_err(masked)?,
            stall_len: masked_windows::length_us("hypervisor.pcpu0_stall_us", hyp.pcpu0_stall_us).map_err(masked)?,
            stall_hz: hyp.pcpu0_stall_rate_hz,
        };
        if wl.completions == 0 || wl.completions > 1_000_000_000 {
            return Err(ctx.invalid("workload.completions", "1..=1e9 completions", wl.completions));
        }
        if wl.warmup >= wl.completions {
            return Err(ctx.invalid("workload.warmup", &format!("fewer than workload.completions ({})", wl.completions), wl.warmup));
        }
        let dbg = config::debug_build(ctx, hyp.debug_multiplier)?;
        let c = |k: &str| plat.cost(k, name).cloned().map_err(|e| ctx.platform_err(e));
        let h = |k: &str| c(k).map(|d| dbg.hyp(d));
        let p = |k: &str| plat.param(k, name).map_err(|e| ctx.platform_err(e));
        let costs = Costs {
            its_translate: c("its_translate")?,
            vlpi_deliver: c("vlpi_deliver")?,
            lpi_handler: h("xen_lpi_handler")?,
            sgi: c("sgi_latency")?,
            sgi_handler: h("xen_sgi_handler")?,
            doorbell_handler: h("xen_doorbell_handler")?,
            vmovp: h("vmovp")?,
            irq_entry: c("guest_irq_entry")?,
            submit: c("guest_io_submit")?,
            complete: c("guest_io_complete")?,
        };
        let positive = |k: &str| -> Result<f64, ScenarioError> {
            let v = p(k)?;
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(ctx.invalid(&format!("platform.params.{k}"), "a positive number", v))
            }
        };
        let device = DeviceSpec {
            read_4k: c("ebs_read_4k")?,
            per_kib_ns: positive("ebs_per_kib_ns")?,
            iops: positive("ebs_provisioned_iops")?,
            throughput: positive("ebs_throughput_mib_s")? * 1024.0 * 1024.0,
        };
        let bare = hyp.mode == Mode::BareMetal;
        let direct = hyp.direct_lpi == OnOff::On && !bare;
        let vpe = if direct { Some(VpeCosts { schedule_in: h("vpe_schedule_in")?, schedule_out: h("vpe_schedule_out")? }) } else { None };
        // Bare metal runs on the same core as one task per CPU that never traps: WFI native,
        // nothing else runnable, so no scheduler path is ever taken after start-up.
        // The series' trapped WFI never blocks a vCPU with direct LPIs (`direct_wfi = spins`): the
        // core then keeps it running in WFI like vwfi=native, and `direct_resident` charges the
        // trap loop (trap + eret) instead of a native wfi-exit.
        let wfi_spins = direct && hyp.vwfi == Vwfi::Trap && hyp.direct_wfi == DirectWfi::Spins;
        let (sched, vwfi) = if bare {
            (SchedKind::Null, Vwfi::Native)
        } else if wfi_spins {
            (hyp.scheduler, Vwfi::Native)
        } else {
            (hyp.scheduler, hyp.vwfi)
        };
        let xen = XenSetup {
            sched,
            sched_params: DEFAULT_KNOBS.params(ctx)?,
            vwfi,
            costs: config::load_costs(ctx, name, dbg, sched, config::gic_version(ctx)?)?,
            list_registers: config::list_registers(ctx, name)?,
            gic: config::gic_version(ctx)?,
            vpe,
            // Neoverse V1 has a private L2 per core; the shared SLC's interference is not modelled.
            cache: CacheShare::NONE,
        };
        Ok(Box::new(Prepared {
            mode: hyp.mode,
            wfi_spins,
            windows,
            direct,
            xen,
            costs,
            device,
            job,
            job_name: wl.job.clone(),
            vcpus: hyp.dom0_vcpus as usize,
            pcpus: plat.cpus as usize,
            first_vcpu: wl.first_vcpu as usize,
            migrate_prob: if hyp.scheduler == SchedKind::Credit2 && !bare { hyp.credit2_migrate_prob } else { 0.0 },
            completions: wl.completions,
            warmup: wl.warmup,
            seed: ctx.seed,
            device_seed: match wl.device_seed {
                Some(s) => derive_seed(s, &format!("device|{}", wl.job)),
                None => derive_seed(ctx.seed, "device"),
            },
        }))
    }
}

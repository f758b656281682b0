//! `kvm-arm-passthrough`: an assigned xgmac NIC on KVM/Arm (S4, Linaro's KVM Forum 2014 talk on platform device passthrough), its level-triggered
//! interrupt delivered through irqfd + resamplefd or forwarded with the list register's HW bit,
//! under a netperf TCP_RR-like request/response loop and three TCP stream patterns.
//!
//! Two nodes over a 1 Gb/s switch: node A runs netperf natively (`irq_path = "native"`) or in a
//! one-vCPU KVM guest that owns the NIC through VFIO; node B runs netserver natively. The guest's
//! vCPU, its pCPU and the NIC's SPI affinity are the same CPU (a requirement of forwarding in the
//! 2014 series, and what pinning gives for irqfd too). What each interrupt costs on A comes from
//! [`paths`], which drives the functional model `hyp::assigned_irq`; the request/response loop is
//! [`rr`], the stream patterns [`stream`].
use serde::Deserialize;

use crate::engine::CostDist;
use crate::model::{Model, PointCtx, PointOutput, PreparedPoint, RunOpts, SimError};
use crate::platform::{Platform, PlatformError};
use crate::scenario::ScenarioError;

pub mod paths;
mod rr;
mod stream;

pub use paths::Path;

/// The model (`scenario.model = "kvm-arm-passthrough"`).
pub struct KvmArmPassthrough;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Hypervisor {
    irq_path: Path,
}

/// A TCP stream pattern (netperf TCP_STREAM from A to B).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamPattern {
    pub name: String,
    /// Bytes per send() call (netperf -m).
    pub send_bytes: f64,
    /// Data in flight the socket buffers allow (the effective TCP window), bytes.
    pub window_bytes: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Workload {
    /// TCP_RR transactions to simulate.
    transactions: u64,
    #[serde(default)]
    warmup: u64,
    /// Request and response payload, bytes (netperf TCP_RR default: 1 and 1).
    #[serde(default = "one")]
    request_bytes: f64,
    #[serde(default = "one")]
    response_bytes: f64,
    /// Stream patterns evaluated for throughput and sustained interrupt rate.
    #[serde(default)]
    stream: Vec<StreamPattern>,
    /// TCP segments per ACK of the receiver (Linux delayed ACK: 2).
    #[serde(default = "two")]
    segments_per_ack: f64,
}

fn one() -> f64 {
    1.0
}
fn two() -> f64 {
    2.0
}

/// Every cost the model charges (profile keys = field names).
pub struct Costs {
    pub world_switch_out: CostDist,
    pub world_switch_in: CostDist,
    pub vcpu_block: CostDist,
    pub vcpu_wakeup: CostDist,
    pub vgic_maintenance: CostDist,
    pub vfio_mask: CostDist,
    pub vfio_unmask: CostDist,
    pub irqfd_inject: CostDist,
    pub resamplefd_signal: CostDist,
    pub idle_wakeup: CostDist,
    pub irq_entry: CostDist,
    pub gic_ack: CostDist,
    pub gic_eoi: CostDist,
    pub nic_irq_handler: CostDist,
    pub nic_tx_dma: CostDist,
    pub nic_rx_dma: CostDist,
    pub switch_latency: CostDist,
    pub tcp_tx_stack: CostDist,
    pub tcp_rx_stack: CostDist,
    pub napi_poll: CostDist,
    pub tcp_send_syscall: CostDist,
    pub tcp_tx_segment: CostDist,
    pub copy_per_kb: CostDist,
    pub tcp_ack_rx: CostDist,
}

impl Costs {
    /// Every cost, for bounds.
    fn all(&self) -> [&CostDist; 24] {
        [
            &self.world_switch_out,
            &self.world_switch_in,
            &self.vcpu_block,
            &self.vcpu_wakeup,
            &self.vgic_maintenance,
            &self.vfio_mask,
            &self.vfio_unmask,
            &self.irqfd_inject,
            &self.resamplefd_signal,
            &self.idle_wakeup,
            &self.irq_entry,
            &self.gic_ack,
            &self.gic_eoi,
            &self.nic_irq_handler,
            &self.nic_tx_dma,
            &self.nic_rx_dma,
            &self.switch_latency,
            &self.tcp_tx_stack,
            &self.tcp_rx_stack,
            &self.napi_poll,
            &self.tcp_send_syscall,
            &self.tcp_tx_segment,
            &self.copy_per_kb,
            &self.tcp_ack_rx,
        ]
    }

    /// Every cost from the platform profile (key = field name).
    pub fn from_platform(p: &Platform, model: &str) -> Result<Costs, PlatformError> {
        let c = |k: &str| p.cost(k, model).cloned();
        Ok(Costs {
            world_switch_out: c("world_switch_out")?,
            world_switch_in: c("world_switch_in")?,
            vcpu_block: c("vcpu_block")?,
            vcpu_wakeup: c("vcpu_wakeup")?,
            vgic_maintenance: c("vgic_maintenance")?,
            vfio_mask: c("vfio_mask")?,
            vfio_unmask: c("vfio_unmask")?,
            irqfd_inject: c("irqfd_inject")?,
            resamplefd_signal: c("resamplefd_signal")?,
            idle_wakeup: c("idle_wakeup")?,
            irq_entry: c("irq_entry")?,
            gic_ack: c("gic_ack")?,
            gic_eoi: c("gic_eoi")?,
            nic_irq_handler: c("nic_irq_handler")?,
            nic_tx_dma: c("nic_tx_dma")?,
            nic_rx_dma: c("nic_rx_dma")?,
            switch_latency: c("switch_latency")?,
            tcp_tx_stack: c("tcp_tx_stack")?,
            tcp_rx_stack: c("tcp_rx_stack")?,
            napi_poll: c("napi_poll")?,
            tcp_send_syscall: c("tcp_send_syscall")?,
            tcp_tx_segment: c("tcp_tx_segment")?,
            copy_per_kb: c("copy_per_kb")?,
            tcp_ack_rx: c("tcp_ack_rx")?,
        })
    }
}

pub(crate) struct Prepared {
    path: Path,
    costs: Costs,
    transactions: u64,
    warmup: u64,
    request_bytes: f64,
    response_bytes: f64,
    streams: Vec<StreamPattern>,
    segments_per_ack: f64,
    link_gbps: f64,
    tx_irq_every: u64,
    list_registers: usize,
    seed: u64,
}

impl Model for KvmArmPassthrough {
    fn name(&self) -> &'static str {
        "kvm-arm-passthrough"
    }
    fn summary(&self) -> &'static str {
        "assigned NIC on KVM/Arm: level IRQ via irqfd+resamplefd vs HW-bit forwarding (vs native), TCP_RR and TCP stream patterns"
    }

    fn prepare(&self, ctx: &PointCtx) -> Result<Box<dyn PreparedPoint>, ScenarioError> {
        if ctx.doc.contains_key("vm") {
            return Err(ctx.invalid("vm", "no [[vm]] tables: the guest is one vCPU owning the NIC, on the NIC's pCPU", "[[vm]]"));
        }
        let hyp: Hypervisor = ctx.section("hypervisor")?;
        let wl: Workload = ctx.section("workload")?;
        ctx.check_count("workload.transactions", wl.transactions, 1, crate::model::MAX_SAMPLES)?;
        ctx.check_count("workload.warmup", wl.warmup, 0, wl.transactions - 1)?;
        for (k, v) in [("workload.request_bytes", wl.request_bytes), ("workload.response_bytes", wl.response_bytes)] {
            ctx.check_range(k, v, 1.0, false, 1448.0)?;
        }
        ctx.check_range("workload.segments_per_ack", wl.segments_per_ack, 1.0, false, 64.0)?;
        for (i, s) in wl.stream.iter().enumerate() {
            ctx.check_range(&format!("workload.stream[{i}].send_bytes"), s.send_bytes, 1.0, false, 1e8)?;
            ctx.check_range(&format!("workload.stream[{i}].window_bytes"), s.window_bytes, 1448.0, false, 1e9)?;
            if s.name.is_empty() || wl.stream[..i].iter().any(|o| o.name == s.name) {
                return Err(ctx.invalid(&format!("workload.stream[{i}].name"), "a unique non-empty pattern name", &s.name));
            }
        }
        let name = self.name();
        let costs = Costs::from_platform(ctx.platform, name).map_err(|e| ctx.platform_err(e))?;
        // A transaction pays each cost at most a few times: bound the run by all of them, 4x.
        let per_trans: f64 = costs.all().iter().map(|d| d.mean_ns()).sum::<f64>() * 4.0;
        ctx.check_horizon("workload.transactions", per_trans * wl.transactions as f64, "transactions × a bound on one round trip")?;
        let p = |k: &str| ctx.platform.param(k, name).map_err(|e| ctx.platform_err(e));
        let link_gbps = p("link_gbps")?;
        if !(link_gbps.is_finite() && link_gbps > 0.0 && link_gbps <= 1000.0) {
            return Err(ctx.invalid("platform.params.link_gbps", "a link rate in Gb/s (0 to 1000]", link_gbps));
        }
        let every = p("tx_irq_every")?;
        if !(every.fract() == 0.0 && (1.0..=4096.0).contains(&every)) {
            return Err(ctx.invalid("platform.params.tx_irq_every", "an integer 1..=4096 (frames per TX-completion interrupt)", every));
        }
        let lrs = p("list_registers")?;
        if !(lrs.fract() == 0.0 && (1.0..=16.0).contains(&lrs)) {
            return Err(ctx.invalid("platform.params.list_registers", "an integer 1..=16", lrs));
        }
        Ok(Box::new(Prepared {
            path: hyp.irq_path,
            costs,
            transactions: wl.transactions,
            warmup: wl.warmup,
            request_bytes: wl.request_bytes,
            response_bytes: wl.response_bytes,
            streams: wl.stream,
            segments_per_ack: wl.segments_per_ack,
            link_gbps,
            tx_irq_every: every as u64,
            list_registers: lrs as usize,
            seed: ctx.seed,
        }))
    }
}

impl PreparedPoint for Prepared {
    fn work(&self) -> u64 {
        self.transactions
    }

    fn run(self: Box<Self>, opts: &RunOpts) -> Result<PointOutput, SimError> {
        let (mut result, traces, events) = rr::run(&self, opts)?;
        for s in &self.streams {
            stream::evaluate(&self, s, &mut result)?;
        }
        result.notes.push(format!("irq_path = {}", self.path.as_str()));
        Ok(PointOutput { result, traces, events })
    }
}

//! The dom0 fio mode's result: fio's JSON (one file per repetition) through irqlab's fio
//! importer (`import::import_files("fio", …)`, the code behind `irqlab import fio`),
//! then labelled as emulation (QEMU TCG wall time, or virtual time under -icount) and given what
//! ran (Xen's tree, patches, config; scheduler, vwfi, dom0 vCPUs; the job's parameters) and the
//! delivery counts of each repetition ([`crate::delivery`]), summed, with per-I/O ratios.
use import::{import_files, ImportOptions};
use results::RunResult;
use std::time::Duration;

use crate::config::Job;
use crate::delivery::Counts;
use crate::error::LabError;

/// One boot's outcome.
pub struct Rep {
    pub fio_json: String,
    pub console: String,
    pub counts: Option<Counts>,
    pub start_to_fio_end: Option<Duration>,
    pub wall: Duration,
}

/// What ran, for the result.
pub struct Context {
    pub job: Job,
    pub runtime_s: u64,
    pub sched: &'static str,
    pub vwfi: &'static str,
    pub dom0_vcpus: u32,
    pub pin: bool,
    pub icount: Option<String>,
    pub xen_cmdline: String,
    pub xen_params: Vec<(String, String)>,
    pub fio_source: Option<String>,
    pub kernel: String,
    pub counted: bool,
}

/// Sums counts over repetitions.
pub fn sum(counts: &[&Counts]) -> Counts {
    let mut t = Counts::default();
    for c in counts {
        t.msi += c.msi;
        t.msi_virtual += c.msi_virtual;
        t.msi_physical += c.msi_physical;
        t.msi_unmapped += c.msi_unmapped;
        t.doorbells += c.doorbells;
        t.dom0_lpi_acks += c.dom0_lpi_acks;
        t.lr_lpi_writes += c.lr_lpi_writes;
        t.vpe_resident += c.vpe_resident;
        t.vpe_non_resident += c.vpe_non_resident;
        for (k, v) in &c.el2_entries {
            *t.el2_entries.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &c.its_commands {
            *t.its_commands.entry(k.clone()).or_default() += v;
        }
    }
    t
}

/// fio's `total_ios` summed over a JSON document's jobs and directions.
pub fn total_ios(fio_json: &str) -> u64 {
    let Some(start) = fio_json.find('{') else {
        return 0;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&fio_json[start..]) else {
        return 0;
    };
    v["jobs"].as_array().map(|js| js.iter().flat_map(|j| ["read", "write", "trim"].map(|d| j[d]["total_ios"].as_u64().unwrap_or(0))).sum()).unwrap_or(0)
}

pub fn build(ctx: &Context, reps: &[Rep], command: Vec<String>) -> Result<RunResult, LabError> {
    let files: Vec<(String, String)> = reps.iter().enumerate().map(|(i, r)| (format!("fio-{}.json", i + 1), r.fio_json.clone())).collect();
    let params = params(ctx);
    let host = if ctx.icount.is_some() { "qemu-icount" } else { "qemu-tcg" };
    let opts = ImportOptions { board: Some(host.into()), params: params.clone(), ..Default::default() };
    let mut r = import_files("fio", &files, &opts, &format!("irqlab-lab {}", env!("CARGO_PKG_VERSION")))
        .map_err(|e| LabError::Setup(format!("fio's JSON from dom0 did not import: {e}")))?;
    r.meta.scenario = format!("xen-dom0-fio-{}", ctx.job.name());
    r.meta.description = format!(
        "dom0 fio {} under Xen in QEMU ({}): emulation, not hardware latency",
        ctx.job.name(),
        if ctx.icount.is_some() { "-icount: virtual time = instruction count × 2^shift ns" } else { "TCG: times are emulation wall time" }
    );
    r.meta.platform.insert(
        "machine".into(),
        format!("QEMU virt, gic-version=4 (ITS), cpu max, 2 CPUs, {}", ctx.icount.as_deref().map(|i| format!("TCG -icount {i}")).unwrap_or_else(|| "TCG".into())),
    );
    r.meta.platform.insert("host".into(), host.into());
    for c in &mut r.configs {
        for (k, v) in &params {
            c.params.entry(k.clone()).or_insert_with(|| v.clone());
        }
        c.notes.push(if ctx.icount.is_some() {
            "measured under QEMU -icount: latencies and IOPS are in virtual time (instructions × 2^shift ns), an instruction count, not hardware latency".into()
        } else {
            "measured under QEMU TCG: latencies and IOPS are emulation wall time, not hardware latency".into()
        });
        lab_figures(c, ctx, reps);
    }
    r.provenance = Some(crate::output::provenance(command));
    Ok(r)
}

/// What ran, as the result's parameters.
fn params(ctx: &Context) -> Vec<(String, String)> {
    let mut params: Vec<(String, String)> = vec![
        ("job".into(), ctx.job.name().into()),
        ("runtime_s".into(), ctx.runtime_s.to_string()),
        ("xen.sched".into(), ctx.sched.into()),
        ("xen.vwfi".into(), ctx.vwfi.into()),
        ("xen.cmdline".into(), ctx.xen_cmdline.clone()),
        ("dom0.vcpus".into(), ctx.dom0_vcpus.to_string()),
        ("dom0.pinned".into(), ctx.pin.to_string()),
        ("dom0.kernel".into(), ctx.kernel.clone()),
        ("device".into(), "QEMU nvme (PCIe, MSI-X → ITS), 64 MiB raw image".into()),
    ];
    params.extend(ctx.xen_params.iter().cloned());
    if let Some(s) = &ctx.fio_source {
        params.push(("fio.built_from".into(), format!("Debian source {s}, static aarch64")));
    }
    params
}

/// The lab's figures on a configuration: I/Os, wall times, and the delivery counts summed over
/// the repetitions (when every repetition was counted).
fn lab_figures(c: &mut results::ConfigResult, ctx: &Context, reps: &[Rep]) {
    let ios: u64 = reps.iter().map(|r| total_ios(&r.fio_json)).sum();
    c.set_figure("lab.ios", ios as f64, "I/Os (all repetitions)");
    if let Some(t) = reps.first().and_then(|r| r.start_to_fio_end) {
        c.set_figure("lab.qemu_start_to_fio_result", t.as_secs_f64(), "s (wall, first repetition)");
    }
    c.set_figure("lab.wall_per_boot", reps.iter().map(|r| r.wall.as_secs_f64()).sum::<f64>() / reps.len() as f64, "s (wall)");
    let counts: Vec<&Counts> = reps.iter().filter_map(|r| r.counts.as_ref()).collect();
    if !ctx.counted {
        c.notes.push("--no-counts: QEMU's exception log and GIC traces were off (no delivery counts)".into());
        return;
    }
    if counts.len() != reps.len() {
        return;
    }
    let t = sum(&counts);
    for (k, v, u) in t.figures(ios) {
        c.set_figure(&k, v, u);
    }
    for (k, v) in &t.el2_entries {
        c.params.insert(format!("lab.xen_entries.{k}"), v.to_string());
    }
    let per: Vec<String> = counts.iter().map(|x| format!("direct {} doorbell {} software {} EL2 {}", x.direct(), x.doorbells, x.software(), x.el2_total())).collect();
    c.notes.push(format!(
        "delivery counts from QEMU's -d int log and GIC trace events between dom0's `fio start` and `fio end`, summed over {} repetition(s): {}",
        counts.len(),
        per.join("; ")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_ios() {
        let a = Counts { msi: 3, msi_virtual: 3, doorbells: 1, el2_entries: [("IRQ".to_string(), 2)].into(), ..Default::default() };
        let b = Counts { msi: 2, msi_physical: 2, el2_entries: [("IRQ".to_string(), 5), ("Data Abort".to_string(), 1)].into(), ..Default::default() };
        let t = sum(&[&a, &b]);
        assert_eq!((t.msi, t.direct(), t.software(), t.el2_total()), (5, 2, 2, 8));
        assert_eq!(total_ios("noise\n{\"jobs\":[{\"read\":{\"total_ios\":7},\"write\":{\"total_ios\":1}},{\"read\":{\"total_ios\":2}}]}"), 10);
        assert_eq!(total_ios("not json"), 0);
    }
}

//! `irqlab-lab xen [--xen-src …] -- fio --job J --out DIR`: Xen with Debian's arm64 kernel as
//! dom0 driving QEMU's emulated NVMe (MSIs as LPIs through the ITS) and fio running there.
//!
//! Why: S1 asks what Xen's GICv4 series changes for dom0's I/O; only a real device whose MSIs
//! go through the ITS exercises the series' direct-injection path (`its_vlpi_map`, patch 0006;
//! doorbells, 0017). The sequence, one function each: [`check`]; `prepare` — Xen (built, prebuilt or Debian's: `xen::resolve`); the kernel, its
//! NVMe modules and busybox from Debian's arm64 packages; a static aarch64 fio
//! ([`crate::fio_build`]); an initramfs whose `/init` loads the modules, waits for /dev/nvme0n1,
//! runs the job and prints fio's JSON base64-framed on the console (`frame.rs`); QEMU
//! `-M virt,virtualization=on,gic-version=4,its=on -cpu max` with dom0 loaded by
//! `-device guest-loader`. One fresh boot per repetition. fio's JSON becomes the result through
//! `irqlab import fio` (`import::import_files`); the delivery counts
//! ([`crate::delivery`]) come from QEMU's log between dom0's `fio start` and `fio end` lines.
//! Every wait is bounded ([`Dom0Watcher`]); a dom0 that does not boot, an NVMe timeout or a fio
//! that fails is a named failure with the console lines that show it, and no result is written.
//! `boot` is one repetition (a fresh boot and its counts); `bring_back` writes the result.
pub mod init;
pub mod result;
pub mod watcher;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use init::{init_script, NVME_MODULES};
pub use result::Rep;
pub use watcher::Dom0Watcher;

use crate::config::{FioConfig, Job, Neighbour, Sched, XenConfig};
use crate::error::LabError;
use crate::initramfs::newc;
use crate::qemu::{Machine, QemuCmd};
use crate::watch::Outcome;
use crate::{delivery, deps, output};

impl Job {
    pub fn name(self) -> &'static str {
        match self {
            Job::K4Qd1 => "4k-qd1",
            Job::K16Qd1 => "16k-qd1",
            Job::K4Qd4 => "4k-qd4",
            Job::K4Qd1Nj4 => "4k-qd1-nj4",
        }
    }
    /// (block size, iodepth, numjobs)
    pub fn shape(self) -> (&'static str, u32, u32) {
        match self {
            Job::K4Qd1 => ("4k", 1, 1),
            Job::K16Qd1 => ("16k", 1, 1),
            Job::K4Qd4 => ("4k", 4, 1),
            Job::K4Qd1Nj4 => ("4k", 1, 4),
        }
    }
    /// fio's arguments inside dom0.
    pub fn fio_args(self, runtime_s: u64) -> Vec<String> {
        let (bs, qd, nj) = self.shape();
        [
            format!("--name={}", self.name()),
            "--filename=/dev/nvme0n1".into(),
            "--rw=randread".into(),
            format!("--bs={bs}"),
            format!("--iodepth={qd}"),
            format!("--numjobs={nj}"),
            "--group_reporting".into(),
            "--ioengine=io_uring".into(),
            "--direct=1".into(),
            "--time_based".into(),
            format!("--runtime={runtime_s}"),
            "--output-format=json+".into(),
            "--output=/tmp/fio.json".into(),
        ]
        .into()
    }
}

/// Xen's command line for dom0 mode (`sync_console` under -icount: see `qemu::xen_bootargs`).
pub fn xen_cmdline(sched: &str, vwfi: &str, dom0_vcpus: u32, pin: bool, icount: bool) -> String {
    format!(
        "console=dtuart dtuart=/pl011@9000000 dom0_mem=512M dom0_max_vcpus={dom0_vcpus}{} sched={sched} vwfi={vwfi} bootscrub=0{}",
        if pin { " dom0_vcpus_pin" } else { "" },
        if icount { " sync_console" } else { "" }
    )
}

/// dom0's kernel command line: console on Xen's hvc; loglevel 5 so NVMe timeouts (KERN_WARNING) show.
/// `cryptomgr.notests`: as the KVM lab's (kvm::kernel_cmdline), the kernel's boot-time crypto
/// self-tests are skipped (2 s of emulated time; nothing measured uses them).
pub const DOM0_CMDLINE: &str = "console=hvc0 rdinit=/init loglevel=5 cryptomgr.notests";

/// QEMU's command line for one boot: Xen with dom0 (`-device guest-loader`), the NVMe, and —
/// when counting — QEMU's exception log (`-d int -D QLOG`) and the GIC trace events.
/// Under -icount QEMU runs all vCPUs in one thread and Xen's boot stalls with 2 CPUs (after
/// "P2M: 4 levels", as in `xen::run`; seen here again with dom0): one pCPU there.
pub fn qemu_command(p: &Boot, icount: Option<&str>, qlog: Option<&Path>, instrument: &crate::config::Instrument) -> Vec<String> {
    let machine = Machine::xen_dom0(if icount.is_some() { 1 } else { 2 }, icount.map(String::from));
    let mut cmd = QemuCmd::new(&machine).kernel(&p.xen).append(&p.xen_cmd);
    cmd = cmd.device(format!("guest-loader,addr=0x49000000,kernel={},bootargs={DOM0_CMDLINE}", p.kernel.display()));
    cmd = cmd.device(format!("guest-loader,addr=0x50000000,initrd={}", p.initrd.display()));
    cmd = cmd.args(["-drive".into(), format!("file={},if=none,id=nv,format=raw", p.disk.display())]).device("nvme,drive=nv,serial=irqlab".into());
    if let Some(q) = qlog {
        cmd = cmd.args(["-d".into(), "int".into(), "-D".into(), q.display().to_string()]);
        cmd = cmd.args(delivery::TRACE_EVENTS.iter().flat_map(|e| ["-trace".to_string(), e.to_string()]));
    }
    cmd.finish(instrument)
}

/// Refusals before anything runs (exit 2).
pub fn check(x: &XenConfig) -> Result<(), LabError> {
    if x.vcpus.is_some() {
        return Err(LabError::Usage("--vcpus: the fio mode has no benchmark domU; use --dom0-vcpus".into()));
    }
    if x.cpu.is_some() || x.gic.is_some() {
        return Err(LabError::Usage(
            "--cpu/--gic: the fio mode's board is fixed (GICv4.0 with the ITS on -cpu max: the NVMe's MSIs as LPIs, the S1 series' direct injection); --cpu and --gic choose the domU benches' board".into(),
        ));
    }
    if x.neighbour != Neighbour::Idle {
        return Err(LabError::Usage("--neighbour: not available in the fio mode (dom0 only)".into()));
    }
    if x.icount && x.dom0_vcpus.unwrap_or(1) > 1 {
        return Err(LabError::Usage("--dom0-vcpus: at most 1 under --icount (the lab runs 1 pCPU there: Xen's boot stalls with 2)".into()));
    }
    if x.sched == Sched::Credit {
        return Err(LabError::Usage("--sched credit: the fio mode runs credit2 or null (the S1 configurations)".into()));
    }
    if x.sched == Sched::Null && x.xen.is_none() && x.xen_src.is_none() {
        return Err(LabError::Usage("--sched null: needs a Xen built with the null scheduler: --xen-src DIR --xen-config SCHED_NULL=y".into()));
    }
    Ok(())
}

/// What every repetition boots.
pub struct Boot {
    pub xen: PathBuf,
    pub xen_cmd: String,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub disk: PathBuf,
}

/// The mode made ready: its output, what it boots, what the result records.
struct Prepared {
    out: output::Out,
    work: PathBuf,
    qemu_bin: PathBuf,
    boot: Boot,
    ctx: result::Context,
}

/// Runs the mode; see the module doc.
pub fn run(x: &XenConfig, f: &FioConfig, command: Vec<String>) -> Result<i32, LabError> {
    check(x)?;
    let p = prepare(x, f)?;
    let mut reps = Vec::new();
    for rep in 1..=f.repeat {
        reps.push(boot(x, f, &p, rep)?);
    }
    bring_back(&p, &reps, command)
}

/// Xen, dom0's kernel, modules and fio from the lab cache (fio built there when missing), the
/// initramfs and the NVMe's disk image.
fn prepare(x: &XenConfig, f: &FioConfig) -> Result<Prepared, LabError> {
    let out = output::Out::prepare(&f.out, x.force)?;
    let qemu_bin = deps::require_tool("qemu-system-aarch64", "qemu-system-arm")?;
    let (xen, built) = crate::xen::resolve(x)?;
    let cache = deps::cache_dir();
    let kernel = deps::kernel_image(&cache)?;
    let fio = crate::fio_build::ensure(&cache)?;
    let entries = init::entries(&deps::busybox(&cache)?, &fio, &init::nvme_modules(&cache)?, &f.job.fio_args(f.runtime))?;
    let work = out.work_dir()?;
    let initrd = work.join("initrd.cpio");
    std::fs::write(&initrd, newc(&entries)).map_err(LabError::io(&initrd))?;
    let disk = work.join("nvme.img");
    std::fs::File::create(&disk).and_then(|fh| fh.set_len(64 << 20)).map_err(LabError::io(&disk))?;
    let sched = if x.sched == Sched::Null { "null" } else { "credit2" };
    let dom0_vcpus = x.dom0_vcpus.unwrap_or(1);
    let xen_cmd = xen_cmdline(sched, x.vwfi.name(), dom0_vcpus, x.dom0_pin, x.icount);
    let ctx = result::Context {
        job: f.job,
        runtime_s: f.runtime,
        sched,
        vwfi: x.vwfi.name(),
        dom0_vcpus,
        pin: x.dom0_pin,
        icount: x.icount.then(|| x.icount_opts.clone().unwrap_or_else(|| crate::qemu::ICOUNT_DEFAULT.into())),
        xen_cmdline: xen_cmd.clone(),
        xen_params: crate::xen::xen_params(&xen, built.as_ref()),
        fio_source: crate::fio_build::source_of(&cache),
        kernel: kernel.display().to_string(),
        counted: !f.no_counts,
    };
    Ok(Prepared { out, work, qemu_bin, boot: Boot { xen, xen_cmd, kernel, initrd, disk }, ctx })
}

/// One repetition: a fresh boot, bounded ([`Dom0Watcher`]), fio's JSON back and the delivery
/// counts of fio's window. A failure keeps the console as `failed-console.log` and names it.
fn boot(x: &XenConfig, f: &FioConfig, p: &Prepared, rep: u32) -> Result<Rep, LabError> {
    let slow = if x.icount { 5 } else { 1 };
    let qlog = (!f.no_counts).then(|| p.work.join(format!("qemu-{rep}.log")));
    let args = qemu_command(&p.boot, p.ctx.icount.as_deref(), qlog.as_deref(), &x.instrument);
    let log_path = p.work.join(format!("console-{rep}.log"));
    let job = Duration::from_secs((f.runtime + 60) * slow * if qlog.is_some() { 2 } else { 1 });
    let w = Dom0Watcher::new(Duration::from_secs(120 * slow), job, Duration::from_secs(240 * slow) + job, qlog.clone());
    eprintln!(
        "irqlab-lab: dom0 fio {} repetition {rep}/{} (Xen {}, vwfi={}, dom0 {} vCPU{}{}); console → {}",
        f.job.name(),
        f.repeat,
        p.ctx.sched,
        p.ctx.vwfi,
        p.ctx.dom0_vcpus,
        if x.dom0_pin { " pinned" } else { "" },
        if x.icount { ", -icount" } else { ", TCG" },
        log_path.display()
    );
    let s = crate::session::run(&p.qemu_bin, &args, &log_path, w)?;
    let fail = |why: String, w: &Dom0Watcher| {
        let kept = p.out.path("failed-console.log");
        let _ = std::fs::copy(&log_path, &kept);
        p.out.remove_work_dir();
        let ev = if w.evidence.is_empty() { String::new() } else { format!("; console: {}", w.evidence.iter().rev().take(6).rev().cloned().collect::<Vec<_>>().join(" | ")) };
        LabError::Boot { why: format!("dom0 fio {} repetition {rep}: {why}{ev}; no result written", f.job.name()), log: kept }
    };
    if let Outcome::Failed(w) | Outcome::TimedOut(w) = &s.outcome {
        return Err(fail(w.clone(), &s.watcher));
    }
    let files = crate::frame::framed_files(&s.log).map_err(|e| fail(format!("fio's JSON did not come back whole: {e}"), &s.watcher))?;
    let Some((_, json)) = files.into_iter().find(|(n, _)| n == "fio.json") else {
        return Err(fail("no fio.json on the console".into(), &s.watcher));
    };
    let counts = counts(&qlog, &s.watcher).map_err(|e| fail(e.to_string(), &s.watcher))?;
    if let Some(q) = &qlog {
        let _ = std::fs::remove_file(q);
    }
    Ok(Rep { fio_json: String::from_utf8_lossy(&json).into_owned(), console: s.log.clone(), counts, start_to_fio_end: s.watcher.fio_end.map(|e| e.0), wall: s.wall })
}

/// The delivery counts of QEMU's log between `fio start` and `fio end` (none when not counting).
fn counts(qlog: &Option<PathBuf>, w: &Dom0Watcher) -> Result<Option<delivery::Counts>, LabError> {
    let (Some(q), Some((_, a)), Some((_, b))) = (qlog, w.fio_start, w.fio_end) else { return Ok(None) };
    let all = std::fs::read(q).map_err(LabError::io(q))?;
    let all = String::from_utf8_lossy(&all);
    let (a, b) = (floor_char(&all, a as usize), floor_char(&all, b as usize));
    let c = delivery::count_window(&all, &all[a..b], &q.display().to_string()).map_err(|e| LabError::Setup(e.to_string()))?;
    Ok(Some(c))
}

/// The repetitions' consoles and fio's JSON beside the result (import of fio's JSON, labelled).
fn bring_back(p: &Prepared, reps: &[Rep], command: Vec<String>) -> Result<i32, LabError> {
    let result = result::build(&p.ctx, reps, command)?;
    for (i, r) in reps.iter().enumerate() {
        p.out.write_new(&format!("console-{}.log", i + 1), r.console.as_bytes())?;
        p.out.write_new(&format!("fio-{}.json", i + 1), r.fio_json.as_bytes())?;
    }
    p.out.write_result(&result)?;
    let _ = std::fs::remove_file(p.out.path("failed-console.log"));
    p.out.remove_work_dir();
    eprintln!("irqlab-lab: wrote {}", p.out.path("result.json").display());
    Ok(0)
}

/// The largest char boundary at or below `i` (QEMU's log is ASCII; this guards a torn write).
fn floor_char(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests;

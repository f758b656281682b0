//! `irqlab-lab xen [--xen-src …] -- fio --job J --out DIR`: Xen with Debian's arm64 kernel as
//! dom0 driving QEMU's emulated NVMe (MSIs as LPIs through the ITS) and fio running there.
//!
//! Why: S1 asks what Xen's GICv4 series changes for dom0's I/O; only a real device whose MSIs
//! go through the ITS exercises the series' direct-injection path (`its_vlpi_map`, patch 0006;
//! doorbells, 0017). Steps: Xen (built, prebuilt or Debian's: `xen::resolve`); the kernel, its
//! NVMe modules and busybox from Debian's arm64 packages; a static aarch64 fio
//! ([`crate::fio_build`]); an initramfs whose `/init` loads the modules, waits for /dev/nvme0n1,
//! runs the job and prints fio's JSON base64-framed on the console (`kvm::framed_files`); QEMU
//! `-M virt,virtualization=on,gic-version=4,its=on -cpu max` with dom0 loaded by
//! `-device guest-loader`. One fresh boot per repetition. fio's JSON becomes the result through
//! `irqlab import fio` (`import::import_files`); the delivery counts
//! ([`crate::delivery`]) come from QEMU's log between dom0's `fio start` and `fio end` lines.
//! Every wait is bounded ([`Dom0Watcher`]); a dom0 that does not boot, an NVMe timeout or a fio
//! that fails is a named failure with the console lines that show it, and no result is written.
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::cli::{Neighbour, Sched, Vwfi, XenArgs};
use crate::error::LabError;
use crate::initramfs::{newc, Entry};
use crate::kvm::MARK;
use crate::watch::{Outcome, Watch};
use crate::{delivery, deps, output};

/// The S1 job set (randread on the whole emulated NVMe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Job {
    #[value(name = "4k-qd1")]
    K4Qd1,
    #[value(name = "16k-qd1")]
    K16Qd1,
    #[value(name = "4k-qd4")]
    K4Qd4,
    #[value(name = "4k-qd1-nj4")]
    K4Qd1Nj4,
}

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

/// A `--runtime` clap hands to [`parse_runtime`] that it refuses (clap prints the text after the
/// flag's name).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeArgError {
    #[error("{text}: {source} (e.g. 5s)")]
    NotADuration { text: String, source: humantime::DurationError },
    #[error("{0}: whole seconds between 1 s and 600 s")]
    OutOfRange(String),
}

fn parse_runtime(s: &str) -> Result<u64, RuntimeArgError> {
    let d = humantime::parse_duration(s).map_err(|source| RuntimeArgError::NotADuration { text: s.into(), source })?;
    let n = d.as_secs();
    if n == 0 || n > 600 || d.subsec_nanos() != 0 {
        return Err(RuntimeArgError::OutOfRange(s.into()));
    }
    Ok(n)
}

/// The words after `--` in fio mode.
#[derive(Debug, Clone, Parser)]
#[command(name = "fio arguments", no_binary_name = true)]
pub struct FioArgs {
    #[arg(value_parser = ["fio"])]
    pub what: String,
    #[arg(long, value_enum)]
    pub job: Job,
    /// fio's runtime per repetition (whole seconds).
    #[arg(long, default_value = "5s", value_parser = parse_runtime)]
    pub runtime: u64,
    /// Repetitions, each a fresh boot.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub repeat: u32,
    /// Do not log QEMU's exceptions and GIC events (no delivery counts; the log slows TCG down).
    #[arg(long)]
    pub no_counts: bool,
    #[arg(long)]
    pub out: PathBuf,
}

/// The kernel modules dom0 needs for NVMe (Debian's 6.1 arm64 kernel has NVMe as modules); load
/// order comes from their `depends=` (`vfio::load_order`).
pub const NVME_MODULES: [&str; 9] = ["crct10dif_common", "crct10dif_generic", "crc-t10dif", "crc64", "crc64-rocksoft", "crc64_rocksoft_generic", "t10-pi", "nvme-core", "nvme"];

/// `/init`: modules, the NVMe, the job, fio's JSON framed on the console, power off.
pub fn init_script(modules: &[String], fio: &[String]) -> String {
    let m = MARK;
    let loads: String = modules.iter().map(|n| format!("insmod /lib/nvme/{n}.ko || echo \"{m}fail insmod {n}\"\n")).collect();
    let pre = crate::initramfs::INIT_PREAMBLE;
    format!(
        r#"{pre}mkdir -p /tmp
echo "{m}init kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)"
{loads}i=0
while [ ! -b /dev/nvme0n1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
if [ ! -b /dev/nvme0n1 ]; then
  dmesg | grep -i -E 'nvme|its|msi' | tail -n 20 | sed 's/^/{m}dmesg /'
  echo "{m}fail no /dev/nvme0n1 30 s after loading the NVMe driver"
  poweroff -f
fi
echo "{m}nvme ok $(grep nvme /proc/interrupts | tr -s ' ' | tr '\n' ';')"
echo "{m}fio start"
/bin/fio {fio}
rc=$?
echo "{m}fio end rc=$rc"
echo "{m}irqs $(grep nvme /proc/interrupts | tr -s ' ' | tr '\n' ';')"
if [ $rc -ne 0 ]; then
  tail -n 20 /tmp/fio.json | sed 's/^/{m}fio-output /'
  echo "{m}fail fio exited with $rc"
  poweroff -f
fi
echo "{m}file fio.json begin"
base64 /tmp/fio.json
echo "{m}file fio.json end"
echo "{m}done"
poweroff -f
"#,
        fio = fio.join(" ")
    )
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
/// `cryptomgr.notests`: as the KVM lab's (kvm::qemu_args), the kernel's boot-time crypto
/// self-tests are skipped (2 s of emulated time; nothing measured uses them).
pub const DOM0_CMDLINE: &str = "console=hvc0 rdinit=/init loglevel=5 cryptomgr.notests";

/// QEMU's arguments for one boot.
/// Under -icount QEMU runs all vCPUs in one thread and Xen's boot stalls with 2 CPUs (after
/// "P2M: 4 levels", as in `xen::run`; seen here again with dom0): one pCPU there.
pub fn qemu_args(xen: &Path, xen_cmd: &str, kernel: &Path, initrd: &Path, disk: &Path, icount: Option<&str>, qlog: Option<&Path>) -> Vec<String> {
    let smp = if icount.is_some() { "1" } else { "2" };
    let mut a: Vec<String> = ["-M", "virt,virtualization=on,gic-version=4,its=on", "-cpu", "max", "-smp", smp, "-m", "2048"].map(String::from).into();
    if let Some(ic) = icount {
        a.extend(["-icount".into(), ic.to_string()]);
    }
    a.extend(["-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot"].map(String::from));
    a.extend(["-kernel".into(), xen.display().to_string(), "-append".into(), xen_cmd.to_string()]);
    a.extend(["-device".into(), format!("guest-loader,addr=0x49000000,kernel={},bootargs={DOM0_CMDLINE}", kernel.display())]);
    a.extend(["-device".into(), format!("guest-loader,addr=0x50000000,initrd={}", initrd.display())]);
    a.extend(["-drive".into(), format!("file={},if=none,id=nv,format=raw", disk.display()), "-device".into(), "nvme,drive=nv,serial=irqlab".into()]);
    if let Some(q) = qlog {
        a.extend(["-d".into(), "int".into(), "-D".into(), q.display().to_string()]);
        for e in delivery::TRACE_EVENTS {
            a.extend(["-trace".into(), e.to_string()]);
        }
    }
    a
}

/// Watches a dom0 boot: bounds to `/init`, to the NVMe, to fio's end and on the whole run;
/// notes the QEMU log's size at `fio start` and `fio end` (the counting window).
pub struct Dom0Watcher {
    pub boot: Duration,
    pub job: Duration,
    pub total: Duration,
    qlog: Option<PathBuf>,
    pub init_at: Option<Duration>,
    pub fio_start: Option<(Duration, u64)>,
    pub fio_end: Option<(Duration, u64)>,
    /// Console lines that show a problem (NVMe timeouts, failures), kept for the error.
    pub evidence: Vec<String>,
}

impl Dom0Watcher {
    pub fn new(boot: Duration, job: Duration, total: Duration, qlog: Option<PathBuf>) -> Dom0Watcher {
        Dom0Watcher { boot, job, total, qlog, init_at: None, fio_start: None, fio_end: None, evidence: Vec::new() }
    }
    fn qlog_size(&self) -> u64 {
        self.qlog.as_ref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len()).unwrap_or(0)
    }
}

impl Watch for Dom0Watcher {
    fn line(&mut self, line: &str, now: Duration) -> Option<Outcome> {
        let l = line.trim_end();
        let low = l.to_ascii_lowercase();
        if l.contains("Panic on CPU") || l.contains("Xen BUG at") || l.contains("Kernel panic") {
            self.evidence.push(l.into());
            return Some(Outcome::Failed(l.into()));
        }
        if low.contains("nvme") && (low.contains("timeout") || low.contains("abort")) {
            self.evidence.push(l.into());
            return Some(Outcome::Failed(format!("NVMe I/O timed out in dom0 (interrupts lost?): {l}")));
        }
        if l.contains("Hardware Dom0 halted") || l.contains("Hardware Dom0 shutdown") {
            return Some(Outcome::Failed(format!("dom0 stopped before its report: {l}")));
        }
        let i = l.find(MARK)?;
        let rest = &l[i + MARK.len()..];
        if rest.starts_with("init ") {
            self.init_at = Some(now);
        } else if rest == "fio start" {
            self.fio_start = Some((now, self.qlog_size()));
        } else if rest.starts_with("fio end") {
            self.fio_end = Some((now, self.qlog_size()));
        } else if rest.starts_with("fail") || rest.starts_with("dmesg") || rest.starts_with("fio-output") {
            self.evidence.push(rest.into());
            if let Some(w) = rest.strip_prefix("fail ") {
                return Some(Outcome::Failed(w.into()));
            }
        } else if rest == "done" {
            return Some(Outcome::Done);
        }
        None
    }
    fn wait_for(&self, now: Duration) -> Duration {
        self.deadline().0.saturating_sub(now)
    }
    fn check(&self, now: Duration) -> Option<Outcome> {
        let (at, why) = self.deadline();
        (now >= at).then_some(Outcome::TimedOut(why))
    }
}

impl Dom0Watcher {
    fn deadline(&self) -> (Duration, String) {
        let mut d = vec![(self.total, format!("the whole run took longer than {} s", self.total.as_secs()))];
        match (self.init_at, self.fio_start, self.fio_end) {
            (None, _, _) => d.push((self.boot, format!("dom0 did not reach /init within {} s of QEMU's start (Xen or dom0 did not boot)", self.boot.as_secs()))),
            (Some(t), None, _) => d.push((t + self.boot, format!("the NVMe did not come up (no `fio start`) within {} s of /init", self.boot.as_secs()))),
            (_, Some((t, _)), None) => d.push((t + self.job, format!("fio did not finish within {} s (I/O stalled: interrupts lost?)", self.job.as_secs()))),
            _ => {}
        }
        d.into_iter().min_by_key(|x| x.0).expect("total")
    }
}

/// Refusals before anything runs (exit 2).
pub fn check(x: &XenArgs) -> Result<(), LabError> {
    if x.vcpus.is_some() {
        return Err(LabError::Usage("--vcpus: the fio mode has no benchmark domU; use --dom0-vcpus".into()));
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

fn read(p: &Path) -> Result<Vec<u8>, LabError> {
    std::fs::read(p).map_err(LabError::io(p))
}

/// The NVMe modules of Debian's kernel package, in load order.
fn nvme_modules(cache: &Path) -> Result<Vec<(String, Vec<u8>)>, LabError> {
    let pkg = deps::kernel_package()?;
    let version = pkg.trim_start_matches("linux-image-").to_string();
    let sub = format!("lib/modules/{version}/kernel");
    let want = |root: &Path| root.join(&sub).join("drivers/nvme/host/nvme.ko").is_file();
    let root = deps::ensure_arm64_package_into(cache, &pkg, &format!("{pkg}-modules"), Some(&format!("./{sub}")), want)?;
    let mut all = std::collections::BTreeMap::new();
    for n in NVME_MODULES {
        let hit = ["crypto", "lib", "block", "drivers/nvme/host"].iter().map(|d| root.join(&sub).join(d).join(format!("{n}.ko"))).find(|p| p.is_file());
        let p = hit.ok_or_else(|| LabError::Setup(format!("{pkg}: module {n}.ko not found under {sub}")))?;
        all.insert(crate::vfio::canonical(n), read(&p)?);
    }
    let order = crate::vfio::load_order(&all, &NVME_MODULES).map_err(|e| LabError::Setup(format!("{pkg}: {e}")))?;
    Ok(order.into_iter().map(|n| (n.clone(), all[&n].clone())).collect())
}

/// One boot's outcome.
pub struct Rep {
    pub fio_json: String,
    pub console: String,
    pub counts: Option<delivery::Counts>,
    pub start_to_fio_end: Option<Duration>,
    pub wall: Duration,
}

/// Runs the mode; see the module doc.
pub fn run(x: &XenArgs, f: &FioArgs, command: Vec<String>) -> Result<i32, LabError> {
    check(x)?;
    let out = output::Out::prepare(&f.out, x.force)?;
    let qemu_bin = deps::ensure_tool("qemu-system-aarch64", "qemu-system-arm")?;
    let (xen, built) = crate::xen::resolve(x)?;
    let cache = deps::cache_dir();
    let kernel = deps::kernel_image(&cache)?;
    let busybox = deps::busybox(&cache)?;
    let fio = crate::fio_build::ensure(&cache)?;
    let mods = nvme_modules(&cache)?;
    let work = out.work_dir()?;
    let fio_args = f.job.fio_args(f.runtime);
    let mut entries = vec![
        Entry::Dir { path: "/bin".into() },
        Entry::Dir { path: "/dev".into() },
        Entry::Dir { path: "/proc".into() },
        Entry::Dir { path: "/sys".into() },
        Entry::Dir { path: "/lib".into() },
        Entry::Dir { path: "/lib/nvme".into() },
    ];
    entries.push(Entry::CharDev { path: "/dev/console".into(), major: 5, minor: 1 });
    entries.push(Entry::File { path: "/bin/busybox".into(), mode: 0o755, data: read(&busybox)? });
    entries.push(Entry::File { path: "/bin/fio".into(), mode: 0o755, data: read(&fio)? });
    for (n, ko) in &mods {
        entries.push(Entry::File { path: format!("/lib/nvme/{n}.ko"), mode: 0o644, data: ko.clone() });
    }
    let names: Vec<String> = mods.iter().map(|(n, _)| n.clone()).collect();
    entries.push(Entry::File { path: "/init".into(), mode: 0o755, data: init_script(&names, &fio_args).into_bytes() });
    let initrd = work.join("initrd.cpio");
    std::fs::write(&initrd, newc(&entries)).map_err(LabError::io(&initrd))?;
    let disk = work.join("nvme.img");
    std::fs::File::create(&disk).and_then(|fh| fh.set_len(64 << 20)).map_err(LabError::io(&disk))?;
    let sched = if x.sched == Sched::Null { "null" } else { "credit2" };
    let vwfi = if x.vwfi == Vwfi::Native { "native" } else { "trap" };
    let dom0_vcpus = x.dom0_vcpus.unwrap_or(1);
    let icount = x.icount.then(|| x.icount_opts.clone().unwrap_or_else(|| crate::qemu::ICOUNT_DEFAULT.into()));
    let xen_cmd = xen_cmdline(sched, vwfi, dom0_vcpus, x.dom0_pin, x.icount);
    let slow = if x.icount { 5 } else { 1 };
    let mut reps = Vec::new();
    for rep in 1..=f.repeat {
        let qlog = (!f.no_counts).then(|| work.join(format!("qemu-{rep}.log")));
        let args = qemu_args(&xen, &xen_cmd, &kernel, &initrd, &disk, icount.as_deref(), qlog.as_deref());
        let log_path = work.join(format!("console-{rep}.log"));
        let job = Duration::from_secs((f.runtime + 60) * slow * if qlog.is_some() { 2 } else { 1 });
        let w = Dom0Watcher::new(Duration::from_secs(120 * slow), job, Duration::from_secs(240 * slow) + job, qlog.clone());
        eprintln!(
            "irqlab-lab: dom0 fio {} repetition {rep}/{} (Xen {sched}, vwfi={vwfi}, dom0 {dom0_vcpus} vCPU{}{}); console → {}",
            f.job.name(),
            f.repeat,
            if x.dom0_pin { " pinned" } else { "" },
            if x.icount { ", -icount" } else { ", TCG" },
            log_path.display()
        );
        let s = crate::session::run(&qemu_bin, &args, &log_path, w)?;
        let fail = |why: String, w: &Dom0Watcher| {
            let kept = out.path("failed-console.log");
            let _ = std::fs::copy(&log_path, &kept);
            out.remove_work_dir();
            let ev = if w.evidence.is_empty() { String::new() } else { format!("; console: {}", w.evidence.iter().rev().take(6).rev().cloned().collect::<Vec<_>>().join(" | ")) };
            LabError::Boot { why: format!("dom0 fio {} repetition {rep}: {why}{ev}; no result written", f.job.name()), log: kept }
        };
        match &s.outcome {
            Outcome::Done => {}
            Outcome::Failed(w) | Outcome::TimedOut(w) => return Err(fail(w.clone(), &s.watcher)),
        }
        let files = crate::kvm::framed_files(&s.log).map_err(|e| fail(format!("fio's JSON did not come back whole: {e}"), &s.watcher))?;
        let Some((_, json)) = files.into_iter().find(|(n, _)| n == "fio.json") else {
            return Err(fail("no fio.json on the console".into(), &s.watcher));
        };
        let counts = match (&qlog, s.watcher.fio_start, s.watcher.fio_end) {
            (Some(q), Some((_, a)), Some((_, b))) => {
                let all = std::fs::read(q).map_err(LabError::io(q))?;
                let all = String::from_utf8_lossy(&all);
                let (a, b) = (floor_char(&all, a as usize), floor_char(&all, b as usize));
                Some(delivery::count_window(&all, &all[a..b], &q.display().to_string()).map_err(|e| fail(e.to_string(), &s.watcher))?)
            }
            _ => None,
        };
        if let Some(q) = &qlog {
            let _ = std::fs::remove_file(q);
        }
        reps.push(Rep { fio_json: String::from_utf8_lossy(&json).into_owned(), console: s.log.clone(), counts, start_to_fio_end: s.watcher.fio_end.map(|e| e.0), wall: s.wall });
    }
    let ctx = crate::dom0_result::Context {
        job: f.job,
        runtime_s: f.runtime,
        sched,
        vwfi,
        dom0_vcpus,
        pin: x.dom0_pin,
        icount: icount.clone(),
        xen_cmdline: xen_cmd,
        xen_params: crate::xen::xen_params(&xen, built.as_ref()),
        fio_source: crate::fio_build::source_of(&cache),
        kernel: kernel.display().to_string(),
        counted: !f.no_counts,
    };
    let result = crate::dom0_result::build(&ctx, &reps, command)?;
    for (i, r) in reps.iter().enumerate() {
        out.write_new(&format!("console-{}.log", i + 1), r.console.as_bytes())?;
        out.write_new(&format!("fio-{}.json", i + 1), r.fio_json.as_bytes())?;
    }
    out.write_result(&result)?;
    let _ = std::fs::remove_file(out.path("failed-console.log"));
    out.remove_work_dir();
    eprintln!("irqlab-lab: wrote {}", out.path("result.json").display());
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
#[path = "dom0_tests.rs"]
mod tests;

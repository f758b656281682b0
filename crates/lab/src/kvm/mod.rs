//! `irqlab-lab kvm`: Debian's arm64 kernel with KVM (nested, on QEMU's emulated EL2) booted from an
//! initramfs (busybox-static + an aarch64 `irqlab` + `/init`); `/init` runs `irqlab <args>` with
//! `--out /out`, prints every file of /out base64-framed on the serial console (`frame.rs`), and
//! powers off. The lab decodes the files into the `--out` given (never over an existing file
//! without `--force`), keeping the console as `kvm-console.log`. arm-lab.md has the verified QEMU
//! command and kernel facts.
//!
//! The sequence, one function each: [`check`] (everything refused before anything is fetched:
//! the benches, existing outputs, the user's kernel, the aarch64 irqlab), `prepare` (the kernel,
//! busybox, modules and peers from the lab cache, the initramfs, QEMU's command line), `boot`
//! (one QEMU session, bounded) and `bring_back` (the framed files into each bench's `--out`,
//! labelled, and the exit status).
pub mod benches;
pub mod board;
pub mod census;
pub mod facts;
pub mod init;
pub mod watcher;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use facts::{label_measured, record_facts, Times};
pub use init::{busy_loop, init_script_with, LAB_HOSTNAME};
pub use watcher::KvmWatcher;

use crate::config::{Gic, KvmConfig, LabDevice};
use crate::error::LabError;
use crate::initramfs::newc;
use crate::own_kernel::KernelChoice;
use crate::qemu::QemuCmd;
use crate::session::Session;
use crate::watch::Outcome;
use crate::{deps, output};
use benches::Bench;
use board::host_board;

/// The files a KVM lab run writes into each bench's `--out`, refused without `--force`.
const OUTPUTS: [&str; 4] = ["result.json", "result.csv", "kvm-console.log", crate::kvm_events::FILE];

/// What [`check`] found: the benches, and the user's kernel when `--kernel` was given.
pub struct Checked {
    pub benches: Vec<Bench>,
    pub own: Option<KernelChoice>,
    pub irqlab: PathBuf,
}

/// Everything refused before anything is fetched or booted (exit 2, naming the flag or file).
pub fn check(k: &KvmConfig) -> Result<Checked, LabError> {
    let benches = benches::plan(&k.args)?;
    for out_dir in benches.iter().map(|b| &b.out).filter(|_| !k.force) {
        if let Some(p) = OUTPUTS.iter().map(|n| out_dir.join(n)).find(|p| p.exists()) {
            return Err(LabError::Usage(format!("--out: {} already exists; not replacing an earlier result (use --force)", p.display())));
        }
    }
    if let Some(t) = k.trace_its.as_ref().filter(|_| !k.force) {
        if let Some(p) = [t.clone(), crate::its_script::script_path(t)].into_iter().find(|p| p.exists()) {
            return Err(LabError::Usage(format!("--trace-its: {} already exists; not replacing it (use --force)", p.display())));
        }
    }
    let vfio = |w: &[String]| w.windows(2).any(|p| p[0] == "--via" && p[1].starts_with("vfio")) || w.iter().any(|a| a.starts_with("--via=vfio"));
    if k.device.is_none() && benches.iter().any(|b| vfio(&b.inner)) {
        return Err(LabError::Usage("the bench assigns a device (--via vfio-*) but there is no `--device edu`".into()));
    }
    board::check(k)?;
    if k.census {
        check_census(k, &benches)?;
    }
    let own = preflight(k)?;
    Ok(Checked { benches, own, irqlab: irqlab_binary(k)? })
}

/// `--census` counts one bench per boot (its windows are not split by bench), not a peer's guest,
/// and never over an earlier `census.txt`.
fn check_census(k: &KvmConfig, benches: &[Bench]) -> Result<(), LabError> {
    if benches.len() > 1 {
        return Err(LabError::Usage(format!("--census counts one bench per boot; {} benches were given after --", benches.len())));
    }
    if k.peer_kvm_unit_tests.is_some() {
        return Err(LabError::Usage("--census with --peer-kvm-unit-tests: the peer's guest would be counted as irqlab's".into()));
    }
    let c = benches[0].out.join(CENSUS_FILE);
    if c.exists() && !k.force {
        return Err(LabError::Usage(format!("--out: {} already exists; not replacing an earlier census (use --force)", c.display())));
    }
    Ok(())
}

/// The census's raw counts, beside the result.
const CENSUS_FILE: &str = "census.txt";

/// The user's own kernel (`--kernel`), checked without fetching or booting anything: exit 2
/// naming the flag and what is wrong (not arm64, no KVM, modules of another release …).
pub fn preflight(k: &KvmConfig) -> Result<Option<KernelChoice>, LabError> {
    let Some(kernel) = &k.kernel else { return Ok(None) };
    crate::own_kernel::choose(kernel, k.modules.as_deref(), k.kernel_config.as_deref(), k.device.is_some(), &deps::cache_dir())
        .map(Some)
        .map_err(|e| LabError::Usage(e.to_string()))
}

/// The aarch64 `irqlab`: `--irqlab PATH`, else `IRQLAB_LAB_IRQLAB` (scripts/arm-lab.sh cross-builds
/// this workspace's and sets it). The lab builds nothing at run time.
fn irqlab_binary(k: &KvmConfig) -> Result<PathBuf, LabError> {
    let (p, from) = match (&k.irqlab, std::env::var_os("IRQLAB_LAB_IRQLAB")) {
        (Some(p), _) => (p.clone(), "--irqlab"),
        (None, Some(e)) => (PathBuf::from(e), "IRQLAB_LAB_IRQLAB"),
        (None, None) => {
            return Err(LabError::Usage(
                "no aarch64 irqlab to run inside: give --irqlab PATH (a static aarch64 build of `irqlab`), or run through scripts/arm-lab.sh, which cross-builds this workspace's and passes it as IRQLAB_LAB_IRQLAB".into(),
            ))
        }
    };
    if !p.is_file() {
        return Err(LabError::Usage(format!("{from} {}: no such file", p.display())));
    }
    Ok(p)
}

/// A boot made ready: its outputs, the command line, what ran.
struct Prepared {
    benches: Vec<Bench>,
    outs: Vec<output::Out>,
    qemu: Vec<String>,
    qemu_bin: PathBuf,
    kernel: PathBuf,
    log: PathBuf,
    /// Result parameters: the kernel, irqlab's sha256, the peer.
    what_ran: BTreeMap<String, String>,
    peer: bool,
    census: Option<(crate::census::Plan, crate::census::plugin::Plugin)>,
}

pub fn run(k: &KvmConfig, command: Vec<String>) -> Result<i32, LabError> {
    let c = check(k)?;
    let p = prepare(k, c)?;
    let s = boot(k, &p)?;
    bring_back(k, &p, s, &command)
}

/// The kernel (the user's or Debian's), the initramfs and QEMU's command line.
fn prepare(k: &KvmConfig, c: Checked) -> Result<Prepared, LabError> {
    let qemu_bin = deps::require_tool("qemu-system-aarch64", "qemu-system-arm")?;
    let cache = deps::cache_dir();
    let choice = match c.own {
        Some(own) => own,
        None => debian_kernel(&cache)?,
    };
    let irqlab_sha = crate::kernel_image::sha256_file(&c.irqlab).map_err(LabError::io(&c.irqlab))?;
    let outs = c.benches.iter().map(|b| output::Out::prepare(&b.out, true)).collect::<Result<Vec<_>, _>>()?;
    let work = outs[0].work_dir()?;
    let contents = init::Contents { irqlab: crate::kvm::benches::stripped(&c.irqlab, &irqlab_sha, &cache), busybox: deps::busybox(&cache)? };
    let (entries, peer) = init::entries(k, &c.benches, &choice, &contents, &cache)?;
    let initrd = work.join("initrd.cpio");
    std::fs::write(&initrd, newc(&entries)).map_err(LabError::io(&initrd))?;
    let census = match k.census {
        true => Some(census::prepare(&qemu_bin, &choice, &cmdline(k), &c.irqlab, &contents.busybox, outs[0].path(CENSUS_FILE))?),
        false => None,
    };
    let mut instrument = k.instrument.clone();
    if let Some((plan, plugin)) = &census {
        instrument.extra_args.extend(plan.qemu_args(&plugin.path)?);
    }
    let qemu = qemu_command(k, &choice.image, &initrd, &work, &instrument)?;
    let mut what_ran = choice.record();
    if let Some(p) = &peer {
        what_ran.extend(p.record.clone());
    }
    what_ran.insert("lab.irqlab.sha256".into(), irqlab_sha);
    what_ran.extend(board::record(k));
    let log = outs[0].path("kvm-console.log");
    if census.is_some() {
        what_ran.insert("lab.census".into(), format!("on (QEMU TCG plugin; raw counts in {CENSUS_FILE}; kernel booted {})", census::NOKASLR));
    }
    Ok(Prepared { benches: c.benches, outs, qemu, qemu_bin, kernel: choice.image, log, what_ran, peer: peer.is_some(), census })
}

/// Debian's arm64 kernel from the lab cache, checked as a user's would be.
fn debian_kernel(cache: &Path) -> Result<KernelChoice, LabError> {
    let img = deps::kernel_image(cache)?;
    let pkg = img.file_name().and_then(|n| n.to_str()).unwrap_or("").replacen("vmlinuz-", "linux-image-", 1);
    // Debian's kernel: its vfio modules come from the package (vfio.rs), so no device needs here.
    crate::own_kernel::check(&img, None, None, false, "(Debian's kernel)", format!("Debian package {pkg}:arm64")).map_err(|e| LabError::Setup(e.to_string()))
}

/// The kernel's command line. `cryptomgr.notests`: Debian's kernel runs every crypto algorithm's
/// self-test at boot (`crypto_algapi_init`, 2.0 s of the 3.2 s of emulated time to `/init` under
/// `-icount`, measured with `initcall_debug`); nothing the lab measures uses them, so they are
/// skipped (QEMU start → `/init` ~3.5 s shorter on the wall).
pub fn kernel_cmdline(gic: Gic) -> &'static str {
    if gic.direct_vlpis() {
        "console=ttyAMA0 panic=-1 quiet cryptomgr.notests kvm-arm.vgic_v4_enable=1"
    } else {
        "console=ttyAMA0 panic=-1 quiet cryptomgr.notests"
    }
}

/// The kernel's command line for `k`: with `--census`, booted without KASLR so that the symbols
/// taken in the symbol boot are the census boot's addresses.
fn cmdline(k: &KvmConfig) -> String {
    let base = kernel_cmdline(k.gic);
    if k.census {
        format!("{base} {}", census::NOKASLR)
    } else {
        base.to_string()
    }
}

/// QEMU's command line (arm-lab.md's verified KVM/arm64 command), with the ITS trace and the
/// assigned device when asked for, and `instrument`'s arguments.
fn qemu_command(k: &KvmConfig, kernel: &Path, initrd: &Path, work: &Path, instrument: &crate::config::Instrument) -> Result<Vec<String>, LabError> {
    let machine = host_board(k);
    let mut cmd = QemuCmd::new(&machine).kernel(kernel).initrd(initrd).append(&cmdline(k));
    if let Some(t) = &k.trace_its {
        let ev = work.join("its-trace-events");
        std::fs::write(&ev, crate::its_trace::events_file_text()).map_err(LabError::io(&ev))?;
        let _ = std::fs::remove_file(t);
        cmd = cmd.args(crate::its_trace::qemu_args(&ev, t));
    }
    if k.device == Some(LabDevice::Edu) {
        cmd = cmd.device(crate::vfio::DEVICE.into());
    }
    Ok(cmd.finish(instrument))
}

/// One QEMU session: a bound until `/init` (120 s, ×5 under -icount) and on the whole (600 s or `--timeout-s`).
fn boot(k: &KvmConfig, p: &Prepared) -> Result<Session<KvmWatcher>, LabError> {
    let slow = if k.icount { 5 } else { 1 };
    let watcher = KvmWatcher::new(Duration::from_secs(120 * slow), Duration::from_secs(k.timeout_s.unwrap_or(600 * slow)));
    eprintln!("irqlab-lab: booting {} under QEMU TCG ({}{}); console → {}", p.kernel.display(), host_board(k).describe(), if k.icount { ", -icount" } else { "" }, p.log.display());
    let s = crate::session::run(&p.qemu_bin, &p.qemu, &p.log, watcher)?;
    p.outs[0].remove_work_dir();
    Ok(s)
}

/// The framed files into each bench's `--out` (results labelled and given what ran), the peer's
/// and the exit reasons' summaries, the ITS script; then the exit status.
fn bring_back(k: &KvmConfig, p: &Prepared, s: Session<KvmWatcher>, command: &[String]) -> Result<i32, LabError> {
    let files = crate::frame::framed_files(&s.log).map_err(|why| LabError::Boot { why: why.to_string(), log: p.log.clone() })?;
    let mut what_ran = p.what_ran.clone();
    if let Some((_, b)) = files.iter().find(|(n, _)| p.peer && n == "micro-bench.txt") {
        let st = crate::peers::status(&String::from_utf8_lossy(b), k.icount);
        eprintln!("irqlab-lab: peer micro-bench: {st}");
        what_ran.insert("lab.peer.status".into(), st);
    }
    for (framed, bytes) in &files {
        let (i, name) = crate::frame::route(framed).unwrap_or((None, framed.as_str()));
        let Some(o) = p.outs.get(i.unwrap_or(0)) else {
            return Err(LabError::Boot { why: format!("a file for bench {} of {}: {framed}", i.unwrap_or(0) + 1, p.outs.len()), log: p.log.clone() });
        };
        let at = Times { init: s.watcher.init_at, bench: s.watcher.bench_at.get(i.unwrap_or(0)).copied(), wall: s.wall };
        let mut bytes = if name == "result.json" { record_facts(&label_measured(bytes, k.icount, command), &what_ran, at) } else { bytes.clone() };
        if let (Some((plan, plugin)), "result.json") = (&p.census, name) {
            bytes = with_census(&bytes, plan, plugin, k.icount)?;
        }
        o.write_new(name, &bytes)?;
        eprintln!("irqlab-lab: wrote {}", o.path(name).display());
    }
    if let Some((_, b)) = files.iter().find(|(n, _)| k.exit_reasons && n == crate::kvm_events::FILE) {
        for (n, what) in crate::kvm_events::exits_by_class(&String::from_utf8_lossy(b)) {
            eprintln!("irqlab-lab: kvm_exit {n:>7} {what}");
        }
    }
    if let Some(t) = &k.trace_its {
        crate::its_script::convert_file(t, k.gic, command)?;
    }
    let wrote: Vec<bool> = (0..p.benches.len()).map(|i| files.iter().any(|(f, _)| crate::frame::route(f).map(|(j, _)| j.unwrap_or(0)) == Some(i))).collect();
    status(&p.benches, &s, &wrote, files.len(), &p.log)
}

/// A measured result with the census of its boot in its (one) configuration.
fn with_census(bytes: &[u8], plan: &crate::census::Plan, plugin: &crate::census::plugin::Plugin, icount: bool) -> Result<Vec<u8>, LabError> {
    let Ok(mut r) = results::from_json_str(&String::from_utf8_lossy(bytes), "result.json") else { return Ok(bytes.to_vec()) };
    let Some(c) = r.configs.first_mut() else { return Ok(bytes.to_vec()) };
    crate::census::finish(plan, plugin, icount.then_some(crate::qemu::ICOUNT_DEFAULT), c)?;
    Ok(results::to_json_string(&r).into_bytes())
}

/// The exit status of a boot: the lab's own failure, then a bench's failure inside, then a bench
/// that wrote nothing; 3 when irqlab's `--stop-above` stopped a run (its result complete), else 0.
fn status(benches: &[Bench], s: &Session<KvmWatcher>, wrote: &[bool], nfiles: usize, log: &Path) -> Result<i32, LabError> {
    let boot_err = |why: String| LabError::Boot { why, log: log.to_path_buf() };
    if let Outcome::Failed(w) | Outcome::TimedOut(w) = &s.outcome {
        return Err(boot_err(format!("{w} ({nfiles} file(s) brought back)")));
    }
    let exits: Vec<String> = (0..benches.len()).map(|i| s.watcher.exits.get(&i).cloned().unwrap_or_else(|| "?".into())).collect();
    let which = |i: usize| if benches.len() > 1 { format!(" (bench {}: {})", i + 1, benches[i].inner.get(1).map(String::as_str).unwrap_or("")) } else { String::new() };
    if let Some(i) = exits.iter().position(|e| e != "0" && e != "3") {
        return Err(boot_err(format!("irqlab inside the lab ended with exit {}{}", exits[i], which(i))));
    }
    if let Some(i) = wrote.iter().position(|w| !w) {
        return Err(boot_err(format!("irqlab inside the lab wrote nothing to --out{}", which(i))));
    }
    if exits.iter().any(|e| e == "3") {
        // irqlab's own "a run was stopped by --stop-above" (a complete result): passed through.
        eprintln!("irqlab-lab: --stop-above stopped a run inside the lab (irqlab's exit status 3, passed through)");
        return Ok(3);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qemu_command_for_v4() {
        let d = tempfile::tempdir().unwrap();
        let k = KvmConfig { gic: Gic::V4_0, ..KvmConfig::default() };
        let a = qemu_command(&k, Path::new("/k"), Path::new("/i"), d.path(), &k.instrument).unwrap().join(" ");
        assert!(a.starts_with("-M virt,virtualization=on,gic-version=4,its=on -cpu max -smp 2"), "{a}");
        assert!(a.ends_with("-kernel /k -initrd /i -append console=ttyAMA0 panic=-1 quiet cryptomgr.notests kvm-arm.vgic_v4_enable=1"), "{a}");
        let k = KvmConfig { icount: true, device: Some(LabDevice::Edu), ..KvmConfig::default() };
        let a = qemu_command(&k, Path::new("/k"), Path::new("/i"), d.path(), &k.instrument).unwrap().join(" ");
        assert!(!a.contains("vgic_v4") && a.contains("-icount shift=2,sleep=off"), "{a}");
        assert!(a.starts_with("-M virt,virtualization=on,gic-version=3,its=on,iommu=smmuv3 ") && a.ends_with(" -device edu"), "{a}");
    }

    #[test]
    fn census_boots_without_kaslr_and_counts_one_bench() {
        let k = KvmConfig { census: true, ..KvmConfig::default() };
        assert!(cmdline(&k).ends_with(" nokaslr") && !cmdline(&KvmConfig::default()).contains("nokaslr"));
        let two = KvmConfig {
            census: true,
            args: "timer --out /tmp/a -- ipi --out /tmp/b".split(' ').map(String::from).collect(),
            irqlab: Some("/bin/sh".into()),
            ..KvmConfig::default()
        };
        let e = check(&two).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--census counts one bench per boot; 2 benches"), "{e}");
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(CENSUS_FILE), "earlier").unwrap();
        let one = KvmConfig { census: true, args: vec!["timer".into(), "--out".into(), d.path().display().to_string()], irqlab: Some("/bin/sh".into()), ..KvmConfig::default() };
        assert!(check(&one).err().unwrap().to_string().contains("not replacing an earlier census"));
        assert_eq!(std::fs::read_to_string(d.path().join(CENSUS_FILE)).unwrap(), "earlier");
    }

    #[test]
    fn the_irqlab_inside_is_given_never_built() {
        let k = KvmConfig { args: "timer --out /tmp/x".split(' ').map(String::from).collect(), irqlab: Some("/nonexistent/irqlab".into()), ..KvmConfig::default() };
        let e = check(&k).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--irqlab /nonexistent/irqlab: no such file"), "{e}");
        let v = KvmConfig { args: "device --via vfio-msi --out /tmp/x".split(' ').map(String::from).collect(), ..KvmConfig::default() };
        assert!(check(&v).err().unwrap().to_string().contains("`--device edu`"));
    }
}

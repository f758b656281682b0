//! `irqlab-lab kvm`: Debian's arm64 kernel with KVM (nested, on QEMU's emulated EL2) booted from an
//! initramfs (busybox-static + an aarch64 `irqlab` + `/init`); `/init` runs `irqlab <args>` with
//! `--out /out`, prints every file of /out base64-framed on the serial console
//! (`@irqlab-lab file NAME begin` … `end`), and powers off. The lab decodes the files into the
//! `--out` given (never over an existing file without `--force`), keeping the console as
//! `kvm-console.log`. arm-lab.md has the verified QEMU command and kernel facts.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;

use crate::cli::{Gic, KvmArgs};
use crate::error::LabError;
use crate::initramfs::{newc, Entry};
use crate::watch::{Outcome, Watch};
use crate::{deps, output};

/// Where the guest's `/init` puts its marker lines.
pub const MARK: &str = "@irqlab-lab ";

/// The `irqlab` arguments with `--out DIR` (or `--out=DIR`) taken out: (args for inside, DIR).
pub fn split_out(args: &[String]) -> Result<(Vec<String>, PathBuf), LabError> {
    let mut inner = Vec::new();
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--out" {
            out = Some(it.next().ok_or_else(|| LabError::Usage("--out: needs a directory".into()))?.clone());
        } else if let Some(v) = a.strip_prefix("--out=") {
            out = Some(v.to_string());
        } else {
            inner.push(a.clone());
        }
    }
    let out = out.ok_or_else(|| LabError::Usage("the irqlab arguments after `--` need `--out DIR` (where result.json comes back to)".into()))?;
    inner.push("--out".into());
    inner.push("/out".into());
    Ok((inner, PathBuf::from(out)))
}

/// The guest's `/init`: `setup` (shell lines, may be empty) runs first (`--device`'s modules and
/// binding, `--busy-cpu`'s loop), then an optional vCPU mover (`--move-vcpus-ms`) is started before
/// irqlab and KVM's exit reasons are traced around it (`--exit-reasons`).
pub fn init_script_with(benches: &[crate::kvm_benches::Bench], setup: &str, move_ms: Option<u64>, exit_reasons: bool) -> String {
    let runs = crate::kvm_benches::run_lines(benches);
    let frame = crate::kvm_benches::frame_lines();
    let mut mover = move_ms.map(crate::its_trace::mover_script).unwrap_or_default();
    let mut after = String::new();
    if exit_reasons {
        mover = crate::kvm_events::before() + &mover;
        after = crate::kvm_events::after();
    }
    let pre = crate::initramfs::INIT_PREAMBLE;
    format!(
        r#"{pre}mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
hostname {LAB_HOSTNAME}
echo "{m}init kernel=$(uname -r) kvm=$([ -e /dev/kvm ] && echo yes || echo no)"
dmesg | grep -i -E 'kvm|gicv4|its:' | sed 's/^/{m}dmesg /'
{setup}mkdir -p /out
{mover}{runs}{after}{frame}echo "{m}done"
poweroff -f
"#,
        m = MARK,
        setup = setup,
        mover = mover,
        after = after
    )
}

/// `/init` lines starting a busy loop pinned to `cpu` (busybox `taskset`), said on the console.
pub fn busy_loop(cpu: u32) -> String {
    format!("taskset -c {cpu} sh -c 'while :; do :; done' &\necho \"{MARK}busy loop on CPU {cpu}: pid $!\"\n")
}

/// A framed file that did not come back whole or safe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("`file {0} end` without its begin")]
    EndWithoutBegin(String),
    #[error("`file {name} end` closes `{open}`")]
    WrongEnd { name: String, open: String },
    #[error("{name}: bad base64: {why}")]
    Base64 { name: String, why: String },
    #[error("refusing file name {0:?} (one plain file name is expected)")]
    UnsafeName(String),
    #[error("the console ends inside `{0}` (truncated)")]
    Truncated(String),
}

/// The framed files in a console capture: (name, bytes). A frame without its end is an error.
pub fn framed_files(log: &str) -> Result<Vec<(String, Vec<u8>)>, FrameError> {
    let mut files = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for raw in log.lines() {
        let l = raw.trim_end_matches('\r');
        let Some(i) = l.find(MARK) else {
            if let Some((_, b)) = cur.as_mut() {
                b.push_str(l.trim());
            }
            continue;
        };
        let rest = &l[i + MARK.len()..];
        if let Some(name) = rest.strip_prefix("file ").and_then(|r| r.strip_suffix(" begin")) {
            cur = Some((name.to_string(), String::new()));
        } else if let Some(name) = rest.strip_prefix("file ").and_then(|r| r.strip_suffix(" end")) {
            let (n, b64) = cur.take().ok_or_else(|| FrameError::EndWithoutBegin(name.into()))?;
            if n != name {
                return Err(FrameError::WrongEnd { name: name.into(), open: n });
            }
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64.as_bytes()).map_err(|e| FrameError::Base64 { name: name.into(), why: e.to_string() })?;
            // The name becomes a file under --out: one plain component (after a bench number), nothing else.
            if crate::kvm_benches::route(name).is_none() {
                return Err(FrameError::UnsafeName(name.into()));
            }
            files.push((name.to_string(), bytes));
        }
    }
    if let Some((n, _)) = cur {
        return Err(FrameError::Truncated(n));
    }
    Ok(files)
}

/// Watches the KVM lab's console: boot bound until `/init` speaks, total bound, done at `done`.
pub struct KvmWatcher {
    boot: Duration,
    total: Duration,
    pub init_at: Option<Duration>,
    /// Each bench's start on the console (QEMU start → the bench's first sample, within its period).
    pub bench_at: Vec<Duration>,
    /// Each bench's exit status word (`exit CODE [bench I]`), by bench.
    pub exits: std::collections::BTreeMap<usize, String>,
}

impl KvmWatcher {
    pub fn new(boot: Duration, total: Duration) -> KvmWatcher {
        KvmWatcher { boot, total, init_at: None, bench_at: Vec::new(), exits: Default::default() }
    }
}

impl Watch for KvmWatcher {
    fn line(&mut self, line: &str, now: Duration) -> Option<Outcome> {
        if line.contains("Kernel panic") {
            return Some(Outcome::Failed(line.trim().to_string()));
        }
        let rest = line.find(MARK).map(|i| line[i + MARK.len()..].trim_end())?;
        if rest.starts_with("init ") {
            self.init_at = Some(now);
        } else if rest.starts_with("bench ") && rest.ends_with(" start") {
            self.bench_at.push(now);
        } else if let Some((i, code)) = crate::kvm_benches::exit_of(rest) {
            self.exits.insert(i, code);
        } else if rest == "done" {
            return Some(Outcome::Done);
        }
        None
    }
    fn wait_for(&self, now: Duration) -> Duration {
        let end = if self.init_at.is_none() { self.boot.min(self.total) } else { self.total };
        end.saturating_sub(now)
    }
    fn check(&self, now: Duration) -> Option<Outcome> {
        if self.init_at.is_none() && now >= self.boot {
            return Some(Outcome::TimedOut(format!("the kernel did not reach /init within {} s", self.boot.as_secs())));
        }
        (now >= self.total).then(|| Outcome::TimedOut(format!("the whole run took longer than {} s", self.total.as_secs())))
    }
}

/// The QEMU arguments (arm-lab.md's verified KVM/arm64 command). `cryptomgr.notests`: Debian's
/// kernel runs every crypto algorithm's self-test at boot (`crypto_algapi_init`, 2.0 s of the
/// 3.2 s of emulated time to `/init` under `-icount`, measured with `initcall_debug`); nothing the
/// lab measures uses them, so they are skipped (QEMU start → `/init` ~3.5 s shorter on the wall).
pub fn qemu_args(gic: Gic, icount: Option<&str>, kernel: &Path, initrd: &Path) -> Vec<String> {
    let (machine, append) = match gic {
        Gic::V3 => ("virt,virtualization=on,gic-version=3,its=on", "console=ttyAMA0 panic=-1 quiet cryptomgr.notests"),
        Gic::V4 => ("virt,virtualization=on,gic-version=4,its=on", "console=ttyAMA0 panic=-1 quiet cryptomgr.notests kvm-arm.vgic_v4_enable=1"),
    };
    let mut a: Vec<String> =
        ["-M", machine, "-cpu", "max", "-smp", "2", "-m", "1024", "-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot"].map(String::from).to_vec();
    if let Some(ic) = icount {
        a.extend(["-icount".to_string(), ic.to_string()]);
    }
    a.extend(["-kernel".into(), kernel.display().to_string(), "-initrd".into(), initrd.display().to_string(), "-append".into(), append.into()]);
    a
}

/// The aarch64 `irqlab`: `--irqlab PATH` / `IRQLAB_LAB_IRQLAB`, else cross-built from this workspace.
fn irqlab_binary(k: &KvmArgs) -> Result<PathBuf, LabError> {
    if let Some(p) = k.irqlab.clone().or_else(|| std::env::var_os("IRQLAB_LAB_IRQLAB").map(PathBuf::from)) {
        return if p.is_file() { Ok(p) } else { Err(LabError::Usage(format!("--irqlab {}: no such file", p.display()))) };
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    deps::ensure_tool("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")?;
    eprintln!("irqlab-lab: cross-building irqlab for aarch64 (cargo build --release --target aarch64-unknown-linux-gnu -p cli)");
    let out = Command::new("cargo")
        .args(["build", "--release", "--target", "aarch64-unknown-linux-gnu", "-p", "cli"])
        .current_dir(&root)
        .env("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER", "aarch64-linux-gnu-gcc")
        .env("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS", "-C target-feature=+crt-static")
        .output()
        .map_err(|e| LabError::Setup(format!("cannot run cargo: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().find(|l| l.starts_with("error")).unwrap_or("(no error line)");
        return Err(LabError::Setup(format!("cross-building irqlab for aarch64 failed: {first} (rustup target add aarch64-unknown-linux-gnu; or give --irqlab PATH)")));
    }
    Ok(root.join("target/aarch64-unknown-linux-gnu/release/irqlab"))
}

pub fn run(k: &KvmArgs, command: Vec<String>) -> Result<i32, LabError> {
    let benches = crate::kvm_benches::plan(&k.args)?;
    for out_dir in benches.iter().map(|b| &b.out).filter(|_| !k.force) {
        if let Some(p) = ["result.json", "result.csv", "kvm-console.log", crate::kvm_events::FILE].iter().map(|n| out_dir.join(n)).find(|p| p.exists()) {
            return Err(LabError::Usage(format!("--out: {} already exists; not replacing an earlier result (use --force)", p.display())));
        }
    }
    if let Some(t) = k.trace_its.as_ref().filter(|_| !k.force) {
        if let Some(p) = [t.clone(), crate::its_script::script_path(t)].into_iter().find(|p| p.exists()) {
            return Err(LabError::Usage(format!("--trace-its: {} already exists; not replacing it (use --force)", p.display())));
        }
    }
    let own = preflight(k)?;
    let qemu_bin = deps::ensure_tool("qemu-system-aarch64", "qemu-system-arm")?;
    let cache = deps::cache_dir();
    let choice = match own {
        Some(c) => c,
        None => {
            let img = deps::kernel_image(&cache)?;
            let pkg = img.file_name().and_then(|n| n.to_str()).unwrap_or("").replacen("vmlinuz-", "linux-image-", 1);
            // Debian's kernel: its vfio modules come from the package (vfio.rs), so no device needs here.
            crate::own_kernel::check(&img, None, None, false, "(Debian's kernel)", format!("Debian package {pkg}:arm64")).map_err(|e| LabError::Setup(e.to_string()))?
        }
    };
    let kernel = choice.image.clone();
    let busybox = deps::busybox(&cache)?;
    let irqlab = irqlab_binary(k)?;
    let irqlab_sha = crate::kernel_image::sha256_file(&irqlab).map_err(LabError::io(&irqlab))?;
    let outs = benches.iter().map(|b| output::Out::prepare(&b.out, true)).collect::<Result<Vec<_>, _>>()?;
    let out = &outs[0];
    let work = out.work_dir()?;
    let read = |p: &Path| std::fs::read(p).map_err(LabError::io(p));
    let mut entries: Vec<Entry> = ["/bin", "/dev", "/proc", "/sys", "/tmp", "/out"].iter().map(|d| Entry::Dir { path: d.to_string() }).collect();
    entries.push(Entry::CharDev { path: "/dev/console".into(), major: 5, minor: 1 });
    entries.push(Entry::File { path: "/bin/busybox".into(), mode: 0o755, data: read(&busybox)? });
    entries.push(Entry::File { path: "/bin/irqlab".into(), mode: 0o755, data: read(&crate::kvm_benches::stripped(&irqlab, &irqlab_sha, &cache))? });
    let mut setup = String::new();
    if let Some(c) = k.busy_cpu {
        setup.push_str(&busy_loop(c));
    }
    if k.device == Some(crate::cli::LabDevice::Edu) {
        entries.push(Entry::Dir { path: "/lib".into() });
        entries.push(Entry::Dir { path: "/lib/vfio".into() });
        let mods = match (&k.kernel, &choice.modules) {
            (None, _) => crate::vfio::modules(&cache)?,
            (Some(_), Some(tree)) => crate::vfio::modules_in(tree)?,
            // Checked by preflight: VFIO is built in, nothing to load.
            (Some(_), None) => Vec::new(),
        };
        setup += &crate::vfio::init_fragment(&mods.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>());
        for (n, ko) in mods {
            entries.push(Entry::File { path: crate::vfio::module_path(&n).display().to_string(), mode: 0o644, data: ko });
        }
    }
    let peer = match (&k.peer_kvm_unit_tests, &k.peer_kvmtool) {
        (Some(kut), Some(tool)) => {
            let p = crate::peers::build(kut, tool, &cache).map_err(|e| LabError::Setup(e.to_string()))?;
            entries.push(Entry::Dir { path: "/peer".into() });
            entries.push(Entry::File { path: "/bin/lkvm".into(), mode: 0o755, data: read(&p.lkvm)? });
            entries.push(Entry::File { path: "/peer/micro-bench.flat".into(), mode: 0o644, data: read(&p.flat)? });
            setup += &crate::peers::init_fragment();
            Some(p)
        }
        _ => None,
    };
    entries.push(Entry::File { path: "/init".into(), mode: 0o755, data: init_script_with(&benches, &setup, k.move_vcpus_ms, k.exit_reasons).into_bytes() });
    let initrd = work.join("initrd.cpio");
    std::fs::write(&initrd, newc(&entries)).map_err(LabError::io(&initrd))?;
    let icount = k.icount.then_some(crate::qemu::ICOUNT_DEFAULT);
    let mut args = qemu_args(k.gic, icount, &kernel, &initrd);
    if let Some(t) = &k.trace_its {
        let ev = work.join("its-trace-events");
        std::fs::write(&ev, crate::its_trace::events_file_text()).map_err(LabError::io(&ev))?;
        let _ = std::fs::remove_file(t);
        args.extend(crate::its_trace::qemu_args(&ev, t));
    }
    if k.device.is_some() {
        crate::vfio::qemu_args(&mut args);
    }
    let log_path = out.path("kvm-console.log");
    let slow = if k.icount { 5 } else { 1 };
    let watcher = KvmWatcher::new(Duration::from_secs(120 * slow), Duration::from_secs(k.timeout_s.unwrap_or(600 * slow)));
    eprintln!("irqlab-lab: booting {} under QEMU TCG ({:?}{}); console → {}", kernel.display(), k.gic, if k.icount { ", -icount" } else { "" }, log_path.display());
    let s = crate::session::run(&qemu_bin, &args, &log_path, watcher)?;
    let mut what_ran = choice.record();
    if let Some(p) = &peer {
        what_ran.extend(p.record.clone());
    }
    what_ran.insert("lab.irqlab.sha256".into(), irqlab_sha);
    out.remove_work_dir();
    let files = framed_files(&s.log).map_err(|why| LabError::Boot { why: why.to_string(), log: log_path.clone() })?;
    let problem = match &s.outcome {
        Outcome::Done => None,
        Outcome::Failed(w) | Outcome::TimedOut(w) => Some(w.clone()),
    };
    if let Some((_, b)) = files.iter().find(|(n, _)| peer.is_some() && n == "micro-bench.txt") {
        let st = crate::peers::status(&String::from_utf8_lossy(b), k.icount);
        eprintln!("irqlab-lab: peer micro-bench: {st}");
        what_ran.insert("lab.peer.status".into(), st);
    }
    for (framed, bytes) in &files {
        let (i, name) = crate::kvm_benches::route(framed).unwrap_or((None, framed.as_str()));
        let Some(o) = outs.get(i.unwrap_or(0)) else {
            return Err(LabError::Boot { why: format!("a file for bench {} of {}: {framed}", i.unwrap_or(0) + 1, outs.len()), log: log_path });
        };
        let at = Times { init: s.watcher.init_at, bench: s.watcher.bench_at.get(i.unwrap_or(0)).copied(), wall: s.wall };
        let bytes = if name == "result.json" { record_facts(&label_measured(bytes, k.icount, &command), &what_ran, at) } else { bytes.clone() };
        o.write_new(name, &bytes)?;
        eprintln!("irqlab-lab: wrote {}", o.path(name).display());
    }
    if let Some((_, b)) = files.iter().find(|(n, _)| k.exit_reasons && n == crate::kvm_events::FILE) {
        for (n, what) in crate::kvm_events::exits_by_class(&String::from_utf8_lossy(b)) {
            eprintln!("irqlab-lab: kvm_exit {n:>7} {what}");
        }
    }
    if let Some(t) = &k.trace_its {
        crate::its_script::convert_file(t, k.gic, &command)?;
    }
    let exits: Vec<String> = (0..benches.len()).map(|i| s.watcher.exits.get(&i).cloned().unwrap_or_else(|| "?".into())).collect();
    let which = |i: usize| if benches.len() > 1 { format!(" (bench {}: {})", i + 1, benches[i].inner.get(1).map(String::as_str).unwrap_or("")) } else { String::new() };
    let failed = exits.iter().position(|e| e != "0" && e != "3");
    let wrote = |i: usize| files.iter().any(|(f, _)| crate::kvm_benches::route(f).map(|(j, _)| j.unwrap_or(0)) == Some(i));
    match problem {
        Some(w) => Err(LabError::Boot { why: format!("{w} ({} file(s) brought back)", files.len()), log: log_path }),
        None if failed.is_some() => {
            let i = failed.unwrap_or(0);
            Err(LabError::Boot { why: format!("irqlab inside the lab ended with exit {}{}", exits[i], which(i)), log: log_path })
        }
        None => match (0..benches.len()).find(|&i| !wrote(i)) {
            Some(i) => Err(LabError::Boot { why: format!("irqlab inside the lab wrote nothing to --out{}", which(i)), log: log_path }),
            // irqlab's own "a run was stopped by --stop-above" (a complete result): passed through.
            None if exits.iter().any(|e| e == "3") => {
                eprintln!("irqlab-lab: --stop-above stopped a run inside the lab (irqlab's exit status 3, passed through)");
                Ok(3)
            }
            None => Ok(0),
        },
    }
}

/// The user's own kernel (`--kernel`), checked without fetching or booting anything: exit 2
/// naming the flag and what is wrong (not arm64, no KVM, modules of another release …).
pub fn preflight(k: &KvmArgs) -> Result<Option<crate::own_kernel::KernelChoice>, LabError> {
    let Some(kernel) = &k.kernel else { return Ok(None) };
    crate::own_kernel::choose(kernel, k.modules.as_deref(), k.kernel_config.as_deref(), k.device.is_some(), &deps::cache_dir())
        .map(Some)
        .map_err(|e| LabError::Usage(e.to_string()))
}

/// What ran (kernel release and hashes, the irqlab binary's hash) into a measured result's
/// platform, and the lab's wall-clock figures (QEMU start to /init, the whole session) into every
/// configuration; a model result is passed through byte for byte, as in [`label_measured`].
/// When things happened in a lab session, from QEMU's start (wall clock).
#[derive(Debug, Clone, Copy)]
pub struct Times {
    pub init: Option<Duration>,
    /// This result's bench started (its first sample follows within one period).
    pub bench: Option<Duration>,
    pub wall: Duration,
}

pub fn record_facts(bytes: &[u8], what: &std::collections::BTreeMap<String, String>, at: Times) -> Vec<u8> {
    let Ok(mut r) = results::from_json_str(&String::from_utf8_lossy(bytes), "result.json") else { return bytes.to_vec() };
    if r.meta.kind != results::ResultKind::Measured {
        return bytes.to_vec();
    }
    for (k, v) in what {
        r.meta.platform.insert(k.clone(), v.clone());
    }
    for c in &mut r.configs {
        if let Some(t) = at.init {
            c.set_figure("lab.qemu_start_to_init", t.as_secs_f64(), "s (wall)");
        }
        if let Some(t) = at.bench {
            c.set_figure("lab.qemu_start_to_bench", t.as_secs_f64(), "s (wall)");
        }
        c.set_figure("lab.session_wall", at.wall.as_secs_f64(), "s (wall)");
    }
    results::to_json_string(&r).into_bytes()
}

/// The lab kernel's host name, so a result's "measured … on HOST" names the lab, not `(none)`.
pub const LAB_HOSTNAME: &str = "irqlab-lab-kvm";

/// A measured result from inside the lab says it came from the lab (emulation, never hardware);
/// a model result is passed through byte for byte (it must stay identical to a native run's).
pub fn label_measured(bytes: &[u8], icount: bool, command: &[String]) -> Vec<u8> {
    let Ok(mut r) = results::from_json_str(&String::from_utf8_lossy(bytes), "result.json") else { return bytes.to_vec() };
    if r.meta.kind != results::ResultKind::Measured {
        return bytes.to_vec();
    }
    let label = if icount { "QEMU TCG -icount: instruction count (not hardware latency)" } else { "QEMU TCG emulation (not hardware latency)" };
    r.meta.platform.insert("lab".into(), format!("{label}; nested KVM on QEMU's emulated EL2 (irqlab-lab kvm)"));
    if let Some(p) = r.provenance.as_mut() {
        p.details.insert("lab_command".into(), command.join(" "));
    }
    results::to_json_string(&r).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn out_is_taken_out_and_replaced() {
        let (inner, out) = split_out(&v("sim demo-timer-inject --out /tmp/o --seed 3")).unwrap();
        assert_eq!(inner, v("sim demo-timer-inject --seed 3 --out /out"));
        assert_eq!(out, PathBuf::from("/tmp/o"));
        assert_eq!(split_out(&v("run timer --out=x")).unwrap().1, PathBuf::from("x"));
        assert!(matches!(split_out(&v("run timer")), Err(LabError::Usage(_))));
        assert!(matches!(split_out(&v("run timer --out")), Err(LabError::Usage(_))));
    }

    #[test]
    fn init_quotes_arguments() {
        let one = |a: &[&str]| vec![crate::kvm_benches::Bench { inner: a.iter().map(|w| w.to_string()).collect(), out: "/tmp/o".into() }];
        let s = init_script_with(&one(&["sim", "it's", "--out", "/out"]), "", None, false);
        assert!(s.contains("/bin/irqlab 'sim' 'it'\\''s' '--out' '/out'\n"), "{s}");
        assert!(s.starts_with("#!/bin/busybox sh\n") && s.contains("poweroff -f"));
        assert!(s.contains("mount -t tracefs tracefs /sys/kernel/tracing"), "--breakdown needs tracefs in the lab");
        assert!(s.contains(&format!("\nhostname {LAB_HOSTNAME}\n")), "results name the lab as their host, not `(none)`");
        assert!(!s.contains("taskset"));
        assert!(!s.contains("kvm_exit"));
        let e = init_script_with(&one(&["run"]), "", None, true);
        let (on, run, count) = (e.find("echo 1 > $T/tracing_on").unwrap(), e.find("/bin/irqlab 'run'").unwrap(), e.find("kvm-exit-reasons.txt").unwrap());
        assert!(on < run && run < count && e[run..count].contains("exit $?"), "{e}");
        let m = init_script_with(&one(&["run"]), "", Some(20), false);
        let (mover, run) = (m.find("taskset").unwrap(), m.find("/bin/irqlab 'run'").unwrap());
        assert!(mover < run, "the mover starts before irqlab");
        let s = init_script_with(&one(&["run"]), &busy_loop(1), None, false);
        assert!(s.contains("taskset -c 1 sh -c 'while :; do :; done' &\n"), "{s}");
        assert!(s.find("taskset").unwrap() < s.find("/bin/irqlab 'run'").unwrap(), "the loop runs before irqlab");
    }

    #[test]
    fn framed_files_round_trip_and_damage() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(b"{\"a\": 1}\n");
        let log = format!("boot\r\n{MARK}file result.json begin\r\n{}\r\n{}\r\n{MARK}file result.json end\r\n{MARK}done\r\n", &b64[..4], &b64[4..]);
        assert_eq!(framed_files(&log).unwrap(), vec![("result.json".to_string(), b"{\"a\": 1}\n".to_vec())]);
        let cut = format!("{MARK}file result.json begin\n{b64}\n");
        assert!(framed_files(&cut).unwrap_err().to_string().contains("truncated"));
        let bad = format!("{MARK}file result.json begin\n!!!\n{MARK}file result.json end\n");
        assert!(framed_files(&bad).unwrap_err().to_string().contains("base64"));
        let evil = format!("{MARK}file ../x begin\n{b64}\n{MARK}file ../x end\n");
        assert!(framed_files(&evil).unwrap_err().to_string().contains("refusing"));
        let bench = format!("{MARK}file 1/result.json begin\n{b64}\n{MARK}file 1/result.json end\n");
        assert_eq!(framed_files(&bench).unwrap()[0].0, "1/result.json", "bench 1's file of a boot running several");
        // Only one plain component: not empty, no backslash, no control character.
        for name in ["", "a\\b", "a\u{1b}[31m"] {
            let f = format!("{MARK}file {name} begin\n{b64}\n{MARK}file {name} end\n");
            assert!(framed_files(&f).unwrap_err().to_string().contains("refusing"), "{name:?}");
        }
    }

    #[test]
    fn watcher_bounds_boot_and_finishes_at_done() {
        let mut w = KvmWatcher::new(Duration::from_secs(100), Duration::from_secs(500));
        assert_eq!(w.wait_for(Duration::from_secs(10)), Duration::from_secs(90));
        assert!(matches!(w.check(Duration::from_secs(100)), Some(Outcome::TimedOut(m)) if m.contains("/init")));
        assert_eq!(w.line(&format!("{MARK}init kernel=6.1 kvm=yes"), Duration::from_secs(20)), None);
        assert_eq!(w.check(Duration::from_secs(100)), None);
        assert_eq!(w.wait_for(Duration::from_secs(100)), Duration::from_secs(400));
        w.line(&format!("{MARK}bench 0 start"), Duration::from_secs(25));
        assert_eq!(w.bench_at, vec![Duration::from_secs(25)]);
        w.line(&format!("{MARK}exit 0"), Duration::from_secs(30));
        assert_eq!(w.line(&format!("{MARK}done"), Duration::from_secs(31)), Some(Outcome::Done));
        assert_eq!(w.exits.get(&0).map(String::as_str), Some("0"));
        w.line(&format!("{MARK}exit 3 bench 1"), Duration::from_secs(32));
        assert_eq!(w.exits.get(&1).map(String::as_str), Some("3"));
        assert!(matches!(w.line("[ 1.0] Kernel panic - not syncing", Duration::ZERO), Some(Outcome::Failed(_))));
    }

    #[test]
    fn qemu_command_for_v4() {
        let a = qemu_args(Gic::V4, None, Path::new("/k"), Path::new("/i")).join(" ");
        assert!(a.starts_with("-M virt,virtualization=on,gic-version=4,its=on -cpu max -smp 2"), "{a}");
        assert!(a.ends_with("-kernel /k -initrd /i -append console=ttyAMA0 panic=-1 quiet cryptomgr.notests kvm-arm.vgic_v4_enable=1"), "{a}");
        assert!(!qemu_args(Gic::V3, Some("shift=2,sleep=off"), Path::new("/k"), Path::new("/i")).join(" ").contains("vgic_v4"));
    }

    #[test]
    fn model_results_pass_through_measured_ones_are_labelled() {
        let r = results::RunResult::new(results::RunMeta::named("t", "s", 1, results::ResultKind::Predicted));
        let b = results::to_json_string(&r).into_bytes();
        assert_eq!(label_measured(&b, false, &[]), b);
        let m = results::RunResult::new(results::RunMeta::named("t", "run-timer", 1, results::ResultKind::Measured));
        let out = label_measured(results::to_json_string(&m).as_bytes(), true, &[]);
        let back = results::from_json_str(&String::from_utf8(out).unwrap(), "x").unwrap();
        assert!(back.meta.platform["lab"].contains("instruction count (not hardware latency)"));
    }
}

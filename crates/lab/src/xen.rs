//! `irqlab-lab xen`: the benchmark guest as a dom0less domU of Xen (Debian's 4.17, a build of the
//! user's tree, or a prebuilt binary) under QEMU TCG. The sequence, one function each: [`check`]
//! and [`check_inputs`] (what Debian's Xen cannot do; the user's Xen tree, patches and settings
//! or binary; nothing fetched), `prepare` (Xen, the patched guest images, QEMU's DTB turned into
//! the dom0less tree by [`crate::dts`], QEMU's command line), `boot` (one bounded session,
//! [`crate::session`]) and `bring_back` (the console parsed by `armguest::console` into
//! `result.json`, written atomically beside the raw `console.log` and the `xen.dts` used).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use armguest::console::{self, ConsoleHost, ConsoleMeta};
use armguest::{Params, Program};

use crate::config::{BenchConfig, Gic, GuestConfig, Neighbour, Sched, XenConfig};
use crate::error::LabError;
use crate::qemu::{self, Machine, QemuCmd};
use crate::session::Session;
use crate::watch::{Bounds, Outcome, Watcher};
use crate::{deps, output};

/// QEMU's generic timer runs at 62.5 MHz (target/arm `GTIMER_SCALE` = 16 ns, QEMU 7.2); the
/// guest prints CNTFRQ and a run whose counter differs says so.
pub const QEMU_COUNTER_HZ: u64 = 62_500_000;
/// Memory per domU (the guest needs 12 KiB; Xen wants whole MiBs).
const DOMU_KIB: u64 = 64 * 1024;

/// Bound on a Xen binary given with `--xen` (Xen/arm64 is ~1–2 MB).
const MAX_XEN_BYTES: u64 = 64 << 20;

/// A Xen binary the user names (`--xen FILE`, `IRQLAB_LAB_XEN`): a regular file, bounded, with
/// the arm64 Image header and Xen's banner (`kernel_image::check_xen`) — before QEMU starts.
pub fn check_xen_binary(flag: &str, path: &Path) -> Result<(), LabError> {
    let bytes = crate::input::read_bounded(flag, path, MAX_XEN_BYTES, "a Xen/arm64 binary is ~1–2 MB").map_err(|e| LabError::Usage(e.to_string()))?;
    crate::kernel_image::check_xen(&bytes).map_err(|e| LabError::Usage(format!("{flag} {}: {e}", path.display())))
}

/// The user's own Xen checked before any boot: `--xen-src`'s tree, its patches (each applied
/// without fuzz to a scratch copy) and its `--xen-config` symbols (declared in the patched tree),
/// unless that build is already in the cache (`xen_build::check`); `--xen FILE` is a Xen binary.
pub fn check_inputs(x: &XenConfig) -> Result<(), LabError> {
    if let Some(src) = &x.xen_src {
        let s = crate::xen_build::XenSource { src: src.clone(), patches: x.patches.clone(), config: x.xen_config.clone() };
        crate::xen_build::check(&s, &deps::cache_dir())?;
    }
    if let Some(f) = &x.xen {
        check_xen_binary("--xen", f)?;
    }
    Ok(())
}

/// Xen 4.17's Kconfig hides the schedulers' menu unless EXPERT (`visible if EXPERT`,
/// xen/common/sched/Kconfig) and offers SCHED_NULL only with UNSUPPORTED: all three are needed.
pub const SCHED_NULL_CONFIG: &str = "--xen-config EXPERT=y --xen-config UNSUPPORTED=y --xen-config SCHED_NULL=y";

/// The null scheduler's name in a Xen binary (`sched_null_def.name`, xen/common/sched/null.c):
/// a `--xen FILE` without it has no null scheduler.
const NULL_SCHED_NAME: &[u8] = b"null Scheduler";

/// The board: the domU lab's (cortex-a57, GICv3) with `--cpu`/`--gic` applied; 1 pCPU under
/// -icount (with 2 CPUs Xen's boot stalled after "P2M: 4 levels", several tries; 1 CPU booted
/// every time).
pub fn board(x: &XenConfig) -> Machine {
    let icount = x.icount.then(|| x.icount_opts.clone().unwrap_or_else(|| qemu::ICOUNT_DEFAULT.into()));
    let m = Machine::xen(if x.icount { 1 } else { 2 }, icount);
    Machine { cpu: x.cpu.unwrap_or(m.cpu), gic: x.gic.unwrap_or(m.gic), ..m }
}

/// The lab's refusals, before anything is fetched or started.
pub fn check(x: &XenConfig, b: &BenchConfig) -> Result<(), LabError> {
    if x.sched == Sched::Null && x.xen.is_none() && x.xen_src.is_none() {
        return Err(LabError::Usage(format!(
            "--sched null: Debian's Xen 4.17 (xen-hypervisor-4.17-arm64) is built without the null scheduler; \
             build one with it: --xen-src DIR {SCHED_NULL_CONFIG} (CONFIG_SCHED_NULL), or give a prebuilt one with --xen FILE"
        )));
    }
    if let (Sched::Null, Some(f)) = (x.sched, &x.xen) {
        let bytes = std::fs::read(f).map_err(LabError::io(f))?;
        if !bytes.windows(NULL_SCHED_NAME.len()).any(|w| w == NULL_SCHED_NAME) {
            return Err(LabError::Usage(format!(
                "--sched null: --xen {} has no null scheduler (no \"null Scheduler\" in the binary: built without CONFIG_SCHED_NULL)",
                f.display()
            )));
        }
    }
    qemu::check_board(&board(x), "the domU bench")?;
    if let Some(p) = std::env::var_os("IRQLAB_LAB_XEN").map(PathBuf::from) {
        check_xen_binary("IRQLAB_LAB_XEN", &p)?;
    }
    if b.bench == results::vocab::Bench::Ipi && x.vcpus.unwrap_or(2) < 2 {
        return Err(LabError::Usage("--vcpus: the ipi bench needs at least 2 vCPUs".into()));
    }
    if x.vcpus == Some(0) || x.vcpus.unwrap_or(1) > 8 {
        return Err(LabError::Usage("--vcpus: between 1 and 8".into()));
    }
    Ok(())
}

pub fn guest_params(b: &BenchConfig, gic: Gic) -> Params {
    guest_params_at(b, QEMU_COUNTER_HZ, gic)
}

/// The guest's parameters for a counter running at `hz` on a `gic` (GICv2: the CPU interface at
/// Xen's GUEST_GICC_BASE, the image's default `gicc_base`).
pub fn guest_params_at(b: &BenchConfig, hz: u64, gic: Gic) -> Params {
    Params {
        gic,
        bench: match b.bench {
            results::vocab::Bench::Ipi => Program::Ipi,
            // `device` never reaches here: the shell refuses it (`cli::xen_bench`).
            results::vocab::Bench::Timer | results::vocab::Bench::Device => Program::Timer,
        },
        wait: b.wait,
        period_ticks: (b.period_us * hz as f64 / 1e6).round().max(1.0) as u64,
        samples: b.samples,
        warmup: b.warmup,
        ..Params::default()
    }
}

/// Bounds: Xen boots in ~10 s here (60 s allowed on a loaded machine, 5× that under -icount);
/// each sample gets its period plus 200 ms of emulation slack; `--timeout-s` overrides the total.
pub fn bounds(x: &XenConfig, b: &BenchConfig) -> Bounds {
    let slow: u64 = if x.icount { 5 } else { 1 };
    let per_sample = Duration::from_secs_f64(b.period_us / 1e6) + Duration::from_millis(200);
    let total = x.timeout_s.map(Duration::from_secs).unwrap_or(Duration::from_secs(60 * slow) + per_sample * (b.samples.min(u32::MAX as u64) as u32).saturating_mul(slow as u32));
    Bounds { boot: Duration::from_secs(60 * slow), first_sample: Duration::from_secs(30 * slow), silence: Duration::from_secs(30 * slow), total }
}

/// A boot made ready.
struct Prepared {
    out: output::Out,
    qemu_bin: PathBuf,
    qemu: Vec<String>,
    machine: Machine,
    icount: Option<String>,
    bootargs: String,
    vcpus: u32,
    xen_params: Vec<(String, String)>,
    log: PathBuf,
    census: Option<(crate::census::Plan, crate::census::plugin::Plugin)>,
}

pub fn run(x: &XenConfig, b: &BenchConfig, command: Vec<String>) -> Result<i32, LabError> {
    check(x, b)?;
    let p = prepare(x, b)?;
    let s = boot(x, b, &p)?;
    bring_back(x, b, &p, s, command)
}

/// Xen, the guest images, the dom0less device tree and QEMU's command line.
fn prepare(x: &XenConfig, b: &BenchConfig) -> Result<Prepared, LabError> {
    let out = output::Out::prepare(&b.out, x.force)?;
    let qemu_bin = deps::require_tool("qemu-system-aarch64", "qemu-system-arm")?;
    let dtc = deps::require_tool("dtc", "device-tree-compiler")?;
    let (xen, built) = resolve(x)?;
    let work = out.work_dir()?;
    let machine = board(x);
    let icount = machine.icount.clone();
    let modules = guest_images(x, b, machine.gic, &work)?;
    let vcpus = x.vcpus.unwrap_or(if b.bench == results::vocab::Bench::Ipi { 2 } else { 1 });
    let (bootargs, xen_dtb) = device_tree(x, &out, &work, &machine, &modules, vcpus, (&qemu_bin, &dtc))?;
    let mut cmd = QemuCmd::new(&machine).dtb(&xen_dtb).kernel(&xen);
    for (p, addr, _) in &modules {
        cmd = cmd.loader(p, *addr);
    }
    let log = out.path("console.log");
    let xen_params = xen_params(&xen, built.as_ref());
    let census = crate::xen_census::prepare(x, &qemu_bin, &xen, built.as_ref(), modules[0].2.len() as u64, out.path("census.txt"))?;
    let mut instrument = x.instrument.clone();
    if let Some((plan, plugin)) = &census {
        instrument.extra_args.extend(plan.qemu_args(&plugin.path)?);
    }
    Ok(Prepared { qemu: cmd.finish(&instrument), out, qemu_bin, machine, icount, bootargs, vcpus, xen_params, log, census })
}

/// The patched benchmark guest (and the spinning neighbour) written into `work`: (file, load address, bytes).
fn guest_images(x: &XenConfig, b: &BenchConfig, gic: Gic, work: &Path) -> Result<Vec<(PathBuf, u64, Vec<u8>)>, LabError> {
    let image = armguest::image()?;
    let mut modules = vec![(work.join("guest.bin"), qemu::MODULE_BASE, armguest::patch(image, &guest_params(b, gic))?)];
    if x.neighbour == Neighbour::Busy {
        let spin = Params { bench: Program::Spin, samples: 1, warmup: 0, ..Params::default() };
        modules.push((work.join("spin.bin"), qemu::MODULE_BASE + qemu::MODULE_STRIDE, armguest::patch(image, &spin)?));
    }
    for (p, _, bytes) in &modules {
        std::fs::write(p, bytes).map_err(LabError::io(p))?;
    }
    Ok(modules)
}

/// QEMU's own DTB (dumped, decompiled) with the dom0less `chosen` node: Xen's command line and
/// one domU per image; `xen.dts` is kept in `--out`. Returns (Xen's command line, the DTB to boot).
fn device_tree(
    x: &XenConfig,
    out: &output::Out,
    work: &Path,
    machine: &Machine,
    modules: &[(PathBuf, u64, Vec<u8>)],
    vcpus: u32,
    (qemu_bin, dtc): (&Path, &Path),
) -> Result<(String, PathBuf), LabError> {
    let virt_dtb = work.join("virt.dtb");
    eprintln!("irqlab-lab: dumping QEMU's device tree");
    run_tool(std::process::Command::new(qemu_bin).args(machine.dumpdtb_args(&virt_dtb)), "qemu-system-aarch64 dumpdtb")?;
    let virt_dts = work.join("virt.dts");
    run_tool(std::process::Command::new(dtc).args(["-q", "-I", "dtb", "-O", "dts", "-o"]).arg(&virt_dts).arg(&virt_dtb), "dtc (decompile)")?;
    let dts = std::fs::read_to_string(&virt_dts).map_err(LabError::io(&virt_dts))?;
    let uart = crate::dts::uart_path(&dts)?;
    let mut domus: Vec<crate::dts::DomU> =
        modules.iter().map(|(_, addr, bytes)| crate::dts::DomU { cpus: vcpus, memory_kib: DOMU_KIB, module_addr: *addr, module_size: bytes.len() as u64 }).collect();
    if let Some(n) = domus.get_mut(1) {
        n.cpus = machine.smp; // one spinning vCPU per pCPU: every pCPU has the busy neighbour
    }
    // `--sched null` only reaches here with --xen-src (SCHED_NULL=y) or --xen (checked).
    let bootargs = qemu::xen_bootargs(&uart, x.sched.name(), x.vwfi.name(), x.icount);
    let xen_dts = crate::dts::replace_chosen(&dts, &crate::dts::chosen(&bootargs, &uart, &domus))?;
    out.write_new("xen.dts", xen_dts.as_bytes())?;
    let xen_dtb = work.join("xen.dtb");
    run_tool(std::process::Command::new(dtc).args(["-q", "-I", "dts", "-O", "dtb", "-o"]).arg(&xen_dtb).arg(out.path("xen.dts")), "dtc (compile)")?;
    Ok((bootargs, xen_dtb))
}

fn run_tool(cmd: &mut std::process::Command, what: &str) -> Result<(), LabError> {
    let out = cmd.output().map_err(|e| LabError::Setup(format!("cannot run {what}: {e}")))?;
    if !out.status.success() {
        return Err(LabError::Setup(format!("{what} failed: {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    Ok(())
}

/// One bounded QEMU session ([`bounds`]).
fn boot(x: &XenConfig, b: &BenchConfig, p: &Prepared) -> Result<Session<Watcher>, LabError> {
    eprintln!(
        "irqlab-lab: booting Xen ({}, vwfi={}, neighbour {:?}{}) under QEMU TCG; console → {}",
        x.sched.name(),
        x.vwfi.name(),
        x.neighbour,
        if x.icount { ", -icount" } else { "" },
        p.log.display()
    );
    let s = crate::session::run(&p.qemu_bin, &p.qemu, &p.log, Watcher::new(bounds(x, b)))?;
    p.out.remove_work_dir();
    Ok(s)
}

/// What the result records of the run: the knobs, Xen's and QEMU's command lines, what Xen it was.
fn console_meta(x: &XenConfig, b: &BenchConfig, p: &Prepared) -> ConsoleMeta {
    let mut extra = BTreeMap::new();
    extra.insert("neighbour".to_string(), format!("{:?}", x.neighbour).to_lowercase());
    extra.insert("vcpus".to_string(), p.vcpus.to_string());
    extra.insert("period_us".to_string(), b.period_us.to_string());
    extra.insert("xen_cmdline".to_string(), p.bootargs.clone());
    extra.insert("cpu".to_string(), p.machine.cpu.qemu_name().to_string());
    extra.insert("gic".to_string(), p.machine.gic.name().to_string());
    let shape = QemuCmd::new(&p.machine).dtb(Path::new("DTB")).kernel(Path::new("XEN")).finish(&x.instrument);
    extra.insert("qemu".to_string(), format!("qemu-system-aarch64 {}", shape.join(" ")));
    if let Some(ic) = &p.icount {
        extra.insert("icount".to_string(), ic.clone());
    }
    if p.census.is_some() {
        extra.insert("census".to_string(), "on (QEMU TCG plugin; raw counts in census.txt)".to_string());
    }
    extra.extend(p.xen_params.iter().cloned());
    let pinning =
        if x.neighbour == Neighbour::Busy { format!("none (dom0less); the neighbour has one spinning vCPU per pCPU ({})", p.machine.smp) } else { "none (dom0less)".into() };
    ConsoleMeta {
        tool_version: format!("irqlab-lab {}", env!("CARGO_PKG_VERSION")),
        host: if x.icount { ConsoleHost::InstructionCount } else { ConsoleHost::QemuTcg },
        scheduler: Some(x.sched.name().into()),
        vwfi: Some(x.vwfi.name().into()),
        pinning: Some(pinning),
        extra,
        keep_partial: true,
        ..Default::default()
    }
}

/// The console into `result.json` (complete, or incomplete with its error: exit 1).
fn bring_back(x: &XenConfig, b: &BenchConfig, p: &Prepared, s: Session<Watcher>, command: Vec<String>) -> Result<i32, LabError> {
    let lab_problem = match &s.outcome {
        Outcome::Done => None,
        Outcome::Failed(w) | Outcome::TimedOut(w) => Some(w.clone()),
    };
    let mut result = console::parse(&s.log, &p.log.display().to_string(), console_meta(x, b, p)).map_err(|e| {
        let lab = lab_problem.as_ref().map(|w| format!("; lab: {w}")).unwrap_or_default();
        LabError::Boot { why: format!("no result: {e}{lab}"), log: p.log.clone() }
    })?;
    result.meta.scenario = format!("xen-lab-{}", b.bench.name());
    result.meta.platform.insert("machine".into(), p.machine.describe());
    if let Some(wrong) = crate::xen_board::mismatch(&s.log, &p.machine) {
        let c = &mut result.configs[0];
        c.error = Some(c.error.take().map(|e| format!("{wrong}; {e}")).unwrap_or(wrong));
    }
    lab_figures(&mut result.configs[0], &s, lab_problem, p.icount.as_deref());
    if let Some((plan, plugin)) = &p.census {
        crate::census::finish(plan, plugin, p.icount.as_deref(), &mut result.configs[0])?;
    }
    result.provenance = Some(output::provenance(command));
    let failed = result.configs[0].error.clone();
    p.out.write_result(&result)?;
    eprintln!("irqlab-lab: wrote {}", p.out.path("result.json").display());
    match failed {
        None => Ok(0),
        Some(e) => {
            eprintln!("irqlab-lab: incomplete run: {e} (console log: {})", p.log.display());
            Ok(1)
        }
    }
}

/// The lab's own figures and notes on the configuration: wall-clock times, the lab's problem,
/// the instruction-count rate under -icount, a counter that is not QEMU's.
fn lab_figures(c: &mut results::ConfigResult, s: &Session<Watcher>, lab_problem: Option<String>, icount: Option<&str>) {
    if let Some(t) = s.watcher.started {
        c.set_figure("lab.qemu_start_to_guest_start", t.as_secs_f64(), "s (wall)");
    }
    if let Some(t) = s.watcher.first_sample {
        c.set_figure("lab.qemu_start_to_first_sample", t.as_secs_f64(), "s (wall)");
    }
    c.set_figure("lab.wall", s.wall.as_secs_f64(), "s (wall)");
    if let Some(w) = lab_problem {
        c.error = Some(match c.error.take() {
            Some(e) => format!("lab: {w}; {e}"),
            None => format!("lab: {w}"),
        });
    }
    if let Some(n) = icount.and_then(icount_ns_per_insn) {
        c.set_figure("icount.ns_per_instruction", n as f64, "ns");
        c.notes.push(format!("-icount: every instruction (guest, Xen) advances virtual time by {n} ns: latency / {n} = instructions executed on the path"));
    }
    let freq = c.figures.get("counter_freq").map(|f| f.value as u64);
    if freq != Some(QEMU_COUNTER_HZ) {
        c.notes.push(format!("the guest's counter runs at {freq:?} Hz, not QEMU's {QEMU_COUNTER_HZ}: --period-us was converted at {QEMU_COUNTER_HZ} Hz"));
    }
}

/// The Xen to boot: built from `--xen-src` (+ patches, config; [`crate::xen_build`]), a prebuilt
/// `--xen FILE`, or Debian's Xen 4.17. `--sched null` with a build that lacks CONFIG_SCHED_NULL
/// is refused (exit 2) here, after the build says what it has.
pub fn resolve(x: &XenConfig) -> Result<(PathBuf, Option<crate::xen_build::Built>), LabError> {
    if let Some(src) = &x.xen_src {
        let s = crate::xen_build::XenSource { src: src.clone(), patches: x.patches.clone(), config: x.xen_config.clone() };
        let b = crate::xen_build::ensure(&s, &deps::cache_dir())?;
        if x.sched == Sched::Null && !b.has("SCHED_NULL") {
            return Err(LabError::Usage(format!("--sched null: the Xen built from {} has no CONFIG_SCHED_NULL=y (add {SCHED_NULL_CONFIG})", src.display())));
        }
        return Ok((b.binary.clone(), Some(b)));
    }
    if let Some(f) = &x.xen {
        check_xen_binary("--xen", f)?;
        return Ok((f.clone(), None));
    }
    Ok((deps::xen_binary(&deps::cache_dir())?, None))
}

/// What Xen ran, as result parameters: the build's tree, patches and config, or the binary.
pub fn xen_params(xen: &Path, built: Option<&crate::xen_build::Built>) -> Vec<(String, String)> {
    match built {
        Some(b) => b.params(),
        None => vec![("xen.binary".to_string(), xen.display().to_string())],
    }
}

/// `shift=N` → 2^N ns of virtual time per instruction (QEMU's -icount); `auto` has no fixed rate.
pub fn icount_ns_per_insn(opts: &str) -> Option<u64> {
    let n: u32 = opts.split(',').find_map(|o| o.strip_prefix("shift="))?.parse().ok()?;
    (n < 32).then(|| 1u64 << n)
}

/// `irqlab-lab guest`'s refusal: a counter frequency of 0.
pub fn check_guest(g: &GuestConfig) -> Result<(), LabError> {
    if g.counter_hz == 0 {
        return Err(LabError::Usage("--counter-hz: must be above 0".into()));
    }
    Ok(())
}

/// `irqlab-lab guest`: the patched image for a board, never over an existing file without --force.
pub fn write_guest(g: &GuestConfig, b: &BenchConfig) -> Result<i32, LabError> {
    check_guest(g)?;
    let image = armguest::patch(armguest::image()?, &guest_params_at(b, g.counter_hz, g.gic))?;
    let path = b.out.join(format!("armguest-{}.bin", b.bench.name()));
    if path.exists() && !g.force {
        return Err(LabError::Usage(format!("--out: {} already exists (use --force)", path.display())));
    }
    results::write_atomic(&path, &image)?;
    eprintln!("irqlab-lab: wrote {} ({} bytes; load it as a dom0less multiboot,kernel module or with `xl create`, see docs/xen-arm-lab.md)", path.display(), image.len());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::vocab::{Bench, Wait};

    fn bench() -> BenchConfig {
        BenchConfig { bench: Bench::Timer, samples: 10, warmup: 2, period_us: 1000.0, wait: Wait::Hlt, out: "/tmp/x".into() }
    }

    #[test]
    fn a_text_file_given_as_xen_is_refused_before_qemu() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("xen.txt");
        std::fs::write(&t, "this is not a hypervisor\n").unwrap();
        let x = XenConfig { xen: Some(t.clone()), ..XenConfig::default() };
        for e in [check_inputs(&x).unwrap_err(), resolve(&x).unwrap_err()] {
            assert_eq!(e.exit_code(), 2, "{e}");
            assert!(e.to_string().contains(&format!("--xen {}: not a Xen/arm64 hypervisor binary", t.display())), "{e}");
        }
        let z = XenConfig { xen: Some("/dev/zero".into()), ..XenConfig::default() };
        assert!(check_inputs(&z).unwrap_err().to_string().contains("a character device"));
    }

    #[test]
    fn icount_shift_gives_ns_per_instruction() {
        assert_eq!(icount_ns_per_insn("shift=2,sleep=off"), Some(4));
        assert_eq!(icount_ns_per_insn("sleep=off,shift=0"), Some(1));
        assert_eq!(icount_ns_per_insn("shift=auto,sleep=off"), None);
    }

    #[test]
    fn null_scheduler_is_refused_with_how_to_get_it() {
        let x = XenConfig { sched: Sched::Null, ..XenConfig::default() };
        let e = check(&x, &bench()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("CONFIG_SCHED_NULL"), "{e}");
    }

    #[test]
    fn a_prebuilt_xen_without_the_null_scheduler_is_refused_for_sched_null() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("xen");
        std::fs::write(&f, b"Xen image: SMP Credit Scheduler rev2 ...").unwrap();
        let e = check(&XenConfig { sched: Sched::Null, xen: Some(f.clone()), ..XenConfig::default() }, &bench()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("has no null scheduler"), "{e}");
        std::fs::write(&f, b"Xen image: null Scheduler ...").unwrap();
        assert!(check(&XenConfig { sched: Sched::Null, xen: Some(f), ..XenConfig::default() }, &bench()).is_ok());
        let e = check(&XenConfig { sched: Sched::Null, ..XenConfig::default() }, &bench()).unwrap_err().to_string();
        assert!(e.contains("EXPERT=y") && e.contains("SCHED_NULL=y"), "{e}");
    }

    #[test]
    fn the_board_is_the_one_asked_for_and_what_qemu_cannot_build_is_refused() {
        use crate::config::Cpu;
        let x = XenConfig { cpu: Some(Cpu::CortexA53), gic: Some(Gic::V2), icount: true, ..XenConfig::default() };
        let m = board(&x);
        assert_eq!((m.cpu, m.gic, m.smp, m.its), (Cpu::CortexA53, Gic::V2, 1, false));
        assert!(check(&x, &bench()).is_ok());
        assert_eq!(guest_params(&bench(), m.gic).gic, Gic::V2);
        let d = board(&XenConfig::default());
        assert_eq!((d.cpu, d.gic), (Cpu::CortexA57, Gic::V3));
        let e = check(&XenConfig { gic: Some(Gic::V4_1), ..XenConfig::default() }, &bench()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("GICv4.0"), "{e}");
    }

    #[test]
    fn ipi_needs_two_vcpus() {
        let x = XenConfig { vcpus: Some(1), ..XenConfig::default() };
        assert!(check(&x, &BenchConfig { bench: Bench::Ipi, ..bench() }).unwrap_err().to_string().contains("--vcpus"));
        assert!(check(&XenConfig::default(), &BenchConfig { bench: Bench::Ipi, ..bench() }).is_ok());
    }

    #[test]
    fn period_is_converted_at_qemus_counter_rate() {
        let p = guest_params(&BenchConfig { period_us: 200.0, wait: Wait::Busy, ..bench() }, Gic::V3);
        assert_eq!(p.period_ticks, 12_500);
        assert_eq!(p.wait, Wait::Busy);
        assert_eq!((p.samples, p.warmup), (10, 2));
    }

    #[test]
    fn bounds_grow_with_samples_and_icount() {
        let b = bounds(&XenConfig::default(), &bench());
        assert_eq!(b.boot, Duration::from_secs(60));
        assert_eq!(b.total, Duration::from_secs(60) + Duration::from_millis(201) * 10);
        let i = bounds(&XenConfig { icount: true, ..XenConfig::default() }, &bench());
        assert_eq!(i.boot, Duration::from_secs(300));
        assert_eq!(bounds(&XenConfig { timeout_s: Some(7), ..XenConfig::default() }, &bench()).total, Duration::from_secs(7));
    }
}

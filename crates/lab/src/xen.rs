//! `irqlab-lab xen`: the benchmark guest as a dom0less domU of Debian's Xen 4.17 under QEMU TCG.
//! Steps: refuse what Debian's Xen cannot do; fetch Xen when missing; patch the guest; dump
//! QEMU's DTB and write the dom0less tree ([`crate::dts`]); boot; watch the console
//! ([`crate::session`]); parse it with `armguest::console`; write `result.json` atomically
//! beside the raw `console.log` and the `xen.dts` used.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use armguest::console::{self, ConsoleHost, ConsoleMeta};
use armguest::{Params, Program, Wait};

use crate::cli::{BenchArgs, Neighbour, Sched, Vwfi, XenArgs};
use crate::error::LabError;
use crate::qemu::{self, Machine};
use crate::watch::{Bounds, Outcome, Watcher};
use crate::{deps, output};

/// QEMU's generic timer runs at 62.5 MHz (target/arm `GTIMER_SCALE` = 16 ns, QEMU 7.2); the
/// guest prints CNTFRQ and a run whose counter differs says so.
pub const QEMU_COUNTER_HZ: u64 = 62_500_000;
/// Memory per domU (the guest needs 12 KiB; Xen wants whole MiBs).
const DOMU_KIB: u64 = 64 * 1024;

/// The lab's refusals, before anything is fetched or started.
pub fn check(x: &XenArgs, b: &BenchArgs) -> Result<(), LabError> {
    if x.sched == Sched::Null && x.xen.is_none() && x.xen_src.is_none() {
        return Err(LabError::Usage(
            "--sched null: Debian's Xen 4.17 (xen-hypervisor-4.17-arm64) is built without the null scheduler; \
             build one with it: --xen-src DIR --xen-config SCHED_NULL=y (CONFIG_SCHED_NULL), or give a prebuilt one with --xen FILE"
                .into(),
        ));
    }
    if let Some(p) = std::env::var_os("IRQLAB_LAB_XEN").map(PathBuf::from) {
        let bytes = std::fs::read(&p).map_err(|e| LabError::Usage(format!("IRQLAB_LAB_XEN={}: {e}", p.display())))?;
        crate::kernel_image::check_xen(&bytes).map_err(|e| LabError::Usage(format!("IRQLAB_LAB_XEN={}: {e}", p.display())))?;
    }
    if b.bench == results::vocab::Bench::Ipi && x.vcpus.unwrap_or(2) < 2 {
        return Err(LabError::Usage("--vcpus: the ipi bench needs at least 2 vCPUs".into()));
    }
    if x.vcpus == Some(0) || x.vcpus.unwrap_or(1) > 8 {
        return Err(LabError::Usage("--vcpus: between 1 and 8".into()));
    }
    Ok(())
}

pub fn guest_params(b: &BenchArgs) -> Params {
    guest_params_at(b, QEMU_COUNTER_HZ)
}

/// The guest's parameters for a counter running at `hz`.
pub fn guest_params_at(b: &BenchArgs, hz: u64) -> Params {
    Params {
        bench: match b.bench {
            results::vocab::Bench::Ipi => Program::Ipi,
            // `device` never reaches here: `BenchArgs` refuses it (`cli::xen_bench`).
            results::vocab::Bench::Timer | results::vocab::Bench::Device => Program::Timer,
        },
        wait: if b.wait == crate::cli::WaitArg::Busy { Wait::Busy } else { Wait::Wfi },
        period_ticks: (b.period_us * hz as f64 / 1e6).round().max(1.0) as u64,
        samples: b.samples,
        warmup: b.warmup,
        ..Params::default()
    }
}

/// Bounds: Xen boots in ~10 s here (60 s allowed on a loaded machine, 5× that under -icount);
/// each sample gets its period plus 200 ms of emulation slack; `--timeout-s` overrides the total.
pub fn bounds(x: &XenArgs, b: &BenchArgs) -> Bounds {
    let slow: u64 = if x.icount { 5 } else { 1 };
    let per_sample = Duration::from_secs_f64(b.period_us / 1e6) + Duration::from_millis(200);
    let total = x.timeout_s.map(Duration::from_secs).unwrap_or(Duration::from_secs(60 * slow) + per_sample * (b.samples.min(u32::MAX as u64) as u32).saturating_mul(slow as u32));
    Bounds { boot: Duration::from_secs(60 * slow), first_sample: Duration::from_secs(30 * slow), silence: Duration::from_secs(30 * slow), total }
}

fn run_tool(cmd: &mut std::process::Command, what: &str) -> Result<(), LabError> {
    let out = cmd.output().map_err(|e| LabError::Setup(format!("cannot run {what}: {e}")))?;
    if !out.status.success() {
        return Err(LabError::Setup(format!("{what} failed: {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    Ok(())
}

pub fn run(x: &XenArgs, b: &BenchArgs, command: Vec<String>) -> Result<i32, LabError> {
    check(x, b)?;
    let params = guest_params(b);
    let out = output::Out::prepare(&b.out, x.force)?;
    let qemu_bin = deps::ensure_tool("qemu-system-aarch64", "qemu-system-arm")?;
    let dtc = deps::ensure_tool("dtc", "device-tree-compiler")?;
    let (xen, built) = resolve(x)?;
    let image = armguest::image()?;
    let work = out.work_dir()?;
    let mut modules = vec![(work.join("guest.bin"), qemu::MODULE_BASE, armguest::patch(image, &params)?)];
    if x.neighbour == Neighbour::Busy {
        let spin = Params { bench: Program::Spin, samples: 1, warmup: 0, ..Params::default() };
        modules.push((work.join("spin.bin"), qemu::MODULE_BASE + qemu::MODULE_STRIDE, armguest::patch(image, &spin)?));
    }
    for (p, _, bytes) in &modules {
        std::fs::write(p, bytes).map_err(LabError::io(p))?;
    }
    let icount = x.icount.then(|| x.icount_opts.clone().unwrap_or_else(|| qemu::ICOUNT_DEFAULT.into()));
    // Under -icount QEMU runs every vCPU in one thread; with 2 CPUs Xen's boot stalled (after
    // "P2M: 4 levels", several tries) while 1 CPU booted every time: the lab uses 1 pCPU there.
    let machine = Machine::xen(if x.icount { 1 } else { 2 }, icount.clone());
    let virt_dtb = work.join("virt.dtb");
    eprintln!("irqlab-lab: dumping QEMU's device tree");
    run_tool(std::process::Command::new(&qemu_bin).args(machine.dumpdtb_args(&virt_dtb)), "qemu-system-aarch64 dumpdtb")?;
    let virt_dts = work.join("virt.dts");
    run_tool(std::process::Command::new(&dtc).args(["-q", "-I", "dtb", "-O", "dts", "-o"]).arg(&virt_dts).arg(&virt_dtb), "dtc (decompile)")?;
    let dts = std::fs::read_to_string(&virt_dts).map_err(LabError::io(&virt_dts))?;
    let uart = crate::dts::uart_path(&dts)?;
    let sched = match x.sched {
        Sched::Credit => "credit",
        Sched::Credit2 => "credit2",
        Sched::Null => "null", // only with --xen-src (SCHED_NULL=y) or --xen (checked above)
    };
    let vwfi = if x.vwfi == Vwfi::Native { "native" } else { "trap" };
    let vcpus = x.vcpus.unwrap_or(if params.bench == Program::Ipi { 2 } else { 1 });
    let mut domus: Vec<crate::dts::DomU> =
        modules.iter().map(|(_, addr, bytes)| crate::dts::DomU { cpus: vcpus, memory_kib: DOMU_KIB, module_addr: *addr, module_size: bytes.len() as u64 }).collect();
    if let Some(n) = domus.get_mut(1) {
        n.cpus = machine.smp; // one spinning vCPU per pCPU: every pCPU has the busy neighbour
    }
    let bootargs = qemu::xen_bootargs(&uart, sched, vwfi, x.icount);
    let xen_dts = crate::dts::replace_chosen(&dts, &crate::dts::chosen(&bootargs, &uart, &domus))?;
    out.write_new("xen.dts", xen_dts.as_bytes())?;
    let xen_dtb = work.join("xen.dtb");
    run_tool(std::process::Command::new(&dtc).args(["-q", "-I", "dts", "-O", "dtb", "-o"]).arg(&xen_dtb).arg(out.path("xen.dts")), "dtc (compile)")?;
    let mut args = machine.xen_args(&xen, &xen_dtb, &modules.iter().map(|(p, a, _)| (p.clone(), *a)).collect::<Vec<_>>());
    let census = crate::xen_census::prepare(x, &qemu_bin, &xen, built.as_ref(), modules[0].2.len() as u64, out.path("census.txt"))?;
    if let Some((plan, plugin)) = &census {
        args.extend(plan.qemu_args(&plugin.path)?);
    }
    let log_path = out.path("console.log");
    eprintln!(
        "irqlab-lab: booting Xen ({sched}, vwfi={vwfi}, neighbour {:?}{}) under QEMU TCG; console → {}",
        x.neighbour,
        if x.icount { ", -icount" } else { "" },
        log_path.display()
    );
    let s = crate::session::run(&qemu_bin, &args, &log_path, Watcher::new(bounds(x, b)))?;
    out.remove_work_dir();
    let host = if x.icount { ConsoleHost::InstructionCount } else { ConsoleHost::QemuTcg };
    let mut extra = BTreeMap::new();
    extra.insert("neighbour".to_string(), format!("{:?}", x.neighbour).to_lowercase());
    extra.insert("vcpus".to_string(), vcpus.to_string());
    extra.insert("period_us".to_string(), b.period_us.to_string());
    extra.insert("xen_cmdline".to_string(), bootargs.clone());
    extra.insert("qemu".to_string(), format!("qemu-system-aarch64 {}", machine.xen_args(Path::new("XEN"), Path::new("DTB"), &[]).join(" ")));
    if let Some(ic) = &icount {
        extra.insert("icount".to_string(), ic.clone());
    }
    if census.is_some() {
        extra.insert("census".to_string(), "on (QEMU TCG plugin; raw counts in census.txt)".to_string());
    }
    extra.extend(xen_params(&xen, built.as_ref()));
    let ns_per_insn = icount.as_deref().and_then(icount_ns_per_insn);
    let meta = ConsoleMeta {
        tool_version: format!("irqlab-lab {}", env!("CARGO_PKG_VERSION")),
        host,
        scheduler: Some(sched.into()),
        vwfi: Some(vwfi.into()),
        pinning: Some(if x.neighbour == Neighbour::Busy {
            format!("none (dom0less); the neighbour has one spinning vCPU per pCPU ({})", machine.smp)
        } else {
            "none (dom0less)".into()
        }),
        extra,
        keep_partial: true,
        ..Default::default()
    };
    let lab_problem = match &s.outcome {
        Outcome::Done => None,
        Outcome::Failed(w) | Outcome::TimedOut(w) => Some(w.clone()),
    };
    let mut result = match console::parse(&s.log, &log_path.display().to_string(), meta) {
        Ok(r) => r,
        Err(e) => {
            let why = lab_problem.unwrap_or_default();
            return Err(LabError::Boot { why: format!("no result: {e}{}", if why.is_empty() { String::new() } else { format!("; lab: {why}") }), log: log_path });
        }
    };
    result.meta.scenario = format!("xen-lab-{}", b.bench.name());
    result.meta.platform.insert("machine".into(), format!("QEMU virt, gic-version=3, cortex-a57, {} CPUs, TCG{}", machine.smp, if x.icount { " -icount" } else { "" }));
    let c = &mut result.configs[0];
    if let Some(t) = s.watcher.started {
        c.set_figure("lab.qemu_start_to_guest_start", t.as_secs_f64(), "s (wall)");
    }
    if let Some(t) = s.watcher.first_sample {
        c.set_figure("lab.qemu_start_to_first_sample", t.as_secs_f64(), "s (wall)");
    }
    c.set_figure("lab.wall", s.wall.as_secs_f64(), "s (wall)");
    if let Some(w) = &lab_problem {
        c.error = Some(match c.error.take() {
            Some(e) => format!("lab: {w}; {e}"),
            None => format!("lab: {w}"),
        });
    }
    if let Some(n) = ns_per_insn {
        c.set_figure("icount.ns_per_instruction", n as f64, "ns");
        c.notes.push(format!("-icount: every instruction (guest, Xen) advances virtual time by {n} ns: latency / {n} = instructions executed on the path"));
    }
    let freq = c.figures.get("counter_freq").map(|f| f.value as u64);
    if freq != Some(QEMU_COUNTER_HZ) {
        c.notes.push(format!("the guest's counter runs at {freq:?} Hz, not QEMU's {QEMU_COUNTER_HZ}: --period-us was converted at {QEMU_COUNTER_HZ} Hz"));
    }
    if let Some((plan, plugin)) = &census {
        crate::xen_census::finish(plan, plugin, icount.as_deref(), c)?;
    }
    result.provenance = Some(output::provenance(command));
    let failed = c.error.clone();
    out.write_result(&result)?;
    eprintln!("irqlab-lab: wrote {}", out.path("result.json").display());
    match failed {
        None => Ok(0),
        Some(e) => {
            eprintln!("irqlab-lab: incomplete run: {e} (console log: {})", log_path.display());
            Ok(1)
        }
    }
}

/// The Xen to boot: built from `--xen-src` (+ patches, config; [`crate::xen_build`]), a prebuilt
/// `--xen FILE`, or Debian's Xen 4.17. `--sched null` with a build that lacks CONFIG_SCHED_NULL
/// is refused (exit 2) here, after the build says what it has.
pub fn resolve(x: &XenArgs) -> Result<(PathBuf, Option<crate::xen_build::Built>), LabError> {
    if let Some(src) = &x.xen_src {
        let s = crate::xen_build::XenSource { src: src.clone(), patches: x.patches.clone(), config: x.xen_config.clone() };
        let b = crate::xen_build::ensure(&s, &deps::cache_dir())?;
        if x.sched == Sched::Null && !b.has("SCHED_NULL") {
            return Err(LabError::Usage(format!("--sched null: the Xen built from {} has no CONFIG_SCHED_NULL=y (add --xen-config SCHED_NULL=y)", src.display())));
        }
        return Ok((b.binary.clone(), Some(b)));
    }
    if let Some(f) = &x.xen {
        if !f.is_file() {
            return Err(LabError::Usage(format!("--xen {}: no such file", f.display())));
        }
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

/// `irqlab-lab guest`: the patched image for a board, never over an existing file without --force.
pub fn write_guest(g: &crate::cli::GuestArgs, b: &BenchArgs) -> Result<i32, LabError> {
    if g.counter_hz == 0 {
        return Err(LabError::Usage("--counter-hz: must be above 0".into()));
    }
    let image = armguest::patch(armguest::image()?, &guest_params_at(b, g.counter_hz))?;
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
    use crate::cli::WaitArg;
    use results::vocab::Bench;

    fn bench() -> BenchArgs {
        BenchArgs { bench: Bench::Timer, samples: 10, warmup: 2, period_us: 1000.0, wait: WaitArg::Wfi, out: "/tmp/x".into() }
    }

    #[test]
    fn icount_shift_gives_ns_per_instruction() {
        assert_eq!(icount_ns_per_insn("shift=2,sleep=off"), Some(4));
        assert_eq!(icount_ns_per_insn("sleep=off,shift=0"), Some(1));
        assert_eq!(icount_ns_per_insn("shift=auto,sleep=off"), None);
    }

    #[test]
    fn null_scheduler_is_refused_with_how_to_get_it() {
        let x = XenArgs { sched: Sched::Null, ..XenArgs::default() };
        let e = check(&x, &bench()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("CONFIG_SCHED_NULL"), "{e}");
    }

    #[test]
    fn ipi_needs_two_vcpus() {
        let x = XenArgs { vcpus: Some(1), ..XenArgs::default() };
        assert!(check(&x, &BenchArgs { bench: Bench::Ipi, ..bench() }).unwrap_err().to_string().contains("--vcpus"));
        assert!(check(&XenArgs::default(), &BenchArgs { bench: Bench::Ipi, ..bench() }).is_ok());
    }

    #[test]
    fn period_is_converted_at_qemus_counter_rate() {
        let p = guest_params(&BenchArgs { period_us: 200.0, wait: WaitArg::Busy, ..bench() });
        assert_eq!(p.period_ticks, 12_500);
        assert_eq!(p.wait, Wait::Busy);
        assert_eq!((p.samples, p.warmup), (10, 2));
    }

    #[test]
    fn bounds_grow_with_samples_and_icount() {
        let b = bounds(&XenArgs::default(), &bench());
        assert_eq!(b.boot, Duration::from_secs(60));
        assert_eq!(b.total, Duration::from_secs(60) + Duration::from_millis(201) * 10);
        let i = bounds(&XenArgs { icount: true, ..XenArgs::default() }, &bench());
        assert_eq!(i.boot, Duration::from_secs(300));
        assert_eq!(bounds(&XenArgs { timeout_s: Some(7), ..XenArgs::default() }, &bench()).total, Duration::from_secs(7));
    }
}

//! Running one measurement: VM and vCPU threads, the host-side trigger loop (device), the
//! watchdog, KVM stats before and after, and reading the samples back from guest memory.
//!
//! Nothing here can hang: vCPU threads are kicked out of KVM_RUN with a signal until they exit,
//! and a run whose sample counter stops moving for `stall_timeout` ends with an error that keeps
//! the samples taken so far.
use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kvm_ioctls::{VcpuExit, VcpuFd};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};
use vmm_sys_util::signal::{register_signal_handler, Killable, SIGRTMIN};

use crate::config::{BenchConfig, BenchKind, DeviceVia};
use crate::error::KvmError;
use crate::exit::{handle_exit, Action, Exit};
use crate::layout::{self, slot};
use crate::measurement::Measurement;
use crate::tracefs::split::Stamps;
use crate::stats::{delta, fd::StatsFd};
use crate::vm::{Vm, EDGE_PIN, LEVEL_PIN, MSI_GSI};

fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no memory effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

extern "C" fn on_kick(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {}

fn to_exit(r: Result<VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit {
    match r {
        Ok(VcpuExit::IoOut(port, _)) => Exit::IoOut { port },
        Ok(VcpuExit::IoIn(port, _)) => Exit::IoIn { port },
        Ok(VcpuExit::MmioRead(addr, _)) => Exit::Mmio { addr, write: false },
        Ok(VcpuExit::MmioWrite(addr, _)) => Exit::Mmio { addr, write: true },
        Ok(VcpuExit::Hlt) => Exit::Hlt,
        Ok(VcpuExit::Shutdown) => Exit::Shutdown,
        Ok(VcpuExit::InternalError) => Exit::InternalError,
        Ok(VcpuExit::FailEntry(reason, _)) => Exit::FailEntry { reason },
        Ok(VcpuExit::Intr) => Exit::Interrupted,
        Ok(other) => Exit::Other(format!("{other:?}")),
        Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => Exit::Interrupted,
        Err(e) => Exit::Other(format!("KVM_RUN error: {e}")),
    }
}

fn pin_thread(cpu: usize) {
    // SAFETY: plain libc affinity call on the current thread with a zeroed, then filled, set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The calling thread's id (what tracefs calls `pid`).
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// A vCPU thread reports its thread id on the sender, then waits at the barrier before KVM_RUN.
type Gate = Option<(mpsc::Sender<(u32, i32)>, Arc<Barrier>)>;

fn spawn_vcpu(id: u32, mut vcpu: VcpuFd, stop: Arc<AtomicBool>, tx: mpsc::Sender<(u32, Action)>, pin: Option<usize>, gate: Gate) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(format!("vcpu{id}"))
        .spawn(move || {
            if let Some(c) = pin {
                pin_thread(c);
            }
            if let Some((tids, barrier)) = gate {
                let _ = tids.send((id, gettid()));
                barrier.wait();
            }
            while !stop.load(Ordering::Acquire) {
                let exit = to_exit(vcpu.run());
                match handle_exit(id, &exit) {
                    Action::Continue => {}
                    a => {
                        let _ = tx.send((id, a));
                        break;
                    }
                }
            }
        })
        .expect("spawn vCPU thread")
}

/// Kick every vCPU thread out of KVM_RUN until all have exited (bounded: 5 s).
fn stop_all(stop: &AtomicBool, threads: Vec<JoinHandle<()>>) -> Option<String> {
    stop.store(true, Ordering::Release);
    let deadline = Instant::now() + Duration::from_secs(5);
    for t in threads {
        while !t.is_finished() {
            if Instant::now() > deadline {
                return Some("a vCPU thread did not leave KVM_RUN within 5 s of being kicked".into());
            }
            let _ = t.kill(SIGRTMIN());
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = t.join();
    }
    None
}

/// Check the guest TSC against the host: the guest stores its TSC at entry; it must fall between
/// host readings taken before the vCPUs start and when the entry value is first seen. `entry` is
/// the value seen then: every vCPU stores its own entry TSC in the same slot, and a later vCPU's
/// would fall outside the bracket.
fn tsc_offset(entry: u64, before: u64, after: u64) -> (i64, String) {
    if entry == 0 {
        return (0, "guest entry TSC not seen; offset assumed 0".into());
    }
    if entry >= before && entry <= after {
        (0, format!("guest TSC at entry within host bracket [+0, +{}] cycles: offset 0", after - before))
    } else {
        let off = entry as i64 - ((before / 2 + after / 2) as i64);
        (off, format!("guest TSC outside the host bracket: estimated offset {off} cycles (corrected)"))
    }
}

/// The run's threads, as tracefs sees them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Threads {
    /// Thread id of each vCPU, by vCPU index.
    pub vcpu_tids: Vec<i32>,
    /// The thread that runs the benchmark loop (the device benchmark's trigger).
    pub host_tid: i32,
}

/// Run one measurement. Progress is reported as samples taken so far.
pub fn run_bench(cfg: &BenchConfig, progress: &dyn Fn(u64)) -> Result<Measurement, KvmError> {
    run_bench_with(cfg, progress, &mut |_| Ok(()))
}

/// [`run_bench`], calling `on_threads` once the vCPU threads exist and before any of them enters
/// the guest (tracing is armed there, filtered to those threads).
pub fn run_bench_with(cfg: &BenchConfig, progress: &dyn Fn(u64), on_threads: &mut dyn FnMut(&Threads) -> Result<(), KvmError>) -> Result<Measurement, KvmError> {
    cfg.validate(&crate::config::allowed_cpus())?;
    let started = Instant::now();
    let kvm_probe = kvm_ioctls::Kvm::new().map_err(|e| KvmError::Unavailable(e.to_string()))?;
    drop(kvm_probe);
    let kind_code = match cfg.kind {
        BenchKind::Timer => 1,
        BenchKind::Ipi => 2,
        BenchKind::Device => 3,
    };
    // TSC kHz comes from a vCPU; create the VM with a provisional delta, then fix it.
    let vm = Vm::create(cfg, kind_code, 0)?;
    let vcpus: Vec<VcpuFd> = (0..cfg.vcpus).map(|i| vm.create_vcpu(i)).collect::<Result<_, _>>()?;
    let tsc_khz = vcpus[0].get_tsc_khz().map(|k| k as u64).unwrap_or(0);
    if tsc_khz == 0 {
        return Err(KvmError::Setup { step: "KVM_GET_TSC_KHZ", source: std::io::Error::other("TSC frequency unknown") });
    }
    let period = cfg.period_cycles(tsc_khz);
    vm.set_slot(slot::DELTA, period)?;
    let mut m = Measurement::new(cfg.clone(), tsc_khz);
    m.notes.extend(vm.caps.iter().map(|(k, v)| format!("{k}: {v}")));

    let vm_stats = StatsFd::open(vm.fd.as_raw_fd()).ok();
    let vcpu_stats: Vec<StatsFd> = vcpus.iter().filter_map(|v| StatsFd::open(v.as_raw_fd()).ok()).collect();
    let read_stats = || {
        let mut all = BTreeMap::new();
        if let Some(s) = &vm_stats {
            for (k, v) in s.read() {
                all.insert(format!("kvm.vm.{k}"), v);
            }
        }
        for s in &vcpu_stats {
            for (k, v) in s.read() {
                *all.entry(format!("kvm.vcpu.{k}")).or_insert(0) += v;
            }
        }
        all
    };
    let stats_before = read_stats();

    // SAFETY: the handler does nothing; it exists so the signal interrupts KVM_RUN.
    register_signal_handler(SIGRTMIN(), on_kick).map_err(|e| KvmError::Setup { step: "signal handler", source: std::io::Error::from_raw_os_error(e.errno()) })?;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let (tid_tx, tid_rx) = mpsc::channel();
    let barrier = Arc::new(Barrier::new(cfg.vcpus as usize + 1));
    let threads: Vec<JoinHandle<()>> = vcpus
        .into_iter()
        .enumerate()
        .map(|(i, v)| spawn_vcpu(i as u32, v, stop.clone(), tx.clone(), cfg.pin.get(i).copied(), Some((tid_tx.clone(), barrier.clone()))))
        .collect();
    drop(tx);
    drop(tid_tx);
    let mut vcpu_tids = vec![0; cfg.vcpus as usize];
    for (i, tid) in (0..cfg.vcpus).map_while(|_| tid_rx.recv_timeout(Duration::from_secs(5)).ok()) {
        vcpu_tids[i as usize] = tid;
    }
    m.threads = Threads { vcpu_tids, host_tid: gettid() };
    let armed = on_threads(&m.threads);
    let host_before = rdtsc();
    barrier.wait();
    if let Err(e) = armed {
        stop_all(&stop, threads);
        return Err(e);
    }
    // Bracket the guest's entry TSC tightly: spin until it appears.
    let spin_start = Instant::now();
    let mut entry_tsc = vm.slot(slot::ENTRY_TSC);
    while entry_tsc == 0 && spin_start.elapsed() < cfg.stall_timeout {
        std::hint::spin_loop();
        entry_tsc = vm.slot(slot::ENTRY_TSC);
    }
    let host_after_entry = rdtsc();

    let mut host_trigger: Vec<u64> = Vec::with_capacity(cfg.samples as usize);
    let outcome = match cfg.kind {
        BenchKind::Device => trigger_loop(&vm, cfg, period, tsc_khz, &rx, &mut host_trigger, progress, started, &mut m),
        _ => wait_loop(&vm, cfg, cfg.watchdog(tsc_khz), &rx, progress, started, &mut m),
    };
    if let Some(e) = stop_all(&stop, threads) {
        m.error.get_or_insert(e);
    }
    if let Err(e) = outcome {
        m.error = Some(e);
    }
    m.counters = delta(&stats_before, &read_stats());
    let (offset, tsc_note) = tsc_offset(entry_tsc, host_before, host_after_entry);
    m.notes.push(tsc_note);
    m.tsc_offset = offset;
    collect(&vm, cfg, &host_trigger, offset, &mut m);
    if cfg.disable_hlt_exits {
        let halts = m.counters.get("kvm.vcpu.halt_exits").copied().unwrap_or(0);
        m.notes.push(if halts == 0 {
            "HLT exits disabled: no halt exits counted (effective)".into()
        } else {
            format!("HLT exits disabled was requested, but {halts} halt exits were counted: accepted, not effective")
        });
    }
    m.wall = started.elapsed();
    Ok(m)
}

/// Wait for the guest to finish (timer, ipi), watching the sample counter.
fn wait_loop(vm: &Vm, cfg: &BenchConfig, watchdog: Duration, rx: &mpsc::Receiver<(u32, Action)>, progress: &dyn Fn(u64), started: Instant, m: &mut Measurement) -> Result<(), String> {
    let mut last = 0;
    let mut last_change = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok((_, Action::Done)) => {
                progress(vm.slot(slot::COUNT) - last);
                return Ok(());
            }
            Ok((_, Action::Parked)) | Ok((_, Action::Continue)) => {}
            Ok((_, Action::Fail(e))) => return Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("every vCPU thread ended without finishing the benchmark".into()),
        }
        let count = vm.slot(slot::COUNT);
        if count != last {
            if last == 0 {
                m.first_sample = Some(started.elapsed());
            }
            progress(count - last);
            last = count;
            last_change = Instant::now();
        } else if last_change.elapsed() > watchdog {
            return Err(format!("watchdog: the guest made no progress for {watchdog:?} after {count} of {} samples", cfg.samples));
        }
    }
}

/// The device benchmark: trigger from this thread, wait for the guest handler, repeat.
#[allow(clippy::too_many_arguments)]
fn trigger_loop(
    vm: &Vm,
    cfg: &BenchConfig,
    period: u64,
    tsc_khz: u64,
    rx: &mpsc::Receiver<(u32, Action)>,
    host: &mut Vec<u64>,
    progress: &dyn Fn(u64),
    started: Instant,
    m: &mut Measurement,
) -> Result<(), String> {
    let efd = |what| EventFd::new(EFD_NONBLOCK).map_err(|e| format!("{what}: {e}"));
    let irqfd = efd("irqfd")?;
    let resample = efd("resamplefd")?;
    match cfg.via {
        DeviceVia::Irqfd => vm.fd.register_irqfd(&irqfd, MSI_GSI).map_err(|e| format!("KVM_IRQFD: {e}"))?,
        DeviceVia::Level => vm.fd.register_irqfd_with_resample(&irqfd, &resample, LEVEL_PIN).map_err(|e| format!("KVM_IRQFD (resample): {e}"))?,
        _ => {}
    }
    let msi = kvm_bindings::kvm_msi { address_lo: 0xfee0_0000, data: layout::vector::DEVICE as u32, ..Default::default() };
    // Let the guest reach HLT with interrupts on before the first trigger.
    let t_ready = Instant::now();
    while vm.slot(slot::ENTRY_TSC) == 0 {
        if t_ready.elapsed() > cfg.stall_timeout {
            return Err("watchdog: the guest never started".into());
        }
        std::thread::yield_now();
    }
    let period_ns = period * 1_000_000 / tsc_khz;
    let mut next = Instant::now() + Duration::from_nanos(period_ns);
    for k in 0..cfg.samples {
        if let Ok((_, Action::Fail(e))) = rx.try_recv() {
            return Err(e);
        }
        while Instant::now() < next {
            std::hint::spin_loop();
        }
        let t = rdtsc();
        host.push(t);
        let r = match cfg.via {
            DeviceVia::Irqfd | DeviceVia::Level => irqfd.write(1).map_err(|e| format!("irqfd write: {e}")),
            DeviceVia::Msi => vm.fd.signal_msi(msi).map(|_| ()).map_err(|e| format!("KVM_SIGNAL_MSI: {e}")),
            DeviceVia::Line => vm
                .fd
                .set_irq_line(EDGE_PIN, true)
                .and_then(|_| vm.fd.set_irq_line(EDGE_PIN, false))
                .map_err(|e| format!("KVM_IRQ_LINE: {e}")),
        };
        r?;
        let waited = Instant::now();
        while vm.slot(slot::COUNT) <= k {
            if waited.elapsed() > cfg.stall_timeout {
                host.pop();
                return Err(format!("watchdog: interrupt {k} never reached the guest handler within {:?}", cfg.stall_timeout));
            }
            std::hint::spin_loop();
        }
        if cfg.via == DeviceVia::Level {
            // The guest's EOI de-asserts the line and signals the resamplefd.
            while resample.read().is_err() {
                if waited.elapsed() > cfg.stall_timeout {
                    return Err(format!("watchdog: no resample notification after interrupt {k}"));
                }
                std::thread::yield_now();
            }
        }
        if k == 0 {
            m.first_sample = Some(started.elapsed());
        }
        progress(1);
        next = Instant::now() + Duration::from_nanos(period_ns);
    }
    Ok(())
}

/// Read the samples the guest recorded and turn them into latencies in ns.
fn collect(vm: &Vm, cfg: &BenchConfig, host: &[u64], offset: i64, m: &mut Measurement) {
    let count = vm.slot(slot::COUNT).min(cfg.samples);
    let ns = |cycles: i64| cycles as f64 * 1e6 / m.tsc_khz as f64;
    let rec = |k: u64, field: u64| vm.r64(layout::SAMPLES + k * layout::SAMPLE_BYTES + 8 * field);
    match cfg.kind {
        BenchKind::Timer => {
            let v = (0..count).map(|k| ns(rec(k, 1) as i64)).collect();
            m.classes.push(("timer".into(), v));
            m.stamps = timer_stamps(vm.slot(slot::EXPECT), vm.slot(slot::DELTA), count, count == cfg.samples, &|k| rec(k, 1), offset);
        }
        BenchKind::Device => {
            let n = count.min(host.len() as u64);
            let v = (0..n).map(|k| ns(rec(k, 1) as i64 - offset - host[k as usize] as i64)).collect();
            m.classes.push((format!("device_{}", via_name(cfg.via)), v));
            m.stamps = (0..n).map(|k| Stamps { start: host[k as usize], arrival: rec(k, 1).wrapping_sub(offset as u64) }).collect();
        }
        BenchKind::Ipi => {
            let one: Vec<f64> = (0..count).map(|k| ns(rec(k, 1) as i64 - rec(k, 0) as i64)).collect();
            let rt: Vec<f64> = (0..count).map(|k| ns(rec(k, 2) as i64 - rec(k, 0) as i64)).collect();
            m.classes.push(("ipi_one_way".into(), one));
            m.classes.push(("ipi_round_trip".into(), rt));
            m.stamps = (0..count).map(|k| Stamps { start: rec(k, 0).wrapping_sub(offset as u64), arrival: rec(k, 1).wrapping_sub(offset as u64) }).collect();
        }
    }
}

/// Each timer sample's deadline and arrival in host TSC cycles. The guest records only latencies
/// (arrival − deadline) and arms the next deadline at arrival + `delta`, so the deadlines follow
/// backwards from the last one it armed (`expect`): deadline(k) = deadline(k+1) − delta − latency(k).
/// `finished`: the guest stopped after its last sample without arming another deadline.
fn timer_stamps(expect: u64, delta: u64, count: u64, finished: bool, latency: &dyn Fn(u64) -> u64, offset: i64) -> Vec<Stamps> {
    let mut out = Vec::with_capacity(count as usize);
    let mut next = expect; // deadline of sample `count` (or of the last sample, when finished)
    for k in (0..count).rev() {
        let deadline = if finished && k == count - 1 { next } else { next.wrapping_sub(delta).wrapping_sub(latency(k)) };
        out.push(Stamps { start: deadline.wrapping_sub(offset as u64), arrival: deadline.wrapping_add(latency(k)).wrapping_sub(offset as u64) });
        next = deadline;
    }
    out.reverse();
    out
}

pub fn via_name(v: DeviceVia) -> &'static str {
    match v {
        DeviceVia::Irqfd => "irqfd",
        DeviceVia::Msi => "msi",
        DeviceVia::Line => "line",
        DeviceVia::Level => "level",
    }
}

/// Probe the PV IPI hypercall in a VM of its own: supported (and delivering), or not, within
/// `timeout`. On these hosts the hypercall can make KVM_RUN spin forever; the watchdog bounds it.
pub fn probe_pv_ipi(timeout: Duration) -> Result<String, KvmError> {
    let kvm = kvm_ioctls::Kvm::new().map_err(|e| KvmError::Unavailable(e.to_string()))?;
    let cpuid = kvm.get_supported_cpuid(kvm_bindings::KVM_MAX_CPUID_ENTRIES).map_err(|e| KvmError::Setup { step: "KVM_GET_SUPPORTED_CPUID", source: std::io::Error::from_raw_os_error(e.errno()) })?;
    let advertised = cpuid.as_slice().iter().any(|e| e.function == 0x4000_0001 && e.eax & (1 << 11) != 0);
    if !advertised {
        return Ok("unsupported on this host: KVM_FEATURE_PV_SEND_IPI not advertised".into());
    }
    let cfg = BenchConfig { kind: BenchKind::Ipi, vcpus: 2, samples: 1, warmup: 0, stall_timeout: timeout, ..Default::default() };
    let vm = Vm::create(&cfg, 4, 0)?;
    let vcpus: Vec<VcpuFd> = (0..2).map(|i| vm.create_vcpu(i)).collect::<Result<_, _>>()?;
    register_signal_handler(SIGRTMIN(), on_kick).map_err(|e| KvmError::Setup { step: "signal handler", source: std::io::Error::from_raw_os_error(e.errno()) })?;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let threads: Vec<_> = vcpus.into_iter().enumerate().map(|(i, v)| spawn_vcpu(i as u32, v, stop.clone(), tx.clone(), None, None)).collect();
    drop(tx);
    let verdict = match rx.recv_timeout(timeout) {
        Ok((0, Action::Done)) => format!("supported: KVM_HC_SEND_IPI returned {}", vm.slot(slot::FLAG) as i64),
        Ok((_, Action::Fail(e))) => format!("unsupported on this host: {e}"),
        Ok(other) => format!("unsupported on this host: unexpected {other:?}"),
        Err(_) => format!("unsupported on this host: the hypercall did not complete within {timeout:?}"),
    };
    let hung = stop_all(&stop, threads);
    Ok(match hung {
        Some(h) => format!("{verdict} ({h})"),
        None => verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_deadlines_follow_from_the_last_one() {
        // deadlines 100, 1130, 2150; latencies 30, 20, 25; delta 1000.
        let lat = [30u64, 20, 25];
        let want = [(100, 130), (1130, 1150), (2150, 2175)].map(|(start, arrival)| Stamps { start, arrival });
        assert_eq!(timer_stamps(2150, 1000, 3, true, &|k| lat[k as usize], 0), want);
        // Stopped early: the guest had armed deadline 3175 for a fourth sample.
        assert_eq!(timer_stamps(3175, 1000, 3, false, &|k| lat[k as usize], 0), want);
        assert_eq!(timer_stamps(2160, 1000, 3, true, &|k| lat[k as usize], 10)[0], Stamps { start: 100, arrival: 130 });
    }
}

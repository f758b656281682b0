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

use crate::config::{BenchConfig, BenchKind, DeviceVia, DISCARDED_FIRST};
use crate::error::KvmError;
use crate::exit::{handle_exit, Action, Exit};
use crate::layout::{self, slot};
use crate::measurement::{Ended, Measurement};
use crate::threads;
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

/// What a vCPU thread sets up for itself before entering the guest.
#[derive(Debug, Clone, Copy, Default)]
struct ThreadSetup {
    pin: Option<usize>,
    priority: Option<i32>,
}

impl ThreadSetup {
    fn apply(self) -> Result<(), String> {
        if let Some(c) = self.pin {
            threads::pin_current(c)?;
        }
        if let Some(p) = self.priority {
            threads::fifo_current(p)?;
        }
        Ok(())
    }
}

/// The calling thread's id (what tracefs calls `pid`).
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// A vCPU thread reports its thread id and whether its setup worked on the sender, then waits at
/// the barrier before KVM_RUN.
type Gate = Option<(mpsc::Sender<(u32, i32, Result<(), String>)>, Arc<Barrier>)>;

fn spawn_vcpu(id: u32, mut vcpu: VcpuFd, stop: Arc<AtomicBool>, tx: mpsc::Sender<(u32, Action)>, setup: ThreadSetup, gate: Gate) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(format!("vcpu{id}"))
        .spawn(move || {
            let set = setup.apply();
            if let Some((tids, barrier)) = gate {
                let _ = tids.send((id, gettid(), set));
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
    if cfg.mlock {
        threads::mlock_all().map_err(KvmError::Host)?;
    }
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
        .map(|(i, v)| {
            let setup = ThreadSetup { pin: cfg.pin.get(i).copied(), priority: cfg.priority };
            spawn_vcpu(i as u32, v, stop.clone(), tx.clone(), setup, Some((tid_tx.clone(), barrier.clone())))
        })
        .collect();
    drop(tx);
    drop(tid_tx);
    let mut vcpu_tids = vec![0; cfg.vcpus as usize];
    let mut setup_error = None;
    for (i, tid, set) in (0..cfg.vcpus).map_while(|_| tid_rx.recv_timeout(Duration::from_secs(5)).ok()) {
        vcpu_tids[i as usize] = tid;
        if let Err(e) = set {
            setup_error.get_or_insert(e);
        }
    }
    m.threads = Threads { vcpu_tids, host_tid: gettid() };
    let armed = match setup_error {
        Some(e) => Err(KvmError::Host(e)),
        None => on_threads(&m.threads),
    };
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
    let (offset, tsc_note) = tsc_offset(entry_tsc, host_before, host_after_entry);
    m.notes.push(tsc_note);
    m.tsc_offset = offset;

    let mut w = Watch::new(&vm, cfg, offset, tsc_khz, m.threads.vcpu_tids.clone());
    let outcome = match cfg.kind {
        BenchKind::Device => trigger_loop(&mut w, period, tsc_khz, &rx, progress, started, &mut m),
        _ => wait_loop(&mut w, cfg.watchdog(tsc_khz), &rx, progress, started, &mut m),
    };
    if let Some(e) = stop_all(&stop, threads) {
        m.error.get_or_insert(e);
    }
    let finished = outcome.is_ok();
    if let Err(e) = outcome {
        m.error = Some(e);
    }
    m.counters = delta(&stats_before, &read_stats());
    m.cpus_used = w.cpus.0.clone();
    m.ended = w.ended;
    let expect = vm.slot(slot::EXPECT);
    collect(&w.raw, cfg, expect, period, finished, offset, &mut m);
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

/// The main class's latency of one raw record in TSC cycles (signed: a timer can fire before its
/// deadline): timer arrival − deadline, device arrival − trigger, IPI one-way.
fn main_cycles(kind: BenchKind, r: &[u64; 3], offset: i64) -> i64 {
    match kind {
        BenchKind::Timer => r[1] as i64,
        BenchKind::Device => (r[1] as i64).wrapping_sub(offset).wrapping_sub(r[0] as i64),
        BenchKind::Ipi => (r[1] as i64).wrapping_sub(r[0] as i64),
    }
}

/// What the host watches while the guest runs: the records drained from the ring so far, the CPUs
/// the vCPU threads run on, and whether the run must end early (`--duration`, `--stop-above`).
struct Watch<'a> {
    vm: &'a Vm,
    cfg: &'a BenchConfig,
    /// Every record taken, in order (device: the host trigger TSC in field 0).
    raw: Vec<[u64; 3]>,
    offset: i64,
    stop_cycles: Option<i64>,
    until: Option<Instant>,
    /// The guest was asked to stop (NSAMP lowered).
    stopping: bool,
    ended: Option<Ended>,
    cpus: threads::CpuSamples,
    tids: Vec<i32>,
}

impl<'a> Watch<'a> {
    fn new(vm: &'a Vm, cfg: &'a BenchConfig, offset: i64, tsc_khz: u64, tids: Vec<i32>) -> Self {
        Watch {
            vm,
            cfg,
            raw: Vec::new(),
            offset,
            stop_cycles: cfg.stop_above_ns.map(|ns| (ns as u128 * tsc_khz as u128 / 1_000_000) as i64),
            until: cfg.duration.map(|d| Instant::now() + d),
            stopping: false,
            ended: None,
            cpus: Default::default(),
            tids,
        }
    }

    /// Raw records the guest has completed up to `count` (not yet drained).
    fn drain(&mut self, count: u64) -> Result<(), String> {
        let have = self.raw.len() as u64;
        if count.saturating_sub(have) > layout::RING {
            return Err(format!("the host fell more than {} samples behind the guest; samples were overwritten", layout::RING));
        }
        for k in have..count.min(self.cfg.samples + DISCARDED_FIRST) {
            let a = layout::record(k);
            self.push([self.vm.r64(a), self.vm.r64(a + 8), self.vm.r64(a + 16)]);
        }
        Ok(())
    }

    /// Keep one record; note a sample over the --stop-above threshold.
    fn push(&mut self, r: [u64; 3]) {
        let k = self.raw.len() as u64;
        self.raw.push(r);
        if let (None, Some(limit)) = (&self.ended, self.stop_cycles) {
            if k >= DISCARDED_FIRST && main_cycles(self.cfg.kind, &r, self.offset) > limit {
                self.ended = Some(Ended::Above { index: k - DISCARDED_FIRST });
            }
        }
    }

    /// After each look at the guest: sample the vCPU threads' CPUs, end the run once --duration
    /// has passed, and ask the guest to stop if the run must end. Returns whether it must.
    fn check(&mut self) -> bool {
        self.cpus.sample(&self.tids);
        if self.ended.is_none() && self.until.is_some_and(|u| Instant::now() >= u) {
            self.ended = Some(Ended::Duration);
        }
        if self.ended.is_some() && !self.stopping {
            // The guest compares its count with NSAMP after each sample: 0 ends it at the next.
            let _ = self.vm.set_slot(slot::NSAMP, 0);
            self.stopping = true;
        }
        self.ended.is_some()
    }
}

/// Wait for the guest to finish (timer, ipi), draining its samples and watching the count.
fn wait_loop(w: &mut Watch, watchdog: Duration, rx: &mpsc::Receiver<(u32, Action)>, progress: &dyn Fn(u64), started: Instant, m: &mut Measurement) -> Result<(), String> {
    let mut last = 0;
    let mut last_change = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok((_, Action::Done)) => {
                let count = w.vm.slot(slot::COUNT);
                w.drain(count)?;
                progress(count - last);
                return Ok(());
            }
            Ok((_, Action::Parked)) | Ok((_, Action::Continue)) => {}
            Ok((_, Action::Fail(e))) => return Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("every vCPU thread ended without finishing the benchmark".into()),
        }
        let count = w.vm.slot(slot::COUNT);
        w.drain(count)?;
        w.check();
        if count != last {
            if last == 0 {
                m.first_sample = Some(started.elapsed());
            }
            progress(count - last);
            last = count;
            last_change = Instant::now();
        } else if last_change.elapsed() > watchdog {
            return Err(format!("watchdog: the guest made no progress for {watchdog:?} after {count} of {} samples", w.cfg.samples + DISCARDED_FIRST));
        }
    }
}

/// The device benchmark: trigger from this thread, wait for the guest handler, repeat.
fn trigger_loop(w: &mut Watch, period: u64, tsc_khz: u64, rx: &mpsc::Receiver<(u32, Action)>, progress: &dyn Fn(u64), started: Instant, m: &mut Measurement) -> Result<(), String> {
    let (vm, cfg) = (w.vm, w.cfg);
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
    for k in 0..cfg.samples + DISCARDED_FIRST {
        if let Ok((_, Action::Fail(e))) = rx.try_recv() {
            return Err(e);
        }
        while Instant::now() < next {
            std::hint::spin_loop();
        }
        let t = rdtsc();
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
                return Err(format!("watchdog: interrupt {k} never reached the guest handler within {:?}", cfg.stall_timeout));
            }
            std::hint::spin_loop();
        }
        w.push([t, vm.r64(layout::record(k) + 8), 0]);
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
        if k % 64 == 0 && w.check() || w.ended.is_some() {
            break;
        }
        next = Instant::now() + Duration::from_nanos(period_ns);
    }
    w.check();
    Ok(())
}

/// Turn the drained records into latencies in ns: the first [`DISCARDED_FIRST`] are dropped, and
/// a run stopped by --stop-above ends at the sample that crossed.
fn collect(raw: &[[u64; 3]], cfg: &BenchConfig, expect: u64, delta: u64, finished: bool, offset: i64, m: &mut Measurement) {
    let count = raw.len() as u64;
    let ns = |cycles: i64| cycles as f64 * 1e6 / m.tsc_khz as f64;
    let keep = match m.ended {
        Some(Ended::Above { index }) => index as usize + 1,
        _ => usize::MAX,
    };
    let kept = |v: Vec<f64>| v.into_iter().skip(DISCARDED_FIRST as usize).take(keep).collect::<Vec<f64>>();
    let main: Vec<f64> = raw.iter().map(|r| ns(main_cycles(cfg.kind, r, offset))).collect();
    let stamps = match cfg.kind {
        BenchKind::Timer => {
            m.classes.push(("timer".into(), kept(main)));
            timer_stamps(expect, delta, count, finished, &|k| raw[k as usize][1], offset)
        }
        BenchKind::Device => {
            m.classes.push((format!("device_{}", via_name(cfg.via)), kept(main)));
            raw.iter().map(|r| Stamps { start: r[0], arrival: r[1].wrapping_sub(offset as u64) }).collect()
        }
        BenchKind::Ipi => {
            let rt: Vec<f64> = raw.iter().map(|r| ns(r[2] as i64 - r[0] as i64)).collect();
            m.classes.push(("ipi_one_way".into(), kept(main)));
            m.classes.push(("ipi_round_trip".into(), kept(rt)));
            raw.iter().map(|r| Stamps { start: r[0].wrapping_sub(offset as u64), arrival: r[1].wrapping_sub(offset as u64) }).collect()
        }
    };
    m.stamps = stamps.into_iter().skip(DISCARDED_FIRST as usize).take(keep).collect();
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
    let threads: Vec<_> = vcpus.into_iter().enumerate().map(|(i, v)| spawn_vcpu(i as u32, v, stop.clone(), tx.clone(), ThreadSetup::default(), None)).collect();
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

//! Running one measurement, the same on every architecture: create the VM ([`Arch::create`]),
//! start one thread per vCPU, bracket the guest's entry stamp to find the counter offset, then
//! either wait while the guest samples (timer, ipi) or trigger from this thread (device), with
//! KVM's stats read before and after, and turn the records into latencies.
//!
//! Nothing here can hang: vCPU threads are kicked out of KVM_RUN with a signal until they exit,
//! and a run whose sample counter stops moving for the watchdog's time ends with an error that
//! keeps the samples taken so far ([`watch`]).
pub mod collect;
mod error;
pub mod pv_ipi;
pub mod traced;
pub mod watch;

pub use error::DriverError;

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kvm_ioctls::VcpuFd;
use vmm_sys_util::signal::{register_signal_handler, Killable, SIGRTMIN};

use crate::abi::slot;
use crate::abi::SharedPage;
use crate::arch::{Arch, DescribeHost, GuestVm, Imp, Trigger, VmError};
use crate::config::{Bench, BenchConfig, DISCARDED_FIRST};
use crate::exit::{handle_exit, Action};
use crate::host::stats::{delta, fd::StatsFd};
use crate::host::threads::{self, gettid};
use crate::measurement::{Measurement, Threads};
use watch::{wait_loop, Clock, SystemClock, Watch};

/// Why a run ended before it finished; the samples taken before are kept in the measurement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("watchdog: the guest made no progress for {waited:?} after {count} of {of} samples")]
    Watchdog { waited: Duration, count: u64, of: u64 },
    #[error("watchdog: the guest never started within {0:?}")]
    NeverStarted(Duration),
    #[error("watchdog: interrupt {index} never reached the guest handler within {waited:?}")]
    NotDelivered { index: u64, waited: Duration },
    #[error("watchdog: no resample notification after interrupt {index} within {waited:?}")]
    NoResample { index: u64, waited: Duration },
    #[error("the host fell more than {ring} samples behind the guest; samples were overwritten")]
    RingOverrun { ring: u64 },
    /// A vCPU stopped the run (the message names the vCPU and the exit).
    #[error("{0}")]
    Guest(String),
    #[error("every vCPU thread ended without finishing the benchmark")]
    AllVcpusEnded,
    #[error("a vCPU thread did not leave KVM_RUN within 5 s of being kicked")]
    Unkickable,
    /// A shared-page slot could not be written.
    #[error(transparent)]
    Slot(#[from] crate::abi::SlotError),
    #[error("{0}")]
    Trigger(String),
}

/// KVM's binary stats of one VM and its vCPUs, read as `kvm.vm.NAME` and `kvm.vcpu.NAME` (summed
/// over vCPUs); a run takes the difference of two reads.
pub(crate) struct KvmStats {
    vm: Option<StatsFd>,
    vcpus: Vec<StatsFd>,
}

impl KvmStats {
    pub(crate) fn open(vm_fd: std::os::fd::RawFd, vcpus: &[VcpuFd]) -> Self {
        KvmStats { vm: StatsFd::open(vm_fd).ok(), vcpus: vcpus.iter().filter_map(|v| StatsFd::open(v.as_raw_fd()).ok()).collect() }
    }

    pub(crate) fn read(&self) -> BTreeMap<String, u64> {
        let mut all = BTreeMap::new();
        if let Some(s) = &self.vm {
            for (k, v) in s.read() {
                all.insert(format!("kvm.vm.{k}"), v);
            }
        }
        for s in &self.vcpus {
            for (k, v) in s.read() {
                *all.entry(format!("kvm.vcpu.{k}")).or_insert(0) += v;
            }
        }
        all
    }
}

extern "C" fn on_kick(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {}

/// Install the (empty) handler whose signal interrupts KVM_RUN.
pub(crate) fn install_kick() -> Result<(), VmError> {
    register_signal_handler(SIGRTMIN(), on_kick).map_err(|e| VmError::Setup { step: "signal handler", source: std::io::Error::from_raw_os_error(e.errno()) })
}

/// What a vCPU thread sets up for itself before entering the guest.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ThreadSetup {
    pub pin: Option<usize>,
    pub priority: Option<i32>,
}

impl ThreadSetup {
    fn apply(self) -> Result<(), crate::host::threads::ThreadError> {
        if let Some(c) = self.pin {
            threads::pin_current(c)?;
        }
        if let Some(p) = self.priority {
            threads::fifo_current(p)?;
        }
        Ok(())
    }
}

/// A vCPU thread reports its thread id and whether its setup worked on the sender, then waits at
/// the barrier before KVM_RUN.
type Gate = Option<(mpsc::Sender<(u32, i32, Result<(), threads::ThreadError>)>, Arc<Barrier>)>;

pub(crate) fn spawn_vcpu(id: u32, mut vcpu: VcpuFd, stop: Arc<AtomicBool>, tx: mpsc::Sender<(u32, Action)>, setup: ThreadSetup, gate: Gate) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(format!("vcpu{id}"))
        .spawn(move || {
            let set = setup.apply();
            if let Some((tids, barrier)) = gate {
                let _ = tids.send((id, gettid(), set));
                barrier.wait();
            }
            while !stop.load(Ordering::Acquire) {
                let exit = Imp::decode_exit(vcpu.run());
                match handle_exit(id, &exit) {
                    Action::Continue => {}
                    // Tell the host, and keep running the guest.
                    Action::Ready => {
                        let _ = tx.send((id, Action::Ready));
                    }
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
pub(crate) fn stop_all(stop: &AtomicBool, threads: Vec<JoinHandle<()>>) -> Option<RunError> {
    stop.store(true, Ordering::Release);
    let deadline = Instant::now() + Duration::from_secs(5);
    for t in threads {
        while !t.is_finished() {
            if Instant::now() > deadline {
                return Some(RunError::Unkickable);
            }
            let _ = t.kill(SIGRTMIN());
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = t.join();
    }
    None
}

/// Run one measurement. Progress is reported as samples taken so far.
pub fn run_bench(cfg: &BenchConfig, progress: &dyn Fn(u64)) -> Result<Measurement, DriverError> {
    run_bench_with(cfg, progress, &mut |_| Ok(()))
}

/// [`run_bench`], calling `on_threads` once the vCPU threads exist and before any of them enters
/// the guest (tracing is armed there, filtered to those threads).
pub fn run_bench_with(cfg: &BenchConfig, progress: &dyn Fn(u64), on_threads: &mut dyn FnMut(&Threads) -> Result<(), DriverError>) -> Result<Measurement, DriverError> {
    cfg.validate(&threads::allowed_cpus())?;
    Imp::check_flags(cfg)?;
    if cfg.mlock {
        threads::mlock_all()?;
    }
    let started = Instant::now();
    let (vm, vcpus, counter_khz) = Imp::create(cfg)?;
    let period = cfg.period_cycles(counter_khz);
    vm.set_slot(slot::DELTA, period)?;
    let mut m = Measurement::new(cfg.clone(), counter_khz);
    m.notes.extend(vm.notes());
    m.in_force = vm.in_force();

    let stats = KvmStats::open(vm.vm_fd(), &vcpus);
    let read_stats = || stats.read();
    let stats_before = read_stats();

    install_kick()?;
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
        Some(e) => Err(DriverError::Thread(e)),
        None => on_threads(&m.threads),
    };
    let host_before = Imp::counter();
    barrier.wait();
    if let Err(e) = armed {
        stop_all(&stop, threads);
        return Err(e);
    }
    let offset = if Imp::ENTRY_STAMP {
        // Bracket the guest's entry stamp tightly: spin until it appears.
        let spin_start = Instant::now();
        let mut entry = vm.slot(slot::ENTRY_TSC);
        while entry == 0 && spin_start.elapsed() < cfg.stall_timeout {
            std::hint::spin_loop();
            entry = vm.slot(slot::ENTRY_TSC);
        }
        let host_after_entry = Imp::counter();
        let (offset, offset_note) = collect::tsc_offset(entry, host_before, host_after_entry);
        m.notes.push(offset_note);
        offset
    } else if let Some((offset, note)) = vm.counter_offset() {
        m.notes.push(note);
        offset
    } else {
        m.notes.push("latencies are differences of the guest's own counter: no host/guest counter offset is involved".into());
        0
    };
    m.tsc_offset = offset;

    let clock = SystemClock;
    let mut w = Watch::new(&vm, &clock, cfg, offset, counter_khz, m.threads.vcpu_tids.clone());
    let mut first = None;
    let mut resamples = 0;
    let mut path_counters = (BTreeMap::new(), Vec::new());
    let outcome = match cfg.kind {
        Bench::Device => match Imp::trigger(&vm, cfg) {
            Ok(mut t) => {
                let r = trigger_loop(&mut w, &vm, t.as_mut(), period, counter_khz, &rx, progress, &mut || first = Some(started.elapsed()), &mut resamples);
                path_counters = t.finish(vm.slot(slot::COUNT));
                r
            }
            Err(e) => Err(RunError::Trigger(e.to_string())),
        },
        _ => wait_loop(&mut w, cfg.watchdog(counter_khz), &rx, progress, &mut || first = Some(started.elapsed())),
    };
    m.first_sample = first;
    if let Some(e) = stop_all(&stop, threads) {
        m.error.get_or_insert(e.to_string());
    }
    let finished = outcome.is_ok();
    if let Err(e) = outcome {
        m.error = Some(e.to_string());
    }
    m.counters = delta(&stats_before, &read_stats());
    m.counters.extend(path_counters.0);
    m.notes.extend(path_counters.1);
    if cfg.kind == Bench::Device && cfg.via.is_level() {
        // Each one is a guest EOI that came back through the resamplefd: the level path's mark.
        m.counters.insert("trigger.resample_notifications".into(), resamples);
    }
    m.cpus_used = w.cpus.0.clone();
    m.ended = w.ended;
    let deadlines =
        if Imp::TIMER_RECORDS_DEADLINE { collect::Deadlines::InRecords } else { collect::Deadlines::FromExpect { expect: vm.slot(slot::EXPECT), delta: period, finished } };
    collect::collect(&w.raw, cfg, deadlines, offset, &mut m);
    if cfg.disable_hlt_exits {
        let halts = m.counters.get("kvm.vcpu.halt_exits").copied().unwrap_or(0);
        m.notes.push(if halts == 0 {
            "HLT exits disabled: no halt exits counted (effective)".into()
        } else {
            format!("HLT exits disabled was requested, but {halts} halt exits were counted: accepted, not effective")
        });
    }
    Imp::after_run(&mut m);
    m.wall = started.elapsed();
    Ok(m)
}

/// The device benchmark: trigger from this thread, wait for the guest handler, repeat.
#[allow(clippy::too_many_arguments)]
fn trigger_loop<P: SharedPage + ?Sized, C: Clock>(
    w: &mut Watch<'_, P, C>,
    page: &P,
    trig: &mut dyn Trigger,
    period: u64,
    counter_khz: u64,
    rx: &mpsc::Receiver<(u32, Action)>,
    progress: &dyn Fn(u64),
    first_sample: &mut dyn FnMut(),
    resamples: &mut u64,
) -> Result<(), RunError> {
    let cfg = w.cfg();
    // Let the guest reach its wait with interrupts on before the first trigger: the x86 guest
    // stamps its entry, the arm64 guest signals READY once its interrupt is set up.
    let t_ready = Instant::now();
    if Imp::ENTRY_STAMP {
        while page.slot(slot::ENTRY_TSC) == 0 {
            if t_ready.elapsed() > cfg.stall_timeout {
                return Err(RunError::NeverStarted(cfg.stall_timeout));
            }
            std::thread::yield_now();
        }
    } else {
        loop {
            match rx.recv_timeout(cfg.stall_timeout.saturating_sub(t_ready.elapsed())) {
                Ok((_, Action::Ready)) => break,
                Ok((_, Action::Fail(e))) => return Err(RunError::Guest(e)),
                Ok(_) => {}
                Err(_) => return Err(RunError::NeverStarted(cfg.stall_timeout)),
            }
        }
    }
    if trig.guest_paced() {
        // An assigned device: connect its interrupt now that the guest's ITS or SPI is set up,
        // then collect what the guest measures itself (handler − its own write, guest ticks).
        trig.connect().map_err(|e| RunError::Trigger(e.to_string()))?;
        return wait_loop(w, cfg.watchdog(counter_khz), rx, progress, first_sample);
    }
    let period_ns = period * 1_000_000 / counter_khz.max(1);
    let mut next = Instant::now() + Duration::from_nanos(period_ns);
    for k in 0..cfg.samples + DISCARDED_FIRST {
        if let Ok((_, Action::Fail(e))) = rx.try_recv() {
            return Err(RunError::Guest(e));
        }
        while Instant::now() < next {
            std::hint::spin_loop();
        }
        let t = Imp::counter();
        trig.fire().map_err(|e| RunError::Trigger(e.to_string()))?;
        let waited = Instant::now();
        while page.slot(slot::COUNT) <= k {
            if waited.elapsed() > cfg.stall_timeout {
                return Err(RunError::NotDelivered { index: k, waited: cfg.stall_timeout });
            }
            std::hint::spin_loop();
        }
        w.push([t, page.record(k)[1], 0]);
        if cfg.via.is_level() {
            // The guest's EOI de-asserts the line and signals the resamplefd.
            while !trig.resampled() {
                if waited.elapsed() > cfg.stall_timeout {
                    return Err(RunError::NoResample { index: k, waited: cfg.stall_timeout });
                }
                std::thread::yield_now();
            }
            *resamples += 1;
        }
        if k == 0 {
            first_sample();
        }
        progress(1);
        // The clock after every sample (--duration ends within one period); the vCPUs' CPUs
        // are sampled every 64 (a /proc read per thread).
        if w.due() || k % 64 == 0 && w.check() {
            break;
        }
        next = Instant::now() + Duration::from_nanos(period_ns);
    }
    // Ending early (--duration, --stop-above): this loop stops triggering after the sample that
    // ended the run, and `check` lowers the guest's sample count. The guest may already have
    // re-read the old count and be waiting for a trigger that will not come (the x86 guest
    // always is: its device loop only halts). The host does not send it one more: that would be
    // an interrupt in KVM's exit counters with no sample kept for it. It stops the vCPUs instead
    // (`stop_all` kicks them out of KVM_RUN, bounded at 5 s), which ends the run the same way
    // whichever side of the re-read the guest was on; nothing is read from the guest's own
    // summary. A guest-paced run (above) is different: only the guest knows when to stop.
    w.check();
    Ok(())
}

//! `irqlab run primitives`: the pieces the measured paths are made of, each measured on its own
//! as a latency class with its own distribution, so that `irqlab calibrate --primitives` can
//! compose the timer, device and IPI paths from them (crates/sim/src/calibrate/primitives.rs)
//! instead of fitting every cost to the paths themselves (issue 26, item 5).
//!
//! | class | what is timed | by | KVM / kernel path (Linux 6.x) |
//! |---|---|---|---|
//! | `guest_insn` | one emulated guest ring-0 instruction | guest rdtsc | kvm_pvm emulates ring 0 (x86_emulate_insn) |
//! | `exit_cpuid` | CPUID round trip, handled in the kernel | guest rdtsc | kvm_emulate_cpuid |
//! | `exit_msr` | WRMSR IA32_TSC_DEADLINE = 0 | guest rdtsc | kvm_set_lapic_tscdeadline_msr |
//! | `exit_icr` | x2APIC ICR write to an absent APIC ID | guest rdtsc | kvm_x2apic_icr_write → kvm_apic_send_ipi |
//! | `exit_pio` | OUT to a port: exit to the VMM and back | guest rdtsc | KVM_EXIT_IO, complete_fast_pio_out |
//! | `ioctl_signal_msi` | KVM_SIGNAL_MSI to no destination | host TSC | kvm_send_userspace_msi → kvm_set_msi |
//! | `ioctl_irq_line` | KVM_IRQ_LINE on a masked IOAPIC pin | host TSC | kvm_set_irq → kvm_ioapic_set_irq |
//! | `irqfd_signal` | eventfd write to an irqfd routed nowhere | host TSC | eventfd_write → irqfd_wakeup → kvm_arch_set_irq_inatomic |
//! | `wake_halt_blocked` | irqfd → guest handler, HLT, halt_poll_ns = 0 | host/guest TSC | kvm_vcpu_halt blocks; kvm_vcpu_kick → kvm_vcpu_wake_up |
//! | `wake_halt_polled` | irqfd → guest handler, HLT, the host's halt polling | host/guest TSC | kvm_vcpu_halt's poll loop sees the event |
//! | `wake_halt_remote` | as `wake_halt_polled`, triggered from another host CPU | host/guest TSC | + try_to_wake_up → smp_send_reschedule (an IPI between host CPUs) |
//! | `irq_running` | irqfd → guest handler, guest spinning in ring 3 | host/guest TSC | kvm_vcpu_kick of a running vCPU → exit → inject_pending_event |
//! | `eventfd_wake` | eventfd write → a thread blocked in read(2) runs | host TSC | try_to_wake_up (as rcuwait_wake_up of a halted vCPU) |
//! | `spin_wake` | a store → a thread spinning on it sees it | host TSC | cache-line transfer (as the halt-poll loop's check) |
//! | `hrtimer_spin` | timerfd expiry lateness, thread polling | host TSC | hrtimer interrupt → timerfd_tmrproc |
//! | `hrtimer_sleep` | clock_nanosleep expiry lateness, thread asleep | host TSC | hrtimer_wakeup → try_to_wake_up |
//!
//! `wake_halt_*` and `irq_running` are the device bench (`runner::run_bench`, irqfd) at two
//! halt-poll settings and with the guest spinning — reused, not copied; the halted ones' difference
//! is what blocking costs over polling, and `irq_running` is an interrupt into a running vCPU.
//! The guest part runs the x86 guest's `prim_main`; an architecture without it reports so.
pub mod guest;
pub mod host;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use results::ConfigResult;

use crate::abi::SharedPage;
use crate::abi::{bench, slot, RING};
use crate::arch::VmError;
use crate::arch::{Arch, GuestVm, Imp};
use crate::config::{Bench, BenchConfig, Via, Wait, DISCARDED_FIRST};
use crate::measurement::Measurement;
use crate::runner::watch::{wait_loop, SystemClock, Watch};
use crate::runner::DriverError;
use crate::runner::{install_kick, run_bench, spawn_vcpu, stop_all, KvmStats, ThreadSetup};
use host::{HostRun, TimerWait};

/// Every class a primitives run produces, in order.
pub const CLASSES: [&str; 16] = [
    "guest_insn",
    "exit_cpuid",
    "exit_msr",
    "exit_pio",
    "exit_icr",
    "ioctl_signal_msi",
    "ioctl_irq_line",
    "irqfd_signal",
    "wake_halt_blocked",
    "wake_halt_polled",
    "wake_halt_remote",
    "irq_running",
    "eventfd_wake",
    "spin_wake",
    "hrtimer_spin",
    "hrtimer_sleep",
];

/// The bench name results record (`params.bench`).
pub const BENCH: &str = "primitives";

/// The configuration every part derives from: `samples`, `period_us`, `pin` (one CPU: the vCPU or
/// waiting thread), `stall_timeout`, `halt_poll_ns` (the polled wake's window; default: the host's).
fn vm_config(cfg: &BenchConfig) -> BenchConfig {
    BenchConfig { kind: Bench::Device, via: Via::Irqfd, wait: Wait::Hlt, vcpus: 1, pv_ipi: false, disable_hlt_exits: false, ..cfg.clone() }
}

fn ns(ticks: i64, khz: u64) -> f64 {
    ticks as f64 * 1e6 / khz.max(1) as f64
}

/// Drop the first sample (its caches and the VM's start are cold), as every bench does.
fn kept(v: Vec<f64>) -> Vec<f64> {
    v.into_iter().skip(DISCARDED_FIRST as usize).collect()
}

/// Run every primitive; progress is reported in samples (16 classes × `samples`). The vCPU, the
/// waiting threads and this thread run on `--pin`'s CPU (default: the first allowed), a spinner
/// and the remote trigger on another; this thread's affinity is restored afterwards.
pub fn run_primitives(cfg: &BenchConfig, progress: &dyn Fn(u64)) -> Result<Measurement, DriverError> {
    let vcfg = vm_config(cfg);
    vcfg.validate(&crate::host::threads::allowed_cpus())?;
    Imp::check_flags(&vcfg)?;
    if vcfg.samples + DISCARDED_FIRST > RING {
        return Err(crate::config::ConfigError::Samples { got: vcfg.samples, max: RING - DISCARDED_FIRST }.into());
    }
    // Placement: the vCPU (and every waiting thread) on `local`, the measuring thread too; a
    // second CPU for what must run elsewhere (a spinner, a remote trigger).
    let allowed = crate::host::threads::allowed_cpus();
    let local = vcfg.pin.first().copied().unwrap_or(allowed[0]);
    let remote = allowed.iter().copied().find(|c| *c != local).ok_or_else(|| {
        VmError::Unsupported(format!("irqlab run {BENCH}: needs two host CPUs (a remote wake-up and a spinning thread); this process may run on {allowed:?} only"))
    })?;
    let vcfg = BenchConfig { pin: vec![local], ..vcfg };
    crate::host::threads::pin_current(local)?;
    let out = measure(&vcfg, cfg.halt_poll_ns, local, remote, progress);
    // The caller's thread may run anywhere again.
    crate::host::threads::allow_current(&allowed)?;
    out
}

fn measure(vcfg: &BenchConfig, host_poll: Option<u64>, local: usize, remote: usize, progress: &dyn Fn(u64)) -> Result<Measurement, DriverError> {
    let cfg = &BenchConfig { halt_poll_ns: host_poll, ..vcfg.clone() };
    let vcfg = vcfg.clone();
    let started = Instant::now();
    let (vm, vcpus, khz) = Imp::create(&vcfg)?;
    let mut m = Measurement::new(vcfg.clone(), khz);
    m.notes.extend(vm.notes());
    m.in_force = vm.in_force();

    // 1. Guest-timed exits: vCPU 0 runs prim_main with interrupts off.
    vm.set_slot(slot::KIND, bench::PRIMITIVES)?;
    let stats = KvmStats::open(vm.vm_fd(), &vcpus);
    let before = stats.read();
    install_kick()?;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let setup = ThreadSetup { pin: vcfg.pin.first().copied(), priority: vcfg.priority };
    let threads: Vec<_> = vcpus.into_iter().enumerate().map(|(i, v)| spawn_vcpu(i as u32, v, stop.clone(), tx.clone(), setup, None)).collect();
    drop(tx);
    let clock = SystemClock;
    let mut w = Watch::new(&vm, &clock, &vcfg, 0, khz, Vec::new());
    let outcome = wait_loop(&mut w, vcfg.watchdog(khz), &rx, progress, &mut || {});
    if let Some(e) = stop_all(&stop, threads) {
        return Err(e.into());
    }
    outcome?;
    let count = w.raw.len() as u64;
    let mut records = Vec::with_capacity(count as usize);
    for (k, r) in w.raw.iter().enumerate() {
        let w3 = vm.record_word3(k as u64).ok_or_else(|| VmError::Unsupported(format!("irqlab run {BENCH}: the {} guest has no primitives bench", Imp::NAME)))?;
        records.push([r[0], r[1], r[2], w3]);
    }
    for (name, v) in guest::classes(&records, khz) {
        m.classes.push((name, kept(v)));
    }
    for (k, v) in crate::host::stats::delta(&before, &stats.read()) {
        m.counters.insert(format!("guest_exits.{k}"), v);
    }

    // 2. Host-timed KVM calls that deliver to no one (same VM; its vCPU has stopped).
    let period = Duration::from_nanos((vcfg.period_cycles(khz) as u128 * 1_000_000 / khz.max(1) as u128) as u64);
    for (name, mut call) in Imp::primitive_calls(&vm)? {
        let mut v = Vec::with_capacity(vcfg.samples as usize + 1);
        let mut next = Instant::now() + period;
        for _ in 0..vcfg.samples + DISCARDED_FIRST {
            while Instant::now() < next {
                std::hint::spin_loop();
            }
            let t0 = Imp::counter();
            call.fire()?;
            let t1 = Imp::counter();
            call.resampled();
            v.push(ns(t1 as i64 - t0 as i64, khz));
            next = Instant::now() + period;
        }
        progress(vcfg.samples);
        m.classes.push((name.into(), kept(v)));
    }
    drop(vm);

    // 3. Waking a halted vCPU: the device bench over irqfd, polling off and the host's polling.
    // The measuring thread stays on the vCPU's CPU (`local`), except for wake_halt_remote, where
    // it triggers from another CPU (`remote`): waking a thread on another CPU takes a
    // reschedule IPI between host CPUs (try_to_wake_up → ttwu_queue → smp_send_reschedule).
    let wakes = [
        ("wake_halt_blocked", Some(0), Wait::Hlt, local),
        ("wake_halt_polled", cfg.halt_poll_ns, Wait::Hlt, local),
        ("wake_halt_remote", cfg.halt_poll_ns, Wait::Hlt, remote),
        ("irq_running", cfg.halt_poll_ns, Wait::Busy, remote),
    ];
    for (name, poll, wait, from) in wakes {
        crate::host::threads::pin_current(from)?;
        let run = run_bench(&BenchConfig { halt_poll_ns: poll, wait, ..vcfg.clone() }, progress)?;
        crate::host::threads::pin_current(local)?;
        if let Some(e) = &run.error {
            return Err(VmError::Unsupported(format!("primitive {name}: {e}")).into());
        }
        let samples = run.classes.first().map(|c| c.1.clone()).unwrap_or_default();
        m.classes.push((name.into(), samples));
        for k in ["halt_exits", "halt_wakeup", "halt_successful_poll", "halt_attempted_poll"] {
            if let Some(v) = run.counters.get(&format!("kvm.vcpu.{k}")) {
                m.counters.insert(format!("{name}.{k}"), *v);
            }
        }
        m.notes.push(format!("{name}: halt_poll_ns {}", run.params().get("halt_poll_ns").cloned().unwrap_or_default()));
    }

    // 4. Host only: thread wake-ups and hrtimer expiry.
    let hr = HostRun { samples: vcfg.samples + DISCARDED_FIRST, period, khz, pin: Some(local), remote: Some(remote), priority: vcfg.priority, stall: vcfg.stall_timeout };
    let host_parts: [(&str, &dyn Fn(&HostRun) -> Result<Vec<i64>, VmError>); 4] = [
        ("eventfd_wake", &host::eventfd_wake),
        ("spin_wake", &host::spin_wake),
        ("hrtimer_spin", &|r| host::hrtimer(r, TimerWait::Spin)),
        ("hrtimer_sleep", &|r| host::hrtimer(r, TimerWait::Sleep)),
    ];
    for (name, f) in host_parts {
        let v = f(&hr)?;
        progress(vcfg.samples);
        m.classes.push((name.into(), kept(v.into_iter().map(|t| ns(t, khz)).collect())));
    }
    m.wall = started.elapsed();
    Ok(m)
}

/// The primitives run as a result configuration: one latency class per primitive, the
/// parameters that apply (`bench = primitives`), and what each class is in the notes.
pub fn to_config_result(m: &Measurement, name: &str) -> ConfigResult {
    let mut r = m.to_config_result(name);
    let keep = ["samples", "period_us", "period_cycles", "pin", "priority", "mlock", "halt_poll_ns"];
    r.params = m.params().into_iter().filter(|(k, _)| keep.contains(&k.as_str())).collect::<BTreeMap<_, _>>();
    r.params.insert("bench".into(), BENCH.into());
    r.params.insert("vcpus".into(), "1".into());
    r.notes.push("primitives: guest_insn and exit_* are timed by the guest (rdtsc brackets, median empty bracket subtracted); ioctl_*, irqfd_signal, eventfd_wake, spin_wake and hrtimer_* by the host; wake_halt_* and irq_running are the irqfd device bench at halt_poll_ns 0, with the host's polling, and with the guest spinning in ring 3 (crates/kvm/src/primitives/mod.rs)".into());
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vm_part_is_one_halting_vcpu_on_irqfd() {
        let c = vm_config(&BenchConfig { kind: Bench::Ipi, vcpus: 2, wait: Wait::Busy, samples: 50, pv_ipi: true, ..Default::default() });
        assert_eq!((c.kind, c.via, c.wait, c.vcpus, c.samples, c.pv_ipi), (Bench::Device, Via::Irqfd, Wait::Hlt, 1, 50, false));
        assert!(c.validate(&[0, 1]).is_ok());
    }

    #[test]
    fn params_say_primitives() {
        let mut m = Measurement::new(vm_config(&BenchConfig { samples: 10, ..Default::default() }), 2_596_138);
        for c in CLASSES {
            m.classes.push((c.into(), vec![1000.0, 2000.0]));
        }
        let r = to_config_result(&m, "primitives");
        assert_eq!(r.params["bench"], "primitives");
        assert!(!r.params.contains_key("via") && !r.params.contains_key("wait"), "{:?}", r.params);
        assert_eq!(r.classes.len(), CLASSES.len());
        assert_eq!(guest::CLASSES, CLASSES[..5]);
    }
}

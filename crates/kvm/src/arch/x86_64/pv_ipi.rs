//! The KVM PV IPI hypercall probe (KVM_HC_SEND_IPI, x86 only), in a VM of its own.
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use kvm_ioctls::VcpuFd;

use super::vm::Vm;
use crate::abi::{bench, slot};
use crate::config::{BenchConfig, BenchKind};
use crate::error::KvmError;
use crate::exit::Action;
use crate::runner::watch::SharedPage;
use crate::runner::{install_kick, spawn_vcpu, stop_all, ThreadSetup};

/// Probe the PV IPI hypercall in a VM of its own: supported (and delivering), or not, within
/// `timeout`. On these hosts the hypercall can make KVM_RUN spin forever; the watchdog bounds it.
pub fn probe_pv_ipi(timeout: Duration) -> Result<String, KvmError> {
    let kvm = kvm_ioctls::Kvm::new().map_err(|e| KvmError::Unavailable(e.to_string()))?;
    let cpuid = kvm.get_supported_cpuid(kvm_bindings::KVM_MAX_CPUID_ENTRIES).map_err(KvmError::setup("KVM_GET_SUPPORTED_CPUID"))?;
    let advertised = cpuid.as_slice().iter().any(|e| e.function == 0x4000_0001 && e.eax & (1 << 11) != 0);
    if !advertised {
        return Ok("unsupported on this host: KVM_FEATURE_PV_SEND_IPI not advertised".into());
    }
    let cfg = BenchConfig { kind: BenchKind::Ipi, vcpus: 2, samples: 1, warmup: 0, stall_timeout: timeout, ..Default::default() };
    let vm = Vm::create(&cfg, bench::PV_IPI_PROBE, 0)?;
    let vcpus: Vec<VcpuFd> = (0..2).map(|i| vm.create_vcpu(i)).collect::<Result<_, _>>()?;
    install_kick()?;
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


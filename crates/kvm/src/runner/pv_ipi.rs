//! The KVM PV IPI hypercall probe (KVM_HC_SEND_IPI): the architecture builds the probe's VM
//! (`Arch::pv_ipi_vm`, x86 only); this driver runs its two vCPUs and bounds the run, because on
//! some hosts the hypercall makes KVM_RUN spin forever.
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use super::{install_kick, spawn_vcpu, stop_all, DriverError, ThreadSetup};
use crate::abi::{slot, SharedPage};
use crate::arch::{Arch, Imp};
use crate::config::{Bench, BenchConfig};
use crate::exit::Action;

/// Probe the PV IPI hypercall in a VM of its own: supported (and delivering), or not, within
/// `timeout`.
pub fn probe_pv_ipi(timeout: Duration) -> Result<String, DriverError> {
    let cfg = BenchConfig { kind: Bench::Ipi, vcpus: 2, samples: 1, warmup: 0, stall_timeout: timeout, ..Default::default() };
    let Some((vm, vcpus)) = Imp::pv_ipi_vm(&cfg)? else {
        return Ok("unsupported on this host: KVM_FEATURE_PV_SEND_IPI not advertised".into());
    };
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

//! The KVM PV IPI hypercall probe's VM (KVM_HC_SEND_IPI, x86 only): a VM of its own whose guest
//! runs the probe bench; the driver (`runner::pv_ipi`) runs its vCPUs under a watchdog.
use kvm_ioctls::VcpuFd;

use super::vm::Vm;
use crate::abi::bench;
use crate::arch::VmError;
use crate::config::BenchConfig;

/// The probe's VM and vCPUs, or `None` when the host does not advertise the hypercall.
pub fn probe_vm(cfg: &BenchConfig) -> Result<Option<(Vm, Vec<VcpuFd>)>, VmError> {
    let kvm = kvm_ioctls::Kvm::new().map_err(VmError::Unavailable)?;
    let cpuid = kvm.get_supported_cpuid(kvm_bindings::KVM_MAX_CPUID_ENTRIES).map_err(VmError::setup("KVM_GET_SUPPORTED_CPUID"))?;
    let advertised = cpuid.as_slice().iter().any(|e| e.function == 0x4000_0001 && e.eax & (1 << 11) != 0);
    if !advertised {
        return Ok(None);
    }
    let vm = Vm::create(cfg, bench::PV_IPI_PROBE, 0)?;
    let vcpus: Vec<VcpuFd> = (0..cfg.vcpus).map(|i| vm.create_vcpu(i)).collect::<Result<_, _>>()?;
    Ok(Some((vm, vcpus)))
}

//! x86_64: a 64-bit guest with identity page tables, GDT/IDT/TSS and x2APIC programmed from the
//! host (`boot.rs`, `vm.rs`), the in-kernel irqchip with IOAPIC pins and an MSI route
//! (`trigger.rs`), completion signalled by port writes (`exits.rs`), the PV IPI probe's VM
//! (`pv_ipi.rs`; `runner::pv_ipi` runs it).
pub mod boot;
pub mod describe;
pub mod exits;
pub mod pv_ipi;
pub mod trigger;
pub mod vm;

use kvm_ioctls::VcpuFd;

use crate::arch::VmError;
use crate::arch::{Arch, DescribeHost, TraceDialect, Trigger};
use crate::config::{Bench, BenchConfig, ConfigError};
use crate::exit::Exit;
use crate::tracefs::TraceError;

/// The x86_64 micro-VMM.
pub struct X86_64;

fn kind_code(k: Bench) -> u64 {
    match k {
        Bench::Timer => crate::abi::bench::TIMER,
        Bench::Ipi => crate::abi::bench::IPI,
        Bench::Device => crate::abi::bench::DEVICE,
    }
}

impl Arch for X86_64 {
    type Vm = vm::Vm;
    const NAME: &'static str = "x86_64";
    const ENTRY_STAMP: bool = true;
    const TIMER_RECORDS_DEADLINE: bool = false;
    const DEVICE_BUSY: bool = true;

    fn check_flags(cfg: &BenchConfig) -> Result<(), ConfigError> {
        cfg.check_device_spin(Self::DEVICE_BUSY)?;
        if cfg.vcpus > crate::abi::x86::MAX_VCPUS {
            return Err(ConfigError::Vcpus { got: cfg.vcpus, max: crate::abi::x86::MAX_VCPUS, why: " on x86_64" });
        }
        if cfg.ipi_target.is_some() {
            return Err(ConfigError::WrongArch { flag: "--ipi-target".into(), arch: Self::NAME });
        }
        if let Some(g) = cfg.gicv4 {
            return Err(ConfigError::WrongArch { flag: format!("--gicv4 {}", if g { "on" } else { "off" }), arch: Self::NAME });
        }
        if cfg.kind == crate::config::Bench::Device && cfg.via.is_vfio() {
            return Err(ConfigError::HostCannot {
                flag: format!("--via {}", cfg.via.name()),
                why: "VFIO device assignment is wired on arm64 only (the GICv4 direct-injection path); on x86_64 use irqfd, msi, line or level".into(),
            });
        }
        Ok(())
    }

    fn create(cfg: &BenchConfig) -> Result<(vm::Vm, Vec<VcpuFd>, u64), VmError> {
        // KVM tells the TSC frequency per vCPU; the period is written once it is known.
        let vm = vm::Vm::create(cfg, kind_code(cfg.kind), 0)?;
        let vcpus: Vec<VcpuFd> = (0..cfg.vcpus).map(|i| vm.create_vcpu(i)).collect::<Result<_, _>>()?;
        let khz = vcpus[0].get_tsc_khz().map(|k| k as u64).unwrap_or(0);
        if khz == 0 {
            return Err(VmError::Setup { step: "KVM_GET_TSC_KHZ", source: std::io::Error::other("TSC frequency unknown") });
        }
        Ok((vm, vcpus, khz))
    }

    fn counter() -> u64 {
        // SAFETY: rdtsc reads the time-stamp counter and has no memory effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    fn decode_exit(r: Result<kvm_ioctls::VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit {
        exits::decode(r)
    }

    fn trigger<'a>(vm: &'a vm::Vm, cfg: &BenchConfig) -> Result<Box<dyn Trigger + 'a>, VmError> {
        Ok(Box::new(trigger::create(vm, cfg.via)?))
    }

    fn primitive_calls<'a>(vm: &'a vm::Vm) -> Result<Vec<(&'static str, Box<dyn Trigger + 'a>)>, VmError> {
        trigger::no_target_calls(vm)
    }

    fn pv_ipi_vm(cfg: &BenchConfig) -> Result<Option<(vm::Vm, Vec<VcpuFd>)>, VmError> {
        pv_ipi::probe_vm(cfg)
    }
}

impl DescribeHost for X86_64 {
    fn describe_host(cpuinfo: &str, m: &mut std::collections::BTreeMap<String, String>) {
        describe::describe(cpuinfo, m)
    }
}

impl TraceDialect for X86_64 {
    fn trace_clock() -> &'static str {
        "x86-tsc"
    }

    fn trace_target(cfg: &BenchConfig) -> Result<(u32, u32), TraceError> {
        Ok(crate::tracefs::path::target_of(cfg))
    }
}

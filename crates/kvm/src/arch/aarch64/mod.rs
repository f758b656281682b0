//! aarch64: the arm64 benchmark guest (the `armguest` image shared with the Xen lab) on KVM's
//! vGICv3 with the virtual timer, SGIs, SPIs and the in-kernel vITS.
use std::time::Duration;

use kvm_ioctls::VcpuFd;

use crate::arch::{Arch, Trigger};
use crate::config::{BenchConfig, BenchKind, ConfigError};
use crate::error::KvmError;
use crate::exit::Exit;

pub mod boot;
pub mod describe;
pub mod exits;
pub mod guest;
pub mod trigger;
pub mod vm;

/// The aarch64 micro-VMM.
pub struct Aarch64;

impl Aarch64 {
    /// CNTVCT_EL0 as this (host) process reads it.
    pub fn counter_now() -> u64 {
        let v: u64;
        // SAFETY: reading CNTVCT_EL0 (EL0-accessible under Linux) has no memory effects; the isb
        // keeps the read from being hoisted.
        unsafe { core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nomem, nostack)) };
        v
    }
}

impl Arch for Aarch64 {
    type Vm = vm::Vm;
    const NAME: &'static str = "aarch64";
    const ENTRY_STAMP: bool = false;

    fn check_flags(cfg: &BenchConfig) -> Result<(), ConfigError> {
        let wrong = |flag: &str| Err(ConfigError::WrongArch { flag: flag.into(), arch: Self::NAME });
        if cfg.pv_ipi {
            return wrong("--pv-ipi");
        }
        if cfg.disable_hlt_exits {
            return wrong("--disable-hlt-exits");
        }
        let cannot = |flag: &str, why: &str| Err(ConfigError::HostCannot { flag: flag.into(), why: why.into() });
        if cfg.kind == BenchKind::Device {
            return cannot("device", "the arm64 guest has no device bench yet (timer and ipi run on arm64)");
        }
        if cfg.duration.is_some() {
            return cannot("--duration", "the arm64 guest takes its sample count from its parameter block and cannot be stopped early yet; give --samples");
        }
        if cfg.stop_above_ns.is_some() {
            return cannot("--stop-above", "the arm64 guest cannot be stopped early yet");
        }
        if cfg.gicv4.is_some() {
            return cannot("--gicv4", "GICv4 direct injection applies to device MSIs, and the arm64 device bench does not exist yet");
        }
        Ok(())
    }

    fn create(cfg: &BenchConfig) -> Result<(vm::Vm, Vec<VcpuFd>, u64), KvmError> {
        vm::Vm::create(cfg)
    }

    fn counter() -> u64 {
        Self::counter_now()
    }

    fn decode_exit(r: Result<kvm_ioctls::VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit {
        exits::decode(r)
    }

    fn trigger<'a>(vm: &'a vm::Vm, cfg: &BenchConfig) -> Result<Box<dyn Trigger + 'a>, KvmError> {
        vm.trigger(cfg)
    }

    fn probe_pv_ipi(_timeout: Duration) -> Result<String, KvmError> {
        Err(KvmError::Unsupported("the PV IPI hypercall is x86 KVM's (KVM_HC_SEND_IPI); arm64 has no equivalent".into()))
    }

    fn describe_host(cpuinfo: &str, m: &mut std::collections::BTreeMap<String, String>) {
        describe::describe(cpuinfo, m)
    }

    fn trace_clock() -> Option<&'static str> {
        None
    }
}

//! aarch64: the arm64 benchmark guest (the `armguest` image shared with the Xen lab) on KVM's
//! vGICv3 with the virtual timer, SGIs, SPIs and the in-kernel vITS.

use kvm_ioctls::VcpuFd;

use crate::arch::VmError;
use crate::arch::{Arch, DescribeHost, TraceDialect, Trigger};
use crate::config::{Bench, BenchConfig, ConfigError};
use crate::exit::Exit;
use crate::tracefs::TraceError;

pub mod assigned;
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
    const TIMER_RECORDS_DEADLINE: bool = true;

    fn check_flags(cfg: &BenchConfig) -> Result<(), ConfigError> {
        cfg.check_device_spin(Self::DEVICE_BUSY)?;
        let wrong = |flag: &str| Err(ConfigError::WrongArch { flag: flag.into(), arch: Self::NAME });
        if cfg.pv_ipi {
            return wrong("--pv-ipi");
        }
        if cfg.disable_hlt_exits {
            return wrong("--disable-hlt-exits");
        }
        let cannot = |flag: &str, why: &str| Err(ConfigError::HostCannot { flag: flag.into(), why: why.into() });
        // --duration and --stop-above need nothing here: every bench of the guest re-reads its
        // sample count before each sample (armguest::abi::Field::Samples) and the host lowers it
        // (vm.rs `set_slot`); a host-triggered device run ends by the host's own loop
        // (runner::trigger_loop), a guest-paced one (vfio-*) when the guest sees the lower count.
        if let Some(on) = cfg.gicv4 {
            let state = crate::vfio::gicv4::State::from_log(&crate::vfio::gicv4::kernel_log());
            let flag = format!("--gicv4 {}", if on { "on" } else { "off" });
            state.check(on).map_err(|why| ConfigError::HostCannot { flag: flag.clone(), why: why.to_string() })?;
            if on && !(cfg.kind == Bench::Device && cfg.via == crate::config::Via::VfioMsi) {
                return cannot(&flag, "KVM maps an MSI to a vLPI for direct injection only for a VFIO-assigned device's MSI (the irq-bypass producer): use `device --via vfio-msi`; other paths always take KVM's software path");
            }
        }
        if cfg.kind == Bench::Device && cfg.via.is_vfio() {
            crate::vfio::locate::locate(std::path::Path::new("/sys"), cfg.vfio_device.as_deref())
                .map_err(|e| ConfigError::HostCannot { flag: crate::vfio::locate::flag(cfg.vfio_device.as_deref(), cfg.via.name()), why: e.to_string() })?;
        }
        Ok(())
    }

    fn create(cfg: &BenchConfig) -> Result<(vm::Vm, Vec<VcpuFd>, u64), VmError> {
        vm::Vm::create(cfg)
    }

    fn counter() -> u64 {
        Self::counter_now()
    }

    fn decode_exit(r: Result<kvm_ioctls::VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit {
        exits::decode(r)
    }

    fn trigger<'a>(vm: &'a vm::Vm, cfg: &BenchConfig) -> Result<Box<dyn Trigger + 'a>, VmError> {
        vm.trigger(cfg)
    }

    fn pv_ipi_vm(_cfg: &BenchConfig) -> Result<Option<(vm::Vm, Vec<VcpuFd>)>, VmError> {
        Err(VmError::Unsupported("the PV IPI hypercall is x86 KVM's (KVM_HC_SEND_IPI); arm64 has no equivalent".into()))
    }
}

impl DescribeHost for Aarch64 {
    fn describe_host(cpuinfo: &str, m: &mut std::collections::BTreeMap<String, String>) {
        describe::describe(cpuinfo, m)
    }

    fn after_run(m: &mut crate::measurement::Measurement) {
        m.notes.push(wfi_policy_note(&m.counters));
    }
}

impl TraceDialect for Aarch64 {
    fn trace_clock() -> &'static str {
        "mono_raw"
    }

    fn trace_target(cfg: &BenchConfig) -> Result<(u32, u32), TraceError> {
        use armguest::abi::{PPI_VTIMER, SGI_PING};
        match cfg.kind {
            Bench::Timer => Ok((0, PPI_VTIMER as u32)),
            Bench::Ipi => Ok((1, SGI_PING as u32)),
            Bench::Device => Ok((0, trigger::intid_for(cfg.via))),
        }
    }
}

/// Whether KVM trapped the guest's WFI in this run, as its counters show, and why it does: in
/// `kvm_arch_vcpu_load` (arch/arm64/kvm/arm.c, Linux 5.7 to 6.x) a vCPU alone on its CPU
/// (`single_task_running`) gets `vcpu_clear_wfx_traps`, which always stops trapping WFE but stops
/// trapping WFI only when the vCPU has vLPIs mapped (GICv4 direct injection) or GICv4.1 vSGIs
/// (arch/arm64/include/asm/kvm_emulate.h); otherwise WFI traps. So KVM's analog of Xen's
/// `vwfi=native` is automatic and applies only to vCPUs that receive direct injection.
pub fn wfi_policy_note(counters: &std::collections::BTreeMap<String, u64>) -> String {
    match counters.get("kvm.vcpu.wfi_exit_stat").copied().unwrap_or(0) {
        0 => "WFI: no WFI exits (the guest spun, or KVM let WFI run natively: a vCPU alone on its CPU with vLPIs or GICv4.1 vSGIs)".into(),
        n => format!("WFI: trapped by KVM ({n} WFI exits); KVM stops trapping WFI only for a vCPU alone on its CPU that has vLPIs or GICv4.1 vSGIs (kvm_arch_vcpu_load / vcpu_clear_wfx_traps)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakdown_targets_are_the_guests_intids() {
        use crate::config::Via;
        assert_eq!(Aarch64::trace_target(&BenchConfig::default()).unwrap(), (0, 27));
        assert_eq!(Aarch64::trace_target(&BenchConfig { kind: Bench::Ipi, ..Default::default() }).unwrap(), (1, 0));
        let line = BenchConfig { kind: Bench::Device, via: Via::Line, ..Default::default() };
        assert_eq!(Aarch64::trace_target(&line).unwrap(), (0, boot::EDGE_SPI));
        let vfio = BenchConfig { kind: Bench::Device, via: Via::VfioMsi, ..Default::default() };
        assert_eq!(Aarch64::trace_target(&vfio).unwrap(), (0, boot::ITS_LPI), "the vLPI the device's MSI becomes");
    }

    #[test]
    fn the_wfi_note_follows_the_counter() {
        let mut c = std::collections::BTreeMap::new();
        assert!(wfi_policy_note(&c).starts_with("WFI: no WFI exits"));
        c.insert("kvm.vcpu.wfi_exit_stat".to_string(), 201);
        assert!(wfi_policy_note(&c).contains("trapped by KVM (201 WFI exits)"));
    }

    /// Issue 23: --duration and --stop-above end every arm64 bench early, device included (the
    /// guest's device loop re-reads its sample count like the timer and IPI loops).
    #[test]
    fn duration_and_stop_above_are_accepted_for_every_bench_and_device_path() {
        use crate::config::Via;
        let early = |kind, via| BenchConfig { kind, via, duration: Some(std::time::Duration::from_secs(2)), stop_above_ns: Some(50_000), ..Default::default() };
        for kind in [Bench::Timer, Bench::Ipi, Bench::Device] {
            for via in [Via::Irqfd, Via::Msi, Via::Line, Via::Level] {
                assert_eq!(Aarch64::check_flags(&early(kind, via)), Ok(()), "{kind:?} --via {}", via.name());
            }
        }
        // The assigned-device paths need a device bound to vfio-pci (none under qemu-user, or
        // one on a real host): whatever the answer, it is never about stopping early.
        for via in [Via::VfioMsi, Via::VfioIntx] {
            if let Err(e) = Aarch64::check_flags(&early(Bench::Device, via)) {
                let e = e.to_string();
                assert!(e.contains(via.name()) && !e.contains("--duration") && !e.contains("--stop-above"), "{e}");
            }
        }
        // The x86-only flags are still refused, naming the flag and the architecture.
        let e = Aarch64::check_flags(&BenchConfig { pv_ipi: true, ..early(Bench::Device, Via::Msi) }).unwrap_err();
        assert_eq!(e, ConfigError::WrongArch { flag: "--pv-ipi".into(), arch: "aarch64" });
    }
}

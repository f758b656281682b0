//! What both architectures' VMMs do the same way, kept once: the exits every architecture decodes
//! alike, the per-VM halt-polling capability (recorded as what is in force when KVM refuses it),
//! and the trigger's eventfds.
use std::collections::BTreeMap;

use kvm_bindings::{kvm_enable_cap, KVM_CAP_HALT_POLL};
use kvm_ioctls::{VcpuExit, VmFd};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

use crate::arch::VmError;
use crate::exit::Exit;

/// The exits that mean the same on every architecture; the architecture's own completion signal
/// (a port on x86, the exit page on arm64) is decoded before this.
pub fn decode_common(r: Result<VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit {
    match r {
        Ok(VcpuExit::IoOut(port, _)) => Exit::Io { port, write: true },
        Ok(VcpuExit::IoIn(port, _)) => Exit::Io { port, write: false },
        Ok(VcpuExit::MmioRead(addr, _)) => Exit::Mmio { addr, write: false },
        Ok(VcpuExit::MmioWrite(addr, _)) => Exit::Mmio { addr, write: true },
        Ok(VcpuExit::SystemEvent(kind, _)) => Exit::SystemEvent(kind),
        Ok(VcpuExit::Hlt) => Exit::Halt,
        Ok(VcpuExit::Shutdown) => Exit::Shutdown,
        Ok(VcpuExit::InternalError) => Exit::InternalError,
        Ok(VcpuExit::FailEntry(reason, _)) => Exit::FailEntry { reason },
        Ok(VcpuExit::Intr) => Exit::Interrupted,
        Ok(other) => Exit::Other(format!("{other:?}")),
        Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => Exit::Interrupted,
        Err(e) => Exit::Other(format!("KVM_RUN error: {e}")),
    }
}

/// KVM_CAP_HALT_POLL for this VM when `--halt-poll-ns` is given: what KVM answered goes into
/// `caps`, and a refusal into `in_force` as the host default that stays in force — so a setting
/// that did not take effect is never recorded as if it had.
pub fn request_halt_poll(fd: &VmFd, ns: Option<u64>, caps: &mut BTreeMap<String, String>, in_force: &mut Vec<(String, String)>) {
    let Some(ns) = ns else { return };
    let mut cap = kvm_enable_cap { cap: KVM_CAP_HALT_POLL, ..Default::default() };
    cap.args[0] = ns;
    let answer = match fd.enable_cap(&cap) {
        Ok(()) => format!("{ns} (accepted)"),
        Err(e) => {
            in_force.push(("halt_poll_ns".into(), format!("host default ({ns} rejected by KVM: {e})")));
            format!("{ns} rejected: {e}")
        }
    };
    caps.insert("halt_poll_ns".into(), answer);
}

/// A non-blocking eventfd for a trigger (irqfd, resamplefd).
pub fn eventfd(step: &'static str) -> Result<EventFd, VmError> {
    EventFd::new(EFD_NONBLOCK).map_err(|e| VmError::Setup { step, source: e })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_exits() {
        let mut data = [0u8; 4];
        assert_eq!(decode_common(Ok(VcpuExit::IoOut(0x80, &data))), Exit::Io { port: 0x80, write: true });
        assert_eq!(decode_common(Ok(VcpuExit::MmioRead(0x1000, &mut data))), Exit::Mmio { addr: 0x1000, write: false });
        assert_eq!(decode_common(Ok(VcpuExit::SystemEvent(2, &[]))), Exit::SystemEvent(2));
        assert_eq!(decode_common(Err(vmm_sys_util::errno::Error::new(libc::EAGAIN))), Exit::Interrupted);
        assert!(matches!(decode_common(Err(vmm_sys_util::errno::Error::new(libc::EFAULT))), Exit::Other(m) if m.contains("KVM_RUN error")));
    }
}

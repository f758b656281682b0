//! KVM exits on aarch64, decoded into the neutral [`Exit`]: the guest signals completion by
//! writing to the exit MMIO page (`boot::EXIT_MMIO`) at the completion code's offset.
use kvm_ioctls::VcpuExit;

use super::boot::EXIT_MMIO;
use crate::abi::done;
use crate::exit::Exit;

/// Whether an MMIO write is one of the guest's completion signals.
pub fn signal_of_mmio(addr: u64) -> Option<u64> {
    let code = addr.checked_sub(EXIT_MMIO)?;
    [done::FINISHED, done::UNKNOWN_BENCH, done::PARKED].contains(&code).then_some(code)
}

pub fn decode(r: Result<VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit {
    match r {
        Ok(VcpuExit::MmioWrite(addr, _)) => signal_of_mmio(addr).map(Exit::Signal).unwrap_or(Exit::Mmio { addr, write: true }),
        Ok(VcpuExit::MmioRead(addr, _)) => Exit::Mmio { addr, write: false },
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

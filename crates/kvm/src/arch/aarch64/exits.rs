//! KVM exits on aarch64, decoded into the neutral [`Exit`]: the guest signals completion by
//! writing to the exit MMIO page (`boot::EXIT_MMIO`) at the completion code's offset.
use kvm_ioctls::VcpuExit;

use super::boot::EXIT_MMIO;
use super::guest::signal_of_exit_value;
use crate::exit::Exit;

/// The completion signal an MMIO write carries, if it is one: a u64 written to the exit page.
pub fn signal_of_mmio(addr: u64, data: &[u8]) -> Option<u64> {
    if addr != EXIT_MMIO {
        return None;
    }
    let mut v = [0u8; 8];
    let n = data.len().min(8);
    v[..n].copy_from_slice(&data[..n]);
    Some(signal_of_exit_value(u64::from_le_bytes(v)))
}

pub fn decode(r: Result<VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit {
    match r {
        Ok(VcpuExit::MmioWrite(addr, data)) if addr == EXIT_MMIO => signal_of_mmio(addr, data).map(Exit::Signal).unwrap_or(Exit::Mmio { addr, write: true }),
        r => crate::arch::common::decode_common(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::done;
    use crate::exit::{handle_exit, Action};

    #[test]
    fn exit_page_writes_become_signals() {
        let done_bytes = armguest::abi::EXIT_DONE.to_le_bytes();
        assert_eq!(decode(Ok(VcpuExit::MmioWrite(EXIT_MMIO, &done_bytes))), Exit::Signal(done::FINISHED));
        let err = armguest::abi::EXIT_ERROR.to_le_bytes();
        assert!(matches!(handle_exit(1, &decode(Ok(VcpuExit::MmioWrite(EXIT_MMIO, &err)))), Action::Fail(m) if m.contains("reported an error")));
        assert_eq!(decode(Ok(VcpuExit::MmioWrite(0x0800_0000, &done_bytes))), Exit::Mmio { addr: 0x0800_0000, write: true });
        assert_eq!(decode(Ok(VcpuExit::SystemEvent(1, &[]))), Exit::SystemEvent(1));
    }
}

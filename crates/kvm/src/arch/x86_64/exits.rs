//! KVM exits on x86_64, decoded into the neutral [`Exit`]: the guest signals completion with an
//! `out` to a port whose number is the completion code (`abi::done`).
use kvm_ioctls::VcpuExit;

use crate::abi::done;
use crate::exit::Exit;

/// Whether a port write is one of the guest's completion signals.
pub fn signal_of_port(port: u16) -> Option<u64> {
    let code = port as u64;
    [done::FINISHED, done::UNKNOWN_BENCH, done::PARKED].contains(&code).then_some(code)
}

pub fn decode(r: Result<VcpuExit<'_>, vmm_sys_util::errno::Error>) -> Exit {
    match r {
        Ok(VcpuExit::IoOut(port, _)) if signal_of_port(port).is_some() => Exit::Signal(port as u64),
        Ok(VcpuExit::IoOut(port, _)) if port as u64 == crate::abi::PIO_PROBE_PORT => Exit::PioProbe,
        r => crate::arch::common::decode_common(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{handle_exit, Action};

    #[test]
    fn completion_ports_become_signals_and_others_stay_io() {
        let mut data = [0u8; 1];
        assert_eq!(decode(Ok(VcpuExit::IoOut(0xf0, &data))), Exit::Signal(done::FINISHED));
        assert_eq!(handle_exit(0, &decode(Ok(VcpuExit::IoOut(0xf2, &data)))), Action::Parked);
        assert_eq!(decode(Ok(VcpuExit::IoOut(0x80, &data))), Exit::Io { port: 0x80, write: true });
        assert_eq!(decode(Ok(VcpuExit::IoOut(0xf5, &data))), Exit::PioProbe);
        assert_eq!(decode(Ok(VcpuExit::IoIn(0xf0, &mut data))), Exit::Io { port: 0xf0, write: false });
        assert_eq!(decode(Err(vmm_sys_util::errno::Error::new(libc::EINTR))), Exit::Interrupted);
        assert!(matches!(decode(Err(vmm_sys_util::errno::Error::new(libc::EFAULT))), Exit::Other(m) if m.contains("KVM_RUN error")));
    }
}

//! What a vCPU exit means for the run — a free function over a neutral description of the exit,
//! so tests drive it with made-up exits (no /dev/kvm needed). Each architecture decodes KVM's
//! exit into [`Exit`] (`arch::imp::decode_exit`): the guest's completion signal is a port write
//! on x86 and a write to the exit MMIO page on arm64; both arrive here as [`Exit::Signal`].
use crate::abi::done;

/// The parts of a KVM exit the run loop cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// The guest wrote a completion code (`abi::done::*`; x86 port, arm64 exit-page offset).
    Signal(u64),
    /// Port I/O the benchmark does not use (x86).
    Io {
        port: u16,
        write: bool,
    },
    /// The primitives bench's timed port write (`abi::PIO_PROBE_PORT`): a PIO exit to userspace
    /// whose only job is to come back.
    PioProbe,
    /// MMIO outside anything the benchmark uses.
    Mmio {
        addr: u64,
        write: bool,
    },
    /// HLT / WFI reached userspace.
    Halt,
    Shutdown,
    /// The guest asked to be reset or powered off (arm64 PSCI SYSTEM_OFF/RESET: KVM_EXIT_SYSTEM_EVENT).
    SystemEvent(u32),
    InternalError,
    FailEntry {
        reason: u64,
    },
    /// KVM_RUN returned EINTR (the watchdog or the end of the run kicked us).
    Interrupted,
    Other(String),
}

/// What the run loop does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Continue,
    /// The benchmark signalled completion.
    Done,
    /// This vCPU parked itself (nothing more to do here).
    Parked,
    /// The guest is ready for the first trigger; the vCPU keeps running.
    Ready,
    /// Stop the whole run with this error.
    Fail(String),
}

/// Decide what an exit means. `vcpu` names the vCPU in messages.
pub fn handle_exit(vcpu: u32, exit: &Exit) -> Action {
    match exit {
        Exit::Signal(done::FINISHED) => Action::Done,
        Exit::Signal(done::PARKED) => Action::Parked,
        Exit::Signal(done::READY) => Action::Ready,
        Exit::Signal(done::ERROR) => {
            Action::Fail(format!("vCPU {vcpu}: the guest reported an error (bad parameters, an unexpected exception, or a secondary vCPU that did not start)"))
        }
        Exit::Signal(done::UNKNOWN_BENCH) => Action::Fail(format!("vCPU {vcpu}: the guest payload does not know this benchmark")),
        Exit::Signal(code) => Action::Fail(format!("vCPU {vcpu}: unknown completion code {code:#x} from the guest")),
        Exit::Io { port, write } => Action::Fail(format!("vCPU {vcpu}: unexpected port I/O {} at {port:#x}", if *write { "write" } else { "read" })),
        Exit::Mmio { addr, write } => Action::Fail(format!("vCPU {vcpu}: unexpected MMIO {} at {addr:#x}", if *write { "write" } else { "read" })),
        // With the in-kernel irqchip HLT/WFI stays in the kernel; one reaching us means the guest
        // halted with nothing left to wake it.
        Exit::Halt => Action::Fail(format!("vCPU {vcpu}: guest halted for good (halt exit to userspace)")),
        Exit::Shutdown => Action::Fail(format!("vCPU {vcpu}: guest triple-faulted (shutdown)")),
        Exit::SystemEvent(kind) => Action::Fail(format!("vCPU {vcpu}: guest requested a system event (type {kind}: power-off or reset) before finishing")),
        Exit::InternalError => Action::Fail(format!("vCPU {vcpu}: KVM internal error (emulation failure)")),
        Exit::FailEntry { reason } => Action::Fail(format!("vCPU {vcpu}: VM entry failed (hardware reason {reason:#x})")),
        Exit::Interrupted | Exit::PioProbe => Action::Continue,
        Exit::Other(what) => Action::Fail(format!("vCPU {vcpu}: unexpected exit {what}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_exits() {
        assert_eq!(handle_exit(0, &Exit::Signal(done::FINISHED)), Action::Done);
        assert_eq!(handle_exit(1, &Exit::Signal(done::PARKED)), Action::Parked);
        assert_eq!(handle_exit(0, &Exit::Signal(done::READY)), Action::Ready);
        assert_eq!(handle_exit(0, &Exit::Interrupted), Action::Continue);
        assert_eq!(handle_exit(0, &Exit::PioProbe), Action::Continue, "the timed PIO exit re-enters at once");
        let fail = |e: Exit| match handle_exit(3, &e) {
            Action::Fail(m) => m,
            other => panic!("{other:?}"),
        };
        assert!(fail(Exit::Signal(done::UNKNOWN_BENCH)).contains("does not know this benchmark"));
        assert!(fail(Exit::Signal(0x99)).contains("unknown completion code 0x99"));
        assert!(fail(Exit::Shutdown).contains("vCPU 3: guest triple-faulted"));
        assert!(fail(Exit::InternalError).contains("emulation failure"));
        assert!(fail(Exit::Io { port: 0x80, write: true }).contains("port I/O write at 0x80"));
        assert!(fail(Exit::Mmio { addr: 0xfee00000, write: true }).contains("MMIO write at 0xfee00000"));
        assert!(fail(Exit::Halt).contains("halted for good"));
        assert!(fail(Exit::SystemEvent(1)).contains("system event"));
        assert!(fail(Exit::FailEntry { reason: 0x21 }).contains("0x21"));
    }
}

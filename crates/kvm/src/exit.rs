//! What a vCPU exit means for the run — a free function over a plain description of the exit,
//! so tests drive it with made-up exits (no /dev/kvm needed).
use crate::layout::port;

/// The parts of a KVM exit the run loop cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    IoOut { port: u16 },
    IoIn { port: u16 },
    Mmio { addr: u64, write: bool },
    Hlt,
    Shutdown,
    InternalError,
    FailEntry { reason: u64 },
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
    /// Stop the whole run with this error.
    Fail(String),
}

/// Decide what an exit means. `vcpu` names the vCPU in messages.
pub fn handle_exit(vcpu: u32, exit: &Exit) -> Action {
    match exit {
        Exit::IoOut { port: port::DONE } => Action::Done,
        Exit::IoOut { port: port::PARKED } => Action::Parked,
        Exit::IoOut { port: port::UNKNOWN_BENCH } => Action::Fail(format!("vCPU {vcpu}: the guest payload does not know this benchmark")),
        Exit::IoOut { port } | Exit::IoIn { port } => Action::Fail(format!("vCPU {vcpu}: unexpected port I/O at {port:#x}")),
        Exit::Mmio { addr, write } => {
            Action::Fail(format!("vCPU {vcpu}: unexpected MMIO {} at {addr:#x}", if *write { "write" } else { "read" }))
        }
        // With the in-kernel irqchip HLT stays in the kernel; one reaching us means the guest
        // halted with nothing left to wake it.
        Exit::Hlt => Action::Fail(format!("vCPU {vcpu}: guest halted for good (HLT exit to userspace)")),
        Exit::Shutdown => Action::Fail(format!("vCPU {vcpu}: guest triple-faulted (shutdown)")),
        Exit::InternalError => Action::Fail(format!("vCPU {vcpu}: KVM internal error (emulation failure)")),
        Exit::FailEntry { reason } => Action::Fail(format!("vCPU {vcpu}: VM entry failed (hardware reason {reason:#x})")),
        Exit::Interrupted => Action::Continue,
        Exit::Other(what) => Action::Fail(format!("vCPU {vcpu}: unexpected exit {what}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_exits() {
        assert_eq!(handle_exit(0, &Exit::IoOut { port: port::DONE }), Action::Done);
        assert_eq!(handle_exit(1, &Exit::IoOut { port: port::PARKED }), Action::Parked);
        assert_eq!(handle_exit(0, &Exit::Interrupted), Action::Continue);
        let fail = |e: Exit| match handle_exit(3, &e) {
            Action::Fail(m) => m,
            other => panic!("{other:?}"),
        };
        assert!(fail(Exit::Shutdown).contains("vCPU 3: guest triple-faulted"));
        assert!(fail(Exit::InternalError).contains("emulation failure"));
        assert!(fail(Exit::IoOut { port: 0x80 }).contains("0x80"));
        assert!(fail(Exit::Mmio { addr: 0xfee00000, write: true }).contains("MMIO write at 0xfee00000"));
        assert!(fail(Exit::Hlt).contains("halted for good"));
        assert!(fail(Exit::FailEntry { reason: 0x21 }).contains("0x21"));
    }
}

//! The architecture layer's error: why a VM could not be created, loaded or triggered. The
//! messages are what the user reads (they were `KvmError`'s before the crate was layered); the
//! drivers' [`crate::DriverError`] (the crate's error) wraps it and shows it unchanged.

/// Why a VM of this architecture could not be set up or driven.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// /dev/kvm is missing or cannot be opened.
    #[error("/dev/kvm is not usable here: {0}")]
    Unavailable(#[source] vmm_sys_util::errno::Error),
    /// The configuration is impossible (or names a flag this architecture does not have).
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A KVM ioctl failed during setup.
    #[error("KVM setup failed at {step}: {source}")]
    Setup { step: &'static str, source: std::io::Error },
    /// A host-side setting of the run (--mlock, --priority, --pin) was refused.
    #[error(transparent)]
    Thread(#[from] crate::host::threads::ThreadError),
    /// Guest memory could not be mapped.
    #[error("guest memory: {0}")]
    MemoryMap(#[source] vm_memory::mmap::FromRangesError),
    /// Guest memory could not be read or written (vm-memory's error, kept).
    #[error("guest memory: {0}")]
    Memory(#[from] vm_memory::GuestMemoryError),
    /// A KVM table (the GSI routing, an MSR list) is longer than KVM takes.
    #[error("{what}: {source}")]
    Table { what: &'static str, source: vmm_sys_util::fam::Error },
    /// The guest image does not fit this VMM's layout.
    #[error("guest image: {0}")]
    Guest(String),
    /// The guest image could not be built or patched (armguest's error, kept).
    #[error("guest image: {0}")]
    GuestImage(#[source] armguest::GuestError),
    /// The assigned device a `--via vfio-*` flag names cannot be found, opened or mapped.
    #[error("{flag}: {source}")]
    Vfio { flag: String, source: crate::vfio::VfioError },
    /// Not available on this architecture or host (the message says what and why).
    #[error("{0}")]
    Unsupported(String),
}

impl VmError {
    /// A KVM table's error as a setup error naming the table.
    pub fn table(what: &'static str) -> impl FnOnce(vmm_sys_util::fam::Error) -> VmError {
        move |source| VmError::Table { what, source }
    }

    /// A KVM ioctl's errno as a setup error at `step`.
    pub fn setup(step: &'static str) -> impl FnOnce(vmm_sys_util::errno::Error) -> VmError {
        move |e| VmError::Setup { step, source: std::io::Error::from_raw_os_error(e.errno()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

    /// The causes below `e`, outermost first.
    fn chain(e: &dyn std::error::Error) -> Vec<&(dyn std::error::Error + 'static)> {
        std::iter::successors(e.source(), |c| c.source()).collect()
    }

    #[test]
    fn guest_memory_errors_keep_vm_memorys_error_through_the_crates_error() {
        // A write past the end of a one-page guest memory: vm-memory's own error, kept as the
        // source (it was a string before, and the chain ended at VmError).
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), 4096)]).unwrap();
        let e = mem.write_obj(1u64, GuestAddress(1 << 20)).map_err(VmError::Memory).unwrap_err();
        let msg = e.to_string();
        let d = crate::DriverError::from(e);
        assert_eq!(d.to_string(), msg, "the message is the layer's own");
        let causes = chain(&d);
        assert!(
            causes.iter().any(|c| matches!(c.downcast_ref::<vm_memory::GuestMemoryError>(), Some(vm_memory::GuestMemoryError::InvalidGuestAddress(a)) if a.0 == 1 << 20)),
            "{causes:?}"
        );
        // A table KVM does not take keeps vmm-sys-util's error.
        let t = VmError::table("routing table")(vmm_sys_util::fam::Error::SizeLimitExceeded);
        assert!(t.to_string().starts_with("routing table: "));
        assert!(chain(&t).iter().any(|c| c.downcast_ref::<vmm_sys_util::fam::Error>().is_some()));
    }
}

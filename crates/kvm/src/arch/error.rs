//! The architecture layer's error: why a VM could not be created, loaded or triggered. The
//! messages are what the user reads (they were `KvmError`'s before the crate was layered); the
//! drivers wrap this error and the facade's [`crate::KvmError`] shows it unchanged.

/// Why a VM of this architecture could not be set up or driven.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// /dev/kvm is missing or cannot be opened.
    #[error("/dev/kvm is not usable here: {0}")]
    Unavailable(String),
    /// The configuration is impossible (or names a flag this architecture does not have).
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A KVM ioctl failed during setup.
    #[error("KVM setup failed at {step}: {source}")]
    Setup { step: &'static str, source: std::io::Error },
    /// A host-side setting of the run (--mlock, --priority, --pin) was refused.
    #[error(transparent)]
    Thread(#[from] crate::host::threads::ThreadError),
    /// Guest memory could not be set up.
    #[error("guest memory: {0}")]
    Memory(String),
    /// The guest image is missing or does not fit this VMM.
    #[error("guest image: {0}")]
    Guest(String),
    /// Not available on this architecture or host (the message says what and why).
    #[error("{0}")]
    Unsupported(String),
}

impl VmError {
    /// A KVM ioctl's errno as a setup error at `step`.
    pub fn setup(step: &'static str) -> impl FnOnce(vmm_sys_util::errno::Error) -> VmError {
        move |e| VmError::Setup { step, source: std::io::Error::from_raw_os_error(e.errno()) }
    }
}

//! Errors of the micro-VMM; the messages are what the user reads, the variants what tests match.

/// Why a measurement could not run or ended early.
#[derive(Debug, thiserror::Error)]
pub enum KvmError {
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
    /// The run loop failed before any measurement existed.
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
    /// `--breakdown` cannot trace on this host.
    #[error(transparent)]
    Trace(#[from] crate::tracefs::TraceError),
    /// Not available on this architecture or host (the message says what and why).
    #[error("{0}")]
    Unsupported(String),
}

impl KvmError {
    /// A KVM ioctl's errno as a setup error at `step`.
    pub fn setup(step: &'static str) -> impl FnOnce(vmm_sys_util::errno::Error) -> KvmError {
        move |e| KvmError::Setup { step, source: std::io::Error::from_raw_os_error(e.errno()) }
    }
}

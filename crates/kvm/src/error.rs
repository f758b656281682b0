//! Errors of the micro-VMM; the messages are what the user reads.

/// Why a measurement could not run or ended early.
#[derive(Debug, thiserror::Error)]
pub enum KvmError {
    /// /dev/kvm is missing or cannot be opened.
    #[error("/dev/kvm is not usable here: {0}")]
    Unavailable(String),
    /// The configuration is impossible.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A KVM ioctl failed during setup.
    #[error("KVM setup failed at {step}: {source}")]
    Setup { step: &'static str, source: std::io::Error },
    /// A host-side setting of the run (--mlock, --priority, --pin) was refused; the message says
    /// which and why.
    #[error("{0}")]
    Host(String),
    /// Guest memory could not be set up.
    #[error("guest memory: {0}")]
    Memory(String),
    /// `--breakdown` cannot trace on this host.
    #[error(transparent)]
    Trace(#[from] crate::tracefs::TraceError),
    /// This build has no KVM support (not Linux x86_64).
    #[error("irqlab run needs Linux on x86_64")]
    Unsupported,
}


//! The crate's public error, at the facade: each layer keeps its own error (`config::ConfigError`,
//! `host::threads::ThreadError`, `tracefs::TraceError`, `arch::VmError`, `runner::RunError` and
//! the drivers' `runner::DriverError`) and this one is built from them with `#[from]`, so no layer
//! below has to know it. Every variant is transparent: the messages are the layers' own.

/// Why a measurement could not run or ended early.
#[derive(Debug, thiserror::Error)]
pub enum KvmError {
    /// The configuration is impossible (or names a flag this architecture does not have).
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A host-side setting of the run (--mlock, --priority, --pin) was refused.
    #[error(transparent)]
    Thread(#[from] crate::host::threads::ThreadError),
    /// `--breakdown` cannot trace on this host.
    #[error(transparent)]
    Trace(#[from] crate::tracefs::TraceError),
    /// The VM could not be set up, loaded or triggered.
    #[error(transparent)]
    Vm(#[from] crate::arch::VmError),
    /// The run loop failed before any measurement existed.
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
}

impl From<crate::runner::DriverError> for KvmError {
    fn from(e: crate::runner::DriverError) -> Self {
        use crate::runner::DriverError as D;
        match e {
            D::Config(e) => e.into(),
            D::Thread(e) => e.into(),
            D::Trace(e) => e.into(),
            D::Vm(e) => e.into(),
            D::Run(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{DriverError, RunError};

    #[test]
    fn driver_errors_flatten_with_their_message_unchanged() {
        let run = RunError::AllVcpusEnded;
        let msg = run.to_string();
        let k = KvmError::from(DriverError::from(run));
        assert!(matches!(k, KvmError::Run(RunError::AllVcpusEnded)));
        assert_eq!(k.to_string(), msg);
        let vm = crate::arch::VmError::Unsupported("not here".into());
        let k = KvmError::from(DriverError::from(vm));
        assert!(matches!(k, KvmError::Vm(_)));
        assert_eq!(k.to_string(), "not here");
    }
}

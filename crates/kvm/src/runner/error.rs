//! The drivers' error (the run loop, the traced run, the primitives bench) and the crate's public
//! error (the facade re-exports it): what went wrong in the layer it came from, shown unchanged,
//! the layer's error kept as the source. (A `KvmError` with the same five variants stood at the
//! facade until issue 44; one enum serves both.)
use crate::arch::VmError;
use crate::config::ConfigError;
use crate::host::threads::ThreadError;
use crate::tracefs::TraceError;

use super::RunError;

/// Why a measurement could not run or ended early, by the layer that refused.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The configuration is impossible here.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A host-side setting of the run was refused.
    #[error(transparent)]
    Thread(#[from] ThreadError),
    /// `--breakdown` cannot trace on this host.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The VM could not be set up or triggered.
    #[error(transparent)]
    Vm(#[from] VmError),
    /// The run loop failed before any measurement existed.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A shared-page write the guest's memory refused is a run-loop failure (as it was before the
/// page trait moved to `abi`).
impl From<crate::abi::SlotError> for DriverError {
    fn from(e: crate::abi::SlotError) -> Self {
        DriverError::Run(RunError::Slot(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_layers_error_is_shown_unchanged() {
        let run = RunError::AllVcpusEnded;
        let msg = run.to_string();
        let d = DriverError::from(run);
        assert!(matches!(d, DriverError::Run(RunError::AllVcpusEnded)));
        assert_eq!(d.to_string(), msg);
        let d = DriverError::from(VmError::Unsupported("not here".into()));
        assert!(matches!(d, DriverError::Vm(_)));
        assert_eq!(d.to_string(), "not here");
    }
}

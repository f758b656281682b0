//! The lab's errors and their exit codes: bad input (flags, an existing result, a configuration
//! Debian's Xen cannot do) exits 2; an environment or boot failure exits 1 with one line.
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// Bad flags or a request this lab refuses; nothing was started or written.
    #[error("{0}")]
    Usage(String),
    /// A package, tool or file the lab needs could not be had.
    #[error("{0}")]
    Setup(String),
    /// QEMU, Xen or the guest did not do what was expected in time.
    #[error("{why} (console log: {})", log.display())]
    Boot { why: String, log: PathBuf },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Results(#[from] results::ResultsError),
    #[error(transparent)]
    Guest(#[from] armguest::GuestError),
    #[error(transparent)]
    XenBuild(#[from] crate::xen_build::BuildError),
    #[error(transparent)]
    FioBuild(#[from] crate::fio_build::FioBuildError),
    #[error(transparent)]
    Census(#[from] crate::census::CensusError),
}

impl LabError {
    pub fn exit_code(&self) -> i32 {
        match self {
            LabError::Usage(_) => 2,
            LabError::Guest(armguest::GuestError::Invalid { .. }) => 2,
            LabError::XenBuild(e) => e.exit_code(),
            LabError::Census(e) => e.exit_code(),
            _ => 1,
        }
    }

    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> LabError {
        let path = path.into();
        move |source| LabError::Io { path, source }
    }
}

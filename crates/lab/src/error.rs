//! The lab's error and its exit codes, in one place: bad input (flags, an existing result, a
//! configuration Debian's Xen cannot do, a file that is not what its flag says) exits 2 with
//! nothing started; an environment or boot failure exits 1 with one line. A part with its own
//! error type (the Xen build, fio's build, the A/B) is kept whole as the [`LabError::Part`]'s
//! source, with the exit status that part decided (`impl From<…> for LabError` beside each such
//! type, so this module stays a leaf that imports nothing of the lab).
use std::path::PathBuf;

/// A lower part's own error, boxed as the source of [`LabError::Part`].
pub type PartError = Box<dyn std::error::Error + Send + Sync>;

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
    /// A part's own error (the Xen build, fio's build, the A/B), with the exit status it decided.
    #[error("{source}")]
    Part { code: i32, source: PartError },
}

impl LabError {
    pub fn exit_code(&self) -> i32 {
        match self {
            LabError::Usage(_) => 2,
            LabError::Guest(armguest::GuestError::Invalid { .. }) => 2,
            LabError::Part { code, .. } => *code,
            _ => 1,
        }
    }

    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> LabError {
        let path = path.into();
        move |source| LabError::Io { path, source }
    }
}

//! Errors of the results crate.
use std::path::PathBuf;

/// Everything that can go wrong reading, writing or decoding results.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// {path}: cannot read: {source}
    #[error("{path}: cannot read: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    /// A reader was given a device, FIFO, socket or directory (`/dev/zero` would be read forever).
    #[error("{path}: not a regular file; give a result file")]
    NotRegular { path: PathBuf },
    /// A file above the reader's cap.
    #[error("{path}: {bytes} bytes; irqlab reads at most {max} bytes here")]
    TooLarge { path: PathBuf, bytes: u64, max: u64 },
    /// {path}: cannot write: {source}
    #[error("{path}: cannot write: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    /// Not JSON, or JSON that is not the result schema: serde_json's error, kept as the source.
    #[error("{what}: not valid irqlab result JSON: {source}")]
    Json { what: String, source: serde_json::Error },
    /// {what}: not valid irqlab result JSON: {message}
    #[error("{what}: not valid irqlab result JSON: {message}")]
    Parse { what: String, message: String },
    /// The file was written by a different schema version.
    #[error("{what}: result schema version {found}, but this irqlab reads version {expected}")]
    SchemaVersion { what: String, found: u64, expected: u32 },
    /// A stored histogram could not be decoded.
    #[error("histogram of class `{class}` cannot be decoded: {source}")]
    Histogram { class: String, source: crate::latency::HistogramError },
}

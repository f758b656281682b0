//! The host side of a run, the same on every architecture: what the host is (`describe`), KVM's
//! binary statistics (`stats`), and the vCPU threads' placement and priority (`threads`).
pub mod describe;
pub mod stats;
pub mod threads;

/// /dev/kvm cannot be opened here; the message is the open's error (for refusing a run, or for a
/// `needs_kvm` test saying why it cannot run).
#[derive(Debug, thiserror::Error)]
#[error("/dev/kvm: {0}")]
pub struct KvmUnavailable(#[from] pub std::io::Error);

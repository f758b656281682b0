//! The host side of a run, the same on every architecture: what the host is (`describe`), KVM's
//! binary statistics (`stats`), and the vCPU threads' placement and priority (`threads`).
pub mod describe;
pub mod stats;
pub mod threads;

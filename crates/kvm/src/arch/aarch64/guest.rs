//! The arm64 benchmark guest: the `armguest` image (shared with the Xen lab), with its parameter
//! block patched for this VMM's layout (`boot.rs`) and the benchmark asked for.
use crate::config::BenchConfig;
use crate::error::KvmError;

/// The guest image ready to load at `boot::IMAGE`.
pub fn prepared_image(_cfg: &BenchConfig) -> Result<Vec<u8>, KvmError> {
    Err(KvmError::Guest("the arm64 benchmark guest is not built into this irqlab yet (crates/armguest)".into()))
}

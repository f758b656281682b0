//! The guest's shared data page and sample ring as the host sees them. Each architecture's VM
//! implements [`SharedPage`]; the run loop and its watchdog read it (and unit-test against a fake).

/// A slot write the guest's memory refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlotError {
    /// Guest memory could not be written (the message is vm-memory's).
    #[error("guest memory: {0}")]
    Memory(String),
}

/// The guest's shared data page and sample ring, as the host sees them.
pub trait SharedPage {
    /// A u64 slot of the shared page (`abi::slot::*`).
    fn slot(&self, s: u64) -> u64;
    /// Write a u64 slot of the shared page.
    fn set_slot(&self, s: u64, v: u64) -> Result<(), SlotError>;
    /// Sample record `k` (ring position `k % RING`): start, arrival, reply stamps.
    fn record(&self, k: u64) -> [u64; 3];
}

//! Interrupt hardware as pure state machines, one module per architecture.
pub mod arm;
pub mod x86;

//! Guest workloads shared by timed models (storage today; the tbm timer lives with `xen_arm`).
//!
//! - [`fio`]: fio-like random reads against an EBS-like block device, one completion interrupt
//!   per I/O.

pub mod fio;

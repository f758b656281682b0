//! The Arm lab's library: everything `irqlab-lab` (src/main.rs) runs, as modules, so the readers
//! of what the lab gets back from QEMU — console lines, framed result files, QEMU's ITS trace,
//! the kernel's kvm events — can be fuzzed (fuzz/fuzz_targets/lab_console.rs) and tested.
pub mod ab;
pub mod ab_report;
pub mod ab_verdict;
pub mod census;
pub mod cli;
pub mod config;
pub mod delivery;
pub mod deps;
pub mod dom0;
pub mod dts;
pub mod error;
pub mod fio_build;
pub mod frame;
pub mod grammar;
pub mod initramfs;
pub mod input;
pub mod its_script;
pub mod its_trace;
pub mod kernel_image;
pub mod kvm;
pub mod kvm_events;
pub mod output;
pub mod own_kernel;
pub mod peers;
pub mod qemu;
pub mod route;
pub mod session;
pub mod vfio;
pub mod watch;
pub mod xen;
pub mod xen_board;
pub mod xen_build;
pub mod xen_census;

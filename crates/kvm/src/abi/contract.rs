// The contract between the host (this crate) and the benchmark guests: shared-page slots, the
// sample ring, benchmark codes and completion codes. `build.rs` includes this file and generates
// the guest assembly's constants from it (`abi.inc`), so host and guest cannot drift.
//
// Only `pub const` items with plain integer literals or expressions of them may appear here
// (build.rs parses nothing; it `include!`s the file), and only outer doc comments.

/// Shared data page, guest-physical (x86_64 guest; the arm64 guest's page sits in its own RAM).
pub const DATA: u64 = 0x8000;

/// Slots of the shared data page: byte offsets from the page (u64 each).
pub mod slot {
    /// Which benchmark the guest runs (one of `bench::*`).
    pub const KIND: u64 = 0x08;
    /// Period (timer: how far ahead the deadline is), in counter ticks.
    pub const DELTA: u64 = 0x10;
    /// Samples to take; the host lowers it to 0 to end a run early.
    pub const NSAMP: u64 = 0x18;
    /// Samples completed so far (written by the guest).
    pub const COUNT: u64 = 0x20;
    /// The deadline the guest armed last (timer).
    pub const EXPECT: u64 = 0x28;
    /// Wait mode: 0 halt (HLT / WFI), 1 busy.
    pub const WAIT: u64 = 0x30;
    /// Handshake flag between vCPUs (ipi) and the PV IPI probe's return value.
    pub const FLAG: u64 = 0x38;
    /// The guest's counter at entry (the host brackets it to find the counter offset).
    pub const ENTRY_TSC: u64 = 0x40;
    /// Scratch for the PV IPI probe.
    pub const PV: u64 = 0x48;
}

/// Benchmark codes written to `slot::KIND`.
pub mod bench {
    pub const TIMER: u64 = 1;
    pub const IPI: u64 = 2;
    pub const DEVICE: u64 = 3;
    /// x86 only: probe the KVM PV IPI hypercall.
    pub const PV_IPI_PROBE: u64 = 4;
    /// x86 only: the primitives bench's guest part (`crate::primitives`): timed exit round trips
    /// (CPUID, WRMSR, an x2APIC ICR write to no one, a port write to userspace), one record each
    /// sample, interrupts off.
    pub const PRIMITIVES: u64 = 5;
}

/// The port the primitives bench writes to time a PIO exit to userspace: the vCPU thread sees the
/// exit and re-enters at once (not a completion code).
pub const PIO_PROBE_PORT: u64 = 0xf5;

/// The APIC ID no vCPU has (the primitives bench's ICR write and the no-destination MSI route go
/// there, so KVM does the delivery work and finds no target).
pub const NO_APIC_ID: u64 = 0x7f;

/// Completion codes the guest signals (x86: an `out` to this port; arm64: a write to the exit
/// MMIO page at this offset).
pub mod done {
    /// The benchmark finished.
    pub const FINISHED: u64 = 0xf0;
    /// The guest does not know the benchmark in `slot::KIND`.
    pub const UNKNOWN_BENCH: u64 = 0xf1;
    /// This vCPU parked itself (nothing more to do on it).
    pub const PARKED: u64 = 0xf2;
    /// The guest hit an error it reports itself (bad parameter block, unexpected exception, a
    /// secondary vCPU that did not start).
    pub const ERROR: u64 = 0xf3;
    /// Not an end: the guest has set its interrupt up and waits for the first trigger (the arm64
    /// guest's device bench; the x86 guest stamps `slot::ENTRY_TSC` instead).
    pub const READY: u64 = 0xf4;
}

/// Sample records: 32 bytes each ([0] start / trigger / send stamp, [1] arrival stamp, [2] reply
/// stamp, [3] unused), in a ring of `RING` records that the host drains while the guest runs.
pub const SAMPLE_BYTES: u64 = 32;
pub const RING: u64 = 1 << 19;
pub const RING_MASK: u64 = RING - 1;

/// Most samples one run keeps: the host holds every sample (raw records, latencies, stamps:
/// about 60 bytes each), so 10 million is ~600 MB. A `--duration` run ends there with a note.
pub const MAX_SAMPLES: u64 = 10_000_000;

/// Most vCPUs a benchmark VM gets (arm64: 64, for the SGI walk over a VM's vCPUs; x86 keeps
/// [`x86::MAX_VCPUS`], its per-vCPU stacks' room).
pub const MAX_VCPUS: u32 = 64;

/// The x86 guest's fixed addresses besides `DATA` (guest-physical).
pub mod x86 {
    /// Most vCPUs an x86 benchmark VM gets: the per-vCPU stacks below `USER_STACK`.
    pub const MAX_VCPUS: u32 = 8;
    /// The sample ring.
    pub const SAMPLES: u64 = 0x100000;
    /// Ring-3 stack (busy-wait mode).
    pub const USER_STACK: u64 = 0x7f000;
}

/// The x86 guest's interrupt vectors (also what the tracepoint rules filter on).
pub mod vector {
    pub const TIMER: u8 = 0xec;
    pub const DEVICE: u8 = 0xd0;
    pub const DEVICE_LEVEL: u8 = 0xd1;
    pub const IPI: u8 = 0xe0;
    pub const IPI_REPLY: u8 = 0xe1;
    pub const SPURIOUS: u8 = 0xff;
}

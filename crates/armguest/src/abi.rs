//! The guest's ABI, defined once: the Image header offsets, the parameter block the loader
//! patches, the codes the guest writes to its exit address, and the memory-mode ring layout.
//!
//! `build.rs` includes this file (`#[path]`) and generates the assembly's `.equ` include from
//! [`asm_include`], so the Rust side and `guest/bench.S` cannot drift. This file must therefore
//! stay dependency-free (no crate imports).
//!
//! Layout of the image (all little-endian):
//! - `0x00..0x40`: the 64-byte Linux arm64 Image header (`Documentation/arm64/booting.rst`,
//!   "Call the kernel image"): `code0` branch, `text_offset` = 0x80000, `image_size`, flags 0,
//!   magic `ARM\x64` at 0x38. Xen's `kernel_zimage64_probe` (xen/arch/arm/kernel.c, 4.17) and
//!   U-Boot's `booti` accept it.
//! - `0x40..`: the parameter block, one u64 per [`Field`], in declaration order.

/// Offset of the parameter block in the image (right after the Image header).
pub const PARAMS_OFFSET: usize = 0x40;
/// Size of the Linux arm64 Image header.
pub const HEADER_SIZE: usize = 0x40;
/// Offset of the `ARM\x64` magic in the header.
pub const HEADER_MAGIC_OFFSET: usize = 0x38;
pub const HEADER_MAGIC: u32 = 0x644d_5241;
/// Offset of `text_offset` and `image_size` in the header.
pub const HEADER_TEXT_OFFSET_OFFSET: usize = 0x08;
pub const HEADER_IMAGE_SIZE_OFFSET: usize = 0x10;
/// The guest is loaded this far into RAM by Xen and U-Boot (any 2 MiB-aligned base + this).
pub const TEXT_OFFSET: u64 = 0x80000;

/// `irqlabg\0` little-endian: marks a parameter block.
pub const PARAMS_MAGIC: u64 = u64::from_le_bytes(*b"irqlabg\0");
/// Bumped on any incompatible change to the fields, codes or line format.
pub const ABI_VERSION: u64 = 6;

/// The parameter block's fields, in image order (offset = `PARAMS_OFFSET + 8 * index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Magic,
    AbiVersion,
    /// [`BENCH_TIMER`], [`BENCH_IPI`] or [`BENCH_SPIN`].
    Bench,
    /// [`WAIT_WFI`] or [`WAIT_BUSY`].
    Wait,
    /// Timer: deadline this many counter ticks after arming. IPI: gap between sends. Device:
    /// unused (the host paces the triggers), printed on the `start` line only.
    PeriodTicks,
    /// Samples taken in total (warm-up ones included). Every bench (timer, IPI, device) re-reads
    /// it before each sample, so a VMM ends a run early (`irqlab run --duration`, `--stop-above`)
    /// by lowering it in guest memory; the `end` line reports the samples actually taken. (The
    /// device bench's re-read changed no field, code or line on its own: a VMM that never lowers
    /// it sees the same guest. ABI 4 is for the ring records' absolute stamps, see `RING_HEADER`.)
    Samples,
    /// The first `warmup` samples are excluded from WARM_MAX (as tbm).
    Warmup,
    GicdBase,
    /// Redistributor of vCPU 0; vCPU n's is at `gicr_base + n * gicr_stride`.
    GicrBase,
    GicrStride,
    /// PL011 (Xen: vpl011) data register base; 0 = no console.
    UartBase,
    /// [`REPORT_CONSOLE`] or [`REPORT_MEMORY`].
    Report,
    /// Memory mode: guest-physical address of the ring (see [`RING_HEADER`]).
    RingAddr,
    /// Memory mode: ring capacity in records.
    RingRecords,
    /// Guest-physical address the guest writes an [`EXIT_DONE`]… code to (0 = none).
    ExitAddr,
    /// IPI bench: the vCPU index the pings go to (1 by default). The guest starts that vCPU
    /// (PSCI CPU_ON to the MPIDR KVM gives index n: Aff0 = n & 0xf, Aff1 = n >> 4, KVM's
    /// reset_mpidr) and sends to it by affinity, so a hypervisor that finds the target by walking
    /// its vCPUs (KVM's vgic_v3_dispatch_sgi) walks n of them. ABI 6 added this field.
    IpiTarget,
    /// Device bench: the INTID the guest enables and waits for, an SPI (32..=1019) or an LPI
    /// (8192..=65535, KVM's and QEMU's 16 INTID bits).
    DeviceIntid,
    /// Device bench, SPI: [`TRIGGER_EDGE`] or [`TRIGGER_LEVEL`] (GICD_ICFGR). LPIs are edge.
    DeviceTrigger,
    /// ITS control frame (GITS_CTLR) base; 0 = no ITS (an LPI needs one).
    GitsBase,
    /// LPI: the DeviceID the guest maps (MAPD) and the EventID it maps to the INTID (MAPTI).
    ItsDeviceId,
    ItsEventId,
    /// LPI: 1 MiB of guest RAM, 64 KiB aligned, for the LPI property and pending tables, the
    /// command queue, the ITS device and collection tables and the ITT ([`ITS_LAYOUT`]).
    ItsTablesAddr,
    /// Device bench: 1 = the guest raises its own interrupt (SPI: GICD_ISPENDR; LPI: a write of
    /// the EventID to GITS_TRANSLATER) for bare-QEMU tests; 0 = the host triggers.
    DeviceSelfTrigger,
    /// Device bench, MMIO trigger (an assigned device the guest makes raise its interrupt):
    /// after READY the guest waits until the u64 here is non-zero (the host has connected the
    /// device's interrupt); 0 = do not wait.
    DeviceGoAddr,
    /// MMIO trigger: the guest writes `DeviceTriggerValue` (32 bits) here, `PeriodTicks` apart,
    /// stamping CNTVCT just before; the sample is then handler stamp − that stamp (a latency,
    /// not a stamp). 0 = no MMIO trigger.
    DeviceTriggerAddr,
    DeviceTriggerValue,
    /// MMIO trigger: the handler writes `DeviceAckValue` (32 bits) here before its EOI (a level
    /// interrupt's device must drop its line first); 0 = no acknowledge.
    DeviceAckAddr,
    DeviceAckValue,
    /// The GIC's CPU interface ([`GIC_V3`]: system registers, redistributors; [`GIC_V2`]:
    /// the memory-mapped GICC at `GiccBase`, SGIs through GICD_SGIR; ABI 5).
    GicVersion,
    /// GICv2: the CPU interface (GICC) base; unused under GICv3.
    GiccBase,
}

impl Field {
    pub const ALL: [Field; 30] = [
        Field::Magic,
        Field::AbiVersion,
        Field::Bench,
        Field::Wait,
        Field::PeriodTicks,
        Field::Samples,
        Field::Warmup,
        Field::GicdBase,
        Field::GicrBase,
        Field::GicrStride,
        Field::UartBase,
        Field::Report,
        Field::RingAddr,
        Field::RingRecords,
        Field::ExitAddr,
        Field::IpiTarget,
        Field::DeviceIntid,
        Field::DeviceTrigger,
        Field::GitsBase,
        Field::ItsDeviceId,
        Field::ItsEventId,
        Field::ItsTablesAddr,
        Field::DeviceSelfTrigger,
        Field::DeviceGoAddr,
        Field::DeviceTriggerAddr,
        Field::DeviceTriggerValue,
        Field::DeviceAckAddr,
        Field::DeviceAckValue,
        Field::GicVersion,
        Field::GiccBase,
    ];

    /// Byte offset of this field in the image.
    pub fn offset(self) -> usize {
        PARAMS_OFFSET + 8 * (self as usize)
    }

    /// The assembly symbol (`P_<NAME>`) for this field's offset from the image start.
    pub fn asm_name(self) -> &'static str {
        match self {
            Field::Magic => "P_MAGIC",
            Field::AbiVersion => "P_ABI_VERSION",
            Field::Bench => "P_BENCH",
            Field::Wait => "P_WAIT",
            Field::PeriodTicks => "P_PERIOD",
            Field::Samples => "P_SAMPLES",
            Field::Warmup => "P_WARMUP",
            Field::GicdBase => "P_GICD",
            Field::GicrBase => "P_GICR",
            Field::GicrStride => "P_GICR_STRIDE",
            Field::UartBase => "P_UART",
            Field::Report => "P_REPORT",
            Field::RingAddr => "P_RING_ADDR",
            Field::RingRecords => "P_RING_RECORDS",
            Field::ExitAddr => "P_EXIT_ADDR",
            Field::DeviceIntid => "P_DEV_INTID",
            Field::DeviceTrigger => "P_DEV_TRIGGER",
            Field::GitsBase => "P_GITS",
            Field::ItsDeviceId => "P_ITS_DEVID",
            Field::ItsEventId => "P_ITS_EVENTID",
            Field::ItsTablesAddr => "P_ITS_TABLES",
            Field::DeviceSelfTrigger => "P_DEV_SELF",
            Field::DeviceGoAddr => "P_DEV_GO",
            Field::DeviceTriggerAddr => "P_DEV_TRIG_ADDR",
            Field::DeviceTriggerValue => "P_DEV_TRIG_VALUE",
            Field::DeviceAckAddr => "P_DEV_ACK_ADDR",
            Field::DeviceAckValue => "P_DEV_ACK_VALUE",
            Field::IpiTarget => "P_IPI_TARGET",
            Field::GicVersion => "P_GIC_VERSION",
            Field::GiccBase => "P_GICC",
        }
    }

    /// The value the image carries before any patching: Xen dom0less guest addresses
    /// (xen/include/public/arch-arm.h, 4.17: GUEST_GICV3_GICD_BASE 0x03001000,
    /// GUEST_GICV3_GICR0_BASE 0x03020000, GUEST_PL011_BASE 0x22000000; under GICv2
    /// GUEST_GICC_BASE 0x03002000), GICv3, the timer bench in WFI,
    /// 1 ms at QEMU's 62.5 MHz counter, 64 samples of which 4 warm-up, console report.
    pub fn default_value(self) -> u64 {
        match self {
            Field::Magic => PARAMS_MAGIC,
            Field::AbiVersion => ABI_VERSION,
            Field::Bench => BENCH_TIMER,
            Field::Wait => WAIT_WFI,
            Field::PeriodTicks => 62_500,
            Field::Samples => 64,
            Field::Warmup => 4,
            Field::GicdBase => 0x0300_1000,
            Field::GicrBase => 0x0302_0000,
            Field::GicrStride => 0x2_0000,
            Field::UartBase => 0x2200_0000,
            Field::Report => REPORT_CONSOLE,
            Field::RingAddr => 0,
            Field::IpiTarget => 1,
            Field::RingRecords => 0,
            Field::ExitAddr => 0,
            Field::DeviceIntid => 48,
            Field::DeviceTrigger => TRIGGER_EDGE,
            Field::GitsBase => 0,
            Field::ItsDeviceId => 0,
            Field::ItsEventId => 0,
            Field::ItsTablesAddr => 0,
            Field::DeviceSelfTrigger => 0,
            Field::DeviceGoAddr | Field::DeviceTriggerAddr | Field::DeviceTriggerValue | Field::DeviceAckAddr | Field::DeviceAckValue => 0,
            Field::GicVersion => GIC_V3,
            Field::GiccBase => 0x0300_2000,
        }
    }
}

/// Size of the parameter block in bytes.
pub const PARAMS_SIZE: usize = 8 * Field::ALL.len();

pub const BENCH_TIMER: u64 = 0;
pub const BENCH_IPI: u64 = 1;
/// Spin forever after one `start` line: the busy neighbour domain.
pub const BENCH_SPIN: u64 = 2;
/// Waits for `samples` interrupts on `DeviceIntid` (SPI or LPI through the ITS).
pub const BENCH_DEVICE: u64 = 3;
pub const TRIGGER_EDGE: u64 = 0;
pub const TRIGGER_LEVEL: u64 = 1;
pub const WAIT_WFI: u64 = 0;
pub const WAIT_BUSY: u64 = 1;
/// [`Field::GicVersion`]'s codes: the generation's major number (GICv4.x guests use GICv3's
/// CPU interface).
pub const GIC_V2: u64 = 2;
pub const GIC_V3: u64 = 3;
pub const REPORT_CONSOLE: u64 = 0;
pub const REPORT_MEMORY: u64 = 1;

/// Exit codes written (u64) to `exit_addr`.
pub const EXIT_DONE: u64 = 1;
/// The spin bench reached its loop (it never ends).
pub const EXIT_PARKED: u64 = 2;
pub const EXIT_UNKNOWN_BENCH: u64 = 3;
/// Bad magic/ABI version, unexpected exception, or a vCPU 1 that did not start.
pub const EXIT_ERROR: u64 = 4;

/// Not an exit: written to `exit_addr` once the device bench has programmed its SPI or ITS and
/// is about to wait for the first interrupt (the guest continues). A host must not trigger before
/// it: an MSI before MAPTI is dropped by the ITS (KVM_SIGNAL_MSI returns 0, "blocked").
pub const SIGNAL_DEVICE_READY: u64 = 6;
/// The ITS set-up did not complete (a GITS_CREADR that did not catch up, a table that does not fit
/// in the 1 MiB at `ItsTablesAddr`, an indirect-only table): the console says which.
pub const EXIT_ITS: u64 = 5;

/// Memory mode ring: `RING_HEADER` bytes (u64 records written so far, u64 spurious interrupts),
/// then `ring_records` records of two u64: (deadline CNTVCT, latency ticks) for the timer,
/// (CNTVCT before the SGI write, round-trip ticks << 32 | one-way ticks) for the IPI, each
/// latency saturated at 2^32 − 1 ticks (4.3 s at 1 GHz), and for the device bench (sample index,
/// CNTVCT read first thing in the handler) when the host triggers, (CNTVCT just before the
/// guest's own MMIO trigger write, latency ticks) when the guest triggers (`DevTrigAddr`). Record `n` is at slot `n % ring_records`. The
/// absolute stamps (ABI 4) let a VMM put samples on its own time line (`--breakdown`).
pub const RING_HEADER: usize = 16;
pub const RING_RECORD: usize = 16;

/// SGI numbers the IPI bench uses: vCPU 0 → 1 and the reply 1 → 0.
pub const SGI_PING: u64 = 0;
pub const SGI_PONG: u64 = 1;
/// The EL1 virtual timer's PPI.
pub const PPI_VTIMER: u64 = 27;

/// Where the guest puts its ITS structures in the 1 MiB at `ItsTablesAddr` (offsets):
/// LPI property table (64 KiB: INTIDs up to 65535, GICR_PROPBASER.IDbits = 15), LPI pending
/// table (8 KiB, 64 KiB aligned), the command queue (4 KiB), the collection table (64 KiB), the
/// ITT (64 KiB: 12 EventID bits at up to 16 bytes an entry), then the device table to the end
/// (704 KiB: 11 pages of 64 KiB, the page size the guest asks of GITS_BASER). The guest zeroes
/// the whole 1 MiB first.
pub const ITS_LAYOUT: [(&str, u64); 6] = [("ITS_PROP", 0x0), ("ITS_PEND", 0x1_0000), ("ITS_CMDQ", 0x2_0000), ("ITS_CT", 0x3_0000), ("ITS_ITT", 0x4_0000), ("ITS_DT", 0x5_0000)];
pub const ITS_TABLES_SIZE: u64 = 0x10_0000;
/// EventIDs the ITT holds (MAPD Size = 11).
pub const ITS_EVENT_BITS: u64 = 12;
/// LPI INTIDs start here; the guest's tables cover INTIDs below `LPI_LIMIT`.
pub const LPI_BASE: u64 = 8192;
pub const LPI_LIMIT: u64 = 65536;

/// The `.equ` include for `guest/bench.S`.
pub fn asm_include() -> String {
    let mut s = String::from("// Generated by crates/armguest/build.rs from src/abi.rs. Do not edit.\n");
    let mut equ = |name: &str, v: u64| s.push_str(&format!(".equ {name}, {v:#x}\n"));
    for f in Field::ALL {
        equ(f.asm_name(), f.offset() as u64);
    }
    equ("PARAMS_SIZE", PARAMS_SIZE as u64);
    equ("PARAMS_MAGIC", PARAMS_MAGIC);
    equ("ABI_VERSION", ABI_VERSION);
    equ("TEXT_OFFSET", TEXT_OFFSET);
    for (n, v) in [
        ("BENCH_TIMER", BENCH_TIMER),
        ("BENCH_IPI", BENCH_IPI),
        ("BENCH_SPIN", BENCH_SPIN),
        ("WAIT_WFI", WAIT_WFI),
        ("WAIT_BUSY", WAIT_BUSY),
        ("REPORT_CONSOLE", REPORT_CONSOLE),
        ("REPORT_MEMORY", REPORT_MEMORY),
        ("EXIT_DONE", EXIT_DONE),
        ("EXIT_PARKED", EXIT_PARKED),
        ("EXIT_UNKNOWN_BENCH", EXIT_UNKNOWN_BENCH),
        ("EXIT_ERROR", EXIT_ERROR),
        ("EXIT_ITS", EXIT_ITS),
        ("SIGNAL_DEVICE_READY", SIGNAL_DEVICE_READY),
        ("BENCH_DEVICE", BENCH_DEVICE),
        ("TRIGGER_EDGE", TRIGGER_EDGE),
        ("TRIGGER_LEVEL", TRIGGER_LEVEL),
        ("ITS_TABLES_SIZE", ITS_TABLES_SIZE),
        ("ITS_EVENT_BITS", ITS_EVENT_BITS),
        ("LPI_BASE", LPI_BASE),
        ("RING_HEADER", RING_HEADER as u64),
        ("RING_RECORD", RING_RECORD as u64),
        ("SGI_PING", SGI_PING),
        ("SGI_PONG", SGI_PONG),
        ("PPI_VTIMER", PPI_VTIMER),
        ("GIC_V2", GIC_V2),
        ("GIC_V3", GIC_V3),
    ] {
        equ(n, v);
    }
    for (n, v) in ITS_LAYOUT {
        equ(n, v);
    }
    s.push_str(".macro PARAM_DEFAULTS\n");
    for f in Field::ALL {
        s.push_str(&format!("    .quad {:#x}\n", f.default_value()));
    }
    s.push_str(".endm\n");
    s
}

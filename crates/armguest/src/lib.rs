//! # armguest — the arm64 bare-metal benchmark guest and its ABI
//!
//! One guest for Xen dom0less domUs, U-Boot (`booti`) and irqlab's own arm64 VMM: the tbm role of
//! the S3 measurement (seeds.md S3), written from the architecture, not from tbm's sources.
//! `guest/bench.S` is assembled by `build.rs` with GNU binutils into a flat Linux arm64 Image
//! (64-byte header, `text_offset` 0x80000, magic `ARM\x64`), position-independent (PC-relative
//! only; Xen loads it at 0x40080000, a VMM anywhere).
//!
//! ## Parameter block
//! At [`abi::PARAMS_OFFSET`] (0x40, right after the header), one little-endian u64 per
//! [`abi::Field`]; [`patch`] validates a [`Params`] and writes it. The image's defaults are Xen's
//! dom0less guest addresses (GICD 0x03001000, GICR 0x03020000 with 0x20000 stride, vpl011
//! 0x22000000), timer bench, WFI, 62 500 ticks (1 ms at QEMU's 62.5 MHz counter), 64 samples
//! (4 warm-up), console report.
//!
//! ## Benches
//! - **timer**: CNTV_CVAL_EL0 armed `period` ticks ahead with IRQs masked, then WFI (it wakes on the
//!   pending interrupt) and unmask to take it, or (busy) unmask and spin on a flag. Latency =
//!   CNTVCT_EL0 read first thing in the handler − CVAL, in counter ticks.
//! - **ipi**: vCPU 1 started with PSCI CPU_ON over HVC; vCPU 0 reads CNTVCT (t0) and sends SGI 0
//!   through ICC_SGI1R_EL1; vCPU 1's handler stamps CNTVCT (one way = stamp − t0) and replies
//!   with SGI 1; vCPU 0's handler stamps the reply (round trip = stamp − t0). The virtual counter
//!   is common to a VM's vCPUs.
//! - **device** (`guest/device.S`): waits `samples` times for one device interrupt and stamps
//!   CNTVCT first thing in the handler; the host, which triggered it, subtracts its own stamp (the
//!   virtual counter offset corrected). The host triggers the next one only once the ring count
//!   has advanced; an arrival before the previous sample was taken counts as spurious. Once set
//!   up, and before the first wait, the guest writes [`abi::SIGNAL_DEVICE_READY`] to `exit_addr`
//!   (not an exit): the host's cue for its first trigger.
//!   - *SPI* (`DeviceIntid` 32..=1019): the guest sets GICD_IGROUPR (group 1), GICD_IPRIORITYR
//!     (0x80), GICD_ICFGR (`DeviceTrigger` edge or level), GICD_IROUTER (vCPU 0's MPIDR affinity)
//!     and GICD_ISENABLER, and EOIs every arrival (KVM de-asserts a level SPI fed by an irqfd
//!     through its resamplefd on that EOI).
//!   - *LPI* (`DeviceIntid` 8192..=65535) through the ITS at `GitsBase`, all of it set up by the
//!     guest in the 1 MiB at `ItsTablesAddr` ([`abi::ITS_LAYOUT`]): LPI configuration byte
//!     (priority 0xa0, enabled), GICR_PROPBASER (IDbits 15) and GICR_PENDBASER, GICR_CTLR.EnableLPIs;
//!     `GITS_BASER<n>` for the device and collection tables (type and entry size read from the ITS,
//!     64 KiB pages as KVM's vITS assumes, flat), GITS_CBASER, GITS_CTLR.Enabled; then MAPD (`ItsDeviceId`, 12 EventID
//!     bits), MAPC (collection 0 → vCPU 0's redistributor, by address or by processor number as
//!     GITS_TYPER.PTA says), MAPTI (`ItsEventId` → the INTID, collection 0), INV and SYNC, and waits
//!     at most 1 s (guest time) for GITS_CREADR to reach GITS_CWRITER. A failure is
//!     `error its=<what>` and [`abi::EXIT_ITS`].
//!   - `DeviceSelfTrigger` = 1 (bare-QEMU tests): the guest raises the interrupt itself, an SPI
//!     through GICD_ISPENDR, an LPI by writing the EventID to GITS_TRANSLATER; QEMU 7.2 takes the
//!     DeviceID of that write from the CPU's requester id, 0 (hw/intc/arm_gicv3_its.c,
//!     `gicv3_its_translation_write`), so the self-test maps DeviceID 0.
//!
//!   The guest runs with the MMU off, so its ITS tables are written as Device (non-cacheable)
//!   memory; KVM's vITS reads them through the host's cacheable mapping. That is coherent under
//!   QEMU TCG; on hardware without stage-2 FWB it relies on KVM's cache maintenance of freshly
//!   mapped guest pages (an untested assumption).
//!
//!   What a KVM host does for it (Documentation/virt/kvm/api.rst and devices/arm-vgic-its.rst;
//!   virt/kvm arm64 vgic-irqfd.c `vgic_irqfd_set_irq`):
//!   - RAM behind `ItsTablesAddr` (1 MiB, 64 KiB aligned) in a memslot: KVM's vITS reads the LPI
//!     configuration byte there. Wait for [`abi::SIGNAL_DEVICE_READY`] at `exit_addr` before the
//!     first trigger, then trigger the next one only once the ring count has moved on.
//!   - SPI through irqfd: GSI = INTID − 32 under KVM's default routing; KVM_IRQ_LINE: irq =
//!     `KVM_ARM_IRQ_TYPE_SPI << 24 | INTID`. A level SPI is de-asserted by KVM on the guest's EOI
//!     only for an irqfd with a resamplefd; a line the host leaves high past the EOI is taken
//!     again at once (each extra arrival counts as spurious, and the guest cannot leave its
//!     handler loop until the line drops), so with KVM_IRQ_LINE pulse an edge SPI.
//!   - LPI: KVM_SIGNAL_MSI (or a KVM_IRQ_ROUTING_MSI route behind an irqfd) with
//!     `flags = KVM_MSI_VALID_DEVID`, `devid = ItsDeviceId`, `data = ItsEventId`, address =
//!     `GitsBase + 0x1_0040` (GITS_TRANSLATER). KVM_SIGNAL_MSI returns 0 when the ITS has no
//!     mapping for it (the MSI is dropped), 1 when it was delivered.
//! - **spin**: starts its other vCPUs (PSCI CPU_ON on Aff0 1, 2, … until refused), prints its start
//!   line and spins with IRQs masked on every vCPU: the busy neighbour domain.
//!
//! The GIC, as the loader says (`Params::gic`, the `GicVersion` field; ABI 5):
//! - **GICv3** (and the GICv4s, whose CPU interface is GICv3's) through the system registers
//!   (ICC_SRE_EL1.SRE, ICC_PMR_EL1, ICC_IGRPEN1_EL1, IAR1/EOIR1, SGIs through ICC_SGI1R_EL1),
//!   GICR_WAKER cleared, group/priority/enable for SGI 0, SGI 1 and PPI 27 in the SGI frame
//!   (GICR + 0x10000).
//! - **GICv2** (IHI 0048B; the GIC-400 of the Cortex-A53 boards) by MMIO: priority and enable for
//!   SGI 0, SGI 1 and PPI 27 in the distributor's banked registers, GICC_PMR and GICC_CTLR at
//!   `gicc_base` (Xen's guest GICC is 0x03002000, QEMU virt's 0x08010000), acknowledge through
//!   GICC_IAR and EOImode 0's GICC_EOIR (priority drop and deactivation in one write, so no
//!   GICC_DIR), SGIs through GICD_SGIR (CPUTargetList << 16 | INTID). The device bench is
//!   GICv3's (GICD_IROUTER, the ITS) and refused under GICv2.
//!
//! MMU off: data is Device memory; the guest's writable data sits on its own
//! 4 KiB page (QEMU TCG flushes translated code of a page that is written).
//!
//!   - *MMIO trigger* (`DeviceTriggerAddr` ≠ 0; ABI 3): an assigned device the guest makes raise
//!     the interrupt itself (irqlab's `--via vfio-msi|vfio-intx`, QEMU's `edu` in the lab: write
//!     1 to BAR0 + 0x60 raises it, 1 to BAR0 + 0x64 acknowledges, hw/misc/edu.c). After READY
//!     the guest waits for the u64 at `DeviceGoAddr` to turn non-zero (the host connects the
//!     device's interrupt to the VM only once the guest's ITS mapping exists: KVM's
//!     `kvm_vgic_v4_set_forwarding` resolves it when the irqfd meets VFIO's producer); then,
//!     `PeriodTicks` apart (spinning on CNTVCT), it stamps CNTVCT, writes `DeviceTriggerValue`
//!     to `DeviceTriggerAddr` with IRQs masked, and waits (WFI or busy); the handler writes
//!     `DeviceAckValue` to `DeviceAckAddr` before its EOI. The sample is handler stamp − stamp
//!     before the write: a one-way latency entirely in guest counter ticks (the `d` line and
//!     the ring record carry it in place of the arrival stamp).
//!
//! ABI version 5 added the GIC generation and GICv2's GICC base after `DeviceAckValue`.
//! ABI version 3 added the five MMIO-trigger fields after `DeviceSelfTrigger`.
//! ABI version 2 added the device bench (`BENCH_DEVICE`, `EXIT_ITS`) and its seven fields after
//! `ExitAddr`; the fields before them kept their offsets.
//!
//! ## Console report (`report = console`)
//! One line per event on the PL011, each `@irqlab v1 <seq> <kind> <fields…> *<xx>` where `seq`
//! counts lines from 0 (lost, repeated or interleaved lines show) and `xx` is the XOR of every
//! byte from `@` to the byte before ` *`, two lower-case hex digits:
//! - `start bench=<timer|ipi|spin|device> wait=<wfi|busy> period=<ticks> samples=<n> warmup=<n>
//!   freq=<CNTFRQ Hz> report=<console|memory> abi=6`, and for the device bench
//!   ` intid=<INTID> trigger=<edge|level>` (LPIs are edge)
//! - `t <index> <latency ticks>` (timer), `i <index> <one-way ticks> <round-trip ticks>` (ipi),
//!   `d <index> <arrival CNTVCT>` (device: a stamp, not a latency)
//! - `sum <timer|ipi|ipi_rtt|device> n=<n> avg=<ticks> min= max= warm_max=` (as tbm's AVG/MIN/MAX/WARM_MAX;
//!   warm_max excludes the first `warmup` samples)
//! - `end samples=<n> lost=<n> spurious=<interrupts that were not the awaited one>`
//! - `error …` / `fault vector=<n> esr=<ESR_EL1> elr=<image offset>`
//!
//! ## Memory report (`report = memory`)
//! Records go to a ring at `ring_addr` ([`abi::RING_HEADER`]: count, spurious; then 16-byte
//! records: (index, latency) for the timer, (one way, round trip) for the IPI, (index, arrival
//! CNTVCT) for the device), then the exit code
//! is written to `exit_addr` ([`abi::EXIT_DONE`] …); console lines still go to the UART if
//! `uart_base` is not 0. Every exit also calls PSCI SYSTEM_OFF.
pub mod abi;
pub mod console;
mod params;

pub use params::{patch, read_params, Device, DeviceIrq, Gic, GuestError, MmioTrigger, Params, Program, Report, Trigger, Wait};

#[cfg(armguest_image)]
static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bench.bin"));

#[cfg(armguest_image)]
static SYMBOLS: &str = include_str!(concat!(env!("OUT_DIR"), "/symbols.txt"));

/// The guest's symbols as `nm` prints them, addresses as offsets into [`image`] (it is linked
/// at 0): the lab's path census names guest PCs and finds the vectors and dispatch labels here.
pub fn symbols() -> Result<&'static str, GuestError> {
    #[cfg(armguest_image)]
    {
        Ok(SYMBOLS)
    }
    #[cfg(not(armguest_image))]
    {
        Err(GuestError::NotBuilt(env!("ARMGUEST_MISSING").to_string()))
    }
}

/// The assembled guest image with its default parameters, or why it was not built.
pub fn image() -> Result<&'static [u8], GuestError> {
    #[cfg(armguest_image)]
    {
        Ok(IMAGE)
    }
    #[cfg(not(armguest_image))]
    {
        Err(GuestError::NotBuilt(env!("ARMGUEST_MISSING").to_string()))
    }
}

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
//! - **spin**: starts its other vCPUs (PSCI CPU_ON on Aff0 1, 2, … until refused), prints its start
//!   line and spins with IRQs masked on every vCPU: the busy neighbour domain.
//!
//! GICv3 through the system registers (ICC_SRE_EL1.SRE, ICC_PMR_EL1, ICC_IGRPEN1_EL1, IAR1/EOIR1),
//! GICR_WAKER cleared, group/priority/enable for SGI 0, SGI 1 and PPI 27 in the SGI frame
//! (GICR + 0x10000). MMU off: data is Device memory; the guest's writable data sits on its own
//! 4 KiB page (QEMU TCG flushes translated code of a page that is written).
//!
//! ## Console report (`report = console`)
//! One line per event on the PL011, each `@irqlab v1 <seq> <kind> <fields…> *<xx>` where `seq`
//! counts lines from 0 (lost, repeated or interleaved lines show) and `xx` is the XOR of every
//! byte from `@` to the byte before ` *`, two lower-case hex digits:
//! - `start bench=<timer|ipi|spin> wait=<wfi|busy> period=<ticks> samples=<n> warmup=<n>
//!   freq=<CNTFRQ Hz> report=<console|memory> abi=1`
//! - `t <index> <latency ticks>` (timer), `i <index> <one-way ticks> <round-trip ticks>` (ipi)
//! - `sum <timer|ipi|ipi_rtt> n=<n> avg=<ticks> min= max= warm_max=` (as tbm's AVG/MIN/MAX/WARM_MAX;
//!   warm_max excludes the first `warmup` samples)
//! - `end samples=<n> lost=<n> spurious=<interrupts that were not the awaited one>`
//! - `error …` / `fault vector=<n> esr=<ESR_EL1> elr=<image offset>`
//!
//! ## Memory report (`report = memory`)
//! Records go to a ring at `ring_addr` ([`abi::RING_HEADER`]: count, spurious; then 16-byte
//! records: (index, latency) for the timer, (one way, round trip) for the IPI), then the exit code
//! is written to `exit_addr` ([`abi::EXIT_DONE`] …); console lines still go to the UART if
//! `uart_base` is not 0. Every exit also calls PSCI SYSTEM_OFF.
pub mod abi;
mod params;

pub use params::{patch, read_params, Bench, Device, DeviceIrq, GuestError, Params, Report, Trigger, Wait};

#[cfg(armguest_image)]
static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bench.bin"));

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

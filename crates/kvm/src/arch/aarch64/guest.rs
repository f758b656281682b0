//! The arm64 benchmark guest: the `armguest` image (the same one the Xen lab boots as a domU),
//! with its parameter block patched for this VMM — the vGIC at `boot::GICD`/`GICR`, samples into
//! a ring in guest RAM (memory report), completion written to the unbacked exit page — and the
//! ring read back as the run loop's records.
use armguest::abi::{EXIT_DONE, EXIT_ERROR, EXIT_ITS, EXIT_PARKED, EXIT_UNKNOWN_BENCH, RING_HEADER, RING_RECORD, SIGNAL_DEVICE_READY};
use armguest::{Device, DeviceIrq, MmioTrigger, Params, Program, Report, Trigger};

use super::boot;
use crate::abi::{done, RING};
use crate::arch::VmError;
use crate::config::{Bench, BenchConfig, DISCARDED_FIRST};

/// The guest image ready to load at `boot::IMAGE`, for `cfg` with the counter at `counter_khz`.
pub fn prepared_image(cfg: &BenchConfig, counter_khz: u64) -> Result<Vec<u8>, VmError> {
    let image = armguest::image().map_err(VmError::GuestImage)?;
    let bench = match cfg.kind {
        Bench::Timer => Program::Timer,
        Bench::Ipi => Program::Ipi,
        Bench::Device => Program::Device(Device { irq: device_irq(cfg.via), self_trigger: false, mmio: cfg.via.is_vfio().then(|| edu_trigger(cfg.vfio_trigger)) }),
    };
    let params = Params {
        bench,
        // The one wait vocabulary: the guest's image takes results::vocab::Wait as is.
        wait: cfg.wait,
        period_ticks: cfg.period_cycles(counter_khz),
        samples: cfg.samples + DISCARDED_FIRST,
        warmup: cfg.warmup + DISCARDED_FIRST,
        gicd_base: boot::GICD,
        gicr_base: boot::GICR,
        gicr_stride: boot::GICR_STRIDE,
        uart_base: 0,
        report: Report::Memory { ring_addr: boot::SAMPLES, ring_records: RING },
        exit_addr: boot::EXIT_MMIO,
        ipi_target: cfg.ipi_target.unwrap_or(1).into(),
        // This VMM creates a vGICv3 (KVM_DEV_TYPE_ARM_VGIC_V3): system-register CPU interface.
        gic: results::vocab::Gic::V3,
        gicc_base: 0,
    };
    if image.len() as u64 > boot::IMAGE_MAX {
        return Err(VmError::Guest(format!("the arm64 guest is {} bytes, more than the {} this VMM's layout leaves", image.len(), boot::IMAGE_MAX)));
    }
    armguest::patch(image, &params).map_err(VmError::GuestImage)
}

/// The assigned device's trigger, after the host's go: `raise` writes 1 to edu's raise register
/// and acknowledges bit 1; `dma` starts the DMA the host programmed (`assigned.rs`) and
/// acknowledges DMA_IRQ (`boot::EDU_*`).
pub fn edu_trigger(how: crate::config::VfioTrigger) -> MmioTrigger {
    let (reg, value, ack) = match how {
        crate::config::VfioTrigger::Raise => (boot::EDU_RAISE, 1, 1),
        crate::config::VfioTrigger::Dma => (boot::EDU_DMA_CMD, boot::EDU_DMA_RUN_IRQ, boot::EDU_DMA_IRQ),
    };
    MmioTrigger { go_addr: boot::DEVICE_GO, trigger_addr: boot::DEVICE_BAR + reg, trigger_value: value, ack_addr: boot::DEVICE_BAR + boot::EDU_ACK, ack_value: ack }
}

/// The interrupt the guest sets up for each device path (see `trigger.rs`): an LPI mapped
/// through its ITS for the MSI paths, an edge or level SPI for the line paths.
pub fn device_irq(via: crate::config::Via) -> DeviceIrq {
    use crate::config::Via;
    match via {
        Via::Irqfd | Via::Msi | Via::VfioMsi => {
            DeviceIrq::Lpi { intid: boot::ITS_LPI, gits_base: boot::GITS, device_id: boot::ITS_DEVICE_ID, event_id: boot::ITS_EVENT_ID, tables_addr: boot::ITS_TABLES }
        }
        Via::Line => DeviceIrq::Spi { intid: boot::EDGE_SPI, trigger: Trigger::Edge },
        Via::Level | Via::VfioIntx => DeviceIrq::Spi { intid: boot::LEVEL_SPI, trigger: Trigger::Level },
    }
}

/// Guest address of the ring's record count.
pub const RING_COUNT: u64 = boot::SAMPLES;

/// Guest address of record `k` (two u64: timer (index, latency), ipi (one way, round trip)).
pub fn record_addr(k: u64) -> u64 {
    boot::SAMPLES + RING_HEADER as u64 + (k % RING) * RING_RECORD as u64
}

/// A ring record (armguest::abi::RING_RECORD, ABI 4) as the run loop's `[start, arrival, reply]`
/// (see `runner::collect`): the timer's is `[deadline, latency, 0]` (collect reads the latency
/// and, with `Arch::TIMER_RECORDS_DEADLINE`, the deadline), the IPI's `[t0, t0 + one way, t0 +
/// round trip]` unpacked from its two 32-bit latencies, the host-triggered device's `[0, handler
/// stamp, 0]` (the host puts its trigger stamp in `start`). A guest-triggered device record
/// (`guest_offset`: the guest − host counter offset) is `[t0 − offset, t0 + latency, 0]`: start on
/// the host's counter and arrival on the guest's, like a host-triggered one, so the same
/// arithmetic gives the latency and places the sample on the host's time line.
pub fn as_record(kind: Bench, guest_offset: Option<i64>, pair: [u64; 2]) -> [u64; 3] {
    match (kind, guest_offset) {
        (Bench::Ipi, _) => [pair[0], pair[0].wrapping_add(pair[1] & 0xffff_ffff), pair[0].wrapping_add(pair[1] >> 32)],
        (Bench::Timer, _) => [pair[0], pair[1], 0],
        (Bench::Device, Some(off)) => [pair[0].wrapping_sub(off as u64), pair[0].wrapping_add(pair[1]), 0],
        (Bench::Device, None) => [0, pair[1], 0],
    }
}

/// The completion code a write of `value` to the exit page means, in the neutral vocabulary.
pub fn signal_of_exit_value(value: u64) -> u64 {
    match value {
        EXIT_DONE => done::FINISHED,
        EXIT_PARKED => done::PARKED,
        EXIT_UNKNOWN_BENCH => done::UNKNOWN_BENCH,
        EXIT_ERROR | EXIT_ITS => done::ERROR,
        SIGNAL_DEVICE_READY => done::READY,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::main_cycles;

    #[test]
    fn records_land_where_the_run_loop_reads_them() {
        assert_eq!(main_cycles(Bench::Timer, &as_record(Bench::Timer, None, [7, 1234]), 0), 1234);
        assert_eq!(as_record(Bench::Timer, None, [7, 1234])[0], 7, "the deadline");
        let ipi = as_record(Bench::Ipi, None, [5000, 900 << 32 | 300]);
        assert_eq!(main_cycles(Bench::Ipi, &ipi, 0), 300);
        assert_eq!((ipi[0], ipi[2] - ipi[0]), (5000, 900), "t0 and the round trip");
        // Guest-triggered device: guest t0 10_000, latency 40, guest − host offset −3_000.
        let dev = as_record(Bench::Device, Some(-3_000), [10_000, 40]);
        assert_eq!(main_cycles(Bench::Device, &dev, -3_000), 40, "the latency, whatever the offset");
        assert_eq!(dev[0], 13_000, "start on the host's counter");
        assert_eq!(main_cycles(Bench::Device, &as_record(Bench::Device, None, [3, 777]), 0), 777, "host-triggered: the host fills start");
        assert_eq!(record_addr(0), boot::SAMPLES + 16);
        assert_eq!(record_addr(RING + 1), record_addr(1));
    }

    #[test]
    fn exit_values_map_to_completion_codes() {
        assert_eq!(signal_of_exit_value(EXIT_DONE), done::FINISHED);
        assert_eq!(signal_of_exit_value(EXIT_PARKED), done::PARKED);
        assert_eq!(signal_of_exit_value(EXIT_UNKNOWN_BENCH), done::UNKNOWN_BENCH);
        assert_eq!(signal_of_exit_value(EXIT_ERROR), done::ERROR);
        assert_eq!(signal_of_exit_value(EXIT_ITS), done::ERROR);
        assert_eq!(signal_of_exit_value(SIGNAL_DEVICE_READY), done::READY);
    }

    #[test]
    fn the_patched_image_carries_this_vmms_layout() {
        // This test runs only in aarch64 builds, which need the cross binutils that also
        // assemble the guest: a missing image is a build fault, not a reason to pass.
        armguest::image().expect("the arm64 guest image is built wherever the aarch64 target builds");
        let cfg = BenchConfig { kind: Bench::Ipi, vcpus: 2, samples: 10, ..Default::default() };
        let img = prepared_image(&cfg, 62_500).unwrap();
        let p = armguest::read_params(&img).unwrap();
        assert_eq!((p.gicd_base, p.gicr_base, p.exit_addr), (boot::GICD, boot::GICR, boot::EXIT_MMIO));
        assert_eq!(p.samples, 10 + DISCARDED_FIRST);
        assert_eq!(p.period_ticks, cfg.period_cycles(62_500));
        assert_eq!(p.report, Report::Memory { ring_addr: boot::SAMPLES, ring_records: RING });
        let dev = |via| armguest::read_params(&prepared_image(&BenchConfig { kind: Bench::Device, vcpus: 1, via, ..cfg.clone() }, 62_500).unwrap()).unwrap();
        let Program::Device(d) = dev(crate::config::Via::Msi).bench else { panic!("device bench") };
        assert_eq!(d.irq, device_irq(crate::config::Via::Msi));
        assert!(!d.self_trigger, "the host triggers");
        let Program::Device(d) = dev(crate::config::Via::Level).bench else { panic!("device bench") };
        assert_eq!(d.irq, DeviceIrq::Spi { intid: boot::LEVEL_SPI, trigger: Trigger::Level });
        assert_eq!(d.mmio, None, "a host thread triggers the level path");
        // The assigned device: the guest writes edu's raise register in the BAR slot, after the go.
        let Program::Device(d) = dev(crate::config::Via::VfioMsi).bench else { panic!("device bench") };
        assert_eq!(d.irq, device_irq(crate::config::Via::Msi), "the MSI reaches the same LPI through the vITS");
        let m = d.mmio.expect("the guest triggers the assigned device");
        assert_eq!((m.trigger_addr, m.ack_addr, m.go_addr), (boot::DEVICE_BAR + 0x60, boot::DEVICE_BAR + 0x64, boot::DEVICE_GO));
        let Program::Device(d) = dev(crate::config::Via::VfioIntx).bench else { panic!("device bench") };
        assert_eq!(d.irq, DeviceIrq::Spi { intid: boot::LEVEL_SPI, trigger: Trigger::Level });
        assert!(d.mmio.is_some());
        let Program::Device(d) = armguest::read_params(
            &prepared_image(&BenchConfig { kind: Bench::Device, vcpus: 1, via: crate::config::Via::VfioMsi, vfio_trigger: crate::config::VfioTrigger::Dma, ..cfg.clone() }, 62_500)
                .unwrap(),
        )
        .unwrap()
        .bench
        else {
            panic!("device bench")
        };
        let m = d.mmio.unwrap();
        assert_eq!((m.trigger_addr, m.trigger_value, m.ack_value), (boot::DEVICE_BAR + 0x98, 0x5, 0x100), "DMA run + irq, acknowledged as DMA_IRQ");
    }
}

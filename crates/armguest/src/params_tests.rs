//! Tests of `params.rs`: the parameter block's encoding, round trip and refusals.

#[test]
fn the_device_fields_are_twelve_from_the_intid() {
    let d = device_field_list();
    assert_eq!(d.len(), 12);
    assert_eq!((d[0], d[11]), (Field::DeviceIntid, Field::DeviceAckValue));
}

#[test]
fn gicv2_round_trips_and_what_it_cannot_do_is_refused() {
    let img = fake_image();
    let v2 = Params { gic: Gic::V2, gicc_base: 0x0801_0000, gicd_base: 0x0800_0000, bench: Program::Ipi, ..Params::default() };
    let out = patch(&img, &v2).unwrap();
    assert_eq!(read_params(&out).unwrap(), v2);
    assert_eq!(u64_at(&out, Field::GicVersion.offset()), abi::GIC_V2);
    assert_eq!(u64_at(&out, Field::GiccBase.offset()), 0x0801_0000);
    // GICv4.x guests drive GICv3's CPU interface: the image says 3.
    let v4 = patch(&img, &Params { gic: Gic::V4_0, ..Params::default() }).unwrap();
    assert_eq!(u64_at(&v4, Field::GicVersion.offset()), abi::GIC_V3);
    assert_eq!(read_params(&img).unwrap().gic, Gic::V3, "the image's default is GICv3");
    let field = |p: Params| match patch(&img, &p) {
        Err(GuestError::Invalid { field, why }) => (field, why),
        other => panic!("{other:?}"),
    };
    let (f, why) = field(Params { bench: Program::Device(Device { irq: lpi(), self_trigger: true, mmio: None }), ..v2 });
    assert_eq!(f, "gic");
    assert!(why.contains("GICv3"), "{why}");
    assert_eq!(field(Params { gicc_base: 0x0801_0800, ..v2 }).0, "gicc_base");
    assert_eq!(field(Params { gicc_base: 0, ..v2 }).0, "gicc_base");
    let mut bad = out.clone();
    bad[Field::GicVersion.offset()] = 4;
    assert!(matches!(read_params(&bad), Err(GuestError::Invalid { field: "gic", .. })));
}

use super::*;

fn fake_image() -> Vec<u8> {
    let mut v = vec![0u8; 4096];
    v[abi::HEADER_MAGIC_OFFSET..abi::HEADER_MAGIC_OFFSET + 4].copy_from_slice(&abi::HEADER_MAGIC.to_le_bytes());
    for f in Field::ALL {
        v[f.offset()..f.offset() + 8].copy_from_slice(&f.default_value().to_le_bytes());
    }
    v
}

#[test]
fn patch_round_trips_and_leaves_the_input_alone() {
    let img = fake_image();
    let p = Params {
        bench: Program::Ipi,
        wait: Wait::Busy,
        samples: 10,
        warmup: 2,
        period_ticks: 999,
        report: Report::Memory { ring_addr: 0x4100_0000, ring_records: 32 },
        exit_addr: 0x0900_0000,
        ..Params::default()
    };
    let out = patch(&img, &p).unwrap();
    assert_eq!(read_params(&out).unwrap(), p);
    assert_eq!(u64_at(&out, Field::IpiTarget.offset()), 1, "the default target is vCPU 1");
    let far = patch(&img, &Params { ipi_target: 37, ..p }).unwrap();
    assert_eq!(read_params(&far).unwrap().ipi_target, 37);
    let bad = patch(&img, &Params { ipi_target: 0, ..p }).unwrap_err().to_string();
    assert!(bad.contains("ipi_target") && bad.contains("0 is not a vCPU index"), "{bad}");
    assert_eq!(read_params(&img).unwrap(), Params::default());
    assert_eq!(u64_at(&out, Field::Samples.offset()), 10);
    assert_eq!(u64_at(&out, Field::Report.offset()), abi::REPORT_MEMORY);
}

#[test]
fn bad_params_name_the_field() {
    let img = fake_image();
    let e = |p: Params| match patch(&img, &p) {
        Err(GuestError::Invalid { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(e(Params { samples: 0, ..Params::default() }), "samples");
    assert_eq!(e(Params { warmup: 64, ..Params::default() }), "warmup");
    assert_eq!(e(Params { period_ticks: 0, ..Params::default() }), "period_ticks");
    assert_eq!(e(Params { uart_base: 0, ..Params::default() }), "uart_base");
    assert_eq!(e(Params { gicr_stride: 0x1000, ..Params::default() }), "gicr_stride");
    assert_eq!(e(Params { gicd_base: 0x3001004, ..Params::default() }), "gicd_base");
    assert_eq!(e(Params { report: Report::Memory { ring_addr: 0x1000, ring_records: 4 }, ..Params::default() }), "exit_addr");
    assert_eq!(e(Params { report: Report::Memory { ring_addr: 0, ring_records: 4 }, exit_addr: 8, ..Params::default() }), "ring_addr");
}

fn lpi() -> DeviceIrq {
    DeviceIrq::Lpi { intid: 8192, gits_base: 0x0808_0000, device_id: 0, event_id: 3, tables_addr: 0x4500_0000 }
}

#[test]
fn device_params_round_trip_through_their_fields() {
    let img = fake_image();
    for irq in [DeviceIrq::Spi { intid: 40, trigger: Trigger::Level }, DeviceIrq::Spi { intid: 1019, trigger: Trigger::Edge }, lpi()] {
        let p = Params { bench: Program::Device(Device { irq, self_trigger: true, mmio: None }), ..Params::default() };
        let out = patch(&img, &p).unwrap();
        assert_eq!(read_params(&out).unwrap(), p);
        assert_eq!(u64_at(&out, Field::Bench.offset()), abi::BENCH_DEVICE);
        assert_eq!(u64_at(&out, Field::DeviceSelfTrigger.offset()), 1);
    }
    let out = patch(&img, &Params { bench: Program::Device(Device { irq: lpi(), self_trigger: false, mmio: None }), ..Params::default() }).unwrap();
    assert_eq!(u64_at(&out, Field::DeviceIntid.offset()), 8192);
    assert_eq!(u64_at(&out, Field::GitsBase.offset()), 0x0808_0000);
    assert_eq!(u64_at(&out, Field::ItsEventId.offset()), 3);
    assert_eq!(u64_at(&out, Field::ItsTablesAddr.offset()), 0x4500_0000);
    let out = patch(
        &img,
        &Params { bench: Program::Device(Device { irq: DeviceIrq::Spi { intid: 33, trigger: Trigger::Level }, self_trigger: false, mmio: None }), ..Params::default() },
    )
    .unwrap();
    assert_eq!(u64_at(&out, Field::DeviceTrigger.offset()), abi::TRIGGER_LEVEL);
}

#[test]
fn bad_device_params_name_the_field() {
    let img = fake_image();
    let e = |irq: DeviceIrq| match patch(&img, &Params { bench: Program::Device(Device { irq, self_trigger: false, mmio: None }), ..Params::default() }) {
        Err(GuestError::Invalid { field, why }) => (field, why),
        other => panic!("{other:?}"),
    };
    let DeviceIrq::Lpi { intid, gits_base, device_id, event_id, tables_addr } = lpi() else { unreachable!() };
    assert_eq!(e(DeviceIrq::Spi { intid: 31, trigger: Trigger::Edge }).0, "device_intid");
    assert_eq!(e(DeviceIrq::Spi { intid: 1020, trigger: Trigger::Edge }).0, "device_intid");
    assert_eq!(e(DeviceIrq::Lpi { intid: 8191, gits_base, device_id, event_id, tables_addr }).0, "device_intid");
    assert_eq!(e(DeviceIrq::Lpi { intid: 65536, gits_base, device_id, event_id, tables_addr }).0, "device_intid");
    assert_eq!(e(DeviceIrq::Lpi { intid, gits_base: 0, device_id, event_id, tables_addr }).0, "gits_base");
    assert_eq!(e(DeviceIrq::Lpi { intid, gits_base, device_id, event_id, tables_addr: 0x4500_8000 }).0, "its_tables_addr");
    assert_eq!(e(DeviceIrq::Lpi { intid, gits_base, device_id, event_id: 4096, tables_addr }).0, "its_event_id");
    assert_eq!(e(DeviceIrq::Lpi { intid, gits_base, device_id: 1 << 16, event_id, tables_addr }).0, "its_device_id");
    // A patched block that names an LPI but no ITS is refused on read too.
    let mut out = patch(&img, &Params { bench: Program::Device(Device { irq: lpi(), self_trigger: false, mmio: None }), ..Params::default() }).unwrap();
    out[Field::GitsBase.offset()..Field::GitsBase.offset() + 8].fill(0);
    assert!(matches!(read_params(&out), Err(GuestError::Invalid { field: "gits_base", .. })));
}

fn edu() -> MmioTrigger {
    MmioTrigger { go_addr: 0x4010_0400, trigger_addr: 0x1000_0060, trigger_value: 1, ack_addr: 0x1000_0064, ack_value: 1 }
}

#[test]
fn mmio_trigger_round_trips_and_is_validated() {
    let img = fake_image();
    let dev = |mmio: Option<MmioTrigger>, self_trigger| Params { bench: Program::Device(Device { irq: lpi(), self_trigger, mmio }), ..Params::default() };
    let out = patch(&img, &dev(Some(edu()), false)).unwrap();
    assert_eq!(read_params(&out).unwrap(), dev(Some(edu()), false));
    assert_eq!(u64_at(&out, Field::DeviceTriggerAddr.offset()), 0x1000_0060);
    assert_eq!(u64_at(&out, Field::DeviceAckAddr.offset()), 0x1000_0064);
    assert_eq!(u64_at(&out, Field::DeviceGoAddr.offset()), 0x4010_0400);
    // Without one the fields are zero, and read back as none.
    let out = patch(&img, &dev(None, false)).unwrap();
    assert_eq!(u64_at(&out, Field::DeviceTriggerAddr.offset()), 0);
    assert_eq!(read_params(&out).unwrap(), dev(None, false));
    let field = |p: Params| match patch(&img, &p) {
        Err(GuestError::Invalid { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(field(dev(Some(edu()), true)), "device_trigger_addr", "MMIO and GIC self-trigger exclude each other");
    assert_eq!(field(dev(Some(MmioTrigger { trigger_addr: 0, ..edu() }), false)), "device_trigger_addr");
    assert_eq!(field(dev(Some(MmioTrigger { trigger_addr: 0x1000_0062, ..edu() }), false)), "device_trigger_addr");
    assert_eq!(field(dev(Some(MmioTrigger { ack_addr: 0x1000_0066, ..edu() }), false)), "device_ack_addr");
    assert_eq!(field(dev(Some(MmioTrigger { go_addr: 0x4010_0404, ..edu() }), false)), "device_go_addr");
    // A patched value that does not fit the 32-bit register write is refused on read.
    let mut out = patch(&img, &dev(Some(edu()), false)).unwrap();
    out[Field::DeviceTriggerValue.offset()..Field::DeviceTriggerValue.offset() + 8].copy_from_slice(&(1u64 << 32).to_le_bytes());
    assert!(matches!(read_params(&out), Err(GuestError::Invalid { field: "device_trigger_value", .. })));
}

#[test]
fn foreign_images_are_refused() {
    let mut img = fake_image();
    img[abi::HEADER_MAGIC_OFFSET] = 0;
    assert!(matches!(patch(&img, &Params::default()), Err(GuestError::NotAGuest(_))));
    let mut img = fake_image();
    img[Field::AbiVersion.offset()] = 9;
    assert!(matches!(read_params(&img), Err(GuestError::NotAGuest(m)) if m.contains("version 9")));
    assert!(matches!(patch(&[0u8; 16], &Params::default()), Err(GuestError::NotAGuest(_))));
}

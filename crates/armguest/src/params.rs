//! The loader's side of the parameter block: a typed [`Params`], validated and written into a
//! copy of the image by [`patch`], read back by [`read_params`]. Offsets and codes come from
//! [`crate::abi`] (the single definition the assembly is generated from).
use crate::abi::{self, Field};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GuestError {
    #[error("the arm64 guest image was not built: {0}")]
    NotBuilt(String),
    #[error("not an irqlab arm64 guest image: {0}")]
    NotAGuest(String),
    #[error("guest parameter `{field}`: {why}")]
    Invalid { field: &'static str, why: String },
}

/// The program the guest image executes (its `bench` slot): what runs inside the VM, not the
/// benchmark vocabulary of a result (`results::vocab::Bench`); `Spin` has no bench of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    Timer,
    Ipi,
    Spin,
    /// Wait for `samples` interrupts from a device (or, for bare-QEMU tests, the guest itself).
    Device(Device),
}

/// SPI trigger mode (GICD_ICFGR, IHI 0069 12.9.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Edge,
    /// KVM de-asserts a level SPI fed by an irqfd through its resamplefd when the guest EOIs.
    Level,
}

/// The interrupt the device bench waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceIrq {
    /// An SPI (32..=1019) the guest programs in the distributor, routed to vCPU 0.
    Spi { intid: u32, trigger: Trigger },
    /// An LPI (8192..=65535) the guest maps through the ITS at `gits_base`: `device_id`/`event_id`
    /// → `intid`, collection 0 on vCPU 0, its tables in the 1 MiB at `tables_addr`.
    Lpi { intid: u32, gits_base: u64, device_id: u32, event_id: u32, tables_addr: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    pub irq: DeviceIrq,
    /// The guest raises the interrupt itself (SPI: GICD_ISPENDR; LPI: GITS_TRANSLATER).
    pub self_trigger: bool,
    /// The guest makes a device raise the interrupt by an MMIO write (an assigned device).
    pub mmio: Option<MmioTrigger>,
}

/// A device the guest triggers with one 32-bit register write and (optionally) acknowledges
/// with another in its handler, e.g. QEMU's `edu` (hw/misc/edu.c: 0x60 raise, 0x64 ack).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmioTrigger {
    /// A u64 in guest RAM the guest waits on (non-zero = go) before its first write; 0 = none.
    pub go_addr: u64,
    pub trigger_addr: u64,
    pub trigger_value: u32,
    /// 0 = no acknowledge.
    pub ack_addr: u64,
    pub ack_value: u32,
}

/// How the guest waits: the shared vocabulary's word (`results::vocab::Wait`; its `Hlt` is WFI on
/// arm64, `wfi` its accepted name), encoded as `abi::WAIT_WFI` / `abi::WAIT_BUSY`.
pub use results::vocab::Wait;

/// The GIC generation the guest drives (the shared vocabulary's word): `V2` through GICC/GICD
/// MMIO, `V3` and the GICv4s through the system registers and redistributors.
pub use results::vocab::Gic;

/// Where the samples go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    Console,
    /// A ring at `ring_addr` of `ring_records` records, then the exit code at `exit_addr`.
    Memory {
        ring_addr: u64,
        ring_records: u64,
    },
}

/// Everything the loader sets. `Params::default()` is the image's built-in block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub bench: Program,
    pub wait: Wait,
    pub period_ticks: u64,
    pub samples: u64,
    pub warmup: u64,
    pub gicd_base: u64,
    pub gicr_base: u64,
    pub gicr_stride: u64,
    /// Which CPU interface the guest uses (`Gic::V2`: GICC at `gicc_base`).
    pub gic: Gic,
    /// GICv2's CPU interface (GICC) base; unused under GICv3 and later.
    pub gicc_base: u64,
    /// 0: no console.
    pub uart_base: u64,
    pub report: Report,
    /// 0: none.
    pub exit_addr: u64,
    /// IPI bench: the target vCPU's index ([`Field::IpiTarget`]), 1 to [`MAX_IPI_TARGET`].
    pub ipi_target: u64,
}

/// The largest IPI target index: Aff0 (16 per cluster) × Aff1 (8 bits) as the guest encodes it.
pub const MAX_IPI_TARGET: u64 = 16 * 256 - 1;

impl Default for Params {
    fn default() -> Self {
        let d = |f: Field| f.default_value();
        Params {
            bench: Program::Timer,
            wait: Wait::Hlt,
            period_ticks: d(Field::PeriodTicks),
            samples: d(Field::Samples),
            warmup: d(Field::Warmup),
            gicd_base: d(Field::GicdBase),
            gicr_base: d(Field::GicrBase),
            gicr_stride: d(Field::GicrStride),
            gic: Gic::V3,
            gicc_base: d(Field::GiccBase),
            uart_base: d(Field::UartBase),
            report: Report::Console,
            exit_addr: d(Field::ExitAddr),
            ipi_target: d(Field::IpiTarget),
        }
    }
}

fn invalid(field: &'static str, why: impl Into<String>) -> GuestError {
    GuestError::Invalid { field, why: why.into() }
}

impl Params {
    /// The values in field order, after validation.
    fn encode(&self) -> Result<Vec<(Field, u64)>, GuestError> {
        if self.samples == 0 {
            return Err(invalid("samples", "must be at least 1"));
        }
        if self.warmup >= self.samples && self.bench != Program::Spin {
            return Err(invalid("warmup", format!("{} must be below samples ({})", self.warmup, self.samples)));
        }
        if self.period_ticks == 0 {
            return Err(invalid("period_ticks", "must be at least 1"));
        }
        for (name, v) in [("gicd_base", self.gicd_base), ("gicr_base", self.gicr_base), ("uart_base", self.uart_base), ("exit_addr", self.exit_addr)] {
            if !v.is_multiple_of(8) {
                return Err(invalid(name, format!("{v:#x} is not 8-byte aligned (the guest runs with the MMU off)")));
            }
        }
        let gic = gic_code(self)?;
        if self.gicr_stride == 0 || !self.gicr_stride.is_multiple_of(0x1_0000) {
            return Err(invalid("gicr_stride", format!("{:#x} is not a non-zero multiple of 64 KiB", self.gicr_stride)));
        }
        let (report, ring_addr, ring_records) = match self.report {
            Report::Console => {
                if self.uart_base == 0 {
                    return Err(invalid("uart_base", "console report needs a UART"));
                }
                (abi::REPORT_CONSOLE, 0, 0)
            }
            Report::Memory { ring_addr, ring_records } => {
                if ring_addr == 0 || !ring_addr.is_multiple_of(16) {
                    return Err(invalid("ring_addr", format!("{ring_addr:#x} must be a non-zero 16-byte aligned address")));
                }
                if ring_records == 0 {
                    return Err(invalid("ring_records", "must be at least 1"));
                }
                if self.exit_addr == 0 {
                    return Err(invalid("exit_addr", "memory report needs an exit address"));
                }
                (abi::REPORT_MEMORY, ring_addr, ring_records)
            }
        };
        if !(1..=MAX_IPI_TARGET).contains(&self.ipi_target) {
            return Err(invalid("ipi_target", format!("{} is not a vCPU index from 1 to {MAX_IPI_TARGET}", self.ipi_target)));
        }
        let bench = match self.bench {
            Program::Timer => abi::BENCH_TIMER,
            Program::Ipi => abi::BENCH_IPI,
            Program::Spin => abi::BENCH_SPIN,
            Program::Device(_) => abi::BENCH_DEVICE,
        };
        let dev = device_fields(&self.bench)?;
        let wait = match self.wait {
            Wait::Hlt => abi::WAIT_WFI,
            Wait::Busy => abi::WAIT_BUSY,
        };
        Ok(Field::ALL
            .iter()
            .map(|&f| {
                let v = match f {
                    Field::Magic => abi::PARAMS_MAGIC,
                    Field::AbiVersion => abi::ABI_VERSION,
                    Field::Bench => bench,
                    Field::Wait => wait,
                    Field::PeriodTicks => self.period_ticks,
                    Field::Samples => self.samples,
                    Field::Warmup => self.warmup,
                    Field::GicdBase => self.gicd_base,
                    Field::GicrBase => self.gicr_base,
                    Field::GicrStride => self.gicr_stride,
                    Field::UartBase => self.uart_base,
                    Field::Report => report,
                    Field::RingAddr => ring_addr,
                    Field::RingRecords => ring_records,
                    Field::ExitAddr => self.exit_addr,
                    Field::IpiTarget => self.ipi_target,
                    Field::DeviceIntid => dev[0],
                    Field::DeviceTrigger => dev[1],
                    Field::GitsBase => dev[2],
                    Field::ItsDeviceId => dev[3],
                    Field::ItsEventId => dev[4],
                    Field::ItsTablesAddr => dev[5],
                    Field::DeviceSelfTrigger => dev[6],
                    Field::DeviceGoAddr => dev[7],
                    Field::DeviceTriggerAddr => dev[8],
                    Field::DeviceTriggerValue => dev[9],
                    Field::DeviceAckAddr => dev[10],
                    Field::DeviceAckValue => dev[11],
                    Field::GicVersion => gic,
                    Field::GiccBase => self.gicc_base,
                };
                (f, v)
            })
            .collect())
    }
}

/// The device fields: [`Field::ALL`] from `DeviceIntid` to `DeviceAckValue`.
fn device_field_list() -> &'static [Field] {
    &Field::ALL[Field::DeviceIntid as usize..=Field::DeviceAckValue as usize]
}

/// [`Field::GicVersion`]'s code for `p.gic`, with what GICv2 cannot do refused: the device
/// bench (GICD_IROUTER and LPIs are GICv3's), a GICC base that is not a 4 KiB-aligned frame.
fn gic_code(p: &Params) -> Result<u64, GuestError> {
    if p.gic != Gic::V2 {
        return Ok(abi::GIC_V3);
    }
    if matches!(p.bench, Program::Device(_)) {
        return Err(invalid("gic", "the device bench needs GICv3 or later (it routes its SPI with GICD_IROUTER and maps LPIs through the ITS); GICv2 runs timer, ipi and spin"));
    }
    if p.gicc_base == 0 || !p.gicc_base.is_multiple_of(0x1000) {
        return Err(invalid("gicc_base", format!("{:#x}: GICv2's CPU interface needs its non-zero 4 KiB-aligned base", p.gicc_base)));
    }
    Ok(abi::GIC_V2)
}

/// The device fields ([`device_field_list`] order), validated; the image defaults for the other
/// benches.
fn device_fields(bench: &Program) -> Result<[u64; 12], GuestError> {
    let Program::Device(dev) = bench else {
        let mut out = [0u64; 12];
        for (o, f) in out.iter_mut().zip(device_field_list()) {
            *o = f.default_value();
        }
        return Ok(out);
    };
    let irq = irq_fields(dev)?;
    let mmio = mmio_fields(dev)?;
    let mut out = [0u64; 12];
    out[..7].copy_from_slice(&irq);
    out[7..].copy_from_slice(&mmio);
    Ok(out)
}

/// The MMIO trigger's five fields, validated (zeros without one).
fn mmio_fields(dev: &Device) -> Result<[u64; 5], GuestError> {
    let Some(m) = dev.mmio else { return Ok([0; 5]) };
    if dev.self_trigger {
        return Err(invalid("device_trigger_addr", "an MMIO trigger and the GIC self-trigger exclude each other"));
    }
    if m.trigger_addr == 0 || !m.trigger_addr.is_multiple_of(4) {
        return Err(invalid("device_trigger_addr", format!("{:#x} must be a non-zero 4-byte aligned device register", m.trigger_addr)));
    }
    if !m.ack_addr.is_multiple_of(4) {
        return Err(invalid("device_ack_addr", format!("{:#x} is not 4-byte aligned", m.ack_addr)));
    }
    if !m.go_addr.is_multiple_of(8) {
        return Err(invalid("device_go_addr", format!("{:#x} is not 8-byte aligned", m.go_addr)));
    }
    Ok([m.go_addr, m.trigger_addr, m.trigger_value as u64, m.ack_addr, m.ack_value as u64])
}

/// The interrupt's seven fields, validated.
fn irq_fields(dev: &Device) -> Result<[u64; 7], GuestError> {
    let selft = dev.self_trigger as u64;
    match dev.irq {
        DeviceIrq::Spi { intid, trigger } => {
            if !(32..=1019).contains(&intid) {
                return Err(invalid("device_intid", format!("SPI {intid} is outside 32..=1019")));
            }
            let t = if trigger == Trigger::Level { abi::TRIGGER_LEVEL } else { abi::TRIGGER_EDGE };
            Ok([intid as u64, t, 0, 0, 0, 0, selft])
        }
        DeviceIrq::Lpi { intid, gits_base, device_id, event_id, tables_addr } => {
            let intid = intid as u64;
            if !(abi::LPI_BASE..abi::LPI_LIMIT).contains(&intid) {
                return Err(invalid("device_intid", format!("LPI {intid} is outside {}..{} (the guest's LPI tables cover 16 INTID bits)", abi::LPI_BASE, abi::LPI_LIMIT)));
            }
            if gits_base == 0 || !gits_base.is_multiple_of(0x1_0000) {
                return Err(invalid("gits_base", format!("{gits_base:#x}: an LPI needs the ITS's 64 KiB-aligned base")));
            }
            if tables_addr == 0 || !tables_addr.is_multiple_of(0x1_0000) {
                return Err(invalid("its_tables_addr", format!("{tables_addr:#x} must be a non-zero 64 KiB-aligned address of {} bytes of RAM", abi::ITS_TABLES_SIZE)));
            }
            if event_id as u64 >= 1 << abi::ITS_EVENT_BITS {
                return Err(invalid("its_event_id", format!("{event_id} does not fit the guest's ITT ({} EventID bits)", abi::ITS_EVENT_BITS)));
            }
            if device_id >= 1 << 16 {
                return Err(invalid("its_device_id", format!("{device_id} is above the 16 DeviceID bits KVM's vITS and QEMU's ITS offer")));
            }
            Ok([intid, abi::TRIGGER_EDGE, gits_base, device_id as u64, event_id as u64, tables_addr, selft])
        }
    }
}

fn device_from(g: &dyn Fn(Field) -> u64) -> Result<Device, GuestError> {
    let self_trigger = match g(Field::DeviceSelfTrigger) {
        0 => false,
        1 => true,
        v => return Err(invalid("device_self_trigger", format!("{v} is not 0 or 1"))),
    };
    let intid = g(Field::DeviceIntid);
    let small = |f: Field, name: &'static str| u32::try_from(g(f)).map_err(|_| invalid(name, format!("{:#x} does not fit 32 bits", g(f))));
    let irq = if intid >= abi::LPI_BASE {
        DeviceIrq::Lpi {
            intid: small(Field::DeviceIntid, "device_intid")?,
            gits_base: g(Field::GitsBase),
            device_id: small(Field::ItsDeviceId, "its_device_id")?,
            event_id: small(Field::ItsEventId, "its_event_id")?,
            tables_addr: g(Field::ItsTablesAddr),
        }
    } else {
        let trigger = match g(Field::DeviceTrigger) {
            abi::TRIGGER_EDGE => Trigger::Edge,
            abi::TRIGGER_LEVEL => Trigger::Level,
            v => return Err(invalid("device_trigger", format!("unknown code {v}"))),
        };
        DeviceIrq::Spi { intid: intid as u32, trigger }
    };
    let mmio = match g(Field::DeviceTriggerAddr) {
        0 => None,
        trigger_addr => {
            let small = |f: Field, name: &'static str| u32::try_from(g(f)).map_err(|_| invalid(name, format!("{:#x} does not fit 32 bits", g(f))));
            Some(MmioTrigger {
                go_addr: g(Field::DeviceGoAddr),
                trigger_addr,
                trigger_value: small(Field::DeviceTriggerValue, "device_trigger_value")?,
                ack_addr: g(Field::DeviceAckAddr),
                ack_value: small(Field::DeviceAckValue, "device_ack_value")?,
            })
        }
    };
    let dev = Device { irq, self_trigger, mmio };
    device_fields(&Program::Device(dev))?;
    Ok(dev)
}

fn u64_at(image: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(image[off..off + 8].try_into().expect("8 bytes"))
}

/// Checks the Image header and the parameter block's magic and ABI version.
fn check_image(image: &[u8]) -> Result<(), GuestError> {
    if image.len() < abi::PARAMS_OFFSET + abi::PARAMS_SIZE {
        return Err(GuestError::NotAGuest(format!("{} bytes is shorter than the header and parameter block", image.len())));
    }
    let magic = u32::from_le_bytes(image[abi::HEADER_MAGIC_OFFSET..abi::HEADER_MAGIC_OFFSET + 4].try_into().expect("4 bytes"));
    if magic != abi::HEADER_MAGIC {
        return Err(GuestError::NotAGuest(format!("no Linux arm64 Image magic at {:#x}", abi::HEADER_MAGIC_OFFSET)));
    }
    if u64_at(image, Field::Magic.offset()) != abi::PARAMS_MAGIC {
        return Err(GuestError::NotAGuest(format!("no parameter block magic at {:#x}", Field::Magic.offset())));
    }
    let v = u64_at(image, Field::AbiVersion.offset());
    if v != abi::ABI_VERSION {
        return Err(GuestError::NotAGuest(format!("parameter ABI version {v}, this loader knows {}", abi::ABI_VERSION)));
    }
    Ok(())
}

/// A copy of `image` with `params` written into its parameter block.
pub fn patch(image: &[u8], params: &Params) -> Result<Vec<u8>, GuestError> {
    check_image(image)?;
    let mut out = image.to_vec();
    for (f, v) in params.encode()? {
        out[f.offset()..f.offset() + 8].copy_from_slice(&v.to_le_bytes());
    }
    Ok(out)
}

/// The parameter block of an image, decoded.
pub fn read_params(image: &[u8]) -> Result<Params, GuestError> {
    check_image(image)?;
    let g = |f: Field| u64_at(image, f.offset());
    let bench = match g(Field::Bench) {
        abi::BENCH_TIMER => Program::Timer,
        abi::BENCH_IPI => Program::Ipi,
        abi::BENCH_SPIN => Program::Spin,
        abi::BENCH_DEVICE => Program::Device(device_from(&g)?),
        v => return Err(invalid("bench", format!("unknown code {v}"))),
    };
    let wait = match g(Field::Wait) {
        abi::WAIT_WFI => Wait::Hlt,
        abi::WAIT_BUSY => Wait::Busy,
        v => return Err(invalid("wait", format!("unknown code {v}"))),
    };
    let gic = match g(Field::GicVersion) {
        abi::GIC_V2 => Gic::V2,
        abi::GIC_V3 => Gic::V3,
        v => return Err(invalid("gic", format!("unknown code {v} (2 or 3)"))),
    };
    let report = match g(Field::Report) {
        abi::REPORT_CONSOLE => Report::Console,
        abi::REPORT_MEMORY => Report::Memory { ring_addr: g(Field::RingAddr), ring_records: g(Field::RingRecords) },
        v => return Err(invalid("report", format!("unknown code {v}"))),
    };
    Ok(Params {
        bench,
        wait,
        period_ticks: g(Field::PeriodTicks),
        samples: g(Field::Samples),
        warmup: g(Field::Warmup),
        gicd_base: g(Field::GicdBase),
        gicr_base: g(Field::GicrBase),
        gicr_stride: g(Field::GicrStride),
        gic,
        gicc_base: g(Field::GiccBase),
        uart_base: g(Field::UartBase),
        report,
        exit_addr: g(Field::ExitAddr),
        ipi_target: g(Field::IpiTarget),
    })
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;

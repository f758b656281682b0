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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bench {
    Timer,
    Ipi,
    Spin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    Wfi,
    Busy,
}

/// Where the samples go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    Console,
    /// A ring at `ring_addr` of `ring_records` records, then the exit code at `exit_addr`.
    Memory { ring_addr: u64, ring_records: u64 },
}

/// Everything the loader sets. `Params::default()` is the image's built-in block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub bench: Bench,
    pub wait: Wait,
    pub period_ticks: u64,
    pub samples: u64,
    pub warmup: u64,
    pub gicd_base: u64,
    pub gicr_base: u64,
    pub gicr_stride: u64,
    /// 0: no console.
    pub uart_base: u64,
    pub report: Report,
    /// 0: none.
    pub exit_addr: u64,
}

impl Default for Params {
    fn default() -> Self {
        let d = |f: Field| f.default_value();
        Params {
            bench: Bench::Timer,
            wait: Wait::Wfi,
            period_ticks: d(Field::PeriodTicks),
            samples: d(Field::Samples),
            warmup: d(Field::Warmup),
            gicd_base: d(Field::GicdBase),
            gicr_base: d(Field::GicrBase),
            gicr_stride: d(Field::GicrStride),
            uart_base: d(Field::UartBase),
            report: Report::Console,
            exit_addr: d(Field::ExitAddr),
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
        if self.warmup >= self.samples && self.bench != Bench::Spin {
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
        let bench = match self.bench {
            Bench::Timer => abi::BENCH_TIMER,
            Bench::Ipi => abi::BENCH_IPI,
            Bench::Spin => abi::BENCH_SPIN,
        };
        let wait = match self.wait {
            Wait::Wfi => abi::WAIT_WFI,
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
                };
                (f, v)
            })
            .collect())
    }
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
        abi::BENCH_TIMER => Bench::Timer,
        abi::BENCH_IPI => Bench::Ipi,
        abi::BENCH_SPIN => Bench::Spin,
        v => return Err(invalid("bench", format!("unknown code {v}"))),
    };
    let wait = match g(Field::Wait) {
        abi::WAIT_WFI => Wait::Wfi,
        abi::WAIT_BUSY => Wait::Busy,
        v => return Err(invalid("wait", format!("unknown code {v}"))),
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
        uart_base: g(Field::UartBase),
        report,
        exit_addr: g(Field::ExitAddr),
    })
}

#[cfg(test)]
mod tests {
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
        let p = Params { bench: Bench::Ipi, wait: Wait::Busy, samples: 10, warmup: 2, period_ticks: 999, report: Report::Memory { ring_addr: 0x4100_0000, ring_records: 32 }, exit_addr: 0x0900_0000, ..Params::default() };
        let out = patch(&img, &p).unwrap();
        assert_eq!(read_params(&out).unwrap(), p);
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
}

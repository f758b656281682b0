//! The built image carries what abi.rs says, at the offsets abi.rs says.
use armguest::abi::{self, Field};

fn image() -> Option<&'static [u8]> {
    match armguest::image() {
        Ok(i) => Some(i),
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIP: {e}");
            None
        }
        Err(e) => panic!("CI is set and the guest image is missing: {e}"),
    }
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

#[test]
fn header_and_defaults_match_abi() {
    let Some(img) = image() else { return };
    assert_eq!(&img[abi::HEADER_MAGIC_OFFSET..abi::HEADER_MAGIC_OFFSET + 4], b"ARM\x64");
    assert_eq!(u64_at(img, abi::HEADER_TEXT_OFFSET_OFFSET), abi::TEXT_OFFSET);
    assert_eq!(u64_at(img, abi::HEADER_IMAGE_SIZE_OFFSET), img.len() as u64, "image_size = file size (no bss)");
    // code0 is a branch (B: 0b000101 in bits 31:26) past the parameter block.
    let code0 = u32::from_le_bytes(img[0..4].try_into().unwrap());
    assert_eq!(code0 >> 26, 0b000101);
    assert!((code0 & 0x03ff_ffff) as usize * 4 >= abi::PARAMS_OFFSET + abi::PARAMS_SIZE);
    for f in Field::ALL {
        assert_eq!(u64_at(img, f.offset()), f.default_value(), "{f:?} at {:#x}", f.offset());
    }
    assert_eq!(armguest::read_params(img).unwrap(), armguest::Params::default());
}

#[test]
fn image_is_small_and_page_aligned_data() {
    let Some(img) = image() else { return };
    assert!(img.len() < 64 * 1024, "{} bytes", img.len());
    assert_eq!(img.len() % 8, 0);
}

#[test]
fn console_format_strings_are_in_the_image() {
    let Some(img) = image() else { return };
    let text = String::from_utf8_lossy(img);
    for s in ["@irqlab v1 ", "start bench=", "end samples=", " lost=", " warm_max=", "sum ", "device", "error its="] {
        assert!(text.contains(s), "missing {s:?}");
    }
}

//! The built image carries what abi.rs says, at the offsets abi.rs says. The image is built only
//! where the aarch64 cross binutils are (`needs_arm_guest`: ignored with the reason, run by
//! scripts/test.sh where they are, a failure with CI set where they are not).
use armguest::abi::{self, Field};

fn image() -> &'static [u8] {
    testkit::require(testkit::Resource::ArmGuest);
    armguest::image().unwrap_or_else(|e| panic!("the aarch64 binutils are here but the guest image was not built: {e}"))
}

mod needs_arm_guest {
    use super::*;

    fn u64_at(b: &[u8], off: usize) -> u64 {
        u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
    }

    #[test]
    #[ignore = "needs the aarch64 cross binutils (the armguest image): scripts/test.sh runs it where they are"]
    fn header_and_defaults_match_abi() {
        testkit::require(testkit::Resource::ArmGuest);
        let img = image();
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
    #[ignore = "needs the aarch64 cross binutils (the armguest image): scripts/test.sh runs it where they are"]
    fn symbols_name_the_vectors_and_dispatch_labels_inside_the_image() {
        let img = image();
        let syms = armguest::symbols().unwrap();
        let addr = |name: &str| {
            syms.lines()
                .find_map(|l| l.strip_suffix(&format!(" {name}")).and_then(|a| u64::from_str_radix(a.split_whitespace().next()?, 16).ok()))
                .unwrap_or_else(|| panic!("no {name} in:\n{syms}"))
        };
        let v = addr("vectors");
        assert_eq!(v % 0x800, 0, "VBAR_EL1 needs 2 KiB alignment");
        // The IRQ entries (current EL, SP0 and SPx) branch to irq_entry: B with a forward offset.
        for entry in [v + 0x80, v + 0x280] {
            let op = u32::from_le_bytes(img[entry as usize..entry as usize + 4].try_into().unwrap());
            assert_eq!(op >> 26, 0b000101, "a branch at {entry:#x}");
            assert_eq!(entry + u64::from(op & 0x03ff_ffff) * 4, addr("irq_entry"));
        }
        for label in ["irq_timer", "irq_ping", "irq_pong", "irq_device"] {
            assert!(addr(label) < img.len() as u64, "{label} inside the image");
        }
    }

    #[test]
    #[ignore = "needs the aarch64 cross binutils (the armguest image): scripts/test.sh runs it where they are"]
    fn image_is_small_and_page_aligned_data() {
        testkit::require(testkit::Resource::ArmGuest);
        let img = image();
        assert!(img.len() < 64 * 1024, "{} bytes", img.len());
        assert_eq!(img.len() % 8, 0);
    }

    #[test]
    #[ignore = "needs the aarch64 cross binutils (the armguest image): scripts/test.sh runs it where they are"]
    fn console_format_strings_are_in_the_image() {
        testkit::require(testkit::Resource::ArmGuest);
        let img = image();
        let text = String::from_utf8_lossy(img);
        for s in ["@irqlab v1 ", "start bench=", "end samples=", " lost=", " warm_max=", "sum ", "device", "error its="] {
            assert!(text.contains(s), "missing {s:?}");
        }
    }
}

//! The platform profile reader on arbitrary text: an error or a profile, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(p) = sim::platform::Platform::parse(text, "fuzz.toml") {
        let _ = p.describe();
        let _ = p.has_calibrated();
    }
});

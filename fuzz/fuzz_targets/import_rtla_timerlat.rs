//! `irqlab import rtla-timerlat` on arbitrary bytes and on a structurally valid file built from them: see common/import.rs.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common/import.rs"]
mod import;

fuzz_target!(|data: &[u8]| {
    import::check("rtla-timerlat", data);
    import::check_generated("rtla-timerlat", data);
});

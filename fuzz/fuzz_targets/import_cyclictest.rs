//! `irqlab import cyclictest` on arbitrary bytes and on a structurally valid file (JSON or -h text) built from them: see common/import.rs.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common/import.rs"]
mod import;

fuzz_target!(|data: &[u8]| {
    import::check("cyclictest", data);
    // its two layouts: --json, and the -h text
    import::check_generated(if data.first().is_some_and(|b| b & 1 == 1) { "cyclictest-text" } else { "cyclictest" }, data.get(1..).unwrap_or(&[]));
});

//! `irqlab import tscdeadline` on arbitrary bytes: see common/import.rs for what is checked.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common/import.rs"]
mod import;

fuzz_target!(|data: &[u8]| import::check("tscdeadline", data));

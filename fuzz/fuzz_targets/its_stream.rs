//! `irqlab its-check` on arbitrary text: the ITS command-stream script reader, then the GICv3/v4
//! model run over whatever parsed (raw 32-byte commands included) and its JSON report: an error or
//! a report, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sim::arch::arm::gicv4::{check, script};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(s) = script::parse(&text) {
        let report = check::run(&s);
        let _ = serde_json::to_string(&report).expect("a report always serialises");
    }
});

//! Arbitrary bytes → the `irqlab its-check` text parser and the ITS/GICv4 model: nothing may
//! panic. Inputs that parse are run through the checker; raw 32-byte chunks are also fed to
//! the command queue of a GICv4.0 and a GICv4.1 system as commands.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sim::arch::arm::gicv4::{check, script, GicConfig, GicSystem};
use sim::arch::arm::its::ItsVersion;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(s) = script::parse(&text) {
        let report = check::run(&s);
        let _ = serde_json::to_string(&report).expect("a report always serialises");
    }
    for version in [ItsVersion::V4_0, ItsVersion::V4_1] {
        let mut gic = GicSystem::new(GicConfig { version, cpus: 2, ..GicConfig::default() });
        for c in data.chunks_exact(32).take(64) {
            let w = |i: usize| u64::from_le_bytes(c[i * 8..i * 8 + 8].try_into().unwrap());
            let _ = gic.submit(0, [w(0), w(1), w(2), w(3)]);
            let _ = gic.translate(0, w(0) as u32 >> 16, w(1) as u32 & 0xff);
        }
        let _ = check::mappings(&gic);
    }
});

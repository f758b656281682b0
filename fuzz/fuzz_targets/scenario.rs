//! The scenario reader on arbitrary text: parse, expand the points, resolve each point's platform
//! and prepare its model (without running it). An error or prepared points, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sim::model::{find_model, PointCtx};
use sim::scenario::Scenario;

/// Points the document asks for (configurations × sweep values), or None past `limit`: the
/// harness does not expand sweeps the scenario layer would refuse anyway.
fn points_within(doc: &toml::Table, limit: u64) -> bool {
    let configs = doc.get("configs").and_then(|c| c.as_array()).map_or(1, |a| a.len().max(1) as u64);
    let mut n = configs;
    if let Some(sweep) = doc.get("sweep").and_then(|s| s.as_table()) {
        for v in sweep.values() {
            let len = v.as_array().map_or(1, |a| a.len() as u64);
            match n.checked_mul(len) {
                Some(m) => n = m,
                None => return false,
            }
        }
    }
    n <= limit
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(sc) = Scenario::parse(text, "fuzz.toml", "fuzz", None) else { return };
    if !points_within(&sc.doc, 64) {
        return;
    }
    // A profile named by path would make the fuzzer read this machine's files.
    let by_path = |doc: &toml::Table| {
        doc.get("platform").and_then(|p| p.get("profile")).and_then(|p| p.as_str()).is_some_and(|p| p.ends_with(".toml"))
    };
    let Some(model) = find_model(&sc.header.model) else { return };
    for p in sc.points(sc.header.seed) {
        let Ok(doc) = &p.doc else { continue };
        if by_path(doc) {
            continue;
        }
        let Ok(platform) = sc.platform(doc) else { continue };
        let ctx = PointCtx { file: &sc.file, point_name: &p.name, doc, platform: &platform, seed: p.seed };
        if let Ok(prepared) = model.prepare(&ctx) {
            let _ = prepared.work();
        }
    }
});

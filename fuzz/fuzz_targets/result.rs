//! The result reader on arbitrary text: parse, decode every histogram and compute what `report`
//! computes from it (quantiles, the recorded buckets of the CDF), and check that whatever was
//! read writes back to a file that reads again (irqlab never writes a result it cannot read).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(r) = results::from_json_str(text, "fuzz.json") else { return };
    for c in &r.configs {
        for (class, l) in &c.classes {
            let Ok(h) = l.histogram(class) else { continue };
            let n = h.len();
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
                let _ = h.value_at_quantile(q);
            }
            let mut seen = 0u64;
            for v in h.iter_recorded() {
                seen = seen.saturating_add(v.count_at_value());
                let _ = v.quantile();
            }
            let _ = (n, seen, h.mean(), h.min(), h.max());
        }
    }
    let _ = results::to_csv(&r);
    let again = results::to_json_string(&r);
    if let Err(e) = results::from_json_str(&again, "rewritten.json") {
        panic!("a result irqlab read does not read back after writing: {e}");
    }
});

//! What every import fuzz target checks (issue 27): an importer given arbitrary bytes — as one
//! file, or split at the first U+00FF (ÿ) into two files (the repetitions path) — either refuses
//! with an error that names the file, or returns a result that keeps the invariants the rest of
//! irqlab relies on: every configuration has a class, every class has samples behind it, its
//! percentiles are ordered inside [min, max], and the result writes to JSON and CSV and reads back.
//!
//! Issue 36: each target also builds a structurally valid file of its format from the same bytes
//! (`crates/import/tests/gen`, shared with the proptest of `tests/import_gen.rs`), with at most
//! one contradiction, so the semantic checks are reached: a valid file must import with exactly
//! the generated count, min and max; a contradicting one must be refused naming the file.
use import::{import_files, ImportError, ImportOptions};

#[path = "../../../crates/import/tests/gen/mod.rs"]
#[allow(dead_code)]
mod gen;

/// The generated file of `which` (a `gen::FORMATS` name) from `data`, imported and checked.
pub fn check_generated(which: &str, data: &[u8]) {
    let g = gen::generate(which, &mut gen::Src::new(data));
    if let Err(e) = gen::check(which, &g) {
        panic!("{e}");
    }
}

pub fn check(format: &str, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let files: Vec<(String, String)> = match text.split_once('\u{FF}') {
        Some((a, b)) => vec![("a.txt".into(), a.into()), ("b.txt".into(), b.into())],
        None => vec![("a.txt".into(), text.into())],
    };
    let opts = ImportOptions {
        tsc_ghz: Some(2.5),
        board: Some("fuzz-board".into()),
        params: vec![("xen.sched".into(), "credit2".into())],
        // cyclictest's -h text needs its unit; the other formats refuse a contradicting one only.
        unit: if format == "cyclictest" && !text.trim_start().starts_with('{') { Some(import::LatencyUnit::Us) } else { None },
    };
    let r = match import_files(format, &files, &opts, "fuzz") {
        Ok(r) => r,
        Err(e) => {
            let msg = e.to_string();
            if let ImportError::UnknownFormat(..) = e {
                panic!("the format table lost {format}: {msg}");
            }
            assert!(msg.contains("a.txt") || msg.contains("b.txt"), "an import error that names no file: {msg}");
            return;
        }
    };
    assert!(!r.configs.is_empty(), "an import that succeeded with no configuration");
    for c in &r.configs {
        assert!(!c.classes.is_empty() || !c.figures.is_empty(), "{}: a configuration with nothing in it", c.name);
        for (name, l) in &c.classes {
            let s = &l.summary;
            assert!(s.count > 0, "{}/{name}: a class with no samples", c.name);
            for (what, p) in [("p50", s.p50), ("p90", s.p90), ("p99", s.p99), ("p99.9", s.p999), ("p99.99", s.p9999)] {
                assert!(s.min <= p && p <= s.max, "{}/{name}: {what} {p} outside [{}, {}]", c.name, s.min, s.max);
            }
            assert!(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.p9999, "{}/{name}: percentiles out of order: {s:?}", c.name);
            assert!(s.mean.is_finite(), "{}/{name}: mean {}", c.name, s.mean);
        }
    }
    // Writing the result (the histograms' V2 + deflate encoding) costs ten times the parse, so
    // one input in eight — chosen by its length, hence the same input always — is written and
    // read back; the invariants above hold for every input.
    if data.len() % 8 == 0 {
        let _ = results::to_csv(&r);
        let json = results::to_json_string(&r);
        if let Err(e) = results::from_json_str(&json, "rewritten.json") {
            panic!("an imported result does not read back after writing: {e}");
        }
    }
}

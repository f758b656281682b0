//! Hostile result files and hostile output targets: bounded decoding, non-finite figures that read
//! back, and atomic writes that never replace what they should write through.

use base64::Engine as _;
use proptest::prelude::*;
use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};

fn sample() -> RunResult {
    let mut r = RunResult::new(RunMeta::named("irqlab test", "s", 1, ResultKind::Predicted));
    let mut c = ConfigResult::new("a");
    let mut rec = LatencyRecorder::new(0);
    rec.record(1000);
    c.classes.insert("timer".into(), rec.finish());
    r.configs.push(c);
    r
}

/// An uncompressed HDR V2 header: 40 bytes, 56 characters of base64.
fn v2_header(payload_len: u32, digits: u32, low: u64, high: u64) -> String {
    let mut b = Vec::new();
    b.extend_from_slice(&(0x1c84_9303u32 | 0x10).to_be_bytes());
    b.extend_from_slice(&payload_len.to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b.extend_from_slice(&digits.to_be_bytes());
    b.extend_from_slice(&low.to_be_bytes());
    b.extend_from_slice(&high.to_be_bytes());
    b.extend_from_slice(&1.0f64.to_be_bytes());
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn with_histogram(h: String) -> String {
    let mut r = sample();
    r.configs[0].classes.get_mut("timer").unwrap().histogram = h;
    results::to_json_string(&r)
}

#[test]
fn crafted_56_character_histogram_is_refused_without_allocating_its_payload() {
    let h = v2_header(u32::MAX, 3, 1, 1000);
    assert_eq!(h.len(), 56);
    let e = results::from_json_str(&with_histogram(h), "crafted.json").unwrap_err().to_string();
    assert!(e.starts_with("crafted.json") && e.contains("declares a 4294967295-byte payload"), "{e}");
}

#[test]
fn crafted_range_is_refused() {
    for (digits, low, high) in [(3, 1, u64::MAX), (5, 1, 1000), (3, 0, 1000)] {
        let e = results::from_json_str(&with_histogram(v2_header(0, digits, low, high)), "r.json").unwrap_err().to_string();
        assert!(e.contains("expected within 1..100000000000"), "{e}");
    }
}

#[test]
fn histogram_that_inflates_past_the_bound_is_refused() {
    // A deflate bomb: 16 MiB of zeros compress to a few KB.
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let mut inner = base64::engine::general_purpose::STANDARD.decode(v2_header(16 << 20, 3, 1, 1000)).unwrap();
    inner.resize(40 + (16 << 20), 0);
    z.write_all(&inner).unwrap();
    let deflated = z.finish().unwrap();
    let mut b = (0x1c84_9304u32 | 0x10).to_be_bytes().to_vec();
    b.extend_from_slice(&(deflated.len() as u32).to_be_bytes());
    b.extend_from_slice(&deflated);
    let h = base64::engine::general_purpose::STANDARD.encode(b);
    let e = results::from_json_str(&with_histogram(h), "bomb.json").unwrap_err().to_string();
    assert!(e.contains("inflates to more than"), "{e}");
}

#[test]
fn non_finite_figures_are_written_so_that_they_read_back() {
    let mut r = sample();
    r.configs[0].set_figure("nan", f64::NAN, "x");
    r.configs[0].set_figure("inf", f64::INFINITY, "x");
    r.configs[0].set_figure("ninf", f64::NEG_INFINITY, "x");
    let s = results::to_json_string(&r);
    assert!(!s.contains("null"), "{s}");
    let back = results::from_json_str(&s, "nan.json").unwrap();
    let f = &back.configs[0].figures;
    assert!(f["nan"].value.is_nan());
    assert_eq!(f["inf"].value, f64::INFINITY);
    assert_eq!(f["ninf"].value, f64::NEG_INFINITY);
    assert_eq!(results::to_json_string(&back), s, "stable");
}

#[test]
fn write_atomic_writes_through_a_symlink_and_refuses_a_directory() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.html");
    std::fs::write(&real, "old").unwrap();
    let link = d.path().join("link.html");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    results::write_atomic(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");

    let sub = d.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let e = results::write_atomic(&sub, b"x").unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
    let mut names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["link.html", "real.html", "sub"], "no temporary file left behind");
}

#[test]
fn write_atomic_writes_into_a_device_in_place() {
    results::write_atomic(std::path::Path::new("/dev/null"), b"x").unwrap();
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file(), "/dev/null is still a device");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Arbitrary bytes: an error or a result, never a panic; what reads also writes back readably.
    #[test]
    fn reader_survives_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        match results::from_json_str(&text, "p.json") {
            // What is read writes back to the same text, and is read again the same.
            Ok(r) => {
                let json = results::to_json_string(&r);
                let again = results::from_json_str(&json, "again.json").unwrap();
                prop_assert_eq!(results::to_json_string(&again), json);
            }
            // A refusal names the file.
            Err(e) => prop_assert!(e.to_string().contains("p.json"), "{e}"),
        }
    }

}

/// Mutations of a real result (one byte changed) are handled the same way; every error names
/// the file, and the cases are counted: those still JSON reach the result checks (schema,
/// histograms, traces) rather than dying in the JSON parser.
#[test]
fn reader_survives_mutated_results() {
    use proptest::test_runner::{TestCaseError, TestRunner};
    let (cases, reached, errors) = (std::cell::Cell::new(0), std::cell::Cell::new(0), std::cell::Cell::new(0));
    let mut runner = TestRunner::new(ProptestConfig::with_cases(256));
    runner
        .run(&(0usize..4096, any::<u8>()), |(at, byte)| {
            let mut s = results::to_json_string(&sample()).into_bytes();
            let i = at % s.len();
            s[i] = byte;
            let text = String::from_utf8_lossy(&s);
            cases.set(cases.get() + 1);
            if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
                reached.set(reached.get() + 1);
            }
            match results::from_json_str(&text, "m.json") {
                Ok(r) => {
                    for (class, l) in &r.configs[0].classes {
                        let _ = l.histogram(class);
                    }
                }
                Err(e) => {
                    errors.set(errors.get() + 1);
                    let m = e.to_string();
                    if !m.starts_with("m.json: ") {
                        return Err(TestCaseError::fail(format!("error does not name the file: {m}")));
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    eprintln!("{} cases, {} reached the result checks, {} errors", cases.get(), reached.get(), errors.get());
    // Measured: about 30 % of random one-byte changes leave valid JSON (most bytes of a result
    // sit in base64 histograms and in structure); a fifth is the floor that catches a collapse.
    assert!(reached.get() * 5 >= cases.get(), "a fifth of one-byte mutations are still JSON and reach the checks");
    assert!(errors.get() * 10 >= cases.get(), "and some are refused");
}

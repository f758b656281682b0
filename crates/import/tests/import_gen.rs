//! Issue 36: the importers on structurally valid files of each format (`gen/mod.rs`), so the
//! semantic checks are reached and not only the first syntax error: a valid file imports with
//! exactly the generated count, min and max per class; a file with one contradiction (a mean
//! outside [min, max], a bucket beyond the stated max, a key, column or row given twice, a second
//! JSON document, NaN, ±inf, 1e400, min > max, a missing or contradicting unit, a wrapping
//! sample, a warm-up covering the run) is refused naming the file and the contradiction.
//! `IRQLAB_GEN_CASES` sets the cases per format (default 2,000; BENCHMARKS.md has a long run).
use proptest::prelude::*;

mod gen;

fn cases() -> u32 {
    std::env::var("IRQLAB_GEN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
}

macro_rules! generated {
    ($test:ident, $which:expr) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn $test(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
                let g = gen::generate($which, &mut gen::Src::new(&bytes));
                if let Err(e) = gen::check($which, &g) {
                    return Err(TestCaseError::fail(e));
                }
            }
        }
    };
}

generated!(generated_fio, "fio");
generated!(generated_cyclictest_json, "cyclictest");
generated!(generated_cyclictest_text, "cyclictest-text");
generated!(generated_rtla, "rtla-timerlat");
generated!(generated_tscdeadline, "tscdeadline");
generated!(generated_ipi_bench, "ipi-bench");
generated!(generated_tbm, "tbm");
generated!(generated_bench_console, "bench-console");

/// Every generator reaches both outcomes: valid files and each kind of contradiction.
#[test]
fn generators_make_valid_and_contradicting_files() {
    for which in gen::FORMATS {
        let (mut ok, mut refused) = (0, std::collections::BTreeSet::new());
        for seed in 0..3000u32 {
            let bytes: Vec<u8> = (0..64u32).map(|i| (seed.wrapping_mul(2654435761).wrapping_add(i.wrapping_mul(40503)) >> 7) as u8).collect();
            match gen::generate(which, &mut gen::Src::new(&bytes)).expect {
                gen::Expect::Ok(_) => ok += 1,
                gen::Expect::Refused(why) => {
                    refused.insert(why);
                }
            }
        }
        assert!(ok > 0 && refused.len() >= 2, "{which}: {ok} valid, contradictions {refused:?}");
    }
}

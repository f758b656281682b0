//! Arbitrary bytes through the scenario and profile readers, a small count in every test run
//! (the long runs are the cargo-fuzz targets in `fuzz/`; the result reader's proptest is in
//! `crates/results/tests/hostile.rs`): an error or a value, never a panic.
use proptest::prelude::*;
use sim::platform::Platform;
use sim::scenario::Scenario;

const DEMO: &str = include_str!("../../../scenarios/demo-timer-inject.toml");
const PROFILE: &str = include_str!("../../sim/platforms/demo-arm64-a53.toml");

/// Parse, expand and prepare every point (the checks `irqlab sim` makes before running).
fn read_scenario(text: &str) {
    let Ok(mut sc) = Scenario::parse(text, "p.toml", "p", None) else { return };
    sc.max_points = 16;
    let _ = sim::runner::validate_scenario(&sc, None);
}

/// `text` with `len` bytes at `at` replaced by `with` (on char boundaries).
fn mutate(text: &str, at: usize, len: usize, with: &str) -> String {
    let mut i = at % text.len();
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    let mut j = (i + len).min(text.len());
    while !text.is_char_boundary(j) {
        j += 1;
    }
    format!("{}{}{}", &text[..i], with, &text[j..])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn scenario_reader_survives_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        read_scenario(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn scenario_reader_survives_mutations(at in 0usize..2000, len in 0usize..8, with in "[-0-9a-z.=\\[\\]\"\n ]{0,8}") {
        read_scenario(&mutate(DEMO, at, len, &with));
    }

    #[test]
    fn profile_reader_survives_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = Platform::parse(&String::from_utf8_lossy(&bytes), "p.toml");
    }

    #[test]
    fn profile_reader_survives_mutations(at in 0usize..4000, len in 0usize..8, with in "[-0-9a-z.=\\[\\]\"\n ]{0,8}") {
        if let Ok(p) = Platform::parse(&mutate(PROFILE, at, len, &with), "p.toml") {
            let _ = p.describe();
        }
    }
}

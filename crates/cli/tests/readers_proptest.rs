//! Arbitrary bytes through the scenario and profile readers, a small count in every test run
//! (the long runs are the cargo-fuzz targets in `fuzz/`; the result reader's proptest is in
//! `crates/results/tests/hostile.rs`): an error or a value, never a panic; every error names the
//! file (and, past the TOML parser, the key); each property counts how many of its cases reach
//! validation rather than dying in the parser, and fails when too few do.
use std::cell::RefCell;

use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use sim::platform::Platform;
use sim::scenario::Scenario;

const DEMO: &str = include_str!("../../../scenarios/demo-timer-inject.toml");
const PROFILE: &str = include_str!("../../sim/platforms/demo-arm64-a53.toml");

/// How far the cases of one property got: parsed as TOML (reached validation) or not, and how
/// many ended in an error. A property whose cases all die in the TOML parser tests the parser,
/// not irqlab's checks; the counts make that visible and the bounds below make it fail.
#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    reached_validation: usize,
    errors: usize,
}

/// Every error names the file; one raised after parsing also names the key, table or value at
/// fault (a backquoted name or a `[section]`).
fn check_message(m: &str, parsed: bool) -> Result<(), TestCaseError> {
    prop_assert!(m.contains("p.toml"), "error does not name the file: {m}");
    if parsed {
        prop_assert!(m.contains('`') || m.contains('['), "error does not name the key: {m}");
    }
    Ok(())
}

/// Parse, expand and prepare every point (the checks `irqlab sim` makes before running).
fn read_scenario(text: &str, t: &RefCell<Tally>) -> Result<(), TestCaseError> {
    let parsed = toml::from_str::<toml::Table>(text).is_ok();
    let r = Scenario::parse(text, "p.toml", "p", None).and_then(|mut sc| {
        sc.max_points = 16;
        sim::runner::validate_scenario(&sc, None).map(|_| ())
    });
    let mut t = t.borrow_mut();
    t.cases += 1;
    t.reached_validation += parsed as usize;
    if let Err(e) = r {
        t.errors += 1;
        check_message(&e.to_string(), parsed)?;
    }
    Ok(())
}

fn read_profile(text: &str, t: &RefCell<Tally>) -> Result<(), TestCaseError> {
    let parsed = toml::from_str::<toml::Table>(text).is_ok();
    let r = Platform::parse(text, "p.toml");
    let mut t = t.borrow_mut();
    t.cases += 1;
    t.reached_validation += parsed as usize;
    match r {
        Ok(p) => {
            let _ = p.describe();
        }
        Err(e) => {
            t.errors += 1;
            check_message(&e.to_string(), parsed)?;
        }
    }
    Ok(())
}

/// Run `cases` cases of `strategy` through `reader`; returns the tally.
fn tally<S: Strategy>(cases: u32, strategy: S, reader: impl Fn(S::Value, &RefCell<Tally>) -> Result<(), TestCaseError>) -> Tally {
    let t = RefCell::new(Tally::default());
    let mut runner = TestRunner::new(ProptestConfig::with_cases(cases));
    runner.run(&strategy, |v| reader(v, &t)).unwrap();
    let t = t.into_inner();
    eprintln!("{t:?}");
    t
}

fn bytes() -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<u8>(), 0..256).prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn mutations(of: &'static str, at: usize) -> impl Strategy<Value = String> {
    (0..at, 0usize..8, "[-0-9a-z.=\\[\\]\"\n ]{0,8}").prop_map(move |(at, len, with)| mutate(of, at, len, &with))
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

/// `of` with the value of one `key = value` line replaced by another TOML value: stays valid
/// TOML, so nearly every case reaches irqlab's own checks.
fn value_mutations(of: &'static str) -> impl Strategy<Value = String> {
    let value = prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_filter("finite", |v| v.is_finite()).prop_map(|v| format!("{v:?}")),
        "[a-z0-9._-]{0,10}".prop_map(|s| format!("{s:?}")),
        Just("true".to_string()),
        Just("[]".to_string()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("nan".to_string()),
        Just("{}".to_string()),
    ];
    let lines: Vec<usize> = of.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with('#') && l.contains(" = ")).map(|(i, _)| i).collect();
    (0..lines.len(), value).prop_map(move |(k, v)| {
        let mut out: Vec<String> = of.lines().map(String::from).collect();
        let line = &mut out[lines[k]];
        let key = line.split(" = ").next().unwrap().to_string();
        *line = format!("{key} = {v}");
        out.join("\n")
    })
}

#[test]
fn scenario_reader_survives_value_mutations() {
    let t = tally(128, value_mutations(DEMO), |s, t| read_scenario(&s, t));
    assert!(t.reached_validation * 10 >= t.cases * 9, "value mutations reach validation: {t:?}");
    assert!(t.errors * 4 >= t.cases, "and validation refuses many of them: {t:?}");
}

#[test]
fn profile_reader_survives_value_mutations() {
    let t = tally(128, value_mutations(PROFILE), |s, t| read_profile(&s, t));
    assert!(t.reached_validation * 10 >= t.cases * 9, "value mutations reach validation: {t:?}");
    assert!(t.errors * 4 >= t.cases, "and validation refuses many of them: {t:?}");
}

#[test]
fn scenario_reader_survives_arbitrary_bytes() {
    let t = tally(128, bytes(), |s, t| read_scenario(&s, t));
    assert_eq!(t.cases, 128);
    assert!(t.errors > 100, "almost every random input is refused: {t:?}");
}

#[test]
fn scenario_reader_survives_mutations() {
    let t = tally(128, mutations(DEMO, 2000), |s, t| read_scenario(&s, t));
    // Measured: about 43 % of byte splices leave valid TOML; the value mutations reach validation.
    assert!(t.reached_validation * 3 >= t.cases, "a third of byte mutations must reach validation, not die in the TOML parser: {t:?}");
    assert!(t.errors * 10 >= t.cases, "some mutations are refused by validation: {t:?}");
}

#[test]
fn profile_reader_survives_arbitrary_bytes() {
    let t = tally(128, bytes(), |s, t| read_profile(&s, t));
    assert!(t.errors > 100, "{t:?}");
}

#[test]
fn profile_reader_survives_mutations() {
    let t = tally(128, mutations(PROFILE, 4000), |s, t| read_profile(&s, t));
    // Byte splices break the profile's TOML more often (about two thirds of cases, measured):
    // the value mutations above are the ones that exercise validation.
    assert!(t.reached_validation * 4 >= t.cases, "a quarter of byte mutations must reach validation: {t:?}");
    assert!(t.errors * 10 >= t.cases, "some mutations are refused by validation: {t:?}");
}

//! The scenario reader on arbitrary text: parse, expand the points, resolve each point's platform
//! and prepare its model (without running it). An error or prepared points, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sim::scenario::Scenario;

/// Whether any `profile` value in the document (top level, a config's `set`, a sweep) ends in
/// `.toml`: such a profile is a file path.
fn uses_profile_file(doc: &toml::Table) -> bool {
    fn walk(v: &toml::Value, key_is_profile: bool) -> bool {
        match v {
            toml::Value::String(s) => key_is_profile && s.ends_with(".toml"),
            toml::Value::Array(a) => a.iter().any(|x| walk(x, key_is_profile)),
            toml::Value::Table(t) => t.iter().any(|(k, x)| walk(x, k.ends_with("profile"))),
            _ => false,
        }
    }
    doc.iter().any(|(k, v)| walk(v, k.ends_with("profile")))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mut sc) = Scenario::parse(text, "fuzz.toml", "fuzz", None) else { return };
    // A profile named by path would make the fuzzer read this machine's files.
    if uses_profile_file(&sc.doc) {
        return;
    }
    sc.max_points = 64;
    let _ = sim::runner::validate_scenario(&sc, None);
});

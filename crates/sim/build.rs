//! Embeds the shipped platform profiles (`crates/sim/platforms/*.toml`), scenarios
//! (`scenarios/*.toml` at the repository root) and path censuses (the lab's files, `crates/sim/census/lab/*.json`,
//! issue 43) into the binary, so `irqlab` works from any
//! directory and `irqlab scenarios` can list them.
#![allow(clippy::unwrap_used)] // a build script fails by panicking: unwrap is its error path
use std::path::Path;

fn embed(dir: &Path, ext: &str, out: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == ext)).collect()).unwrap_or_default();
    entries.sort();
    let mut s = String::from("&[\n");
    for p in entries {
        println!("cargo:rerun-if-changed={}", p.display());
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        s.push_str(&format!("    ({stem:?}, include_str!({:?})),\n", p.canonicalize().unwrap().display().to_string()));
    }
    s.push(']');
    std::fs::write(out, s).unwrap();
}

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    embed(&manifest.join("platforms"), "toml", &out.join("shipped_profiles.rs"));
    embed(&manifest.join("../../scenarios"), "toml", &out.join("shipped_scenarios.rs"));
    embed(&manifest.join("census").join("lab"), "json", &out.join("shipped_census.rs"));
}

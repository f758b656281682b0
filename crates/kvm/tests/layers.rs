//! The kvm crate's layers, checked over its own sources: every `crate::…` path a module names
//! must lead to its own layer or one below (contracts and data < host services < architectures <
//! drivers < facade), `config` imports nothing but the guest contract, and `#[cfg(target_arch)]`
//! appears only in `arch/mod.rs`. A module that imports from a layer above it fails this test
//! with the file, the line and the two layers.
use std::collections::BTreeSet;
use std::path::Path;

use testkit::layers::{code, crate_paths, scan};

/// The layer of a top-level module of the crate (`src/<name>.rs` or `src/<name>/`).
fn layer(module: &str) -> Option<(u8, &'static str)> {
    Some(match module {
        "abi" | "config" | "exit" | "measurement" | "plan" => (1, "contracts and data"),
        "host" | "tracefs" | "vfio" => (2, "host services"),
        "arch" => (3, "architectures"),
        "runner" | "primitives" | "session" => (4, "drivers"),
        "lib" => (5, "facade"),
        _ => return None,
    })
}

/// Every upward import in the sources under `src`, as readable lines; and every edge seen.
fn check(src: &Path) -> (Vec<String>, BTreeSet<(String, String)>) {
    let scan = scan(src, layer);
    let mut bad = scan.bad.clone();
    for i in scan.imports.iter().filter(|i| i.from == "config" && i.to != "abi") {
        bad.push(format!("{}:{}: `config` is a leaf (only the guest contract below it), but names `crate::{}`", i.file.display(), i.line, i.to));
    }
    for (f, text) in &scan.texts {
        if f.strip_prefix(src).expect("under src") == Path::new("arch/mod.rs") {
            continue;
        }
        for (n, l) in text.lines().enumerate() {
            if code(l).contains("#[cfg(target_arch") {
                bad.push(format!("{}:{}: #[cfg(target_arch)] outside arch/mod.rs", f.display(), n + 1));
            }
        }
    }
    (bad, scan.edges())
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (bad, edges) = check(&src);
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
    // The scan sees the crate's real structure (so an empty `bad` means something): the drivers
    // use the architectures, which use the contracts.
    for (from, to) in [("runner", "arch"), ("arch", "config"), ("primitives", "runner"), ("measurement", "config")] {
        assert!(edges.contains(&(from.to_string(), to.to_string())), "expected {from} → {to} in {edges:?}");
    }
}

#[test]
fn the_scan_finds_every_form_of_an_upward_import() {
    let text = "use crate::runner::watch::X;\nuse crate::{abi, arch::Imp};\n// crate::primitives in a comment\nlet a = <crate::arch::Imp as crate::arch::Arch>::NAME;\nuse vfio_ioctls::x; let s = other_crate::y;\n";
    let names: Vec<(usize, String)> = crate_paths(text);
    let want = [(1, "runner"), (2, "abi"), (2, "arch"), (4, "arch"), (4, "arch")];
    assert_eq!(names, want.map(|(n, s)| (n, s.to_string())).to_vec());
    // And `check` turns such a line into a failure naming file, line and layers.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("config.rs"), "use crate::host::threads::allowed_cpus;\n").expect("write");
    std::fs::write(dir.path().join("measurement.rs"), "use crate::runner::RunError;\n").expect("write");
    std::fs::create_dir(dir.path().join("host")).expect("mkdir");
    std::fs::write(dir.path().join("host/stats.rs"), "#[cfg(target_arch = \"x86_64\")]\nfn f() {}\n").expect("write");
    let (bad, _) = check(dir.path());
    assert_eq!(bad.len(), 4, "{bad:#?}");
    assert!(bad.iter().any(|b| b.contains("config.rs:1: `config` (contracts and data) imports `crate::host` (host services)")), "{bad:#?}");
    assert!(bad.iter().any(|b| b.contains("`config` is a leaf")), "{bad:#?}");
    assert!(bad.iter().any(|b| b.contains("measurement.rs:1: `measurement` (contracts and data) imports `crate::runner` (drivers)")), "{bad:#?}");
    assert!(bad.iter().any(|b| b.contains("stats.rs:1: #[cfg(target_arch)] outside arch/mod.rs")), "{bad:#?}");
}

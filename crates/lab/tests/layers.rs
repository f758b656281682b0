//! The lab's layers, checked over its own sources (as crates/kvm/tests/layers.rs does for kvm):
//! every `crate::…` path a module names must lead to its own layer or one below —
//! words and protocols < host services < what runs under test < modes < shell — and the leaves
//! stay leaves (`config` imports nothing of the lab, `frame` only the error). The lab installs
//! and builds nothing at run time: no `cargo` is started and no `apt-get install` either (the
//! arm64 packages under test are `apt-get download`ed into the cache; scripts/ensure-deps.sh
//! installs the host's tools). A module that breaks a rule fails this test with the file, the
//! line and the two layers; a module with no layer fails it too.
use std::collections::BTreeSet;
use std::path::Path;

use testkit::layers::{code, crate_paths, scan};

/// The layer of a top-level module of the crate (`src/<name>.rs` or `src/<name>/`).
fn layer(module: &str) -> Option<(u8, &'static str)> {
    Some(match module {
        "config" | "error" | "frame" | "grammar" => (1, "words and protocols"),
        "deps" | "input" | "initramfs" | "output" | "qemu" | "session" | "watch" | "dts" | "kernel_image" => (2, "host services"),
        "xen_build" | "fio_build" | "census" | "own_kernel" | "peers" | "vfio" | "its_trace" | "its_script" | "kvm_events" | "delivery" | "xen_board" => {
            (3, "what runs under test")
        }
        "kvm" | "xen" | "xen_census" | "dom0" | "ab" | "ab_verdict" | "ab_report" => (4, "modes"),
        "cli" | "route" | "lib" | "main" => (5, "shell"),
        _ => return None,
    })
}

/// What a leaf may import: `config` nothing, `frame` the error only.
fn leaf_allows(from: &str, to: &str) -> Option<bool> {
    match from {
        "config" => Some(false),
        "frame" => Some(to == "error"),
        _ => None,
    }
}

/// What the lab must not do at run time, found in a code line.
fn run_time_install(code: &str) -> Option<&'static str> {
    if code.contains("Command::new(\"cargo\")") {
        Some("starts cargo")
    } else if code.contains("CARGO_MANIFEST_DIR") {
        Some("finds the source tree through CARGO_MANIFEST_DIR")
    } else if code.contains("\"apt-get\"") && code.contains("\"install\"") {
        Some("runs apt-get install")
    } else {
        None
    }
}

/// Every broken rule in the sources under `src`, as readable lines; and every edge seen.
fn check(src: &Path) -> (Vec<String>, BTreeSet<(String, String)>) {
    let scan = scan(src, layer);
    let mut bad = scan.bad.clone();
    for i in scan.imports.iter().filter(|i| leaf_allows(&i.from, &i.to) == Some(false)) {
        bad.push(format!("{}:{}: `{}` is a leaf, but names `crate::{}`", i.file.display(), i.line, i.from, i.to));
    }
    for (f, text) in &scan.texts {
        for (n, l) in text.lines().enumerate() {
            if let Some(what) = run_time_install(code(l)) {
                bad.push(format!("{}:{}: {what} at run time (scripts/ensure-deps.sh and scripts/arm-lab.sh do that)", f.display(), n + 1));
            }
        }
    }
    (bad, scan.edges())
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (bad, edges) = check(&src);
    assert!(bad.is_empty(), "broken layer rules:\n{}", bad.join("\n"));
    // The scan sees the crate's real structure (so an empty `bad` means something).
    for (from, to) in [("route", "kvm"), ("kvm", "frame"), ("dom0", "xen"), ("xen", "qemu"), ("vfio", "frame"), ("cli", "config"), ("its_script", "config")] {
        assert!(edges.contains(&(from.to_string(), to.to_string())), "expected {from} → {to} in {edges:?}");
    }
    // No mode, service or word imports the shell.
    assert!(!edges.iter().any(|(f, t)| (t == "cli" || t == "route") && f != "cli" && f != "route" && f != "lib" && f != "main"), "{edges:?}");
}

#[test]
fn the_scan_fails_on_a_synthetic_tree_with_each_kind_of_break() {
    let text = "use crate::kvm::frame::X;\nuse crate::{error, qemu::QemuCmd};\n// crate::cli in a comment\nlet a = <crate::xen::Prepared as crate::watch::Watch>::f;\nuse other_crate::y;\n";
    let want = [(1, "kvm"), (2, "error"), (2, "qemu"), (4, "xen"), (4, "watch")];
    assert_eq!(crate_paths(text), want.map(|(n, s)| (n, s.to_string())).to_vec());
    let dir = tempfile::tempdir().expect("tempdir");
    let w = |p: &str, t: &str| std::fs::write(dir.path().join(p), t).expect("write");
    // The two edges that held the lab's old cycle: a protocol in a mode, flags owning a mode.
    w("vfio.rs", "use crate::kvm::MARK;\n");
    w("kvm.rs", "use crate::cli::KvmArgs;\n");
    w("config.rs", "use crate::error::LabError;\n");
    w("frame.rs", "use crate::error::LabError;\nuse crate::grammar::segments;\n");
    w("deps.rs", "let o = Command::new(\"apt-get\").args([\"install\", \"-y\", p]);\n");
    std::fs::create_dir(dir.path().join("dom0")).expect("mkdir");
    w("dom0/init.rs", "let root = Path::new(env!(\"CARGO_MANIFEST_DIR\"));\n");
    w("sweep.rs", "fn f() {}\n");
    let (bad, _) = check(dir.path());
    let has = |s: &str| bad.iter().any(|b| b.contains(s));
    assert!(has("vfio.rs:1: `vfio` (what runs under test) imports `crate::kvm` (modes), a layer above it"), "{bad:#?}");
    assert!(has("kvm.rs:1: `kvm` (modes) imports `crate::cli` (shell), a layer above it"), "{bad:#?}");
    assert!(has("config.rs:1: `config` is a leaf, but names `crate::error`"), "{bad:#?}");
    assert!(has("frame.rs:2: `frame` is a leaf, but names `crate::grammar`") && !has("frame.rs:1"), "{bad:#?}");
    assert!(has("deps.rs:1: runs apt-get install at run time"), "{bad:#?}");
    assert!(has("init.rs:1: finds the source tree through CARGO_MANIFEST_DIR"), "{bad:#?}");
    assert!(has("module `sweep` has no layer"), "{bad:#?}");
    assert_eq!(bad.len(), 7, "{bad:#?}");
}

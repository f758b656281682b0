//! docs/design.md's crate table says which crate depends on which; this test reads the table and
//! every crate's Cargo.toml `[dependencies]` and fails when they disagree on a workspace crate
//! (issue 44 item 6: the table had drifted — kvm→sim, lab→sim, lab→report were missing).
use std::collections::{BTreeMap, BTreeSet};

const CRATES: [&str; 9] = ["results", "import", "sim", "kvm", "armguest", "lab", "testkit", "report", "cli"];

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The workspace crates a crate's `[dependencies]` names (dev-dependencies are not the graph).
fn cargo_deps(krate: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("crates").join(krate).join("Cargo.toml")).expect("Cargo.toml");
    let mut in_deps = false;
    let mut out = BTreeSet::new();
    for l in text.lines() {
        if l.starts_with('[') {
            in_deps = l.trim() == "[dependencies]";
            continue;
        }
        let name = l.split(['=', '.', ' ']).next().unwrap_or("");
        if in_deps && CRATES.contains(&name) {
            out.insert(name.to_string());
        }
    }
    out
}

/// The table's rows: crate → the workspace crates its "depends on" cell names.
fn table() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("docs/design.md")).expect("docs/design.md");
    let mut rows = BTreeMap::new();
    for l in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        let krate = cells[1].trim_matches('`');
        if !CRATES.contains(&krate) || cells.len() < 4 {
            continue;
        }
        let cell = cells[3];
        let deps: BTreeSet<String> = cell.split([',', ' ', '(', ')']).map(|w| w.trim_matches('`')).filter(|w| CRATES.contains(w)).map(String::from).collect();
        rows.insert(krate.to_string(), deps);
    }
    rows
}

#[test]
fn the_design_crate_table_is_the_cargo_graph() {
    let t = table();
    assert_eq!(t.len(), CRATES.len(), "docs/design.md's table rows: {:?}", t.keys());
    let mut wrong = Vec::new();
    for c in CRATES {
        let (doc, cargo) = (&t[c], cargo_deps(c));
        if *doc != cargo {
            wrong.push(format!("{c}: docs/design.md says {doc:?}, Cargo.toml has {cargo:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(!cargo_deps("kvm").contains("sim"), "kvm does not depend on the simulator (issue 44 item 2)");
}

//! The scanner behind the crates' layers tests (`crates/kvm/tests/layers.rs`,
//! `crates/lab/tests/layers.rs`): which top-level modules a source file names through `crate::`,
//! read from the text (comments skipped), so a test can hold each module to its layer.
use std::path::{Path, PathBuf};

/// The top-level module a source file belongs to (`src/runner/watch.rs` → `runner`).
pub fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a path").as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a line without its `//` comment (doc comments name modules freely).
pub fn code(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// The top-level modules a source text names through `crate::`, with their line numbers:
/// `crate::runner::watch`, `use crate::{abi, config::X}` and `<crate::arch::Imp as …>` alike.
pub fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = code(line);
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().last();
            rest = &rest[i + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // `some_crate::…`
            }
            if let Some(group) = rest.strip_prefix('{') {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                out.extend(inner.split(',').map(|item| ident(item.trim())).filter(|s| !s.is_empty()).map(|s| (n + 1, s)));
            } else if !ident(rest).is_empty() {
                out.push((n + 1, ident(rest)));
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, in path order.
pub fn sources(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("read src") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// One `crate::` import between two top-level modules: where, from which, to which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    pub file: PathBuf,
    pub line: usize,
    pub from: String,
    pub to: String,
}

/// A layer: its number (lower is more basic) and name, for the messages.
pub type Layer = (u8, &'static str);

/// What a crate's sources do against its layers: every import between two modules with a layer
/// (`imports`), the broken rules as readable lines (`bad`: an import of a layer above, a module
/// without a layer) and each file's text for a crate's own rules (`texts`).
#[derive(Debug, Default)]
pub struct Scan {
    pub imports: Vec<Import>,
    pub bad: Vec<String>,
    pub texts: Vec<(PathBuf, String)>,
}

impl Scan {
    /// The edges seen, `(from, to)`.
    pub fn edges(&self) -> std::collections::BTreeSet<(String, String)> {
        self.imports.iter().map(|i| (i.from.clone(), i.to.clone())).collect()
    }
}

/// Scans the sources under `src` with `layer` (a module's layer; a name it does not know is a
/// re-exported item when imported, and a failure when it is a file's own module).
pub fn scan(src: &Path, layer: impl Fn(&str) -> Option<Layer>) -> Scan {
    let mut s = Scan::default();
    for f in sources(src) {
        let from = module_of(src, &f);
        let text = std::fs::read_to_string(&f).expect("read source");
        match layer(&from) {
            None => s.bad.push(format!("{}: module `{from}` has no layer in tests/layers.rs", f.display())),
            Some((from_layer, from_name)) => {
                for (line, to) in crate_paths(&text) {
                    let Some((to_layer, to_name)) = layer(&to) else { continue };
                    if to == from {
                        continue;
                    }
                    if to_layer > from_layer {
                        s.bad.push(format!("{}:{line}: `{from}` ({from_name}) imports `crate::{to}` ({to_name}), a layer above it", f.display()));
                    }
                    s.imports.push(Import { file: f.clone(), line, from: from.clone(), to });
                }
            }
        }
        s.texts.push((f, text));
    }
    s
}

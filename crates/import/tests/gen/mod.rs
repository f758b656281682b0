//! Structurally valid files of every import format, built from bytes (issue 36): a fuzzer's or
//! proptest's bytes choose the samples, the layout and at most one contradiction, and the file is
//! written the way the tool writes it, so the readers' semantic checks are reached instead of
//! their first syntax error. Each file says what the import must do: succeed with exactly the
//! generated count, min and max per class, or be refused with a message naming the file and the
//! contradiction. Used by `tests/import_gen.rs` (proptest) and the `import_*` fuzz targets
//! (`#[path]`), so it depends on `results` and std only.
use import::ImportOptions;

/// Bytes read as a stream of choices; past the end every choice is 0.
pub struct Src<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Src<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Src { b, i: 0 }
    }

    pub fn u8(&mut self) -> u8 {
        let v = self.b.get(self.i).copied().unwrap_or(0);
        self.i += 1;
        v
    }

    /// A number in 0..n (n ≥ 1), from up to 3 bytes.
    pub fn below(&mut self, n: u64) -> u64 {
        let v = (self.u8() as u64) | (self.u8() as u64) << 8 | (self.u8() as u64) << 16;
        v % n.max(1)
    }

    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// What the import of a generated file must give.
#[derive(Debug)]
pub enum Expect {
    /// Success: per class (name, count, min ns, max ns); classes listed here only (others, e.g.
    /// summary-only ones, are figures).
    Ok(Vec<(String, u64, u64, u64)>),
    /// Refused, the message naming the file and containing this.
    Refused(&'static str),
}

/// One generated file.
#[derive(Debug)]
pub struct Generated {
    pub name: String,
    pub text: String,
    pub opts: ImportOptions,
    pub expect: Expect,
}

/// Formats with a generator (every import format but `irqlab`, whose reader the `result`
/// fuzz target covers).
pub const FORMATS: [&str; 8] = ["fio", "cyclictest", "cyclictest-text", "rtla-timerlat", "tscdeadline", "ipi-bench", "tbm", "bench-console"];

/// The `irqlab import` format of a generator name.
pub fn format_of(g: &str) -> &str {
    if g == "cyclictest-text" {
        "cyclictest"
    } else {
        g
    }
}

mod formats;
use formats::*;

pub fn generate(which: &str, s: &mut Src) -> Generated {
    match which {
        "fio" => fio(s),
        "cyclictest" => cyclictest_json(s),
        "cyclictest-text" => cyclictest_text(s),
        "rtla-timerlat" => rtla(s),
        "tscdeadline" => tscdeadline(s),
        "ipi-bench" => ipi(s),
        "tbm" => tbm(s),
        "bench-console" => console(s),
        other => panic!("no generator for {other}"),
    }
}

/// Imports `g` and checks it did what it says; `Err` describes the disagreement.
pub fn check(which: &str, g: &Generated) -> Result<(), String> {
    let r = import::import_files(format_of(which), &[(g.name.clone(), g.text.clone())], &g.opts, "gen");
    match (&g.expect, r) {
        (Expect::Refused(says), Ok(_)) => Err(format!("{which}: imported a file that should be refused ({says}):\n{}", g.text)),
        (Expect::Refused(says), Err(e)) => {
            let e = e.to_string();
            if e.contains(&g.name) && e.contains(says) {
                Ok(())
            } else {
                Err(format!("{which}: refused, but not for `{says}` or without the file: {e}\n{}", g.text))
            }
        }
        (Expect::Ok(_), Err(e)) => Err(format!("{which}: refused a valid file: {e}\n{}", g.text)),
        (Expect::Ok(want), Ok(r)) => {
            for (path, n, min, max) in want {
                let (config, class) = path.split_once('/').unwrap();
                let c = r.configs.iter().find(|c| c.name == config).ok_or_else(|| format!("{which}: no configuration {config}\n{}", g.text))?;
                let s = &c.classes.get(class).ok_or_else(|| format!("{which}: no class {path}: {:?}\n{}", c.classes.keys(), g.text))?.summary;
                if (s.count, s.min, s.max) != (*n, *min, *max) {
                    return Err(format!("{which}: {path}: count/min/max {:?}, generated {:?}\n{}", (s.count, s.min, s.max), (n, min, max), g.text));
                }
                let ps = [s.p50, s.p90, s.p99, s.p999, s.p9999];
                if ps.iter().any(|p| *p < s.min || *p > s.max) || ps.windows(2).any(|w| w[0] > w[1]) {
                    return Err(format!("{which}: {path}: percentiles {ps:?} outside [{}, {}] or out of order", s.min, s.max));
                }
            }
            let classes: usize = r.configs.iter().map(|c| c.classes.keys().filter(|k| !k.ends_with("_early")).count()).sum();
            if !want.is_empty() && classes != want.len() {
                return Err(format!("{which}: {classes} classes, generated {}\n{}", want.len(), g.text));
            }
            Ok(())
        }
    }
}

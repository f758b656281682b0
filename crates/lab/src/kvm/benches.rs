//! Several benches in one KVM lab boot (issue 34 item 5): QEMU start to `/init` is most of a
//! KVM lab run (~8–10 s idle, ~28 s at load 10, against 2–3 s for a 64-sample bench), so
//! `kvm … -- timer … --out A -- ipi … --out B -- device … --out C` boots once and runs the
//! benches in the order given, each with its own `--out` — the one grammar (grammar.rs) with
//! `--` between benches. Inside, bench `i` writes to `/out/i` and its files come back framed as
//! `i/NAME`; what belongs to the boot (the console, micro-bench.txt, kvm-exit-reasons.txt) goes to
//! the first bench's `--out`. One bench is the old layout exactly (`/out`, plain names).
//!
//! The aarch64 irqlab is also stripped (once, cached by its sha256) before it enters the
//! initramfs: the release build carries ~58 MB of debug info that the kernel would copy into its
//! rootfs at every boot under TCG (~2 s of the boot). The result records the sha256 of the binary
//! given, the one that was built.
use std::path::{Path, PathBuf};

use crate::error::LabError;

/// One bench of a KVM lab boot: irqlab's arguments inside (with its `--out /out[/i]`) and the
/// directory on this machine its files come back to.
#[derive(Debug, Clone, PartialEq)]
pub struct Bench {
    pub inner: Vec<String>,
    pub out: PathBuf,
}

/// The benches after `--`, each with its `--out` (bad input: exit 2 naming the part).
pub fn plan(args: &[String]) -> Result<Vec<Bench>, LabError> {
    let parts = crate::grammar::segments(args);
    let many = parts.len() > 1;
    let mut benches: Vec<Bench> = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let name = |why: String| LabError::Usage(if many { format!("bench {} after `--` (`{}`): {why}", i + 1, part.join(" ")) } else { why });
        if part.is_empty() {
            return Err(name("empty: expected a bench and its flags between two `--`".into()));
        }
        let (mut inner, out) = crate::frame::split_out(&crate::grammar::kvm_words(part)).map_err(|e| name(e.to_string()))?;
        if many {
            if let Some(last) = inner.last_mut() {
                *last = format!("/out/{i}");
            }
        }
        if let Some(j) = benches.iter().position(|b| b.out == out) {
            return Err(name(format!("--out {} is also bench {}'s: each bench needs its own directory", out.display(), j + 1)));
        }
        benches.push(Bench { inner, out });
    }
    Ok(benches)
}

/// `'…'` quoting for busybox sh.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The `/init` lines running the benches in order: a start marker (for QEMU start → first
/// sample), irqlab, then its exit status as `exit CODE` (one bench) or `exit CODE bench I`.
pub fn run_lines(benches: &[Bench]) -> String {
    let m = crate::frame::MARK;
    let many = benches.len() > 1;
    let mut s = String::new();
    for (i, b) in benches.iter().enumerate() {
        let cmd = b.inner.iter().map(|a| sh_quote(a)).collect::<Vec<_>>().join(" ");
        let dir = if many { format!("/out/{i}") } else { "/out".into() };
        let tag = if many { format!(" bench {i}") } else { String::new() };
        s += &format!("mkdir -p {dir}\necho \"{m}bench {i} start\"\n/bin/irqlab {cmd}\necho \"{m}exit $?{tag}\"\n");
    }
    s
}

/// The irqlab given, stripped of its debug info into the lab cache (by its sha256); the binary
/// itself when `aarch64-linux-gnu-strip` is missing or fails (said once on stderr).
pub fn stripped(irqlab: &Path, sha256: &str, cache: &Path) -> PathBuf {
    let dir = cache.join("irqlab-stripped");
    let dst = dir.join(format!("irqlab-{}", &sha256[..sha256.len().min(24)]));
    if dst.is_file() {
        return dst;
    }
    let tmp = dir.join(format!(".irqlab-{}", std::process::id()));
    let ok = std::fs::create_dir_all(&dir).is_ok()
        && std::process::Command::new("aarch64-linux-gnu-strip").arg("-o").arg(&tmp).arg(irqlab).status().map(|s| s.success()).unwrap_or(false)
        && std::fs::rename(&tmp, &dst).is_ok();
    if ok {
        dst
    } else {
        let _ = std::fs::remove_file(&tmp);
        eprintln!("irqlab-lab: note: aarch64-linux-gnu-strip is missing or failed; the initramfs carries irqlab with its debug info (a slower boot)");
        irqlab.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn one_bench_keeps_the_old_layout() {
        let b = plan(&v("timer --samples 8 --out /tmp/a")).unwrap();
        assert_eq!(b, vec![Bench { inner: v("run timer --samples 8 --out /out"), out: "/tmp/a".into() }]);
        let s = run_lines(&b);
        assert!(s.contains("/bin/irqlab 'run' 'timer' '--samples' '8' '--out' '/out'\necho \"@irqlab-lab exit $?\"\n"), "{s}");
    }

    #[test]
    fn several_benches_get_their_own_directories_in_order() {
        let b = plan(&v("timer --out /tmp/a -- run ipi --out /tmp/b -- device --via msi --out /tmp/c")).unwrap();
        assert_eq!(b.iter().map(|x| x.out.display().to_string()).collect::<Vec<_>>(), ["/tmp/a", "/tmp/b", "/tmp/c"]);
        assert_eq!(b[2].inner, v("run device --via msi --out /out/2"));
        let s = run_lines(&b);
        let (t, i, d) = (s.find("'timer'").unwrap(), s.find("'ipi'").unwrap(), s.find("'device'").unwrap());
        assert!(t < i && i < d, "{s}");
        assert!(s.contains("mkdir -p /out/1\necho \"@irqlab-lab bench 1 start\"\n"), "{s}");
        assert!(s.contains("echo \"@irqlab-lab exit $? bench 2\"\n"), "{s}");
    }

    #[test]
    fn bad_parts_are_named() {
        let e = plan(&v("timer --out /tmp/a -- ipi --samples 8")).unwrap_err().to_string();
        assert!(e.contains("bench 2") && e.contains("--out"), "{e}");
        let e = plan(&v("timer --out /tmp/a -- ipi --out /tmp/a")).unwrap_err().to_string();
        assert!(e.contains("bench 2") && e.contains("bench 1's"), "{e}");
        assert!(plan(&v("timer --out /tmp/a --")).unwrap_err().to_string().contains("empty"));
    }
}

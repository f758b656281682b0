//! A peer benchmark beside irqlab's own guest (issue 34 item 6): kvm-unit-tests' arm
//! `micro-bench` (hyp_call, mmio_read_user, mmio_read_vgic, eoi, ipi, lpi, timer_10ms), the
//! KVM/arm64 community's own micro-benchmark, run by kvmtool's `lkvm` inside the same KVM lab boot
//! as `irqlab run`: the same host kernel, the same KVM, the same emulated CPU, so the two
//! instruments can be read side by side (docs/arm64-lab.md).
//!
//! The lab takes a path to each project — a source tree or a release tarball (`.tar.xz`,
//! `.tar.gz`) — and builds them at run time into its cache, keyed by content: nothing of theirs
//! enters this repository. A tree is copied before building (an input is never written to).
//! kvmtool is built static for arm64 against libfdt from Debian's `libfdt-dev:arm64` (fetched with
//! `apt-get download`, unpacked with `dpkg-deb -x`); kvm-unit-tests with `./configure --arch=arm64
//! --cross-prefix=aarch64-linux-gnu- --target=kvmtool`. Which version ran (the tarball's name and
//! sha256, or `git describe` of a tree) is recorded in the result.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a peer could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("{flag} {}: {why}", path.display())]
    Source { flag: &'static str, path: PathBuf, why: String },
    #[error("building {what} failed: {why} (log: {})", log.display())]
    Build { what: String, why: String, log: PathBuf },
}

/// The built peer: lkvm, the test image, and what ran.
#[derive(Debug, Clone)]
pub struct Peer {
    pub lkvm: PathBuf,
    pub flat: PathBuf,
    pub record: BTreeMap<String, String>,
}

/// The `-p` given to micro-bench (the verified command). micro-bench at kvm-unit-tests
/// v2026-04-17 does not select tests by it: its `parse_args` reads only `mmio-addr=`, and every
/// entry of its `tests[]` runs in order (hyp_call, mmio_read_user, mmio_read_vgic, eoi, ipi,
/// ipi_hw, lpi, timer_10ms) — so one run per test is not possible without patching it, and an
/// abort in `ipi` (its bounded wait: `1 << 28` spins for each IPI) hides lpi and timer_10ms.
/// Under the lab's `--icount` the vCPUs run round-robin in one QEMU thread, so the receiving vCPU
/// runs within a bounded number of the sender's instructions and every test completes
/// (docs/arm64-lab.md); under plain TCG on a loaded host the receiver's thread can be starved
/// past the bound.
pub const TESTS: &str = "ipi lpi timer_10ms";

/// The `/init` lines: lkvm runs micro-bench with 2 vCPUs and the vGICv3 ITS; its console goes to
/// /out/micro-bench.txt (brought back with irqlab's files), its exit status to a marker line.
pub fn init_fragment() -> String {
    format!(
        "mkdir -p /out\necho \"{m}peer micro-bench start\"\n/bin/lkvm run --nodefaults --network mode=none -c 2 -m 128 --irqchip gicv3-its -k /peer/micro-bench.flat -p \"{TESTS}\" > /out/micro-bench.txt 2>&1\necho \"{m}peer micro-bench exit $?\"\n",
        m = crate::frame::MARK
    )
}

/// What a source is: (key for the cache, version text).
pub fn identify(flag: &'static str, path: &Path) -> Result<(String, String), PeerError> {
    let bad = |why: String| PeerError::Source { flag, path: path.into(), why };
    if path.is_file() {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        if !(name.ends_with(".tar.xz") || name.ends_with(".tar.gz") || name.ends_with(".tgz") || name.ends_with(".tar")) {
            return Err(bad("expected a source tree or a .tar.xz/.tar.gz/.tar".into()));
        }
        let sha = crate::kernel_image::sha256_file(path).map_err(|e| bad(e.to_string()))?;
        return Ok((sha[..24].to_string(), format!("{name} (sha256 {sha})")));
    }
    if !path.is_dir() {
        return Err(bad("no such file or directory".into()));
    }
    let describe = Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["describe", "--always", "--tags", "--dirty"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let canon = std::fs::canonicalize(path).map_err(|e| bad(e.to_string()))?;
    let version = match describe {
        Some(d) => format!("{} (git describe {d})", canon.display()),
        None => format!("{} (tree, not a git checkout)", canon.display()),
    };
    // A tree is rebuilt when its description changes; without git, on every run.
    let key: String = version.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3)).to_string();
    Ok((format!("tree-{key}"), version))
}

fn run_logged(cmd: &mut Command, what: &str, log: &Path) -> Result<(), PeerError> {
    let fail = |why: String| PeerError::Build { what: what.into(), why, log: log.into() };
    let o = cmd.output().map_err(|e| fail(format!("cannot start: {e}")))?;
    let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::write(log, &text);
    if !o.status.success() {
        return Err(fail(text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(no output)").trim().to_string()));
    }
    Ok(())
}

/// The source unpacked or copied into `dir/src` (its single top directory for a tarball).
fn source_into(path: &Path, dir: &Path, log: &Path) -> Result<PathBuf, PeerError> {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| PeerError::Build { what: "source".into(), why: e.to_string(), log: log.into() })?;
    if path.is_file() {
        run_logged(Command::new("tar").arg("-xf").arg(path).arg("-C").arg(&src), "tar -x", log)?;
    } else {
        run_logged(Command::new("cp").arg("-a").arg(path).arg(&src), "cp -a", log)?;
    }
    let tops: Vec<PathBuf> = std::fs::read_dir(&src).map(|r| r.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()).unwrap_or_default();
    match tops.as_slice() {
        [one] => Ok(one.clone()),
        _ => Ok(src),
    }
}

/// libfdt for arm64 from Debian, as kvmtool's `LIBFDT_DIR` wants it (libfdt.a beside its headers).
fn libfdt(cache: &Path) -> Result<PathBuf, PeerError> {
    let root = crate::deps::ensure_arm64_package(cache, "libfdt-dev", |r| r.join("usr/include/libfdt.h").is_file()).map_err(|e| PeerError::Source {
        flag: "--peer-kvmtool",
        path: cache.into(),
        why: e.to_string(),
    })?;
    let dir = cache.join("libfdt-dir");
    if !dir.join("libfdt.a").is_file() {
        let _ = std::fs::create_dir_all(&dir);
        let lib = crate::deps::find_file(&root, "usr/lib/aarch64-linux-gnu", "libfdt.a", &[]).unwrap_or_else(|| root.join("usr/lib/aarch64-linux-gnu/libfdt.a"));
        for (from, to) in
            [(lib, "libfdt.a"), (root.join("usr/include/libfdt.h"), "libfdt.h"), (root.join("usr/include/libfdt_env.h"), "libfdt_env.h"), (root.join("usr/include/fdt.h"), "fdt.h")]
        {
            std::fs::copy(&from, dir.join(to)).map_err(|e| PeerError::Source { flag: "--peer-kvmtool", path: from.clone(), why: format!("libfdt-dev:arm64: {e}") })?;
        }
    }
    Ok(dir)
}

/// Builds (once per content) kvm-unit-tests' micro-bench and kvmtool's static lkvm.
pub fn build(kut: &Path, kvmtool: &Path, cache: &Path) -> Result<Peer, PeerError> {
    let (kkey, kver) = identify("--peer-kvm-unit-tests", kut)?;
    let (tkey, tver) = identify("--peer-kvmtool", kvmtool)?;
    let base = cache.join("peers");
    let kdir = base.join(format!("kvm-unit-tests-{kkey}"));
    let tdir = base.join(format!("kvmtool-{tkey}"));
    let flat = kdir.join("micro-bench.flat");
    let lkvm = tdir.join("lkvm-static");
    let cross = [("ARCH", "arm64"), ("CROSS_COMPILE", "aarch64-linux-gnu-")];
    if !flat.is_file() {
        let _ = std::fs::remove_dir_all(&kdir);
        std::fs::create_dir_all(&kdir).map_err(|e| PeerError::Source { flag: "--peer-kvm-unit-tests", path: kdir.clone(), why: e.to_string() })?;
        let log = kdir.join("build.log");
        eprintln!("irqlab-lab: building kvm-unit-tests' arm/micro-bench.flat ({kver}) into {}", kdir.display());
        let src = source_into(kut, &kdir, &log)?;
        run_logged(
            Command::new("./configure").args(["--arch=arm64", "--cross-prefix=aarch64-linux-gnu-", "--target=kvmtool"]).current_dir(&src),
            "kvm-unit-tests ./configure",
            &log,
        )?;
        run_logged(Command::new("make").args(["-j2", "arm/micro-bench.flat"]).current_dir(&src), "kvm-unit-tests make arm/micro-bench.flat", &log)?;
        std::fs::copy(src.join("arm/micro-bench.flat"), &flat).map_err(|e| PeerError::Build { what: "kvm-unit-tests".into(), why: e.to_string(), log: log.clone() })?;
    }
    if !lkvm.is_file() {
        let fdt = libfdt(cache)?;
        let _ = std::fs::remove_dir_all(&tdir);
        std::fs::create_dir_all(&tdir).map_err(|e| PeerError::Source { flag: "--peer-kvmtool", path: tdir.clone(), why: e.to_string() })?;
        let log = tdir.join("build.log");
        eprintln!("irqlab-lab: building kvmtool's lkvm-static for arm64 ({tver}) into {}", tdir.display());
        let src = source_into(kvmtool, &tdir, &log)?;
        let mut cmd = Command::new("make");
        cmd.args(["-j2", "lkvm-static"]).arg(format!("LIBFDT_DIR={}", fdt.display())).current_dir(&src);
        for (k, v) in cross {
            cmd.arg(format!("{k}={v}"));
        }
        run_logged(&mut cmd, "kvmtool make lkvm-static", &log)?;
        std::fs::copy(src.join("lkvm-static"), &lkvm).map_err(|e| PeerError::Build { what: "kvmtool".into(), why: e.to_string(), log: log.clone() })?;
    }
    let record = BTreeMap::from([
        ("lab.peer.kvm-unit-tests".to_string(), kver),
        ("lab.peer.kvmtool".to_string(), tver),
        ("lab.peer.command".to_string(), format!("lkvm run --nodefaults --network mode=none -c 2 -m 128 --irqchip gicv3-its -k micro-bench.flat -p \"{TESTS}\"")),
    ]);
    Ok(Peer { lkvm, flat, record })
}

/// micro-bench's result lines (`name  total  avg`, arm/micro-bench.c's `%-30s%15d.%-15d%15d.%-15d`), by test name: the average.
pub fn averages(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 3 && w[0].chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && w[1..].iter().all(|x| x.replace('.', "").chars().all(|c| c.is_ascii_digit())) {
            m.insert(w[0].to_string(), w[w.len() - 1].to_string());
        }
    }
    m
}

/// How micro-bench ended, from its console: kvm-unit-tests' `EXIT: STATUS=1` is a pass; any
/// other status is stated with its first `assert failed` line; lkvm's own exit status says nothing
/// about the guest. Also every average printed, so a partial run is still read.
/// `icount`: the lab ran QEMU with `-icount` (micro-bench's "ns" are then instruction counts at
/// 4 ns each), else TCG time.
pub fn status(text: &str, icount: bool) -> String {
    let exit = text.lines().find_map(|l| l.trim().strip_prefix("EXIT: STATUS=")).map(str::trim);
    let failed = text.lines().find(|l| l.contains("assert failed") || l.contains("FAIL")).map(str::trim);
    let avgs: Vec<String> = averages(text).into_iter().map(|(k, v)| format!("{k} {v}")).collect();
    let head = match (exit, failed) {
        (Some("1"), None) => "passed".to_string(),
        (Some(s), Some(f)) => format!("EXIT: STATUS={s}: {f}"),
        (Some(s), None) => format!("EXIT: STATUS={s}"),
        (None, _) => "no EXIT line (micro-bench did not finish)".to_string(),
    };
    let unit = if icount { "ns of -icount instruction time (4 ns per instruction)" } else { "ns of TCG time" };
    format!("{head}; averages ({unit}, as micro-bench prints them): {}", if avgs.is_empty() { "none".into() } else { avgs.join(", ") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_a_tree_or_a_tarball() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("kvmtool-x.tar.xz");
        std::fs::write(&t, b"x").unwrap();
        let (key, v) = identify("--peer-kvmtool", &t).unwrap();
        assert_eq!(key.len(), 24);
        assert!(v.starts_with("kvmtool-x.tar.xz (sha256 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881)"), "{v}");
        let zip = d.path().join("k.zip");
        std::fs::write(&zip, b"x").unwrap();
        assert!(identify("--peer-kvmtool", &zip).unwrap_err().to_string().starts_with("--peer-kvmtool "));
        assert!(identify("--peer-kvm-unit-tests", &d.path().join("nope")).unwrap_err().to_string().contains("no such file"));
        let (k1, v1) = identify("--peer-kvmtool", d.path()).unwrap();
        assert!(k1.starts_with("tree-") && v1.contains("tree"), "{v1}");
    }

    #[test]
    fn init_runs_lkvm_with_the_its_and_keeps_its_output() {
        let s = init_fragment();
        assert!(s.contains("--irqchip gicv3-its -k /peer/micro-bench.flat -p \"ipi lpi timer_10ms\" > /out/micro-bench.txt 2>&1"), "{s}");
        assert!(s.starts_with("mkdir -p /out\n") && s.contains("peer micro-bench exit $?"));
    }

    #[test]
    fn status_says_pass_or_what_failed() {
        let ok = "hyp_call                          18799251440.0                       286853.0\nEXIT: STATUS=1\n";
        assert_eq!(status(ok, false), "passed; averages (ns of TCG time, as micro-bench prints them): hyp_call 286853.0");
        assert!(status(ok, true).contains("(ns of -icount instruction time (4 ns per instruction), as"), "{}", status(ok, true));
        let bad = "eoi                                   6358624.0                           97.0\narm/micro-bench.c:167: assert failed: irq_received: failed to receive IPI in time\nEXIT: STATUS=127\n";
        assert!(status(bad, false).starts_with("EXIT: STATUS=127: arm/micro-bench.c:167: assert failed"), "{}", status(bad, false));
        assert!(status("", false).starts_with("no EXIT line"));
    }

    #[test]
    fn averages_of_micro_bench_lines() {
        let t = "name                                    total ns                         avg ns\n--------\nhyp_call                               3379232.0                       51.0\nipi                                  21139968.0                      322.0\nbogus line here\n";
        let a = averages(t);
        assert_eq!(a.get("hyp_call").map(String::as_str), Some("51.0"));
        assert_eq!(a.get("ipi").map(String::as_str), Some("322.0"));
        assert_eq!(a.len(), 2);
    }
}

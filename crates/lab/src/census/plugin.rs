//! The census plugin (`crates/lab/census/census.c`), built against the plugin API header of the
//! very QEMU that runs it: Debian's source package of the installed `qemu-system-arm` (apt-get
//! source with the lab's private deb-src list, as for dom0's fio: apt checks the files against
//! the signed Sources index by sha256), the header `include/qemu/qemu-plugin.h` taken from its
//! orig tarball, then `gcc -shared`. Cached by (QEMU source version, sha256 of census.c) under
//! `<lab cache>/census-plugin/`; the header's sha256 is recorded beside the plugin and in every
//! census's method line. A step that fails is exit 2 naming the step and its log.
use std::path::{Path, PathBuf};
use std::process::Command;

use super::CensusError;

/// The plugin's C source, compiled in so the binary builds what it was built with.
pub const SOURCE: &str = include_str!("../../census/census.c");

/// A built plugin and what it was built from.
#[derive(Debug, Clone, PartialEq)]
pub struct Plugin {
    pub path: PathBuf,
    /// `qemu 1:7.2+dfsg-7+deb12u18, qemu-plugin.h sha256 …`.
    pub built_from: String,
}

fn step(cmd: &mut Command, name: &str, log: &Path) -> Result<String, CensusError> {
    use std::io::Write;
    let fail = || CensusError::Step { step: name.into(), log: log.into() };
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(|_| fail())?;
    let _ = writeln!(f, "\n== irqlab-lab: {name}");
    let out = cmd.output().map_err(|e| {
        let _ = writeln!(f, "cannot run: {e}");
        fail()
    })?;
    let _ = f.write_all(&out.stdout);
    let _ = f.write_all(&out.stderr);
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(fail())
    }
}

/// The QEMU binary's plugin support, checked before anything boots: `-plugin` in its help.
pub fn check_qemu(qemu: &Path) -> Result<(), CensusError> {
    let out = Command::new(qemu).arg("-h").output().map_err(|e| CensusError::Usage(format!("--census: cannot run {}: {e}", qemu.display())))?;
    if !String::from_utf8_lossy(&out.stdout).contains("-plugin") {
        return Err(CensusError::Usage(format!("--census: {} has no TCG plugin support (-plugin): it cannot count paths", qemu.display())));
    }
    Ok(())
}

/// The source version of the installed QEMU package (`dpkg-query`), e.g. `1:7.2+dfsg-7+deb12u18`.
pub fn qemu_source_version() -> Result<String, CensusError> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${source:Version}", "qemu-system-arm"])
        .output()
        .map_err(|e| CensusError::Usage(format!("--census: cannot ask dpkg-query which QEMU is installed: {e}")))?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || v.is_empty() {
        return Err(CensusError::Usage("--census: Debian's qemu-system-arm is not installed (the plugin is built against its source package's header)".into()));
    }
    Ok(v)
}

fn sha256(path: &Path, log: &Path) -> Result<String, CensusError> {
    let out = step(Command::new("sha256sum").arg(path), "sha256sum", log)?;
    Ok(out.split_whitespace().next().unwrap_or_default().to_string())
}

/// The cache directory name for a QEMU source version and the plugin source.
pub fn cache_key(qemu_version: &str, plugin_sha: &str) -> String {
    let v: String = qemu_version.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '+' || c == '-' { c } else { '_' }).collect();
    format!("{v}-{}", &plugin_sha[..plugin_sha.len().min(16)])
}

/// `<cache>/census-plugin/<key>/libcensus.so`, built now when missing.
pub fn ensure(cache: &Path) -> Result<Plugin, CensusError> {
    let version = qemu_source_version()?;
    let root = cache.join("census-plugin");
    std::fs::create_dir_all(&root).map_err(|e| CensusError::Usage(format!("{}: {e}", root.display())))?;
    let work = root.join(format!(".build{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let src_dir = work.join("src");
    let apt = work.join("apt");
    for d in [apt.join("lists/partial"), apt.join("cache/archives/partial"), src_dir.clone()] {
        std::fs::create_dir_all(&d).map_err(|e| CensusError::Usage(format!("{}: {e}", d.display())))?;
    }
    let log = root.join("build.log");
    std::fs::write(work.join("census.c"), SOURCE).map_err(|e| CensusError::Usage(format!("{}: {e}", work.display())))?;
    let plugin_sha = sha256(&work.join("census.c"), &log)?;
    let dir = root.join(cache_key(&version, &plugin_sha));
    let so = dir.join("libcensus.so");
    if so.is_file() {
        let _ = std::fs::remove_dir_all(&work);
        let built_from = std::fs::read_to_string(dir.join("BUILT_FROM")).unwrap_or_default().trim().to_string();
        return Ok(Plugin { path: so, built_from });
    }
    eprintln!("irqlab-lab: building the census plugin against QEMU {version}'s plugin header (Debian source package); log → {}", log.display());
    let suite = crate::fio_build::suite(&std::fs::read_to_string("/etc/os-release").unwrap_or_default())
        .ok_or_else(|| CensusError::Usage("--census: no VERSION_CODENAME in /etc/os-release: cannot tell which Debian suite's QEMU source to fetch".into()))?;
    std::fs::write(apt.join("sources.list"), format!("deb-src http://deb.debian.org/debian {suite} main\ndeb-src http://deb.debian.org/debian-security {suite}-security main\n"))
        .map_err(|e| CensusError::Usage(e.to_string()))?;
    let opts = crate::fio_build::apt_options(&apt);
    step(Command::new("apt-get").args(&opts).arg("update"), "apt-get update (deb-src only, private lists)", &log)?;
    step(Command::new("apt-get").args(&opts).args(["source", "--download-only", &format!("qemu={version}")]).current_dir(&src_dir), "apt-get source --download-only qemu", &log)?;
    let orig = std::fs::read_dir(&src_dir)
        .map_err(|e| CensusError::Usage(e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(".orig.tar")))
        .ok_or_else(|| CensusError::Step { step: "apt-get source fetched no .orig tarball".into(), log: log.clone() })?;
    step(Command::new("tar").arg("-xf").arg(&orig).args(["--wildcards", "*/include/qemu/qemu-plugin.h", "--strip-components=3"]).current_dir(&work), "tar -x qemu-plugin.h", &log)?;
    let header_sha = sha256(&work.join("qemu-plugin.h"), &log)?;
    step(
        Command::new("gcc").args(["-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-I"]).arg(&work).arg("-o").arg(work.join("libcensus.so")).arg(work.join("census.c")),
        "gcc -shared census.c",
        &log,
    )?;
    let built_from = format!("qemu {version} (Debian source package), qemu-plugin.h sha256 {header_sha}, census.c sha256 {plugin_sha}");
    let stage = root.join(format!(".stage{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage).map_err(|e| CensusError::Usage(e.to_string()))?;
    for f in ["libcensus.so", "census.c", "qemu-plugin.h"] {
        std::fs::copy(work.join(f), stage.join(f)).map_err(|e| CensusError::Usage(format!("copy {f}: {e}")))?;
    }
    std::fs::write(stage.join("BUILT_FROM"), format!("{built_from}\n")).map_err(|e| CensusError::Usage(e.to_string()))?;
    if std::fs::rename(&stage, &dir).is_err() && !so.is_file() {
        return Err(CensusError::Usage(format!("{}: could not place the built plugin", dir.display())));
    }
    let _ = std::fs::remove_dir_all(&stage);
    let _ = std::fs::remove_dir_all(&work);
    Ok(Plugin { path: so, built_from })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_key_is_a_safe_directory_name() {
        assert_eq!(cache_key("1:7.2+dfsg-7+deb12u18", "0123456789abcdef0123"), "1_7.2+dfsg-7+deb12u18-0123456789abcdef");
    }

    #[test]
    fn the_compiled_in_source_is_the_plugin() {
        assert!(SOURCE.contains("qemu_plugin_install"));
        assert!(SOURCE.contains("irqlab-census 1"), "the header line window.rs checks");
    }

    #[test]
    fn a_qemu_without_plugins_is_refused() {
        let e = check_qemu(Path::new("/bin/true")).unwrap_err();
        assert!(e.to_string().contains("no TCG plugin support"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}

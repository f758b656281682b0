//! Finding and fetching what the lab runs: host tools (QEMU, dtc, the cross compiler) must be on
//! PATH — `scripts/ensure-deps.sh` installs them, and the lab installs nothing: a missing one is
//! exit 2 naming the tool and its Debian package ([`require_tool`]); the arm64 Debian packages
//! that are the system under test (Xen, the kernel, busybox) are fetched with `apt-get download`
//! (no root, nothing installed) and unpacked with `dpkg-deb -x` into the lab cache. Every action
//! is announced on stderr; a failure is one line naming the package.
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::LabError;

/// Where fetched packages are unpacked: `$IRQLAB_LAB_CACHE`, else `$XDG_CACHE_HOME/irqlab-lab`,
/// else `~/.cache/irqlab-lab`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("IRQLAB_LAB_CACHE") {
        return d.into();
    }
    let base = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into())).join(".cache"));
    base.join("irqlab-lab")
}

/// `name` in the directories of `path` (a `PATH` value), if an executable file is there.
pub fn find_in_path(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).map(|d| d.join(name)).find(|p| p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false))
}

/// The first file under `dir/sub` whose name starts with `prefix` and does not end with one of
/// `skip` (e.g. `.config`, `.efi`), in name order.
pub fn find_file(dir: &Path, sub: &str, prefix: &str, skip: &[&str]) -> Option<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.join(sub)).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    names.into_iter().find(|p| {
        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        n.starts_with(prefix) && !skip.iter().any(|s| n.ends_with(s)) && p.is_file()
    })
}

/// A host command that could not be run or failed: what it was, and its last line of stderr.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("cannot run {what}: {source}")]
    Spawn { what: String, source: std::io::Error },
    #[error("{what} failed: {last_line}")]
    Failed { what: String, last_line: String },
}

fn run(cmd: &mut Command, what: &str) -> Result<String, ToolError> {
    let out = cmd.output().map_err(|source| ToolError::Spawn { what: what.into(), source })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(ToolError::Failed { what: what.into(), last_line: err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(no message)").trim().to_string() });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A host tool on PATH; when missing, exit 2 naming it and the Debian package
/// `scripts/ensure-deps.sh` installs it from (the lab installs nothing at run time).
pub fn require_tool(bin: &str, package: &str) -> Result<PathBuf, LabError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    find_in_path(bin, &path).ok_or_else(|| missing_tool(bin, package))
}

/// The refusal for a missing host tool.
pub fn missing_tool(bin: &str, package: &str) -> LabError {
    LabError::Usage(format!("{bin} is not on PATH: scripts/ensure-deps.sh installs it (Debian package {package}); the lab installs nothing itself"))
}

/// The exact package a metapackage depends on (`linux-image-arm64` → `linux-image-6.1.0-NN-arm64`),
/// from `apt-cache depends` output.
pub fn first_dependency(apt_cache_depends: &str, prefix: &str) -> Option<String> {
    apt_cache_depends.lines().filter_map(|l| l.trim().strip_prefix("Depends: ")).map(|d| d.split(':').next().unwrap_or(d).trim().to_string()).find(|d| d.starts_with(prefix))
}

/// An arm64 package unpacked under `cache/<package>` (fetched when the directory lacks `want`):
/// returns the unpacked root.
pub fn ensure_arm64_package(cache: &Path, package: &str, want: impl Fn(&Path) -> bool) -> Result<PathBuf, LabError> {
    ensure_arm64_package_part(cache, package, None, want)
}

/// As [`ensure_arm64_package`], unpacking only the members under `part` (e.g. `./boot`) when
/// given: the kernel package is 60 MB of modules the lab does not use.
pub fn ensure_arm64_package_part(cache: &Path, package: &str, part: Option<&str>, want: impl Fn(&Path) -> bool) -> Result<PathBuf, LabError> {
    ensure_arm64_package_into(cache, package, package, part, want)
}

/// As [`ensure_arm64_package_part`], unpacked into `cache/<dir>` (another part of a package
/// already unpacked under its own name: the kernel's vfio modules beside its `./boot`); a
/// `.deb` already in the cache is not downloaded again.
pub fn ensure_arm64_package_into(cache: &Path, package: &str, dir: &str, part: Option<&str>, want: impl Fn(&Path) -> bool) -> Result<PathBuf, LabError> {
    let root = cache.join(dir);
    if want(&root) {
        return Ok(root);
    }
    let debs = cache.join("debs");
    std::fs::create_dir_all(&debs).map_err(LabError::io(&debs))?;
    let fail = |e: String| LabError::Setup(format!("{package}:arm64 could not be fetched ({e}); the lab needs `dpkg --add-architecture arm64 && apt-get update`"));
    if find_file(&debs, "", &format!("{package}_"), &[".part"]).is_none() {
        eprintln!("irqlab-lab: fetching {package}:arm64 (apt-get download, dpkg-deb -x into {})", root.display());
        run(Command::new("apt-get").args(["download", &format!("{package}:arm64")]).current_dir(&debs), "apt-get download").map_err(|e| fail(e.to_string()))?;
    } else {
        eprintln!("irqlab-lab: unpacking {} of the cached {package}:arm64 into {}", part.unwrap_or("all"), root.display());
    }
    let deb = find_file(&debs, "", &format!("{package}_"), &[".part"]).ok_or_else(|| fail("no .deb after download".into()))?;
    let tmp = cache.join(format!(".{dir}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    match part {
        None => run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&tmp), "dpkg-deb -x").map_err(|e| fail(e.to_string()))?,
        Some(p) => {
            std::fs::create_dir_all(&tmp).map_err(LabError::io(&tmp))?;
            let sh = format!("dpkg-deb --fsys-tarfile \"$1\" | tar -x -C \"$2\" \"{p}\"");
            run(Command::new("sh").args(["-c", &sh, "sh"]).arg(&deb).arg(&tmp), "dpkg-deb --fsys-tarfile | tar -x").map_err(|e| fail(e.to_string()))?
        }
    };
    let _ = std::fs::remove_dir_all(&root);
    std::fs::rename(&tmp, &root).map_err(LabError::io(&root))?;
    if !want(&root) {
        return Err(fail(format!("{} does not hold the expected file", deb.display())));
    }
    Ok(root)
}

/// Xen's hypervisor binary from `xen-hypervisor-4.17-arm64:arm64`.
pub const XEN_PACKAGE: &str = "xen-hypervisor-4.17-arm64";

pub fn xen_binary(cache: &Path) -> Result<PathBuf, LabError> {
    let find = |root: &Path| find_file(root, "boot", "xen-", &[".config", ".efi"]);
    let root = ensure_arm64_package(cache, XEN_PACKAGE, |r| find(r).is_some())?;
    Ok(find(&root).expect("checked by ensure_arm64_package"))
}

/// Resolves `linux-image-arm64` to its versioned package with `apt-cache depends`.
pub fn kernel_package() -> Result<String, LabError> {
    let out =
        run(Command::new("apt-cache").args(["depends", "linux-image-arm64:arm64"]), "apt-cache depends linux-image-arm64:arm64").map_err(|e| LabError::Setup(e.to_string()))?;
    first_dependency(&out, "linux-image-").ok_or_else(|| LabError::Setup("linux-image-arm64:arm64 names no linux-image-* dependency".into()))
}

/// Debian's arm64 kernel Image (`boot/vmlinuz-*`, an uncompressed arm64 Image).
pub fn kernel_image(cache: &Path) -> Result<PathBuf, LabError> {
    let find = |root: &Path| find_file(root, "boot", "vmlinuz-", &[]);
    let pkg = kernel_package()?;
    let root = ensure_arm64_package_part(cache, &pkg, Some("./boot"), |r| find(r).is_some())?;
    Ok(find(&root).expect("checked"))
}

/// busybox-static's `bin/busybox` (aarch64).
pub fn busybox(cache: &Path) -> Result<PathBuf, LabError> {
    let root = ensure_arm64_package(cache, "busybox-static", |r| r.join("bin/busybox").is_file())?;
    Ok(root.join("bin/busybox"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn finds_executables_only() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("qemu-system-aarch64");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::write(d.path().join("dtc"), "not executable").unwrap();
        assert_eq!(find_in_path("qemu-system-aarch64", d.path().as_os_str()), None);
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), d.path()]).unwrap();
        assert_eq!(find_in_path("qemu-system-aarch64", &path), Some(exe));
        assert_eq!(find_in_path("dtc", &path), None);
    }

    #[test]
    fn finds_the_xen_binary_not_its_config_or_efi() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("boot")).unwrap();
        for n in ["xen-4.17-arm64.config", "xen-4.17-arm64.efi", "xen-4.17-arm64"] {
            std::fs::write(d.path().join("boot").join(n), "x").unwrap();
        }
        assert_eq!(find_file(d.path(), "boot", "xen-", &[".config", ".efi"]), Some(d.path().join("boot/xen-4.17-arm64")));
        assert_eq!(find_file(d.path(), "boot", "vmlinuz-", &[]), None);
        assert_eq!(find_file(d.path(), "nope", "xen-", &[]), None);
    }

    #[test]
    fn cached_package_is_not_fetched_again() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(XEN_PACKAGE).join("boot")).unwrap();
        std::fs::write(d.path().join(XEN_PACKAGE).join("boot/xen-4.17-arm64"), "x").unwrap();
        // No apt-get is run: the binary is already unpacked.
        assert_eq!(xen_binary(d.path()).unwrap(), d.path().join(XEN_PACKAGE).join("boot/xen-4.17-arm64"));
    }

    #[test]
    fn a_missing_tool_is_named_with_its_package_and_nothing_is_installed() {
        let e = missing_tool("qemu-system-aarch64", "qemu-system-arm");
        assert_eq!(e.exit_code(), 2);
        let t = e.to_string();
        assert!(t.contains("qemu-system-aarch64 is not on PATH") && t.contains("Debian package qemu-system-arm") && t.contains("ensure-deps.sh"), "{t}");
        assert!(require_tool("irqlab-lab-no-such-tool", "nothing").is_err());
    }

    #[test]
    fn metapackage_dependency() {
        let out = "linux-image-arm64:arm64\n  Depends: linux-image-6.1.0-41-arm64:arm64\n  Suggests: foo\n";
        assert_eq!(first_dependency(out, "linux-image-").as_deref(), Some("linux-image-6.1.0-41-arm64"));
        assert_eq!(first_dependency("Depends: libc6\n", "linux-image-"), None);
    }
}

//! Which kernel the KVM lab boots, checked before it boots: Debian's packaged one (the default),
//! or the developer's own (`--kernel IMAGE [--modules DIR] [--kernel-config FILE]`, or `--kernel
//! FILE.deb`, a Debian kernel package as `make bindeb-pkg` writes it). Issue 34: a patch gate
//! must run *your* build and say what it ran, so every result gets [`KernelChoice::record`]: the
//! release, the sha256 of the image (and of the .deb), where the configuration came from and
//! which needed options could not be checked.
//!
//! The configuration is looked for in this order: `--kernel-config`; the image's own
//! (`CONFIG_IKCONFIG=y`); `config-<release>` beside the image (`/boot` layout, a .deb); `.config`
//! three directories up (`arch/arm64/boot/Image` in a build tree); `build/.config` in the modules
//! tree. None found: the lab says which options it could not check and boots anyway (the boot
//! still fails visibly without `/dev/kvm`).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::kernel_image::{self, KernelImageError};

/// Why the kernel choice cannot be used; `flag` names what the user gave.
#[derive(Debug, thiserror::Error)]
pub enum OwnKernelError {
    #[error("{flag} {}: {source}", path.display())]
    Image { flag: &'static str, path: PathBuf, source: KernelImageError },
    #[error("{flag} {}: {why}", path.display())]
    File { flag: &'static str, path: PathBuf, why: String },
    #[error("--modules: {0}")]
    Modules(String),
    /// A file not read: not a regular file, or over its bound (`input::read_bounded`).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

/// Bound on a kernel image read for its checks (a distribution arm64 Image is ~35 MB; the
/// decompressed bound of `kernel_image` is the same).
pub const MAX_IMAGE_BYTES: u64 = 256 << 20;
/// Bound on a kernel `.config` (Debian's arm64 one is ~280 KB).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The kernel a run boots and what is known about it.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelChoice {
    pub image: PathBuf,
    pub release: String,
    pub banner: String,
    pub sha256: String,
    /// `debian package linux-image-…`, `--kernel PATH`, `--kernel PKG.deb (sha256 …)`.
    pub source: String,
    /// Where the configuration came from, or `None`.
    pub config_from: Option<String>,
    pub config: BTreeMap<String, String>,
    /// Needed options that could not be checked (no configuration found).
    pub unchecked: Vec<String>,
    /// A `lib/modules/<release>` tree (matching, checked).
    pub modules: Option<PathBuf>,
}

impl KernelChoice {
    /// What ran, as `platform` entries of every result.
    pub fn record(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::from([
            ("lab.kernel".to_string(), self.release.clone()),
            ("lab.kernel.banner".to_string(), self.banner.clone()),
            ("lab.kernel.sha256".to_string(), self.sha256.clone()),
            ("lab.kernel.source".to_string(), self.source.clone()),
            ("lab.kernel.config".to_string(), self.config_from.clone().unwrap_or_else(|| "none found: not checked".into())),
        ]);
        if !self.unchecked.is_empty() {
            m.insert("lab.kernel.unchecked".into(), self.unchecked.join(", "));
        }
        if let Some(d) = &self.modules {
            m.insert("lab.modules".into(), d.display().to_string());
        }
        m
    }

    /// `CONFIG_key` is `y` (built in).
    pub fn builtin(&self, key: &str) -> bool {
        self.config.get(key).map(String::as_str) == Some("y")
    }
}

/// A Debian package (`ar` archive) rather than an image.
pub fn is_deb(path: &Path) -> bool {
    let mut b = [0u8; 8];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b)).is_ok() && &b == b"!<arch>\n"
}

fn config_candidates(image: &Path, release: &str, modules: Option<&Path>) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(dir) = image.parent() {
        v.push(dir.join(format!("config-{release}")));
        if let Some(top) = dir.parent().and_then(Path::parent).and_then(Path::parent) {
            v.push(top.join(".config"));
        }
    }
    if let Some(m) = modules {
        v.push(m.join("build/.config"));
    }
    v
}

/// Checks `image` (and `modules`, `config`) for a run with or without `--device edu`.
/// `flag` names the option the image came from (`--kernel`); `source` describes it.
pub fn check(image: &Path, modules: Option<&Path>, config: Option<&Path>, device: bool, flag: &'static str, source: String) -> Result<KernelChoice, OwnKernelError> {
    let file_err = |flag: &'static str, path: &Path, why: String| OwnKernelError::File { flag, path: path.to_path_buf(), why };
    let bytes = crate::input::read_bounded(flag, image, MAX_IMAGE_BYTES, "an arm64 kernel Image is ~35 MB")?;
    let facts = kernel_image::inspect(&bytes).map_err(|source| OwnKernelError::Image { flag, path: image.into(), source })?;
    drop(bytes);
    let sha256 = kernel_image::sha256_file(image).map_err(|e| file_err(flag, image, e.to_string()))?;
    let (config_from, text) = if let Some(c) = config {
        let t = crate::input::read_text_bounded("--kernel-config", c, MAX_CONFIG_BYTES, "a kernel .config is ~300 KB")?;
        if !t.lines().any(|l| l.starts_with("CONFIG_")) {
            return Err(file_err("--kernel-config", c, "holds no CONFIG_ line (not a kernel .config)".into()));
        }
        (Some(format!("--kernel-config {}", c.display())), Some(t))
    } else if let Some(t) = facts.ikconfig.clone() {
        (Some("embedded in the image (CONFIG_IKCONFIG)".to_string()), Some(t))
    } else {
        match config_candidates(image, &facts.release, modules).into_iter().find(|p| p.is_file()) {
            Some(p) => {
                let t = crate::input::read_text_bounded("--kernel-config", &p, MAX_CONFIG_BYTES, "a kernel .config is ~300 KB")?;
                (Some(p.display().to_string()), Some(t))
            }
            None => (None, None),
        }
    };
    let needs = kernel_image::needs(device);
    let config = text.as_deref().map(kernel_image::parse_config).unwrap_or_default();
    let unchecked = if text.is_some() {
        let missing = kernel_image::missing(&config, &needs);
        if !missing.is_empty() {
            let source = KernelImageError::Missing(missing);
            return Err(OwnKernelError::Image { flag, path: image.into(), source });
        }
        Vec::new()
    } else {
        needs.iter().map(|n| n.key.to_string()).collect()
    };
    if let Some(m) = modules {
        if !m.is_dir() {
            return Err(OwnKernelError::Modules(format!("{}: not a directory (expected a lib/modules/<release> tree)", m.display())));
        }
        kernel_image::check_modules(m, &facts.release).map_err(|e| OwnKernelError::Modules(format!("{}: {e}", m.display())))?;
    }
    let choice =
        KernelChoice { image: image.into(), release: facts.release, banner: facts.banner, sha256, source, config_from, config, unchecked, modules: modules.map(Path::to_path_buf) };
    if device && modules.is_none() && !["CONFIG_VFIO", "CONFIG_VFIO_PCI", "CONFIG_VFIO_IOMMU_TYPE1"].iter().all(|k| choice.builtin(k)) {
        return Err(OwnKernelError::Modules(format!(
            "--device edu needs VFIO's modules (vfio, vfio_iommu_type1, vfio-pci) and {flag} {} has them as modules or unchecked: give --modules lib/modules/{}, or a .deb",
            image.display(),
            choice.release
        )));
    }
    Ok(choice)
}

/// A kernel `.deb` unpacked (once, by content) under `cache/user-kernels/<sha256>`: (root, sha256).
pub fn unpack_deb(deb: &Path, cache: &Path) -> Result<(PathBuf, String), OwnKernelError> {
    let err = |why: String| OwnKernelError::File { flag: "--kernel", path: deb.into(), why };
    let sha = kernel_image::sha256_file(deb).map_err(|e| err(e.to_string()))?;
    let root = cache.join("user-kernels").join(&sha[..32]);
    if root.join(".complete").is_file() {
        return Ok((root, sha));
    }
    let tmp = cache.join("user-kernels").join(format!(".{}.tmp{}", &sha[..32], std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| err(format!("{}: {e}", tmp.display())))?;
    eprintln!("irqlab-lab: unpacking {} (dpkg-deb -x) into {}", deb.display(), root.display());
    let out = Command::new("dpkg-deb").arg("-x").arg(deb).arg(&tmp).output().map_err(|e| err(format!("cannot run dpkg-deb: {e}")))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(err(format!("dpkg-deb -x failed: {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    std::fs::write(tmp.join(".complete"), &sha).map_err(|e| err(e.to_string()))?;
    let _ = std::fs::remove_dir_all(&root);
    std::fs::rename(&tmp, &root).map_err(|e| err(format!("{}: {e}", root.display())))?;
    Ok((root, sha))
}

/// The image and modules tree inside an unpacked kernel package (`boot/vmlinuz-<release>`,
/// `lib/modules/<release>`).
pub fn in_package(root: &Path) -> Option<(PathBuf, Option<PathBuf>)> {
    let image = crate::deps::find_file(root, "boot", "vmlinuz-", &[])?;
    let release = image.file_name()?.to_str()?.strip_prefix("vmlinuz-")?.to_string();
    let modules = root.join("lib/modules").join(&release);
    Some((image, modules.is_dir().then_some(modules)))
}

/// `--kernel X [--modules DIR] [--kernel-config FILE]` resolved and checked.
pub fn choose(kernel: &Path, modules: Option<&Path>, config: Option<&Path>, device: bool, cache: &Path) -> Result<KernelChoice, OwnKernelError> {
    if kernel.is_file() && is_deb(kernel) {
        if modules.is_some() {
            return Err(OwnKernelError::Modules("not with --kernel PKG.deb: the package's own lib/modules tree is used".into()));
        }
        let (root, sha) = unpack_deb(kernel, cache)?;
        let (image, mods) = in_package(&root).ok_or_else(|| OwnKernelError::File {
            flag: "--kernel",
            path: kernel.into(),
            why: "a .deb without boot/vmlinuz-<release> (not a Debian kernel image package)".into(),
        })?;
        let source = format!("--kernel {} (Debian package, sha256 {sha})", kernel.display());
        return check(&image, mods.as_deref(), config, device, "--kernel", source);
    }
    check(kernel, modules, config, device, "--kernel", format!("--kernel {}", kernel.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_image::tests::{image, ko};

    const GOOD: &str = "CONFIG_KVM=y\nCONFIG_ARM_GIC_V3_ITS=y\nCONFIG_IRQ_BYPASS_MANAGER=y\nCONFIG_VFIO=m\nCONFIG_VFIO_PCI=m\nCONFIG_VFIO_IOMMU_TYPE1=m\nCONFIG_ARM_SMMU_V3=y\n";

    fn tree(release: &str, config_beside: Option<&str>) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let boot = d.path().join("boot");
        std::fs::create_dir_all(&boot).unwrap();
        let img = boot.join(format!("vmlinuz-{release}"));
        std::fs::write(&img, image(release, None)).unwrap();
        if let Some(c) = config_beside {
            std::fs::write(boot.join(format!("config-{release}")), c).unwrap();
        }
        let m = d.path().join("lib/modules").join(release);
        std::fs::create_dir_all(m.join("kernel/drivers/vfio")).unwrap();
        std::fs::write(m.join("kernel/drivers/vfio/vfio.ko"), ko(release)).unwrap();
        (d, img, m)
    }

    #[test]
    fn own_image_with_config_beside_and_matching_modules() {
        let (_d, img, m) = tree("6.8.0-dev", Some(GOOD));
        let c = check(&img, Some(&m), None, true, "--kernel", "x".into()).unwrap();
        assert_eq!(c.release, "6.8.0-dev");
        assert!(c.unchecked.is_empty());
        assert!(c.config_from.as_deref().unwrap().ends_with("config-6.8.0-dev"));
        let r = c.record();
        assert_eq!(r["lab.kernel"], "6.8.0-dev");
        assert_eq!(r["lab.kernel.sha256"].len(), 64);
        assert!(!r.contains_key("lab.kernel.unchecked"));
    }

    #[test]
    fn kernel_without_kvm_is_refused_naming_the_option() {
        let (_d, img, _m) = tree("6.8.0-dev", Some(&GOOD.replace("CONFIG_KVM=y", "# CONFIG_KVM is not set")));
        let e = check(&img, None, None, false, "--kernel", "x".into()).unwrap_err().to_string();
        assert!(e.starts_with("--kernel ") && e.contains("CONFIG_KVM (KVM itself") && e.contains("not set"), "{e}");
    }

    #[test]
    fn no_config_anywhere_says_what_was_not_checked() {
        let (_d, img, _m) = tree("6.8.0-dev", None);
        let c = check(&img, None, None, false, "--kernel", "x".into()).unwrap();
        assert_eq!(c.unchecked, ["CONFIG_KVM", "CONFIG_ARM_GIC_V3_ITS", "CONFIG_IRQ_BYPASS_MANAGER"]);
        assert_eq!(c.record()["lab.kernel.config"], "none found: not checked");
        // --device edu without modules and without proof VFIO is built in: refused.
        let e = check(&img, None, None, true, "--kernel", "x".into()).unwrap_err().to_string();
        assert!(e.starts_with("--modules:") && e.contains("lib/modules/6.8.0-dev"), "{e}");
    }

    #[test]
    fn explicit_config_and_bad_files() {
        let (d, img, m) = tree("6.8.0-dev", None);
        let cfg = d.path().join("my.config");
        std::fs::write(&cfg, "hello\n").unwrap();
        let e = check(&img, None, Some(&cfg), false, "--kernel", "x".into()).unwrap_err().to_string();
        assert!(e.contains("--kernel-config") && e.contains("no CONFIG_ line"), "{e}");
        std::fs::write(&cfg, GOOD).unwrap();
        assert!(check(&img, Some(&m), Some(&cfg), true, "--kernel", "x".into()).is_ok());
        let e = check(&d.path().join("nope"), None, None, false, "--kernel", "x".into()).unwrap_err().to_string();
        assert!(e.contains("--kernel") && e.contains("No such file"), "{e}");
        let e = check(&cfg, None, None, false, "--kernel", "x".into()).unwrap_err().to_string();
        assert!(e.contains("not an arm64 Linux Image"), "{e}");
    }

    #[test]
    fn devices_and_huge_files_are_refused_unread() {
        // Issue 45: both were read whole (/dev/zero never ends; a multi-GB file fills memory).
        let (d, img, _m) = tree("6.8.0-dev", None);
        let e = choose(Path::new("/dev/zero"), None, None, false, d.path()).unwrap_err().to_string();
        assert!(e.starts_with("--kernel /dev/zero: a character device, not a regular file"), "{e}");
        let e = check(&img, None, Some(Path::new("/dev/zero")), false, "--kernel", "x".into()).unwrap_err().to_string();
        assert!(e.starts_with("--kernel-config /dev/zero: a character device"), "{e}");
        let huge = d.path().join("huge");
        std::fs::File::create(&huge).unwrap().set_len(4 << 30).unwrap();
        let e = choose(&huge, None, None, false, d.path()).unwrap_err().to_string();
        assert!(e.contains("4294967296 bytes, more than the 268435456"), "{e}");
        let e = check(&img, None, Some(&huge), false, "--kernel", "x".into()).unwrap_err().to_string();
        assert!(e.starts_with("--kernel-config") && e.contains("more than the 16777216"), "{e}");
    }

    #[test]
    fn modules_of_another_release_are_refused() {
        let (_d, img, _m) = tree("6.8.0-dev", Some(GOOD));
        let (_e, _img2, other) = tree("6.1.0-56-arm64", None);
        let e = check(&img, Some(&other), None, false, "--kernel", "x".into()).unwrap_err().to_string();
        assert!(e.starts_with("--modules:") && e.contains("6.8.0-dev") && e.contains("6.1.0-56-arm64"), "{e}");
    }

    #[test]
    fn a_deb_is_unpacked_once_and_used_whole() {
        // dpkg-deb is part of dpkg, on every Debian the project supports: never skipped as if passed.
        assert!(crate::deps::find_in_path("dpkg-deb", &std::env::var_os("PATH").unwrap_or_default()).is_some(), "this test needs dpkg-deb (Debian's dpkg)");
        let (d, _img, _m) = tree("6.8.0-dev", Some(GOOD));
        std::fs::create_dir(d.path().join("DEBIAN")).unwrap();
        std::fs::write(d.path().join("DEBIAN/control"), "Package: linux-image-6.8.0-dev\nVersion: 1\nArchitecture: arm64\nMaintainer: t <t@t>\nDescription: t\n").unwrap();
        let out = tempfile::tempdir().unwrap();
        let deb = out.path().join("k.deb");
        let o = Command::new("dpkg-deb").args(["--root-owner-group", "-Zgzip", "-b"]).arg(d.path()).arg(&deb).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(is_deb(&deb));
        let cache = out.path().join("cache");
        let c = choose(&deb, None, None, true, &cache).unwrap();
        assert_eq!(c.release, "6.8.0-dev");
        assert!(c.modules.as_ref().unwrap().ends_with("lib/modules/6.8.0-dev"));
        assert!(c.source.contains("Debian package, sha256"), "{}", c.source);
        let e = choose(&deb, Some(&cache), None, false, &cache).unwrap_err().to_string();
        assert!(e.contains("--modules") && e.contains(".deb"), "{e}");
    }
}

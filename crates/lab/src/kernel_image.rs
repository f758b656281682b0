//! What a kernel is, read from its bytes before the lab boots it: `irqlab-lab kvm --kernel IMAGE`
//! (issue 34) lets a developer measure their own build, so the lab must refuse one it cannot use
//! with a reason instead of booting for a minute to a panic or a missing `/dev/kvm`.
//!
//! - **arm64 Linux Image**: the 64-byte header of `Documentation/arm64/booting.rst` (magic
//!   `ARM\x64` at offset 0x38), or the same inside a gzip stream (`Image.gz`, which QEMU's
//!   `-kernel` also loads).
//! - **Version**: `linux_banner` (`Linux version <release> (…`, init/version.c) is plain text in
//!   the image; `<release>` is what `uname -r` says and what `lib/modules/<release>` must be named.
//! - **Configuration**: the image's own (`CONFIG_IKCONFIG=y` embeds it gzip-compressed between
//!   `IKCFG_ST` and `IKCFG_ED`, kernel/configs.c), else a `config-<release>` / `.config` file found
//!   by the caller ([`crate::own_kernel`]). Without either, the lab says which options it could not
//!   check and records that in the result; it never guesses from symbol names.
//! - **Modules**: a `lib/modules/<release>` tree is used only when its name and every module's
//!   `vermagic=` start with the image's release (a mismatched module would not load anyway).
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sha2::Digest;

/// Why a kernel image or its modules cannot be used (the caller names the side and the flag).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelImageError {
    #[error("not an arm64 Linux Image: {0}")]
    NotArm64(String),
    #[error("no `Linux version <release> (` banner in the image: cannot tell which kernel it is")]
    NoVersion,
    #[error("the kernel lacks what the lab needs: {}", .0.join("; "))]
    Missing(Vec<String>),
    #[error("not a Xen/arm64 hypervisor binary: {0}")]
    NotXen(String),
    #[error("modules do not match the image's release {image}: {what}")]
    ModulesMismatch { image: String, what: String },
}

/// The facts of one image.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageFacts {
    /// `uname -r` of the kernel.
    pub release: String,
    /// The whole banner up to the first `)`.
    pub banner: String,
    pub gzip: bool,
    /// The embedded configuration (`CONFIG_IKCONFIG=y`), if any.
    pub ikconfig: Option<String>,
}

const MAGIC_OFFSET: usize = 0x38;
const MAGIC: &[u8; 4] = b"ARM\x64";
/// Bound on a decompressed image (a distribution arm64 Image is ~35 MB).
const MAX_IMAGE: u64 = 256 << 20;

fn gunzip(bytes: &[u8], limit: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes).take(limit).read_to_end(&mut out).ok()?;
    Some(out)
}

/// Reads an image (raw or gzip): the header, the release and the embedded configuration.
pub fn inspect(bytes: &[u8]) -> Result<ImageFacts, KernelImageError> {
    let gzip = bytes.starts_with(&[0x1f, 0x8b]);
    let owned;
    let img: &[u8] = if gzip {
        owned = gunzip(bytes, MAX_IMAGE).ok_or_else(|| KernelImageError::NotArm64("a gzip stream that does not decompress".into()))?;
        &owned
    } else {
        bytes
    };
    if img.len() < 64 {
        return Err(KernelImageError::NotArm64(format!("{} bytes, shorter than the 64-byte arm64 Image header", img.len())));
    }
    if &img[MAGIC_OFFSET..MAGIC_OFFSET + 4] != MAGIC {
        let what = if img.starts_with(b"\x7fELF") {
            "an ELF file (vmlinux?): give arch/arm64/boot/Image".to_string()
        } else if img.starts_with(b"MZ") && img.len() > 0x40 {
            "a PE file without the arm64 Image magic (an x86 bzImage or an EFI application?)".to_string()
        } else {
            format!("no magic `ARM\\x64` at offset 0x38 (found {:02x?})", &img[MAGIC_OFFSET..MAGIC_OFFSET + 4])
        };
        return Err(KernelImageError::NotArm64(what));
    }
    let (release, banner) = banner(img).ok_or(KernelImageError::NoVersion)?;
    Ok(ImageFacts { release, banner, gzip, ikconfig: ikconfig(img) })
}

/// A Xen/arm64 hypervisor binary: the arm64 Image header Xen's head.S carries (so boot loaders
/// take it as a kernel) and Xen's own banner format (`Xen version %d.%d%s`, common/kernel.c's
/// print_version); a Linux Image has the header too, so the banner decides.
pub fn check_xen(bytes: &[u8]) -> Result<(), KernelImageError> {
    if bytes.len() < 64 || &bytes[MAGIC_OFFSET..MAGIC_OFFSET + 4] != MAGIC {
        return Err(KernelImageError::NotXen("no arm64 Image header (magic `ARM\\x64` at 0x38)".into()));
    }
    // Linux's own Xen guest support prints Xen's version too: the Linux banner decides first.
    if let Some((release, _)) = banner(bytes) {
        return Err(KernelImageError::NotXen(format!("a Linux kernel Image ({release}), not Xen")));
    }
    if find(bytes, b"Xen version %d.%d").is_none() {
        return Err(KernelImageError::NotXen("no Xen banner (`Xen version %d.%d…`) in it".into()));
    }
    Ok(())
}

/// `Linux version <release> (…)`: the first occurrence whose release starts with a digit (format
/// strings such as `Linux version %s` are skipped).
pub fn banner(img: &[u8]) -> Option<(String, String)> {
    const KEY: &[u8] = b"Linux version ";
    let mut from = 0;
    while let Some(i) = find(&img[from..], KEY).map(|i| i + from) {
        let rest = &img[i + KEY.len()..];
        let end = rest.iter().position(|&b| b == b' ' || b == 0 || b == b'\n').unwrap_or(rest.len()).min(128);
        let release = String::from_utf8_lossy(&rest[..end]).into_owned();
        if release.starts_with(|c: char| c.is_ascii_digit()) && rest.get(end..end + 2) == Some(b" (") {
            let close = rest.iter().take(512).position(|&b| b == b')' || b == 0).unwrap_or(end);
            let banner = String::from_utf8_lossy(&img[i..i + KEY.len() + close + 1]).trim_end_matches('\0').to_string();
            return Some((release, banner));
        }
        from = i + KEY.len();
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The configuration `CONFIG_IKCONFIG=y` embeds (gzip between `IKCFG_ST` and `IKCFG_ED`).
pub fn ikconfig(img: &[u8]) -> Option<String> {
    let start = find(img, b"IKCFG_ST")? + 8;
    let len = find(&img[start..], b"IKCFG_ED")?;
    gunzip(&img[start..start + len], 8 << 20).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// `CONFIG_X=y|m|value` lines; `# CONFIG_X is not set` and absent keys are simply missing.
pub fn parse_config(text: &str) -> BTreeMap<String, String> {
    text.lines().filter_map(|l| l.trim().split_once('=')).filter(|(k, _)| k.starts_with("CONFIG_")).map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string())).collect()
}

/// One option the lab needs: built in (`y`) or, when `module_ok`, also `m`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Need {
    pub key: &'static str,
    pub module_ok: bool,
    pub why: &'static str,
}

/// What every KVM lab run needs, and with `--device edu` what VFIO assignment needs.
pub fn needs(device: bool) -> Vec<Need> {
    let mut v = vec![
        Need { key: "CONFIG_KVM", module_ok: false, why: "KVM itself (/dev/kvm)" },
        Need { key: "CONFIG_ARM_GIC_V3_ITS", module_ok: false, why: "the GICv3 ITS driver (the lab's machine has its=on; GICv4 and MSIs need it)" },
        Need { key: "CONFIG_IRQ_BYPASS_MANAGER", module_ok: true, why: "irq bypass (irqfd forwarding, GICv4 direct injection)" },
    ];
    if device {
        v.extend([
            Need { key: "CONFIG_VFIO", module_ok: true, why: "--device edu: VFIO" },
            Need { key: "CONFIG_VFIO_PCI", module_ok: true, why: "--device edu: vfio-pci" },
            Need { key: "CONFIG_VFIO_IOMMU_TYPE1", module_ok: true, why: "--device edu: VFIO's type1 IOMMU" },
            Need { key: "CONFIG_ARM_SMMU_V3", module_ok: true, why: "--device edu: the SMMUv3 in front of the device" },
        ]);
    }
    v
}

/// The needs `config` does not meet, each as `CONFIG_X (what it is for; found …)`.
pub fn missing(config: &BTreeMap<String, String>, needs: &[Need]) -> Vec<String> {
    needs
        .iter()
        .filter_map(|n| {
            let v = config.get(n.key).map(String::as_str);
            let ok = v == Some("y") || (n.module_ok && v == Some("m"));
            (!ok).then(|| format!("{} ({}; found {})", n.key, n.why, v.map(|v| format!("={v}")).unwrap_or_else(|| "not set".into())))
        })
        .collect()
}

/// The `vermagic=` of a module image (its `.modinfo` string), if any.
pub fn vermagic(ko: &[u8]) -> Option<String> {
    ko.split(|&b| b == 0).find_map(|s| s.strip_prefix(b"vermagic=")).map(|v| String::from_utf8_lossy(v).into_owned())
}

/// Checks a `lib/modules/<release>` tree against the image's release: the directory's name and
/// the `vermagic=` of every `.ko` under it (a tree without modules is refused too).
pub fn check_modules(dir: &Path, release: &str) -> Result<usize, KernelImageError> {
    let bad = |what: String| KernelImageError::ModulesMismatch { image: release.into(), what };
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name != release {
        return Err(bad(format!("{} is named `{name}`; expected a lib/modules/{release} tree", dir.display())));
    }
    let mut todo = vec![dir.to_path_buf()];
    let mut n = 0;
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| bad(format!("{}: {e}", d.display())))?;
        for e in entries.flatten() {
            let p = e.path();
            // `build`/`source` are symlinks into a source tree: not modules.
            if p.is_symlink() {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "ko") {
                let ko = std::fs::read(&p).map_err(|e| bad(format!("{}: {e}", p.display())))?;
                match vermagic(&ko) {
                    Some(v) if v.split(' ').next() == Some(release) => n += 1,
                    Some(v) => return Err(bad(format!("{} was built for `{}`", p.display(), v.split(' ').next().unwrap_or("")))),
                    None => return Err(bad(format!("{} has no vermagic (not a kernel module)", p.display()))),
                }
            }
        }
    }
    if n == 0 {
        return Err(bad(format!("{} holds no .ko module", dir.display())));
    }
    Ok(n)
}

/// sha256 of a file, hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = sha2::Sha256::new();
    std::io::copy(&mut f, &mut h)?;
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::io::Write;

    /// A made-up arm64 Image: the header with its magic, a banner, optionally an embedded config.
    pub fn image(release: &str, config: Option<&str>) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[MAGIC_OFFSET..MAGIC_OFFSET + 4].copy_from_slice(MAGIC);
        b.extend_from_slice(b"\0Linux version %s (%s)\0junk\0");
        b.extend_from_slice(format!("Linux version {release} (dev@box) (gcc 12) #1 SMP\n\0").as_bytes());
        if let Some(c) = config {
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(c.as_bytes()).unwrap();
            b.extend_from_slice(b"IKCFG_ST");
            b.extend_from_slice(&z.finish().unwrap());
            b.extend_from_slice(b"IKCFG_ED");
        }
        b.extend_from_slice(&[0u8; 100]);
        b
    }

    pub fn ko(vermagic: &str) -> Vec<u8> {
        format!("\x7fELF\0license=GPL\0vermagic={vermagic} SMP mod_unload aarch64\0").into_bytes()
    }

    #[test]
    fn reads_release_and_embedded_config() {
        let f = inspect(&image("6.8.0-rc1-dev", Some("CONFIG_KVM=y\n# CONFIG_VFIO is not set\n"))).unwrap();
        assert_eq!(f.release, "6.8.0-rc1-dev");
        assert_eq!(f.banner, "Linux version 6.8.0-rc1-dev (dev@box)");
        assert!(!f.gzip);
        let c = parse_config(f.ikconfig.as_deref().unwrap());
        assert_eq!(c.get("CONFIG_KVM").map(String::as_str), Some("y"));
        assert!(!c.contains_key("CONFIG_VFIO"));
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&image("6.1.0-56-arm64", None)).unwrap();
        let g = inspect(&z.finish().unwrap()).unwrap();
        assert!(g.gzip && g.ikconfig.is_none());
        assert_eq!(g.release, "6.1.0-56-arm64");
    }

    #[test]
    fn refuses_what_is_not_an_arm64_image() {
        for (bytes, says) in [
            (b"\x7fELF\x02\x01\x01".iter().copied().chain(std::iter::repeat_n(0, 100)).collect::<Vec<u8>>(), "ELF"),
            (b"MZ".iter().copied().chain(std::iter::repeat_n(0, 100)).collect(), "PE file"),
            (vec![0u8; 100], "ARM\\x64"),
            (vec![1u8; 10], "shorter"),
            (vec![0x1f, 0x8b, 0, 0], "gzip"),
        ] {
            let e = inspect(&bytes).unwrap_err();
            assert!(matches!(e, KernelImageError::NotArm64(_)) && e.to_string().contains(says), "{e}");
        }
        let mut no_banner = image("6.1", None);
        let i = find(&no_banner, b"Linux version 6").unwrap();
        no_banner[i] = b'X';
        assert_eq!(inspect(&no_banner).unwrap_err(), KernelImageError::NoVersion);
    }

    #[test]
    fn names_every_missing_option() {
        let c = parse_config("CONFIG_KVM=m\nCONFIG_ARM_GIC_V3_ITS=y\nCONFIG_IRQ_BYPASS_MANAGER=m\nCONFIG_VFIO=m\nCONFIG_VFIO_PCI=y\n");
        let m = missing(&c, &needs(false));
        assert_eq!(m.len(), 1);
        assert!(m[0].starts_with("CONFIG_KVM (KVM itself") && m[0].ends_with("found =m)"), "{m:?}");
        let m = missing(&c, &needs(true));
        assert_eq!(m.iter().map(|s| s.split(' ').next().unwrap()).collect::<Vec<_>>(), ["CONFIG_KVM", "CONFIG_VFIO_IOMMU_TYPE1", "CONFIG_ARM_SMMU_V3"]);
        assert!(m[2].contains("not set"));
    }

    #[test]
    fn modules_must_match_the_release() {
        let d = tempfile::tempdir().unwrap();
        let m = d.path().join("lib/modules/6.8.0-dev");
        std::fs::create_dir_all(m.join("kernel/drivers/vfio")).unwrap();
        assert!(check_modules(&m, "6.8.0-dev").unwrap_err().to_string().contains("no .ko"));
        std::fs::write(m.join("kernel/drivers/vfio/vfio.ko"), ko("6.8.0-dev")).unwrap();
        assert_eq!(check_modules(&m, "6.8.0-dev").unwrap(), 1);
        let e = check_modules(&m, "6.8.0-other").unwrap_err().to_string();
        assert!(e.contains("named `6.8.0-dev`") && e.contains("6.8.0-other"), "{e}");
        std::fs::write(m.join("kernel/drivers/vfio/vfio_pci.ko"), ko("6.1.0-56-arm64")).unwrap();
        let e = check_modules(&m, "6.8.0-dev").unwrap_err().to_string();
        assert!(e.contains("vfio_pci.ko was built for `6.1.0-56-arm64`"), "{e}");
        std::fs::write(m.join("kernel/drivers/vfio/vfio_pci.ko"), b"not a module").unwrap();
        assert!(check_modules(&m, "6.8.0-dev").unwrap_err().to_string().contains("no vermagic"));
    }

    #[test]
    fn xen_is_told_from_linux_and_junk() {
        let mut xen = image("x", None);
        let i = find(&xen, b"Linux version x").unwrap();
        xen[i..i + 15].copy_from_slice(b"Xen version %d.");
        xen.extend_from_slice(b"Xen version %d.%d%s (%s)\0");
        let mut linux = image("6.1.0", None);
        linux.extend_from_slice(b"Xen version %d.%d%s\0");
        assert!(check_xen(&linux).unwrap_err().to_string().contains("a Linux kernel Image (6.1.0), not Xen"));
        assert_eq!(check_xen(&xen), Ok(()));
        assert!(check_xen(&image("6.1.0", None)).unwrap_err().to_string().contains("not Xen"));
        assert!(check_xen(b"#!/bin/sh\necho xen\n").unwrap_err().to_string().contains("no arm64 Image header"));
    }

    #[test]
    fn hashes_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(sha256_file(&p).unwrap(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}

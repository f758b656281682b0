//! Which PCI device to assign: `--vfio-device` as a PCI address (`0000:00:02.0`) or a
//! `/sys/bus/pci/devices/…` path, or else the only device bound to `vfio-pci`. The device must be
//! bound to vfio-pci already (irqlab does not rebind a host's devices); the error says how. The
//! messages name no flag: the caller prefixes the one the user gave ([`flag`]).
use std::path::{Path, PathBuf};

use super::VfioError;

/// What to bind, in the words every refusal uses.
pub fn how_to_bind(bdf: &str) -> String {
    format!("bind it first: `echo vfio-pci > /sys/bus/pci/devices/{bdf}/driver_override; echo {bdf} > /sys/bus/pci/drivers/vfio-pci/bind` (with the vfio-pci module loaded), then give --vfio-device {bdf}")
}

/// The flag a refusal names: `--vfio-device X` when given, else `--via <path>`.
pub fn flag(want: Option<&str>, via: &str) -> String {
    match want {
        Some(w) => format!("--vfio-device {w}"),
        None => format!("--via {via}"),
    }
}

/// Whether `s` is a PCI address `dddd:bb:dd.f` (hex digits).
pub fn is_bdf(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12 && b[4] == b':' && b[7] == b':' && b[10] == b'.' && s.chars().enumerate().all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// The device's sysfs directory under `sys` (normally `/sys`), checked to be bound to vfio-pci.
pub fn locate(sys: &Path, want: Option<&str>) -> Result<PathBuf, VfioError> {
    let devices = sys.join("bus/pci/devices");
    let driver_dir = sys.join("bus/pci/drivers/vfio-pci");
    let path = match want {
        Some(w) if is_bdf(w) => devices.join(w),
        Some(w) if w.starts_with('/') => PathBuf::from(w),
        Some(w) => return Err(VfioError::NoDevice(format!("expected a PCI address such as 0000:00:02.0 or a /sys/bus/pci/devices/… path, got `{w}`"))),
        None => {
            let mut bound: Vec<String> =
                std::fs::read_dir(&driver_dir).map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| is_bdf(n)).collect()).unwrap_or_default();
            bound.sort();
            match bound.as_slice() {
                [one] => devices.join(one),
                [] => {
                    return Err(VfioError::NoDevice(format!(
                        "no PCI device is bound to vfio-pci on this host ({} is empty or missing); {}",
                        driver_dir.display(),
                        how_to_bind("0000:00:02.0")
                    )))
                }
                many => return Err(VfioError::NoDevice(format!("{} devices are bound to vfio-pci ({}); choose one with --vfio-device", many.len(), many.join(", ")))),
            }
        }
    };
    if !path.exists() {
        return Err(VfioError::NoDevice(format!("{} does not exist", path.display())));
    }
    let bdf = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
    let driver = std::fs::read_link(path.join("driver")).ok().and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()));
    match driver.as_deref() {
        Some("vfio-pci") => Ok(path),
        Some(other) => Err(VfioError::NoDevice(format!("{bdf} is bound to {other}, not vfio-pci; unbind it and {}", how_to_bind(&bdf)))),
        None => Err(VfioError::NoDevice(format!("{bdf} is bound to no driver; {}", how_to_bind(&bdf)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fake sysfs: `devs` = (address, driver or none).
    fn sys(devs: &[(&str, Option<&str>)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let pci = d.path().join("bus/pci");
        for drv in ["vfio-pci", "edu"] {
            std::fs::create_dir_all(pci.join("drivers").join(drv)).unwrap();
        }
        std::fs::create_dir_all(pci.join("devices")).unwrap();
        for (bdf, drv) in devs {
            let dev = pci.join("devices").join(bdf);
            std::fs::create_dir_all(&dev).unwrap();
            if let Some(drv) = drv {
                symlink(pci.join("drivers").join(drv), dev.join("driver")).unwrap();
                symlink(&dev, pci.join("drivers").join(drv).join(bdf)).unwrap();
            }
        }
        d
    }

    #[test]
    fn addresses_are_recognised() {
        assert!(is_bdf("0000:00:02.0") && is_bdf("0001:af:1f.7"));
        assert!(!is_bdf("00:02.0") && !is_bdf("0000:00:02:0") && !is_bdf("0000:0g:02.0"));
    }

    #[test]
    fn the_only_bound_device_is_found_and_others_are_refused_with_how_to_bind() {
        let s = sys(&[("0000:00:02.0", Some("vfio-pci")), ("0000:00:03.0", Some("edu")), ("0000:00:04.0", None)]);
        assert_eq!(locate(s.path(), None).unwrap(), s.path().join("bus/pci/devices/0000:00:02.0"));
        assert_eq!(locate(s.path(), Some("0000:00:02.0")).unwrap(), s.path().join("bus/pci/devices/0000:00:02.0"));
        let e = locate(s.path(), Some("0000:00:03.0")).unwrap_err().to_string();
        assert!(e.contains("bound to edu, not vfio-pci") && e.contains("driver_override"), "{e}");
        let e = locate(s.path(), Some("0000:00:04.0")).unwrap_err().to_string();
        assert!(e.contains("bound to no driver") && e.contains("--vfio-device 0000:00:04.0"), "{e}");
        assert!(locate(s.path(), Some("0000:00:09.0")).unwrap_err().to_string().contains("does not exist"));
        assert!(locate(s.path(), Some("nonsense")).unwrap_err().to_string().ends_with("got `nonsense`"));
        assert_eq!(flag(Some("0000:00:03.0"), "vfio-msi"), "--vfio-device 0000:00:03.0");
        assert_eq!(flag(None, "vfio-intx"), "--via vfio-intx");
    }

    #[test]
    fn none_or_several_bound_devices_need_the_flag() {
        let s = sys(&[("0000:00:03.0", Some("edu"))]);
        let e = locate(s.path(), None).unwrap_err().to_string();
        assert!(e.starts_with("no PCI device is bound to vfio-pci") && e.contains("--vfio-device"), "{e}");
        let s = sys(&[("0000:00:02.0", Some("vfio-pci")), ("0000:00:05.0", Some("vfio-pci"))]);
        let e = locate(s.path(), None).unwrap_err().to_string();
        assert!(e.contains("2 devices are bound to vfio-pci (0000:00:02.0, 0000:00:05.0)"), "{e}");
    }
}

//! `irqlab-lab kvm --device edu`: a PCI device the lab's KVM host can assign to irqlab's guest
//! with VFIO, so that KVM's GICv4 direct injection (irq bypass, `kvm_vgic_v4_set_forwarding` in
//! arch/arm64/kvm/vgic/vgic-v4.c, Linux 6.1) is really exercised.
//!
//! - QEMU: `iommu=smmuv3` on `-M virt` (an emulated SMMUv3 in front of the PCI root complex: VFIO's
//!   type1 IOMMU needs an IOMMU group) and `-device edu` (QEMU's educational device, vendor 0x1234
//!   device 0x11e8, hw/misc/edu.c: one MSI vector or INTx, raised by a write to BAR0 + 0x60).
//! - The initramfs carries Debian's `vfio`, `vfio_iommu_type1`, `vfio_virqfd`, `vfio-pci-core`
//!   and `vfio-pci` modules from the cached `linux-image-*-arm64` package (`CONFIG_VFIO=m`,
//!   `CONFIG_VFIO_PCI=m`; SMMUv3 and the irq-bypass manager are built in), loaded with busybox
//!   `insmod` dependencies first. The package ships no `modules.dep` (depmod writes it at
//!   install), so the order comes from each module's own `depends=` (its `.modinfo` section, the
//!   field depmod reads).
//! - `/init` binds every 1234:11e8 device to vfio-pci (`driver_override` + `bind`) and prints
//!   its IOMMU group and the kernel's SMMU/VFIO lines.
//!
//! Opt-in (`--device edu`) rather than always on: the SMMU changes nothing for the other benches
//! but adds boot work, and the existing figures were taken without it.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::deps;
use crate::error::LabError;
use crate::frame::MARK;

/// The modules `vfio-pci` with the type1 IOMMU needs (their dependencies are added).
pub const WANTED: [&str; 2] = ["vfio_iommu_type1", "vfio-pci"];
/// Where the modules sit in the kernel package.
pub const MODULE_DIR: &str = "kernel/drivers/vfio";
/// QEMU's edu device: PCI vendor and device id (hw/misc/edu.c, `pci_edu_realize` class init).
pub const EDU_VENDOR: &str = "0x1234";
pub const EDU_DEVICE: &str = "0x11e8";

/// A module's name as the kernel spells it (`vfio-pci.ko` → `vfio_pci`).
pub fn canonical(name: &str) -> String {
    name.trim_end_matches(".ko").replace('-', "_")
}

/// The `depends=` list of a module image (its `.modinfo` strings are NUL-separated `key=value`).
pub fn depends(ko: &[u8]) -> Vec<String> {
    let key = b"depends=";
    for s in ko.split(|&b| b == 0) {
        if let Some(rest) = s.strip_prefix(key) {
            return String::from_utf8_lossy(rest).split(',').filter(|d| !d.is_empty()).map(canonical).collect();
        }
    }
    Vec::new()
}

/// Why modules cannot be loaded in dependency order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModuleError {
    /// The dependencies loop: the chain, then the module that closes it.
    #[error("module dependency cycle: {chain} → {module}")]
    Cycle { chain: String, module: String },
    /// A dependency the package does not ship.
    #[error("module {module} (needed by {needed_by}) is not in the package's {}", MODULE_DIR)]
    Missing { module: String, needed_by: String },
}

/// The load order for `wanted` (dependencies first, each once) over `modules` (canonical name →
/// image). A dependency that is not among `modules` is an error naming it.
pub fn load_order(modules: &BTreeMap<String, Vec<u8>>, wanted: &[&str]) -> Result<Vec<String>, ModuleError> {
    fn visit(n: &str, modules: &BTreeMap<String, Vec<u8>>, out: &mut Vec<String>, path: &mut Vec<String>) -> Result<(), ModuleError> {
        if out.iter().any(|o| o == n) {
            return Ok(());
        }
        if path.iter().any(|p| p == n) {
            return Err(ModuleError::Cycle { chain: path.join(" → "), module: n.into() });
        }
        let ko = modules.get(n).ok_or_else(|| ModuleError::Missing { module: n.into(), needed_by: path.last().map(String::as_str).unwrap_or("the lab").into() })?;
        path.push(n.to_string());
        for d in depends(ko) {
            visit(&d, modules, out, path)?;
        }
        path.pop();
        out.push(n.to_string());
        Ok(())
    }
    let mut out = Vec::new();
    for w in wanted {
        visit(&canonical(w), modules, &mut out, &mut Vec::new())?;
    }
    Ok(out)
}

/// Every `.ko` under `dir` (recursively), by canonical name.
fn read_modules(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, LabError> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).map_err(LabError::io(&d))? {
            let p = e.map_err(LabError::io(&d))?.path();
            if p.is_dir() {
                todo.push(p);
            } else if let Some(n) = p.file_name().and_then(|n| n.to_str()).filter(|n| n.ends_with(".ko")) {
                out.insert(canonical(n), std::fs::read(&p).map_err(LabError::io(&p))?);
            }
        }
    }
    Ok(out)
}

/// The modules to load, in order, as (canonical name, image), from the kernel package's
/// `lib/modules/<version>/kernel/drivers/vfio` (unpacked into the cache on first use).
pub fn modules(cache: &Path) -> Result<Vec<(String, Vec<u8>)>, LabError> {
    let pkg = deps::kernel_package()?;
    let version = pkg.trim_start_matches("linux-image-").to_string();
    let sub = format!("lib/modules/{version}/{MODULE_DIR}");
    let want = |root: &Path| root.join(&sub).join("vfio.ko").is_file();
    let root = deps::ensure_arm64_package_into(cache, &pkg, &format!("{pkg}-vfio"), Some(&format!("./{sub}")), want)?;
    let all = read_modules(&root.join(&sub))?;
    let order = load_order(&all, &WANTED).map_err(|e| LabError::Setup(format!("{pkg}: {e}")))?;
    Ok(order
        .into_iter()
        .map(|n| {
            let ko = all[&n].clone();
            (n, ko)
        })
        .collect())
}

/// The modules to load, in order, from a `lib/modules/<release>` tree (`--kernel --modules`).
pub fn modules_in(tree: &Path) -> Result<Vec<(String, Vec<u8>)>, LabError> {
    let dir = tree.join(MODULE_DIR);
    let all = if dir.is_dir() { read_modules(&dir)? } else { BTreeMap::new() };
    let order = load_order(&all, &WANTED).map_err(|e| LabError::Usage(format!("--modules {}: {e}", tree.display())))?;
    Ok(order.into_iter().map(|n| (n.clone(), all[&n].clone())).collect())
}

/// Where `/init` finds module `name`.
pub fn module_path(name: &str) -> PathBuf {
    PathBuf::from(format!("/lib/vfio/{name}.ko"))
}

/// The `/init` lines that load the modules and bind every edu device to vfio-pci; each outcome
/// is a marker line (`vfio insmod NAME ok|failed`, `vfio bound BDF group=N`, `vfio none`).
pub fn init_fragment(order: &[String]) -> String {
    let mut s = String::new();
    for n in order {
        s.push_str(&format!("insmod {p} && echo \"{MARK}vfio insmod {n} ok\" || echo \"{MARK}vfio insmod {n} failed\"\n", p = module_path(n).display()));
    }
    s.push_str(&format!(
        r#"bound=0
for d in /sys/bus/pci/devices/*; do
  [ "$(cat $d/vendor)" = {EDU_VENDOR} ] && [ "$(cat $d/device)" = {EDU_DEVICE} ] || continue
  b=$(basename $d)
  echo vfio-pci > $d/driver_override
  echo $b > /sys/bus/pci/drivers/vfio-pci/bind
  echo "{MARK}vfio bound $b group=$(basename $(readlink $d/iommu_group)) driver=$(basename $(readlink $d/driver))"
  bound=1
done
[ $bound = 1 ] || echo "{MARK}vfio none"
ls /dev/vfio | sed 's/^/{MARK}vfio dev /'
dmesg | grep -i -E 'smmu|vfio|iommu group' | sed 's/^/{MARK}dmesg /'
"#
    ));
    s
}

/// The IOMMU the machine gets for an assigned device (`-M virt,…,iommu=smmuv3`).
pub const IOMMU: &str = "smmuv3";
/// The device assigned (`-device edu`: QEMU's educational PCI device, vendor 0x1234 device 0x11e8).
pub const DEVICE: &str = "edu";

#[cfg(test)]
mod tests {
    use super::*;

    fn ko(deps: &str) -> Vec<u8> {
        format!("\x7fELF junk\0license=GPL\0depends={deps}\0name=x\0").into_bytes()
    }

    #[test]
    fn depends_come_from_modinfo() {
        assert_eq!(depends(&ko("vfio-pci-core,vfio")), vec!["vfio_pci_core", "vfio"]);
        assert!(depends(&ko("")).is_empty());
        assert!(depends(b"no modinfo here").is_empty());
    }

    #[test]
    fn load_order_puts_dependencies_first_once() {
        // Debian 6.1.0-56-arm64's drivers/vfio, as their modinfo says.
        let m: BTreeMap<String, Vec<u8>> =
            [("vfio", ""), ("vfio_iommu_type1", "vfio"), ("vfio_virqfd", ""), ("vfio_pci_core", "vfio,vfio_virqfd"), ("vfio_pci", "vfio-pci-core,vfio"), ("vfio_fsl_mc", "vfio")]
                .into_iter()
                .map(|(n, d)| (n.to_string(), ko(d)))
                .collect();
        assert_eq!(load_order(&m, &WANTED).unwrap(), ["vfio", "vfio_iommu_type1", "vfio_virqfd", "vfio_pci_core", "vfio_pci"]);
        let mut broken = m.clone();
        broken.remove("vfio_virqfd");
        let e = load_order(&broken, &WANTED).unwrap_err().to_string();
        assert!(e.contains("vfio_virqfd") && e.contains("vfio_pci_core"), "{e}");
        let mut cyc = m;
        cyc.insert("vfio".into(), ko("vfio_pci"));
        assert!(load_order(&cyc, &WANTED).unwrap_err().to_string().contains("cycle"));
    }

    #[test]
    fn init_binds_edu() {
        let s = init_fragment(&["vfio".into(), "vfio_pci".into()]);
        assert!(s.starts_with("insmod /lib/vfio/vfio.ko && "), "{s}");
        assert!(s.find("vfio.ko").unwrap() < s.find("vfio_pci.ko").unwrap());
        assert!(s.contains("= 0x1234 ] && [ \"$(cat $d/device)\" = 0x11e8 ]"));
        assert!(s.contains("echo vfio-pci > $d/driver_override") && s.contains("/sys/bus/pci/drivers/vfio-pci/bind"));
    }
}

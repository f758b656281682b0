//! `irqlab-lab xen --census`: the path census of the Xen mode ([`crate::census`]). Before QEMU
//! starts: QEMU must take plugins, the plugin is built, Xen's symbols are found (Debian's Xen:
//! its `-dbg` package's `xen-syms-4.17-arm64.map`; `--xen-src`: the map the build kept; `--xen
//! FILE`: `--xen-syms FILE`, or none, and then counts by exception level only, said in the
//! result). After: the plugin's output becomes the result's census and `lab.path.*` figures.
use std::path::{Path, PathBuf};

use crate::census::{self, plugin::Plugin, symbols::Symbols, Plan};
use crate::config::XenConfig;
use crate::error::LabError;

/// Where Xen 4.17 loads a dom0less domU's arm64 Image: guest RAM at 0x40000000 plus the
/// Image's `text_offset` 0x80000 (Xen's kernel_zimage64 probe; seen in the lab: the guest
/// reports running there).
pub const GUEST_BASE: u64 = 0x4008_0000;
/// Xen 4.17's arm64 link address (XEN_VIRT_START, xen/arch/arm/include/asm/config.h): with no
/// symbols, Xen's instructions are the ones from here to here + the binary's size.
pub const XEN_VIRT_START_4_17: u64 = 0x0020_0000;
/// Debian's debug symbols for its Xen (same source version as `xen-hypervisor-4.17-arm64`).
pub const XEN_DBG_PACKAGE: &str = "xen-hypervisor-4.17-arm64-dbg";

/// Xen's symbols for `x` booting `xen`, or why there are none.
pub fn xen_symbols(x: &XenConfig, built: Option<&crate::xen_build::Built>) -> Result<Result<Symbols, String>, LabError> {
    if let Some(f) = &x.xen_syms {
        return Ok(Ok(Symbols::load(f, 0).map_err(census::CensusError::from)?));
    }
    if let Some(b) = built {
        return Ok(match b.syms_map() {
            Some(m) => Ok(Symbols::load(&m, 0).map_err(census::CensusError::from)?),
            None => Err(format!("the Xen build {} kept no xen-syms.map", b.record.key)),
        });
    }
    if x.xen.is_some() {
        return Ok(Err("--xen FILE given without --xen-syms".into()));
    }
    let root = crate::deps::ensure_arm64_package(&crate::deps::cache_dir(), XEN_DBG_PACKAGE, |r| map_in(r).is_some())?;
    let map = map_in(&root).ok_or_else(|| LabError::Setup(format!("{XEN_DBG_PACKAGE}: no xen-syms-*.map in {}", root.display())))?;
    Ok(Ok(Symbols::load(&map, 0).map_err(census::CensusError::from)?))
}

fn map_in(root: &Path) -> Option<PathBuf> {
    let d = root.join("usr/lib/debug/boot");
    std::fs::read_dir(d)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("xen-syms-") && n.to_string_lossy().ends_with(".map")))
}

/// The census's plan and plugin, before booting (None without `--census`).
pub fn prepare(x: &XenConfig, qemu: &Path, xen: &Path, built: Option<&crate::xen_build::Built>, guest_len: u64, out: PathBuf) -> Result<Option<(Plan, Plugin)>, LabError> {
    if !x.census {
        return Ok(None);
    }
    census::plugin::check_qemu(qemu)?;
    let syms = xen_symbols(x, built)?;
    let xen_len = std::fs::metadata(xen).map_err(LabError::io(xen))?.len();
    let plan = census::xen_plan(syms, (XEN_VIRT_START_4_17, XEN_VIRT_START_4_17 + xen_len), GUEST_BASE, guest_len, out)?;
    let plugin = census::plugin::ensure(&crate::deps::cache_dir())?;
    Ok(Some((plan, plugin)))
}

//! dom0's initramfs: busybox, the static fio, Debian's NVMe modules in load order, and `/init`
//! (load the modules, wait for /dev/nvme0n1, run the job, frame fio's JSON on the console).
use std::path::Path;

use crate::deps;
use crate::error::LabError;
use crate::frame::MARK;
use crate::initramfs::Entry;

/// The kernel modules dom0 needs for NVMe (Debian's 6.1 arm64 kernel has NVMe as modules); load
/// order comes from their `depends=` (`vfio::load_order`).
pub const NVME_MODULES: [&str; 9] = ["crct10dif_common", "crct10dif_generic", "crc-t10dif", "crc64", "crc64-rocksoft", "crc64_rocksoft_generic", "t10-pi", "nvme-core", "nvme"];

/// `/init`: modules, the NVMe, the job, fio's JSON framed on the console, power off.
pub fn init_script(modules: &[String], fio: &[String]) -> String {
    let m = MARK;
    let loads: String = modules.iter().map(|n| format!("insmod /lib/nvme/{n}.ko || echo \"{m}fail insmod {n}\"\n")).collect();
    let pre = crate::initramfs::INIT_PREAMBLE;
    format!(
        r#"{pre}mkdir -p /tmp
echo "{m}init kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)"
{loads}i=0
while [ ! -b /dev/nvme0n1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
if [ ! -b /dev/nvme0n1 ]; then
  dmesg | grep -i -E 'nvme|its|msi' | tail -n 20 | sed 's/^/{m}dmesg /'
  echo "{m}fail no /dev/nvme0n1 30 s after loading the NVMe driver"
  poweroff -f
fi
echo "{m}nvme ok $(grep nvme /proc/interrupts | tr -s ' ' | tr '\n' ';')"
echo "{m}fio start"
/bin/fio {fio}
rc=$?
echo "{m}fio end rc=$rc"
echo "{m}irqs $(grep nvme /proc/interrupts | tr -s ' ' | tr '\n' ';')"
if [ $rc -ne 0 ]; then
  tail -n 20 /tmp/fio.json | sed 's/^/{m}fio-output /'
  echo "{m}fail fio exited with $rc"
  poweroff -f
fi
echo "{m}file fio.json begin"
base64 /tmp/fio.json
echo "{m}file fio.json end"
echo "{m}done"
poweroff -f
"#,
        fio = fio.join(" ")
    )
}

fn read(p: &Path) -> Result<Vec<u8>, LabError> {
    std::fs::read(p).map_err(LabError::io(p))
}

/// The NVMe modules of Debian's kernel package, in load order.
pub fn nvme_modules(cache: &Path) -> Result<Vec<(String, Vec<u8>)>, LabError> {
    let pkg = deps::kernel_package()?;
    let version = pkg.trim_start_matches("linux-image-").to_string();
    let sub = format!("lib/modules/{version}/kernel");
    let want = |root: &Path| root.join(&sub).join("drivers/nvme/host/nvme.ko").is_file();
    let root = deps::ensure_arm64_package_into(cache, &pkg, &format!("{pkg}-modules"), Some(&format!("./{sub}")), want)?;
    let mut all = std::collections::BTreeMap::new();
    for n in NVME_MODULES {
        let hit = ["crypto", "lib", "block", "drivers/nvme/host"].iter().map(|d| root.join(&sub).join(d).join(format!("{n}.ko"))).find(|p| p.is_file());
        let p = hit.ok_or_else(|| LabError::Setup(format!("{pkg}: module {n}.ko not found under {sub}")))?;
        all.insert(crate::vfio::canonical(n), read(&p)?);
    }
    let order = crate::vfio::load_order(&all, &NVME_MODULES).map_err(|e| LabError::Setup(format!("{pkg}: {e}")))?;
    Ok(order.into_iter().map(|n| (n.clone(), all[&n].clone())).collect())
}

/// The initramfs's entries: busybox, fio, the modules and `/init` running `fio`.
pub fn entries(busybox: &Path, fio: &Path, mods: &[(String, Vec<u8>)], fio_args: &[String]) -> Result<Vec<Entry>, LabError> {
    let mut entries: Vec<Entry> = ["/bin", "/dev", "/proc", "/sys", "/lib", "/lib/nvme"].iter().map(|d| Entry::Dir { path: d.to_string() }).collect();
    entries.push(Entry::CharDev { path: "/dev/console".into(), major: 5, minor: 1 });
    entries.push(Entry::File { path: "/bin/busybox".into(), mode: 0o755, data: read(busybox)? });
    entries.push(Entry::File { path: "/bin/fio".into(), mode: 0o755, data: read(fio)? });
    for (n, ko) in mods {
        entries.push(Entry::File { path: format!("/lib/nvme/{n}.ko"), mode: 0o644, data: ko.clone() });
    }
    let names: Vec<String> = mods.iter().map(|(n, _)| n.clone()).collect();
    entries.push(Entry::File { path: "/init".into(), mode: 0o755, data: init_script(&names, fio_args).into_bytes() });
    Ok(entries)
}

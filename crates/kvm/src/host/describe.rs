//! Describing the host a measurement ran on. The numbers mean different things on bare-metal
//! VT-x, on AMD SVM and on nested PVM (where guest ring 0 is emulated), so every result carries this.
use std::collections::BTreeMap;

pub(crate) fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// CPU model, kernel, KVM module and parameters, whether guest ring 0 is emulated: the common
/// part here, the architecture's part (`arch_part`, given /proc/cpuinfo's text) added last. The
/// facade's `host_description` passes the architecture's `DescribeHost::describe_host`, so this
/// layer never names an architecture.
pub fn host_description_with(arch_part: impl FnOnce(&str, &mut BTreeMap<String, String>)) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    m.insert("host.arch".into(), std::env::consts::ARCH.into());
    m.insert("host.cpus".into(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).to_string());
    m.insert("host.kernel".into(), read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()));
    m.insert("host.hostname".into(), read("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()));
    let modules = read("/proc/modules").unwrap_or_default();
    let mut kvm_mods: Vec<String> = ["kvm_pvm", "kvm_intel", "kvm_amd", "kvm"]
        .iter()
        .filter(|n| modules.lines().any(|l| l.split_whitespace().next() == Some(**n)) || std::path::Path::new(&format!("/sys/module/{n}")).exists())
        .map(|s| s.to_string())
        .collect();
    if kvm_mods.is_empty() {
        kvm_mods.push("unknown".into());
    }
    m.insert("host.kvm_modules".into(), kvm_mods.join(","));
    for p in ["halt_poll_ns", "halt_poll_ns_grow", "halt_poll_ns_shrink", "tsc_tolerance_ppm", "lapic_timer_advance_ns"] {
        for module in ["kvm", "kvm_pvm", "kvm_intel"] {
            if let Some(v) = read(&format!("/sys/module/{module}/parameters/{p}")) {
                m.insert(format!("host.{module}.{p}"), v);
            }
        }
    }
    arch_part(&cpuinfo, &mut m);
    m
}

/// The value of the first `name : value` line of /proc/cpuinfo.
pub fn cpuinfo_field(cpuinfo: &str, name: &str) -> Option<String> {
    cpuinfo.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string())
}

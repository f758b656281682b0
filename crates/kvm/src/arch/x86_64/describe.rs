//! The x86 part of the host description: the CPU, VT-x or SVM, and whether guest ring 0 runs on
//! hardware or is emulated instruction by instruction (nested PVM, where the numbers mean
//! something else entirely).
use std::collections::BTreeMap;

use crate::host::describe::cpuinfo_field;

pub fn describe(cpuinfo: &str, m: &mut BTreeMap<String, String>) {
    m.insert("host.cpu_model".into(), cpuinfo_field(cpuinfo, "model name").unwrap_or_else(|| "unknown".into()));
    let flags = cpuinfo_field(cpuinfo, "flags").unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    let hw_virt = if has("vmx") {
        "vmx"
    } else if has("svm") {
        "svm"
    } else {
        "none"
    };
    m.insert("host.cpu_virt_flag".into(), hw_virt.into());
    let pvm = m.get("host.kvm_modules").is_some_and(|s| s.split(',').any(|x| x == "kvm_pvm"));
    m.insert("host.guest_ring0".into(), if pvm && hw_virt == "none" { "emulated (nested PVM: each guest ring-0 instruction is emulated, ~1-3 us)" } else { "hardware" }.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_pvm_is_named() {
        let mut m = BTreeMap::from([("host.kvm_modules".to_string(), "kvm_pvm,kvm".to_string())]);
        describe("model name\t: AMD EPYC\nflags\t\t: fpu sse\n", &mut m);
        assert_eq!(m["host.cpu_model"], "AMD EPYC");
        assert_eq!(m["host.cpu_virt_flag"], "none");
        assert!(m["host.guest_ring0"].starts_with("emulated"));
        let mut m = BTreeMap::new();
        describe("flags : vmx sse\n", &mut m);
        assert_eq!((m["host.cpu_virt_flag"].as_str(), m["host.guest_ring0"].as_str()), ("vmx", "hardware"));
    }
}

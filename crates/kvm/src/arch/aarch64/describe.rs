//! The arm64 part of the host description: the CPU (implementer and part from /proc/cpuinfo),
//! the interrupt controller KVM's vGIC sits on (/proc/interrupts names it: GICv3, GICv4 shows
//! as GICv3 with the ITS's vPE doorbells), and the `kvm-arm.*` options of the kernel command line
//! (`vgic_v4_enable`, `mode`), which decide whether direct vLPI injection is used at all.
use std::collections::BTreeMap;

use crate::host::describe::{cpuinfo_field, read};

/// `0x41` → Arm, `0xc0` → Ampere, … (the implementer codes of the Arm ARM, MIDR_EL1.Implementer).
fn implementer(code: &str) -> &'static str {
    match code.trim().to_ascii_lowercase().as_str() {
        "0x41" => "Arm",
        "0x42" => "Broadcom",
        "0x43" => "Cavium",
        "0x48" => "HiSilicon",
        "0x4e" => "NVIDIA",
        "0x51" => "Qualcomm",
        "0x61" => "Apple",
        "0x00" => "implementer 0x00 (software use: an emulated CPU such as QEMU -cpu max)",
        "0xc0" => "Ampere",
        _ => "unknown implementer",
    }
}

/// The irqchip names in /proc/interrupts (`GICv3`, `ITS-MSI`, `GICv4-vpe`…), deduplicated.
pub fn irqchips(interrupts: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in interrupts.lines().skip(1) {
        let Some(name) = l.split_whitespace().find(|w| w.starts_with("GIC") || w.starts_with("ITS")) else { continue };
        if !out.iter().any(|x| x == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// `kvm-arm.*` options of a kernel command line.
pub fn kvm_arm_options(cmdline: &str) -> Vec<String> {
    cmdline.split_whitespace().filter(|w| w.starts_with("kvm-arm.")).map(str::to_string).collect()
}

pub fn describe(cpuinfo: &str, m: &mut BTreeMap<String, String>) {
    let model = match (cpuinfo_field(cpuinfo, "CPU implementer"), cpuinfo_field(cpuinfo, "CPU part")) {
        (Some(i), Some(p)) => format!("{} part {p}", implementer(&i)),
        _ => "unknown".into(),
    };
    m.insert("host.cpu_model".into(), model);
    let chips = irqchips(&read("/proc/interrupts").unwrap_or_default());
    m.insert("host.irqchips".into(), if chips.is_empty() { "unknown".into() } else { chips.join(",") });
    let opts = kvm_arm_options(&read("/proc/cmdline").unwrap_or_default());
    m.insert("host.kvm_arm_cmdline".into(), if opts.is_empty() { "(none: kernel defaults)".into() } else { opts.join(" ") });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gic_and_the_cpu_are_named() {
        let irqs = "           CPU0       CPU1\n 11:  100  90  GICv3  27 Level  arch_timer\n 20: 0 0 ITS-MSI 16384 Edge virtio\n 21: 0 0 GICv3 33 Level uart\n";
        assert_eq!(irqchips(irqs), ["GICv3", "ITS-MSI"]);
        assert_eq!(kvm_arm_options("console=ttyAMA0 kvm-arm.vgic_v4_enable=1 quiet"), ["kvm-arm.vgic_v4_enable=1"]);
        let mut m = BTreeMap::new();
        describe("CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n", &mut m);
        assert_eq!(m["host.cpu_model"], "Arm part 0xd0c");
    }
}

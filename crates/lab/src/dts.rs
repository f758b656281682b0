//! The dom0less device tree: QEMU's own DTB (dumped with `-M …,dumpdtb=`, decompiled with dtc)
//! with its `/chosen` node replaced by Xen's boot arguments and one `xen,domain` node per domU,
//! as Xen 4.17's docs/misc/arm/device-tree/booting.txt ("Dom0less", "domU nodes") describes:
//! `compatible = "xen,domain"`, `cpus`, `memory` (KiB), `vpl011`, and a child
//! `multiboot,kernel` module whose `reg` is where QEMU's `-device loader` put the image.
use crate::error::LabError;

/// One dom0less domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomU {
    pub cpus: u32,
    pub memory_kib: u64,
    pub module_addr: u64,
    pub module_size: u64,
}

/// The `/chosen` node: Xen's command line and the domUs (named `domU1`, `domU2`, …).
pub fn chosen(bootargs: &str, stdout_path: &str, domus: &[DomU]) -> String {
    let cells = |v: u64| format!("0x{:x} 0x{:x}", v >> 32, v & 0xffff_ffff);
    let mut s = String::from("chosen {\n\t\t#address-cells = <0x02>;\n\t\t#size-cells = <0x02>;\n");
    s += &format!("\t\tstdout-path = \"{stdout_path}\";\n\t\txen,xen-bootargs = \"{bootargs}\";\n");
    for (i, d) in domus.iter().enumerate() {
        s += &format!("\t\tdomU{} {{\n\t\t\tcompatible = \"xen,domain\";\n\t\t\t#address-cells = <0x02>;\n\t\t\t#size-cells = <0x02>;\n", i + 1);
        s += &format!("\t\t\tcpus = <0x{:x}>;\n\t\t\tmemory = <{}>;\n\t\t\tvpl011;\n", d.cpus, cells(d.memory_kib));
        s += &format!("\t\t\tmodule@{:x} {{\n\t\t\t\tcompatible = \"multiboot,kernel\", \"multiboot,module\";\n", d.module_addr);
        s += &format!("\t\t\t\treg = <{} {}>;\n\t\t\t}};\n\t\t}};\n", cells(d.module_addr), cells(d.module_size));
    }
    s += "\t};";
    s
}

/// `dts` with its top-level `chosen { … };` replaced by `node`.
pub fn replace_chosen(dts: &str, node: &str) -> Result<String, LabError> {
    let start = dts.find("\tchosen {").map(|i| i + 1).ok_or_else(|| LabError::Setup("QEMU's device tree has no /chosen node".into()))?;
    let mut depth = 0usize;
    for (i, ch) in dts[start..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let end = start + i + 1;
                    let end = if dts[end..].starts_with(';') { end + 1 } else { end };
                    return Ok(format!("{}{}{}", &dts[..start], node, &dts[end..]));
                }
            }
            _ => {}
        }
    }
    Err(LabError::Setup("QEMU's device tree: /chosen is not closed".into()))
}

/// The PL011 node's path (`/pl011@9000000`), Xen's `dtuart=`.
pub fn uart_path(dts: &str) -> Result<String, LabError> {
    let i = dts.find("pl011@").ok_or_else(|| LabError::Setup("QEMU's device tree has no pl011 node".into()))?;
    let name: String = dts[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '@' || *c == '_').collect();
    Ok(format!("/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const QEMU: &str = "/dts-v1/;\n\n/ {\n\tinterrupt-parent = <0x8002>;\n\tpl011@9000000 {\n\t\treg = <0x00 0x9000000 0x00 0x1000>;\n\t};\n\n\tchosen {\n\t\tstdout-path = \"/pl011@9000000\";\n\t\trng-seed = <0x1 0x2>;\n\t\tinner { x; };\n\t};\n\tcpus { };\n};\n";

    #[test]
    fn chosen_is_replaced_and_the_rest_kept() {
        let node = chosen(
            "console=dtuart dtuart=/pl011@9000000 sched=credit2 vwfi=trap",
            "/pl011@9000000",
            &[DomU { cpus: 1, memory_kib: 65536, module_addr: 0x4c00_0000, module_size: 0x3000 }],
        );
        let out = replace_chosen(QEMU, &node).unwrap();
        assert!(!out.contains("rng-seed"), "QEMU's random seeds go with the old /chosen");
        assert!(out.contains("\tpl011@9000000 {") && out.contains("\tcpus { };\n};\n"));
        assert!(out.contains("xen,xen-bootargs = \"console=dtuart dtuart=/pl011@9000000 sched=credit2 vwfi=trap\";"));
        assert!(out.contains("domU1 {\n\t\t\tcompatible = \"xen,domain\";"));
        assert!(out.contains("memory = <0x0 0x10000>;"));
        assert!(out.contains("module@4c000000 {"));
        assert!(out.contains("reg = <0x0 0x4c000000 0x0 0x3000>;"));
        assert_eq!(out.matches('{').count(), out.matches('}').count());
    }

    #[test]
    fn two_domains_are_numbered() {
        let d = DomU { cpus: 2, memory_kib: 1 << 16, module_addr: 0x4c00_0000, module_size: 16 };
        let s = chosen("x", "/pl011@9000000", &[d.clone(), DomU { module_addr: 0x4d00_0000, ..d }]);
        assert!(s.contains("domU1 {") && s.contains("domU2 {") && s.contains("module@4d000000"));
        assert!(s.contains("cpus = <0x2>;"));
    }

    #[test]
    fn uart_and_missing_chosen() {
        assert_eq!(uart_path(QEMU).unwrap(), "/pl011@9000000");
        assert!(matches!(replace_chosen("/ { };", "chosen {};"), Err(LabError::Setup(_))));
        assert!(uart_path("/ { };").is_err());
    }
}

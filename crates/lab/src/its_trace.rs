//! QEMU's ITS trace lines, read back: `--trace-its FILE` runs the lab's L0 QEMU with the trace
//! events of its GICv3/v4 ITS and redistributor model, and this module turns each line of that
//! file into a typed [`TraceEvent`].
//!
//! Why: the commands the lab's Linux ITS driver issues on behalf of KVM (VMAPP/VINVALL when a
//! VM's vPEs are created, VMOVP when a vCPU thread moves, the doorbell LPIs of the GICv4.0 proxy
//! device) are only visible to the machine that emulates the ITS. QEMU 7.2 traces every command
//! it processes with its decoded fields (`hw/intc/arm_gicv3_its.c`, `process_cmdq` and the
//! `process_*` functions; format strings in `hw/intc/trace-events`), and every redistributor
//! MMIO access (`hw/intc/arm_gicv3_redist.c`, `gicv3_redist_read/write`). The fields are the raw
//! command fields: MAPD's ITT_addr is bits [51:8] of the address (shifted right by 8), VMAPP's
//! VPT_addr bits [51:16], RDbase a processor number (GITS_TYPER.PTA = 0 in QEMU).
//!
//! A line that is not one of the events below, or whose fields are missing or not numbers, is an
//! error naming the line: nothing is dropped silently. The guest's own vITS commands (the
//! benchmark guest programming KVM's emulated ITS) never reach QEMU — KVM handles them in
//! `vgic-its.c` — so they are not in this trace; what QEMU sees is the L1 kernel's commands.
/// The QEMU trace events the lab enables (`-trace events=FILE`).
pub const EVENTS: [&str; 4] = ["gicv3_its_cmd_*", "gicv3_its_translation_write", "gicv3_redist_write", "gicv3_redist_read"];

/// The arguments QEMU gets for `--trace-its`: an events file (written by the caller) and the
/// trace's output file. QEMU's Debian build uses the `log` trace backend, which honours `file=`.
pub fn qemu_args(events_file: &std::path::Path, trace_file: &std::path::Path) -> Vec<String> {
    vec!["-trace".into(), format!("events={},file={}", events_file.display(), trace_file.display())]
}

/// The events file's contents.
pub fn events_file_text() -> String {
    EVENTS.iter().map(|e| format!("{e}\n")).collect()
}

/// The `/init` lines that move every thread of `irqlab` (the VMM and its vCPU threads) between
/// the lab's CPUs 0 and 1 every `ms` milliseconds while it runs (busybox `taskset -p`): each move
/// of a vCPU thread makes KVM's `vgic_v4_load` retarget the vPE's doorbell, which the L1 ITS
/// driver does with VMOVP (`its_vpe_set_affinity`, drivers/irqchip/irq-gic-v3-its.c, 6.1).
pub fn mover_script(ms: u64) -> String {
    format!(
        "( c=0; while :; do for p in $(pidof irqlab); do for t in /proc/$p/task/*; do taskset -p $((c+1)) ${{t##*/}} >/dev/null 2>&1; done; done; c=$((1-c)); usleep {us}; done ) &\necho \"@irqlab-lab mover every {ms} ms\"\n",
        us = ms * 1000
    )
}

/// One traced ITS command, its fields as QEMU traced them (see the module doc for the shifts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItsCmd {
    Int {
        device: u32,
        event: u32,
    },
    Clear {
        device: u32,
        event: u32,
    },
    Discard {
        device: u32,
        event: u32,
    },
    Sync,
    Mapd {
        device: u32,
        size: u8,
        itt_addr_field: u64,
        valid: bool,
    },
    Mapc {
        icid: u16,
        rdbase: u64,
        valid: bool,
    },
    Mapi {
        device: u32,
        event: u32,
        icid: u16,
    },
    Mapti {
        device: u32,
        event: u32,
        icid: u16,
        pintid: u32,
    },
    Inv {
        device: u32,
        event: u32,
    },
    Invall,
    Movall {
        rd1: u64,
        rd2: u64,
    },
    Movi {
        device: u32,
        event: u32,
        icid: u16,
    },
    Vmapi {
        device: u32,
        event: u32,
        vpe: u16,
        doorbell: u32,
    },
    Vmapti {
        device: u32,
        event: u32,
        vpe: u16,
        vintid: u32,
        doorbell: u32,
    },
    Vmapp {
        vpe: u16,
        rdbase: u64,
        valid: bool,
        vpt_addr_field: u64,
        vpt_size: u8,
    },
    Vmovp {
        vpe: u16,
        rdbase: u64,
    },
    Vsync,
    Vmovi {
        device: u32,
        event: u32,
        vpe: u16,
        db_valid: bool,
        doorbell: u32,
    },
    Vinvall {
        vpe: u16,
    },
    /// `gicv3_its_cmd_unknown`: an opcode QEMU does not implement (e.g. GICv4.1's VSGI, INVDB).
    Unknown {
        opcode: u8,
    },
}

/// One line of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceEvent {
    Cmd(ItsCmd),
    /// A device's write to GITS_TRANSLATER: DeviceID = requester ID, EventID = data.
    Translate {
        device: u32,
        event: u32,
    },
    /// A redistributor MMIO access; `redist` is the affinity QEMU prints (the CPU index on `virt`
    /// with up to 8 CPUs), `offset` within the redistributor's frames.
    RedistWrite {
        redist: u32,
        offset: u64,
        data: u64,
        size: u32,
    },
    RedistRead {
        redist: u32,
        offset: u64,
        data: u64,
        size: u32,
    },
}

/// A trace line that is not one of [`EVENTS`] or is garbled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trace line {line}: {why}: `{text}`")]
pub struct TraceError {
    pub line: usize,
    pub why: String,
    pub text: String,
}

/// A field of a trace line that is absent or not a number (the `why` of a [`TraceError`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error("no `{0}` field")]
    Absent(String),
    #[error("`{0}` has no value")]
    NoValue(String),
    #[error("`{key}` value `{value}` is not a number")]
    NotANumber { key: String, value: String },
}

/// The value after the word `key` in `words` (`0x…` hex or decimal).
fn field(words: &[&str], key: &str) -> Result<u64, FieldError> {
    let i = words.iter().position(|w| *w == key).ok_or_else(|| FieldError::Absent(key.into()))?;
    let v = words.get(i + 1).ok_or_else(|| FieldError::NoValue(key.into()))?.trim_end_matches(':');
    let parsed = match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse(),
    };
    parsed.map_err(|_| FieldError::NotANumber { key: key.into(), value: v.into() })
}

/// The event name and its message, with QEMU's optional `PID@SECONDS.MICROS:` prefix removed.
fn split_event(line: &str) -> Option<(&str, &str)> {
    let mut l = line.trim_end();
    if let Some((pre, rest)) = l.split_once(':') {
        let is_stamp = pre.split_once('@').is_some_and(|(p, t)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && t.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
        if is_stamp {
            l = rest;
        }
    }
    let (name, msg) = l.split_once(' ').unwrap_or((l, ""));
    Some((name, msg))
}

fn cmd(name: &str, w: &[&str]) -> Result<Option<ItsCmd>, FieldError> {
    let f = |k: &str| field(w, k);
    let dev = || f("DeviceID").map(|v| v as u32);
    let ev = || f("EventID").map(|v| v as u32);
    let icid = || f("ICID").map(|v| v as u16);
    let vpe = || f("vPEID").map(|v| v as u16);
    Ok(Some(match name {
        "gicv3_its_cmd_int" => ItsCmd::Int { device: dev()?, event: ev()? },
        "gicv3_its_cmd_clear" => ItsCmd::Clear { device: dev()?, event: ev()? },
        "gicv3_its_cmd_discard" => ItsCmd::Discard { device: dev()?, event: ev()? },
        "gicv3_its_cmd_sync" => ItsCmd::Sync,
        "gicv3_its_cmd_mapd" => ItsCmd::Mapd { device: dev()?, size: f("Size")? as u8, itt_addr_field: f("ITT_addr")?, valid: f("V")? != 0 },
        "gicv3_its_cmd_mapc" => ItsCmd::Mapc { icid: icid()?, rdbase: f("RDbase")?, valid: f("V")? != 0 },
        "gicv3_its_cmd_mapi" => ItsCmd::Mapi { device: dev()?, event: ev()?, icid: icid()? },
        "gicv3_its_cmd_mapti" => ItsCmd::Mapti { device: dev()?, event: ev()?, icid: icid()?, pintid: f("pINTID")? as u32 },
        "gicv3_its_cmd_inv" => ItsCmd::Inv { device: dev()?, event: ev()? },
        "gicv3_its_cmd_invall" => ItsCmd::Invall,
        "gicv3_its_cmd_movall" => ItsCmd::Movall { rd1: f("RDbase1")?, rd2: f("RDbase2")? },
        "gicv3_its_cmd_movi" => ItsCmd::Movi { device: dev()?, event: ev()?, icid: icid()? },
        "gicv3_its_cmd_vmapi" => ItsCmd::Vmapi { device: dev()?, event: ev()?, vpe: vpe()?, doorbell: f("Dbell_pINTID")? as u32 },
        "gicv3_its_cmd_vmapti" => ItsCmd::Vmapti { device: dev()?, event: ev()?, vpe: vpe()?, vintid: f("vINTID")? as u32, doorbell: f("Dbell_pINTID")? as u32 },
        "gicv3_its_cmd_vmapp" => ItsCmd::Vmapp { vpe: vpe()?, rdbase: f("RDbase")?, valid: f("V")? != 0, vpt_addr_field: f("VPT_addr")?, vpt_size: f("VPT_size")? as u8 },
        "gicv3_its_cmd_vmovp" => ItsCmd::Vmovp { vpe: vpe()?, rdbase: f("RDbase")? },
        "gicv3_its_cmd_vsync" => ItsCmd::Vsync,
        "gicv3_its_cmd_vmovi" => ItsCmd::Vmovi { device: dev()?, event: ev()?, vpe: vpe()?, db_valid: f("D")? != 0, doorbell: f("Dbell_pINTID")? as u32 },
        "gicv3_its_cmd_vinvall" => ItsCmd::Vinvall { vpe: vpe()? },
        "gicv3_its_cmd_unknown" => ItsCmd::Unknown { opcode: f("command")? as u8 },
        _ => return Ok(None),
    }))
}

/// One trace line: `Ok(None)` for a blank line, an error for anything not understood.
pub fn parse_line(line: &str, n: usize) -> Result<Option<TraceEvent>, TraceError> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let err = |why: String| TraceError { line: n, why, text: line.trim_end().chars().take(200).collect() };
    let bad_field = |e: FieldError| err(e.to_string());
    let (name, msg) = split_event(line).ok_or_else(|| err("no event name".into()))?;
    let w: Vec<&str> = msg.split_whitespace().collect();
    let ev = match name {
        "gicv3_its_translation_write" => {
            TraceEvent::Translate { device: field(&w, "requester_id").map_err(bad_field)? as u32, event: field(&w, "data").map_err(bad_field)? as u32 }
        }
        "gicv3_redist_write" | "gicv3_redist_read" => {
            let redist = field(&w, "redistributor").map_err(bad_field)? as u32;
            let offset = field(&w, "offset").map_err(bad_field)?;
            let data = field(&w, "data").map_err(bad_field)?;
            let size = field(&w, "size").map_err(bad_field)? as u32;
            if name == "gicv3_redist_write" {
                TraceEvent::RedistWrite { redist, offset, data, size }
            } else {
                TraceEvent::RedistRead { redist, offset, data, size }
            }
        }
        _ if name.starts_with("gicv3_its_cmd_") => match cmd(name, &w).map_err(bad_field)? {
            Some(c) => TraceEvent::Cmd(c),
            None => return Err(err(format!("`{name}` is not an ITS command event QEMU 7.2 has"))),
        },
        _ => return Err(err(format!("`{name}` is not one of the traced events ({})", EVENTS.join(", ")))),
    };
    Ok(Some(ev))
}

/// Every line of a trace, in order, with its 1-based line number.
pub fn parse(text: &str) -> Result<Vec<(usize, TraceEvent)>, TraceError> {
    let mut v = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(e) = parse_line(l, i + 1)? {
            v.push((i + 1, e));
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as QEMU 7.2 (Debian 1:7.2+dfsg-7+deb12u18) writes them in the lab.
    const EXCERPT: &str = "\
gicv3_its_cmd_mapc GICv3 ITS: command MAPC ICID 0x0 RDbase 0x0 V 1
gicv3_its_cmd_invall GICv3 ITS: command INVALL
gicv3_its_cmd_sync GICv3 ITS: command SYNC
gicv3_its_cmd_mapd GICv3 ITS: command MAPD DeviceID 0xffff Size 0x0 ITT_addr 0x4101a0 V 1
gicv3_its_cmd_vmapp GICv3 ITS: command VMAPP vPEID 0x0 RDbase 0x1 V 1 VPT_addr 0x4258 VPT_size 0xf
gicv3_its_cmd_vinvall GICv3 ITS: command VINVALL vPEID 0x0
gicv3_its_cmd_vmapti GICv3 ITS: command VMAPI DeviceID 0x10 EventID 0x0 vPEID 0x1 vINTID 0x2000 Dbell_pINTID 0x2003
12345@1764057600.123456:gicv3_its_cmd_vmovp GICv3 ITS: command VMOVP vPEID 0x1 RDbase 0x0
gicv3_redist_write GICv3 redistributor 0x1 write: offset 0x20078 data 0x8000000042580000 size 8 secure 0
gicv3_its_translation_write GICv3 ITS TRANSLATER write: offset 0x40 data 0x1 size 4 requester_id 0x10
";

    #[test]
    fn parses_qemu_72_lines_with_and_without_timestamps() {
        let v = parse(EXCERPT).unwrap();
        assert_eq!(v.len(), 10);
        assert_eq!(v[0], (1, TraceEvent::Cmd(ItsCmd::Mapc { icid: 0, rdbase: 0, valid: true })));
        assert_eq!(v[3].1, TraceEvent::Cmd(ItsCmd::Mapd { device: 0xffff, size: 0, itt_addr_field: 0x4101a0, valid: true }));
        assert_eq!(v[4].1, TraceEvent::Cmd(ItsCmd::Vmapp { vpe: 0, rdbase: 1, valid: true, vpt_addr_field: 0x4258, vpt_size: 15 }));
        // QEMU's VMAPTI message says "VMAPI"; the event name decides.
        assert_eq!(v[6].1, TraceEvent::Cmd(ItsCmd::Vmapti { device: 0x10, event: 0, vpe: 1, vintid: 0x2000, doorbell: 0x2003 }));
        assert_eq!(v[7], (8, TraceEvent::Cmd(ItsCmd::Vmovp { vpe: 1, rdbase: 0 })));
        assert_eq!(v[8].1, TraceEvent::RedistWrite { redist: 1, offset: 0x20078, data: 0x8000_0000_4258_0000, size: 8 });
        assert_eq!(v[9].1, TraceEvent::Translate { device: 0x10, event: 1 });
    }

    #[test]
    fn unknown_or_garbled_lines_are_errors_naming_the_line() {
        let e = parse("gicv3_its_cmd_sync GICv3 ITS: command SYNC\nvirtio_queue_notify vdev 0x1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("virtio_queue_notify") && e.to_string().contains("not one of the traced events"), "{e}");
        let e = parse("gicv3_its_cmd_mapd GICv3 ITS: command MAPD DeviceID 0xzz Size 0x0 ITT_addr 0x1 V 1").unwrap_err();
        assert!(e.why.contains("DeviceID") && e.why.contains("not a number"), "{e}");
        let e = parse("\ngicv3_its_cmd_vmovp GICv3 ITS: command VMOVP vPEID 0x1").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.why.contains("RDbase"), "{e}");
        let e = parse("gicv3_its_cmd_vfoo GICv3 ITS: x").unwrap_err();
        assert!(e.why.contains("not an ITS command event"), "{e}");
        // A line cut in the middle (a killed QEMU) is garbled, not dropped.
        assert!(parse("gicv3_its_cmd_vmapp GICv3 ITS: command VMAPP vPEID 0x0 RDbase 0x1 V 1 VPT_a").is_err());
    }

    #[test]
    fn unknown_opcode_is_kept() {
        let v = parse("gicv3_its_cmd_unknown GICv3 ITS: unknown command 0x23\n").unwrap();
        assert_eq!(v[0].1, TraceEvent::Cmd(ItsCmd::Unknown { opcode: 0x23 }));
    }

    #[test]
    fn mover_alternates_both_cpus() {
        let s = mover_script(50);
        assert!(s.contains("taskset -p $((c+1))") && s.contains("c=$((1-c))") && s.contains("usleep 50000"), "{s}");
        assert!(s.ends_with(") &\necho \"@irqlab-lab mover every 50 ms\"\n"), "{s}");
    }

    #[test]
    fn qemu_gets_an_events_file_and_an_output_file() {
        let a = qemu_args(std::path::Path::new("/w/ev"), std::path::Path::new("/o/its.trace"));
        assert_eq!(a, vec!["-trace".to_string(), "events=/w/ev,file=/o/its.trace".to_string()]);
        assert!(events_file_text().starts_with("gicv3_its_cmd_*\n"));
    }
}

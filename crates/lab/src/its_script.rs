//! QEMU's ITS trace ([`crate::its_trace`]) → an `irqlab its-check` script (docs/its-check.md).
//!
//! Why a converter and not a dump of the command queue: QEMU already decodes every command it
//! executes and prints the fields; the converter re-encodes them into the four queue words with
//! the same encoder its-check's model decodes with (`sim::arch::arm::its::Command::encode`), so
//! the two cannot disagree about bit positions.
//!
//! What QEMU 7.2's trace does not carry, and what the converter does about it (each such line is
//! marked in the script with `# inferred: …`, and the header counts them):
//! - SYNC's RDbase: taken from the collection of the command before it (Linux's
//!   `its_send_single_command` issues SYNC to the collection the command used:
//!   `its_build_sync_cmd(its, sync_cmd, sync_col)`, drivers/irqchip/irq-gic-v3-its.c, 6.1);
//! - VSYNC's vPE: the vPE of the command before it (`its_send_single_vcommand`, same file);
//! - INVALL's ICID: the collection of the MAPC before it (`its_cpu_init_collection` sends MAPC
//!   then INVALL for the same collection);
//! - VMOVP's SeqNum/ITSList: 0 (QEMU reports GITS_TYPER.VMOVP = 1, which needs neither; the
//!   script says `vmovp 1`);
//! - v4.1 fields (VMAPP's VConfAddr/Alloc/PTZ/default doorbell, VMOVP's DB): not traced, because
//!   QEMU 7.2's ITS is GICv4.0 (it decodes only the v4.0 fields); written as 0.
//! - The LPI configuration tables (memory, not commands): not traced, so the script has no
//!   `lpi-config`/`vlpi-config` lines and the model sees every LPI disabled — a delivered or
//!   doorbell LPI shows as "not enabled", not as a violation.
//! - Redistributor accesses other than GICR_VPROPBASER/GICR_VPENDBASER writes and the
//!   VPENDBASER reads that complete a poll: counted by offset in the trailer, not expressible.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sim::arch::arm::its::{Command, Vmapp};

use crate::config::{Gic, ItsConvertConfig};
use crate::its_trace::{self, ItsCmd, TraceError, TraceEvent};

/// The largest redistributor number an its-check script takes (`rd N …`).
const MAX_REDIST: u32 = u16::MAX as u32;
/// GICR_VPROPBASER / GICR_VPENDBASER in the VLPI frame (the third 64 KB frame of a GICv4
/// redistributor), as offsets from the redistributor's base, which is what QEMU traces.
pub const VPROPBASER: u64 = 0x2_0070;
pub const VPENDBASER: u64 = 0x2_0078;
/// GICR_VPENDBASER.Dirty (bit 60, v4.0 and v4.1).
const DIRTY: u64 = 1 << 60;

#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("trace line {line}: {why}")]
    NotExpressible { line: usize, why: String },
}

/// The script's header choices.
#[derive(Debug, Clone)]
pub struct Options {
    /// What the script's `gic` header says (`v3`, `v4.0` or `v4.1`: an ITS needs GICv3 or later).
    pub gic: Gic,
    pub cpus: u32,
    /// Comment lines put first (how the trace was captured).
    pub about: Vec<String>,
}

impl Options {
    /// The lab's machine: QEMU `virt` with 2 CPUs; `--gic v4` is QEMU's GICv4, which is v4.0.
    pub fn lab(gic: Gic, about: Vec<String>) -> Options {
        Options { gic, cpus: 2, about }
    }
}

/// A converted stream with what was counted on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Converted {
    pub text: String,
    /// Commands by name (VMAPP, VMOVP, …), for the counts table.
    pub commands: BTreeMap<&'static str, usize>,
    pub translates: usize,
    pub inferred: usize,
    /// Redistributor accesses not expressible, by (write?, offset).
    pub other_redist: BTreeMap<(bool, u64), usize>,
}

/// What the stream so far says about collections and events, for the inferences.
#[derive(Default)]
struct State {
    col_rd: BTreeMap<u16, u64>,
    ite_col: BTreeMap<(u32, u32), u16>,
    ite_vpe: BTreeMap<(u32, u32), u16>,
    last_col: Option<u16>,
    last_vpe: Option<u16>,
    last_mapc: Option<u16>,
    /// Per redistributor: a VPENDBASER write not yet followed by a completed poll.
    poll_open: BTreeMap<u32, bool>,
}

impl State {
    /// The ITS command for a traced one, and the inference made, if any.
    fn command(&mut self, c: ItsCmd) -> (Command, Option<String>) {
        let mut inferred = None;
        let cmd = match c {
            ItsCmd::Int { device, event } => Command::Int { device, event },
            ItsCmd::Clear { device, event } => Command::Clear { device, event },
            ItsCmd::Discard { device, event } => Command::Discard { device, event },
            ItsCmd::Inv { device, event } => Command::Inv { device, event },
            ItsCmd::Sync => {
                let rd = self.last_col.and_then(|c| self.col_rd.get(&c).copied());
                inferred = Some(match (self.last_col, rd) {
                    (Some(c), Some(r)) => format!("RDbase {r}, the redistributor of collection {c} used by the command before"),
                    _ => "RDbase 0 (no collection known from the commands before)".to_string(),
                });
                Command::Sync { rdbase: rd.unwrap_or(0) }
            }
            ItsCmd::Mapd { device, size, itt_addr_field, valid } => Command::Mapd { device, size, itt_addr: itt_addr_field << 8, valid },
            ItsCmd::Mapc { icid, rdbase, valid } => Command::Mapc { icid, rdbase, valid },
            ItsCmd::Mapi { device, event, icid } => Command::Mapi { device, event, icid },
            ItsCmd::Mapti { device, event, icid, pintid } => Command::Mapti { device, event, pintid, icid },
            ItsCmd::Invall => {
                let icid = self.last_mapc.unwrap_or(0);
                inferred = Some(match self.last_mapc {
                    Some(c) => format!("ICID {c}, the collection of the MAPC before"),
                    None => "ICID 0 (no MAPC before)".to_string(),
                });
                Command::Invall { icid }
            }
            ItsCmd::Movall { rd1, rd2 } => Command::Movall { rdbase1: rd1, rdbase2: rd2 },
            ItsCmd::Movi { device, event, icid } => Command::Movi { device, event, icid },
            ItsCmd::Vmapi { device, event, vpe, doorbell } => Command::Vmapi { device, event, vpe, doorbell },
            ItsCmd::Vmapti { device, event, vpe, vintid, doorbell } => Command::Vmapti { device, event, vpe, vintid, doorbell },
            ItsCmd::Vmapp { vpe, rdbase, valid, vpt_addr_field, vpt_size } => {
                Command::Vmapp(Vmapp { vpe, rdbase, valid, vpt_size, vpt_addr: vpt_addr_field << 16, alloc: false, ptz: false, vconf_addr: 0, default_doorbell: 0 })
            }
            ItsCmd::Vmovp { vpe, rdbase } => Command::Vmovp { seq: 0, its_list: 0, vpe, rdbase, db: false, default_doorbell: 0 },
            ItsCmd::Vsync => {
                inferred = Some(match self.last_vpe {
                    Some(v) => format!("vPE {v}, the vPE of the command before"),
                    None => "vPE 0 (no vPE known from the commands before)".to_string(),
                });
                Command::Vsync { vpe: self.last_vpe.unwrap_or(0) }
            }
            ItsCmd::Vmovi { device, event, vpe, db_valid, doorbell } => Command::Vmovi { device, event, vpe, db_valid, doorbell },
            ItsCmd::Vinvall { vpe } => Command::Vinvall { vpe },
            // Not a command the model can build from fields: handled by the caller.
            ItsCmd::Unknown { .. } => unreachable!("unknown opcodes are written as raw words"),
        };
        self.learn(&cmd);
        (cmd, inferred)
    }

    /// Track collections, events and vPEs for the next inference.
    fn learn(&mut self, cmd: &Command) {
        let (col, vpe) = match *cmd {
            Command::Mapc { icid, rdbase, valid } => {
                if valid {
                    self.col_rd.insert(icid, rdbase);
                }
                self.last_mapc = Some(icid);
                (Some(icid), None)
            }
            Command::Mapti { device, event, icid, .. } | Command::Mapi { device, event, icid } | Command::Movi { device, event, icid } => {
                self.ite_col.insert((device, event), icid);
                self.ite_vpe.remove(&(device, event));
                (Some(icid), None)
            }
            Command::Vmapti { device, event, vpe, .. } | Command::Vmapi { device, event, vpe, .. } | Command::Vmovi { device, event, vpe, .. } => {
                self.ite_vpe.insert((device, event), vpe);
                self.ite_col.remove(&(device, event));
                (None, Some(vpe))
            }
            Command::Int { device, event } | Command::Clear { device, event } | Command::Inv { device, event } | Command::Discard { device, event } => {
                (self.ite_col.get(&(device, event)).copied(), self.ite_vpe.get(&(device, event)).copied())
            }
            Command::Vmapp(m) => (None, Some(m.vpe)),
            Command::Vmovp { vpe, .. } | Command::Vinvall { vpe } => (None, Some(vpe)),
            _ => (None, None),
        };
        if col.is_some() {
            self.last_col = col;
        }
        if vpe.is_some() {
            self.last_vpe = vpe;
        }
    }
}

fn words(w: [u64; 4]) -> String {
    format!("{:#018x} {:#018x} {:#018x} {:#018x}", w[0], w[1], w[2], w[3])
}

/// Converts a parsed trace into script text.
pub fn convert(events: &[(usize, TraceEvent)], o: &Options) -> Result<Converted, ConvertError> {
    let mut c = Converted::default();
    let mut body = String::new();
    let mut st = State::default();
    for &(line, ev) in events {
        script_line(&mut c, &mut st, &mut body, line, ev)?;
    }
    c.text = header(&c, o) + &body;
    if !c.other_redist.is_empty() {
        let other = c.other_redist.iter().map(|((w, off), k)| format!("{} {off:#x} ×{k}", if *w { "write" } else { "read" })).collect::<Vec<_>>().join(", ");
        let _ = writeln!(c.text, "# redistributor accesses its-check cannot express (offset from the redistributor base): {other}");
    }
    Ok(c)
}

/// One trace event into the script's body (or the counts of what the script cannot express).
fn script_line(c: &mut Converted, st: &mut State, body: &mut String, line: usize, ev: TraceEvent) -> Result<(), ConvertError> {
    match ev {
        TraceEvent::Cmd(ItsCmd::Unknown { opcode }) => {
            *c.commands.entry("unknown").or_default() += 1;
            let _ = writeln!(body, "{:#018x} 0 0 0   # trace {line}: opcode {opcode:#04x} QEMU does not implement (only the opcode is traced)", opcode);
        }
        TraceEvent::Cmd(tc) => {
            let (cmd, inferred) = st.command(tc);
            *c.commands.entry(cmd.name()).or_default() += 1;
            let _ = write!(body, "{}   # trace {line}: {}", words(cmd.encode()), cmd.name());
            if let Some(i) = inferred {
                c.inferred += 1;
                let _ = write!(body, "; inferred: {i}");
            }
            body.push('\n');
        }
        TraceEvent::Translate { device, event } => {
            c.translates += 1;
            let _ = writeln!(body, "translate {device:#x} {event}   # trace {line}");
        }
        TraceEvent::RedistWrite { redist, offset, .. } | TraceEvent::RedistRead { redist, offset, .. } if (offset == VPROPBASER || offset == VPENDBASER) && redist > MAX_REDIST => {
            // its-check numbers redistributors 0..=65535 (found by the lab_console fuzzer).
            return Err(ConvertError::NotExpressible { line, why: format!("redistributor {redist}: its-check takes redistributor numbers up to {MAX_REDIST}") });
        }
        TraceEvent::RedistWrite { redist, offset, data, size } if offset == VPROPBASER || offset == VPENDBASER => {
            if size != 8 {
                return Err(ConvertError::NotExpressible {
                    line,
                    why: format!("a {size}-byte write to redistributor {redist} offset {offset:#x}; its-check takes whole 64-bit VPROPBASER/VPENDBASER values"),
                });
            }
            let reg = if offset == VPROPBASER { "VPROPBASER" } else { "VPENDBASER" };
            if offset == VPENDBASER {
                st.poll_open.insert(redist, true);
            }
            let _ = writeln!(body, "rd {redist} {reg} {data:#018x}   # trace {line}");
        }
        TraceEvent::RedistRead { redist, offset: VPENDBASER, data, .. } if data & DIRTY == 0 && st.poll_open.get(&redist) == Some(&true) => {
            st.poll_open.insert(redist, false);
            let _ = writeln!(body, "rd {redist} poll-dirty   # trace {line}: VPENDBASER read with Dirty = 0");
        }
        TraceEvent::RedistWrite { offset, .. } => *c.other_redist.entry((true, offset)).or_default() += 1,
        TraceEvent::RedistRead { offset, .. } => *c.other_redist.entry((false, offset)).or_default() += 1,
    }
    Ok(())
}

/// The script's header: how it was captured, the counts, what the trace lacks, `gic` and `cpus`.
fn header(c: &Converted, o: &Options) -> String {
    let mut t = String::new();
    for a in &o.about {
        let _ = writeln!(t, "# {a}");
    }
    let n: usize = c.commands.values().sum();
    let counts = c.commands.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    let _ = writeln!(t, "# Converted by irqlab-lab (crates/lab/src/its_script.rs): {n} commands ({counts}), {} TRANSLATER writes;", c.translates);
    let _ = writeln!(t, "# {} fields inferred (QEMU's trace lacks SYNC's RDbase, VSYNC's vPE, INVALL's ICID: see the `inferred:` notes);", c.inferred);
    let _ = writeln!(t, "# not in the trace, so not here: LPI configuration bytes (every LPI is disabled in the model), v4.1 fields, VMOVP SeqNum/ITSList.");
    let _ = writeln!(t, "gic {}", o.gic);
    let _ = writeln!(t, "cpus {}", o.cpus);
    if o.gic.direct_vlpis() {
        let _ = writeln!(t, "vmovp 1   # QEMU 7.2's ITS reports GITS_TYPER.VMOVP = 1");
    }
    t
}

/// Where the script of trace `t` goes: `t` + `.its`.
pub fn script_path(t: &Path) -> PathBuf {
    let mut s = t.as_os_str().to_owned();
    s.push(".its");
    PathBuf::from(s)
}

/// Reads trace `t`, writes its script next to it (the caller checked that none is there, or was
/// given --force), returns what was converted.
pub fn convert_file(t: &Path, gic: Gic, command: &[String]) -> Result<Converted, crate::error::LabError> {
    let about = vec![format!("QEMU ITS trace {} captured by: {}", t.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), command.join(" "))];
    convert_file_with(t, Options::lab(gic, about), crate::error::LabError::Setup)
}

/// `irqlab-lab its-convert`: a trace given by the user; a garbled one is bad input (exit 2).
pub fn convert_command(a: &ItsConvertConfig) -> Result<i32, crate::error::LabError> {
    let out = script_path(&a.trace);
    if out.exists() && !a.force {
        return Err(crate::error::LabError::Usage(format!("{} already exists; not replacing it (use --force)", out.display())));
    }
    if !a.gic.lpis() {
        return Err(crate::error::LabError::Usage(format!("--gic {}: an ITS trace comes from GICv3 or later ({} has no ITS)", a.gic, a.gic.title())));
    }
    let mut o = Options::lab(a.gic, vec![format!("QEMU ITS trace {} converted by: irqlab-lab its-convert", a.trace.display())]);
    o.cpus = a.cpus;
    convert_file_with(&a.trace, o, crate::error::LabError::Usage)?;
    Ok(0)
}

/// The most a trace may hold, as every other reader is bounded (`results::read_text_capped`):
/// a regular file of at most this many bytes, so `/dev/zero` cannot fill the memory and a FIFO
/// cannot block the command (issue 36). A lab trace of a full run is a few MB.
pub const MAX_TRACE_BYTES: u64 = results::MAX_RESULT_BYTES;

fn convert_file_with(t: &Path, o: Options, bad: fn(String) -> crate::error::LabError) -> Result<Converted, crate::error::LabError> {
    let text = results::read_text_capped(t, MAX_TRACE_BYTES).map_err(|e| bad(e.to_string()))?;
    let events = its_trace::parse(&text).map_err(|e| bad(format!("{}: {e}", t.display())))?;
    let c = convert(&events, &o).map_err(|e| bad(format!("{}: {e}", t.display())))?;
    let out = script_path(t);
    results::write_atomic(&out, c.text.as_bytes())?;
    eprintln!("irqlab-lab: wrote {} ({} ITS commands; check it with `irqlab its-check {}`)", out.display(), c.commands.values().sum::<usize>(), out.display());
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::arch::arm::gicv4::{check, script};

    fn conv(trace: &str) -> Converted {
        convert(&its_trace::parse(trace).unwrap(), &Options { gic: Gic::V4_0, cpus: 2, about: vec!["test".into()] }).unwrap()
    }

    // Lines of a real capture (examples/its/lab-vm-start-v40.its: QEMU trace lines 34, 49-52,
    // 123-135, 415-423): ITS probe, VM start (VMAPP, VINVALL, doorbell on the proxy), one
    // residency cycle, teardown.
    const BOOT: &str = "\
gicv3_its_cmd_mapd GICv3 ITS: command MAPD DeviceID 0xffff Size 0x0 ITT_addr 0x4251e0 V 1
gicv3_its_cmd_mapc GICv3 ITS: command MAPC ICID 0x0 RDbase 0x0 V 1
gicv3_its_cmd_sync GICv3 ITS: command SYNC
gicv3_its_cmd_invall GICv3 ITS: command INVALL
gicv3_its_cmd_sync GICv3 ITS: command SYNC
gicv3_its_cmd_vmapp GICv3 ITS: command VMAPP vPEID 0x0 RDbase 0x0 V 1 VPT_addr 0x4334 VPT_size 0xf
gicv3_its_cmd_vsync GICv3 ITS: command VSYNC
gicv3_its_cmd_vinvall GICv3 ITS: command VINVALL vPEID 0x0
gicv3_its_cmd_vsync GICv3 ITS: command VSYNC
gicv3_redist_write GICv3 redistributor 0x0 write: offset 0x20070 data 0x4333058f size 8 secure 0
gicv3_redist_write GICv3 redistributor 0x0 write: offset 0x20078 data 0xe000000043340780 size 8 secure 0
gicv3_its_cmd_mapti GICv3 ITS: command MAPTI DeviceID 0xffff EventID 0x0 ICID 0x0 pINTID 0x2000
gicv3_its_cmd_sync GICv3 ITS: command SYNC
gicv3_its_cmd_clear GICv3 ITS: command CLEAR DeviceID 0xffff EventID 0x0
gicv3_its_cmd_sync GICv3 ITS: command SYNC
gicv3_redist_write GICv3 redistributor 0x0 write: offset 0x10380 data 0x8000000 size 4 secure 0
gicv3_redist_write GICv3 redistributor 0x0 write: offset 0x10380 data 0x40000000 size 4 secure 0
gicv3_redist_read GICv3 redistributor 0x0 read: offset 0x20078 data 0xe000000043340780 size 8 secure 0
gicv3_its_cmd_clear GICv3 ITS: command CLEAR DeviceID 0xffff EventID 0x0
gicv3_its_cmd_sync GICv3 ITS: command SYNC
gicv3_redist_read GICv3 redistributor 0x0 read: offset 0x20078 data 0xe000000043340780 size 8 secure 0
gicv3_redist_write GICv3 redistributor 0x0 write: offset 0x20078 data 0x6000000043340780 size 8 secure 0
gicv3_redist_read GICv3 redistributor 0x0 read: offset 0x20078 data 0x4000000043340780 size 8 secure 0
gicv3_its_cmd_vmapp GICv3 ITS: command VMAPP vPEID 0x0 RDbase 0x0 V 0 VPT_addr 0x0 VPT_size 0x0
gicv3_its_cmd_vsync GICv3 ITS: command VSYNC
gicv3_its_cmd_discard GICv3 ITS: command DISCARD DeviceID 0xffff EventID 0x0
gicv3_its_cmd_sync GICv3 ITS: command SYNC
";

    #[test]
    fn converts_with_the_model_encoder_and_marks_inferences() {
        let c = conv(BOOT);
        let cmds: Vec<&str> = c.text.lines().filter(|l| l.starts_with("0x")).collect();
        assert_eq!(cmds.len(), 19);
        // Each line decodes back to what QEMU traced (the encoder is the model's own).
        let dec = |l: &str| {
            let w: Vec<u64> = l.split_whitespace().take(4).map(|x| u64::from_str_radix(&x[2..], 16).unwrap()).collect();
            Command::decode([w[0], w[1], w[2], w[3]]).unwrap()
        };
        assert_eq!(dec(cmds[0]), Command::Mapd { device: 0xffff, size: 0, itt_addr: 0x4251_e000, valid: true });
        assert_eq!(dec(cmds[2]), Command::Sync { rdbase: 0 });
        assert!(cmds[2].contains("inferred: RDbase 0, the redistributor of collection 0"), "{}", cmds[2]);
        assert_eq!(dec(cmds[3]), Command::Invall { icid: 0 });
        assert!(cmds[3].contains("inferred: ICID 0, the collection of the MAPC before"), "{}", cmds[3]);
        let Command::Vmapp(m) = dec(cmds[5]) else { panic!("{}", cmds[5]) };
        assert_eq!((m.vpe, m.rdbase, m.valid, m.vpt_addr, m.vpt_size), (0, 0, true, 0x4334_0000, 15));
        assert_eq!(dec(cmds[6]), Command::Vsync { vpe: 0 });
        assert_eq!(dec(cmds[9]), Command::Mapti { device: 0xffff, event: 0, pintid: 8192, icid: 0 });
        assert_eq!(dec(cmds[16]), Command::Vsync { vpe: 0 }, "the VSYNC after the unmap keeps its vPE");
        assert_eq!((c.commands["VMAPP"], c.commands["SYNC"], c.commands["VSYNC"], c.commands["CLEAR"]), (2, 6, 3, 2));
        assert_eq!(c.inferred, 10, "6 SYNC, 3 VSYNC, 1 INVALL");
        // Residency: VPROPBASER and VPENDBASER as written; one poll-dirty per VPENDBASER write
        // (the first read after it), later reads counted as not expressible, never dropped.
        assert!(c.text.contains("rd 0 VPROPBASER 0x000000004333058f"));
        assert!(c.text.contains("rd 0 VPENDBASER 0xe000000043340780"));
        assert!(c.text.contains("rd 0 VPENDBASER 0x6000000043340780"));
        assert_eq!(c.text.matches("poll-dirty").count(), 2);
        assert_eq!((c.other_redist[&(true, 0x10380)], c.other_redist[&(false, VPENDBASER)]), (2, 1));
        assert!(c.text.contains("\ngic v4.0\ncpus 2\nvmovp 1"));
    }

    #[test]
    fn the_script_parses_and_checks_clean() {
        let c = conv(BOOT);
        let s = script::parse(&c.text).unwrap();
        let r = check::run(&s);
        assert!(r.violations.is_empty(), "{:?}", r.violations);
    }

    #[test]
    fn a_violation_in_the_trace_survives_conversion_at_its_line() {
        // VMAPTI to a vPE never mapped: the model reports it on the script line of that command.
        let c = conv("gicv3_its_cmd_mapd GICv3 ITS: command MAPD DeviceID 0x10 Size 0x1 ITT_addr 0x400000 V 1\ngicv3_its_cmd_vmapti GICv3 ITS: command VMAPI DeviceID 0x10 EventID 0x0 vPEID 0x5 vINTID 0x2000 Dbell_pINTID 0x3ff\n");
        let r = check::run(&script::parse(&c.text).unwrap());
        assert_eq!(r.violations.len(), 1, "{:?}", r.violations);
        let line = c.text.lines().nth(r.violations[0].line - 1).unwrap();
        assert!(line.contains("# trace 2: VMAPTI"), "{line}");
        assert_eq!(r.violations[0].kind, "unmapped-vpe");
    }

    #[test]
    fn unknown_opcode_is_written_raw_and_half_register_writes_are_refused() {
        let c = conv("gicv3_its_cmd_unknown GICv3 ITS: unknown command 0x2e\n");
        assert!(c.text.contains("0x000000000000002e 0 0 0   # trace 1: opcode 0x2e"), "{}", c.text);
        let e = convert(
            &its_trace::parse("gicv3_redist_write GICv3 redistributor 0x1 write: offset 0x20078 data 0x1 size 4 secure 0\n").unwrap(),
            &Options { gic: Gic::V4_0, cpus: 2, about: vec![] },
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("trace line 1: a 4-byte write"), "{e}");
        // A redistributor number its-check cannot take (the lab_console fuzzer's input).
        let e = convert(
            &its_trace::parse("gicv3_redist_write GICv3 redistributor 0x22222222 write: offset 0x20070 data 0x1 size 8 secure 0\n").unwrap(),
            &Options { gic: Gic::V4_0, cpus: 2, about: vec![] },
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("trace line 1: redistributor 572662306"), "{e}");
    }

    #[test]
    fn script_path_appends_its() {
        assert_eq!(script_path(Path::new("/o/x.trace")), PathBuf::from("/o/x.trace.its"));
    }
}

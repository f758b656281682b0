//! The text form of an ITS command stream, as `irqlab its-check` reads it (docs/its-check.md).
//!
//! One item per line; `#` starts a comment; blank lines are ignored. Numbers are decimal or
//! `0x` hex; command words are hex with or without `0x`.
//!
//! ```text
//! gic v4.0                      # header: v3 | v4.0 | v4.1 (default v4.1)
//! cpus 4                        # header: redistributors (default 4)
//! its-count 2                   # header: ITSs (default 1)
//! vmovp 0                       # header: GITS_TYPER.VMOVP (default: 1 on v4.1, 0 otherwise)
//! its 1                         # following commands and translations go to ITS 1
//! 0x..08 0x.. 0x.. 0x..         # one command: DW0 DW1 DW2 DW3 (queue order)
//! translate DEVICEID EVENTID    # a GITS_TRANSLATER write
//! rd 2 VPROPBASER 0x...         # redistributor register writes
//! rd 2 VPENDBASER 0x...
//! rd 2 poll-dirty               # poll GICR_VPENDBASER until Dirty = 0
//! lpi-config INTID enable|disable [PRIORITY]        # byte in the LPI configuration table
//! vlpi-config TABLE_PA VINTID enable|disable [PRIORITY]  # byte in a VM's vLPI config table
//! ack-vlpi VPE VINTID           # the guest acknowledges a vLPI
//! ack-lpi RD INTID              # the hypervisor acknowledges a physical LPI (e.g. a doorbell)
//! ```
//! Header lines must come before everything else.
use results::vocab::Gic;

/// A malformed line: names the line and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {found}; expected {expected}")]
pub struct ScriptError {
    pub line: usize,
    pub found: String,
    pub expected: String,
}

/// One redistributor register or action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RdOp {
    Vpropbaser(u64),
    Vpendbaser(u64),
    PollDirty,
}

/// One line's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    SelectIts(usize),
    Command([u64; 4]),
    Translate { device: u32, event: u32 },
    Rd { rd: u64, op: RdOp },
    LpiConfig { intid: u32, enable: bool, priority: u8 },
    VlpiConfig { table: u64, vintid: u32, enable: bool, priority: u8 },
    AckVlpi { vpe: u16, vintid: u32 },
    AckLpi { rd: u16, intid: u32 },
}

/// The stream's header (machine configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: Gic,
    pub cpus: u16,
    pub its_count: usize,
    pub vmovp_single: Option<bool>,
}

impl Default for Header {
    fn default() -> Self {
        Header { version: Gic::V4_1, cpus: 4, its_count: 1, vmovp_single: None }
    }
}

/// A parsed stream: header plus items with their 1-based line numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub header: Header,
    pub items: Vec<(usize, Item)>,
}

fn err(line: usize, found: impl Into<String>, expected: &str) -> ScriptError {
    ScriptError { line, found: found.into(), expected: expected.to_string() }
}

/// A number: decimal or 0x hex.
fn num(line: usize, tok: Option<&str>, what: &str, max: u64) -> Result<u64, ScriptError> {
    let Some(t) = tok else { return Err(err(line, "missing value", what)) };
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    };
    match v {
        Ok(v) if v <= max => Ok(v),
        Ok(v) => Err(err(line, format!("{v} is too large"), &format!("{what} (at most {max})"))),
        Err(_) => Err(err(line, format!("`{t}`"), what)),
    }
}

fn hex_word(t: &str) -> Option<u64> {
    let h = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
    if h.is_empty() || h.len() > 16 {
        return None;
    }
    u64::from_str_radix(h, 16).ok()
}

fn enable(line: usize, tok: Option<&str>) -> Result<bool, ScriptError> {
    match tok {
        Some("enable") => Ok(true),
        Some("disable") => Ok(false),
        other => Err(err(line, format!("`{}`", other.unwrap_or("")), "`enable` or `disable`")),
    }
}

/// Optional priority byte, default 0xa0 (Linux `LPI_PROP_DEFAULT_PRIO`).
fn priority(line: usize, tok: Option<&str>) -> Result<u8, ScriptError> {
    Ok(tok.map(|t| num(line, Some(t), "priority 0..255", 255)).transpose()?.unwrap_or(0xa0) as u8)
}

fn end(line: usize, mut toks: std::str::SplitWhitespace<'_>) -> Result<(), ScriptError> {
    match toks.next() {
        None => Ok(()),
        Some(t) => Err(err(line, format!("unexpected `{t}`"), "end of line")),
    }
}

const U32: u64 = u32::MAX as u64;
/// vPE IDs a stream may name: the model's vPE table has 4096 entries (`GicSystem::new`,
/// `vpe_bits: 12`); an ID beyond it has no table entry to act on.
pub const VPE_TABLE_ENTRIES: u32 = 1 << 12;
const U16: u64 = u16::MAX as u64;

/// Parse a whole stream.
pub fn parse(text: &str) -> Result<Script, ScriptError> {
    let mut header = Header::default();
    let mut items = Vec::new();
    let mut seen_headers: Vec<(&str, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("");
        let mut toks = content.split_whitespace();
        let Some(first) = toks.next() else { continue };
        let header_line = matches!(first, "gic" | "cpus" | "its-count" | "vmovp");
        if header_line && !items.is_empty() {
            return Err(err(line, format!("header line `{first}` after the first command"), "header lines (gic, cpus, its-count, vmovp) before everything else"));
        }
        if header_line {
            if let Some(prev) = seen_headers.iter().find(|h| h.0 == first).map(|h| h.1) {
                return Err(err(line, format!("a second `{first}` header (the first is on line {prev})"), &format!("one `{first}` line")));
            }
            seen_headers.push((first, line));
        }
        let item = match first {
            "gic" => {
                header.version = match toks.next().map(Gic::parse) {
                    Some(Ok(g)) if g.lpis() => g,
                    Some(Ok(g)) => return Err(err(line, format!("`{g}` (no ITS before GICv3)"), "`v3`, `v4.0` or `v4.1` after `gic`")),
                    Some(Err(e)) => return Err(err(line, e.to_string(), "`v3`, `v4.0` or `v4.1` after `gic`")),
                    None => return Err(err(line, "``", "`v3`, `v4.0` or `v4.1` after `gic`")),
                };
                None
            }
            "cpus" => {
                header.cpus = num(line, toks.next(), "number of CPUs (1 to 512)", 512)? as u16;
                if header.cpus == 0 {
                    return Err(err(line, "0 CPUs", "number of CPUs (1 to 512)"));
                }
                None
            }
            "its-count" => {
                header.its_count = num(line, toks.next(), "number of ITSs (1 to 16)", 16)? as usize;
                if header.its_count == 0 {
                    return Err(err(line, "0 ITSs", "number of ITSs (1 to 16)"));
                }
                None
            }
            "vmovp" => {
                header.vmovp_single = Some(num(line, toks.next(), "GITS_TYPER.VMOVP: 0 or 1", 1)? == 1);
                None
            }
            "its" => {
                let n = num(line, toks.next(), "ITS number", 15)? as usize;
                if n >= header.its_count {
                    return Err(err(line, format!("ITS {n}"), &format!("an ITS number below its-count ({})", header.its_count)));
                }
                Some(Item::SelectIts(n))
            }
            "translate" => {
                let device = num(line, toks.next(), "DeviceID", U32)? as u32;
                let event = num(line, toks.next(), "EventID", U32)? as u32;
                Some(Item::Translate { device, event })
            }
            "rd" => {
                let rd = num(line, toks.next(), "redistributor number", U16)?;
                let op = match toks.next() {
                    Some("VPROPBASER") => RdOp::Vpropbaser(num(line, toks.next(), "register value", u64::MAX)?),
                    Some("VPENDBASER") => RdOp::Vpendbaser(num(line, toks.next(), "register value", u64::MAX)?),
                    Some("poll-dirty") => RdOp::PollDirty,
                    other => return Err(err(line, format!("`{}`", other.unwrap_or("")), "`VPROPBASER VALUE`, `VPENDBASER VALUE` or `poll-dirty` after `rd N`")),
                };
                Some(Item::Rd { rd, op })
            }
            "lpi-config" => {
                let intid = num(line, toks.next(), "LPI INTID (8192 or more)", U32)? as u32;
                if intid < 8192 {
                    return Err(err(line, format!("INTID {intid}"), "an LPI INTID (8192 or more)"));
                }
                let enable = enable(line, toks.next())?;
                let priority = priority(line, toks.next())?;
                Some(Item::LpiConfig { intid, enable, priority })
            }
            "vlpi-config" => {
                let table = num(line, toks.next(), "vLPI configuration table address", u64::MAX)?;
                let vintid = num(line, toks.next(), "vINTID (8192 or more)", U32)? as u32;
                if vintid < 8192 {
                    return Err(err(line, format!("vINTID {vintid}"), "a vLPI INTID (8192 or more)"));
                }
                let enable = enable(line, toks.next())?;
                let priority = priority(line, toks.next())?;
                Some(Item::VlpiConfig { table, vintid, enable, priority })
            }
            "ack-vlpi" => {
                let vpe = num(line, toks.next(), "vPE ID", U16)? as u16;
                if u32::from(vpe) >= VPE_TABLE_ENTRIES {
                    return Err(err(line, format!("vPE {vpe}"), &format!("a vPE ID below {VPE_TABLE_ENTRIES} (the vPE table holds {VPE_TABLE_ENTRIES} entries)")));
                }
                let vintid = num(line, toks.next(), "vINTID", U32)? as u32;
                Some(Item::AckVlpi { vpe, vintid })
            }
            "ack-lpi" => {
                let rd = num(line, toks.next(), "redistributor number", U16)? as u16;
                let intid = num(line, toks.next(), "INTID", U32)? as u32;
                Some(Item::AckLpi { rd, intid })
            }
            w0 => {
                let words: Vec<&str> = std::iter::once(w0).chain(toks.by_ref()).collect();
                let parsed: Option<Vec<u64>> = words.iter().map(|t| hex_word(t)).collect();
                match parsed {
                    Some(w) if w.len() == 4 => Some(Item::Command([w[0], w[1], w[2], w[3]])),
                    _ => {
                        return Err(err(
                            line,
                            format!("`{}`", content.trim()),
                            "four 64-bit hex words `DW0 DW1 DW2 DW3`, or one of: its, translate, rd, lpi-config, vlpi-config, ack-vlpi, ack-lpi (or a header line)",
                        ))
                    }
                }
            }
        };
        end(line, toks)?;
        if let Some(item) = item {
            items.push((line, item));
        }
    }
    Ok(Script { header, items })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_once_and_vpes_within_the_table() {
        let e = parse("gic v4.1\ncpus 2\ngic v3\n").unwrap_err();
        assert_eq!((e.line, e.found.as_str()), (3, "a second `gic` header (the first is on line 1)"));
        let e = parse("# c\ncpus 2\n\ncpus 8\n").unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.to_string().contains("first is on line 2"), "{e}");
        let e = parse("ack-vlpi 4096 8192\n").unwrap_err();
        assert!(e.to_string().contains("vPE 4096; expected a vPE ID below 4096"), "{e}");
        assert!(parse("gic v4.1\ncpus 2\nits-count 2\nvmovp 1\nack-vlpi 4095 8192\n").is_ok());
    }

    #[test]
    fn the_gic_header_takes_the_vocabularys_word_and_refuses_a_gic_without_an_its() {
        assert_eq!(parse("gic 4\n").unwrap().header.version, Gic::V4_0);
        assert_eq!(parse("gic GICv4.1\n").unwrap().header.version, Gic::V4_1);
        let e = parse("gic v2\n").unwrap_err().to_string();
        assert!(e.contains("no ITS before GICv3"), "{e}");
        let e = parse("gic v4.2\n").unwrap_err().to_string();
        assert!(e.contains("did you mean `v4.1`"), "{e}");
    }

    #[test]
    fn parses_every_line_kind() {
        let s = parse(
            "# demo\ngic v4.0\ncpus 2\nits-count 2\nvmovp 0\n\n8 0 0x8000000000000000 0  # MAPD\nits 1\ntranslate 0x10 3\nrd 1 VPENDBASER 0x8000000050000000\nrd 1 poll-dirty\nrd 0 VPROPBASER 0x4000000f\nlpi-config 8192 enable\nvlpi-config 0x4000000 8300 disable 0x80\nack-vlpi 3 8300\nack-lpi 1 65535\n",
        )
        .unwrap();
        assert_eq!(s.header, Header { version: Gic::V4_0, cpus: 2, its_count: 2, vmovp_single: Some(false) });
        assert_eq!(s.items[0], (7, Item::Command([8, 0, 1 << 63, 0])));
        assert_eq!(s.items[1], (8, Item::SelectIts(1)));
        assert_eq!(s.items[2], (9, Item::Translate { device: 0x10, event: 3 }));
        assert_eq!(s.items[3], (10, Item::Rd { rd: 1, op: RdOp::Vpendbaser(0x8000_0000_5000_0000) }));
        assert_eq!(s.items[4], (11, Item::Rd { rd: 1, op: RdOp::PollDirty }));
        assert_eq!(s.items[6], (13, Item::LpiConfig { intid: 8192, enable: true, priority: 0xa0 }));
        assert_eq!(s.items[7], (14, Item::VlpiConfig { table: 0x400_0000, vintid: 8300, enable: false, priority: 0x80 }));
        assert_eq!(s.items.len(), 10);
    }

    #[test]
    fn malformed_lines_name_the_line_and_what_was_expected() {
        let e = parse("gic v4.1\n\n1 2 3\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.expected.contains("four 64-bit hex words"), "{e}");
        let e = parse("8 0 0 0\ngic v4.0\n").unwrap_err();
        assert!(e.line == 2 && e.expected.contains("before everything else"), "{e}");
        let e = parse("gic v5\n").unwrap_err();
        assert!(e.to_string().starts_with("line 1: `v5`"), "{e}");
        assert_eq!(parse("its 1\n").unwrap_err().line, 1, "only ITS 0 exists by default");
        assert_eq!(parse("rd 0 poll-dirty extra\n").unwrap_err().found, "unexpected `extra`");
        assert_eq!(parse("translate 1 0x1ffffffff\n").unwrap_err().line, 1);
        assert!(parse("1 2 3 12345678901234567\n").is_err(), "17 hex digits is not a 64-bit word");
    }
}

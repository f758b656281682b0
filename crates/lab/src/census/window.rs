//! Reads the census plugin's output (`census/census.c`): a header line, then one record per path
//! window — `W` (the window), `P` lines (PC, opcode, count), `M` lines (MMIO physical address,
//! r/w, size, count), `E` — and `X` at QEMU's exit. A truncated last record (QEMU killed while
//! writing) is dropped and counted; anything else malformed names its line.
use std::collections::BTreeMap;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WindowError {
    #[error("{file}: not a census plugin output (first line {got:?}, expected `irqlab-census 1 ...`)")]
    Header { file: String, got: String },
    #[error("{file}:{line}: {what}")]
    Line { file: String, line: usize, what: String },
}

/// One path window as the plugin counted it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub seq: u64,
    pub cpu: u32,
    /// `irq`, `send`, `after-send`, `wfi`.
    pub kind: String,
    /// `delivered`, `other`, `returned`, `overflow`.
    pub end: String,
    /// The guest dispatch label reached after the vector (0: none).
    pub tag: u64,
    pub insns: u64,
    pub irq_entries: u64,
    pub mmio_dropped: u64,
    /// Instructions per image range (`xen`, `guest`, ..., `other`).
    pub ranges: BTreeMap<String, u64>,
    /// (pc, opcode, count).
    pub pcs: Vec<(u64, u32, u64)>,
    /// (physical address, 'r'|'w', size, count).
    pub mmio: Vec<(u64, char, u32, u64)>,
}

/// The windows, and how many records were cut short at the end.
#[derive(Debug, Default, PartialEq)]
pub struct Windows {
    pub windows: Vec<Window>,
    pub truncated: usize,
    /// `X` was seen: QEMU exited normally after the plugin's last record.
    pub exited: bool,
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s, 16).ok()
}

fn parse_w(rest: &str) -> Option<Window> {
    let mut it = rest.split_whitespace();
    let mut w = Window { seq: it.next()?.parse().ok()?, ..Window::default() };
    for kv in it {
        let (k, v) = kv.split_once('=')?;
        match k {
            "cpu" => w.cpu = v.parse().ok()?,
            "kind" => w.kind = v.to_string(),
            "end" => w.end = v.to_string(),
            "tag" => w.tag = hex(v)?,
            "insns" => w.insns = v.parse().ok()?,
            "irqs" => w.irq_entries = v.parse().ok()?,
            "mmio_dropped" => w.mmio_dropped = v.parse().ok()?,
            _ => {
                let name = k.strip_prefix("r:")?;
                w.ranges.insert(name.to_string(), v.parse().ok()?);
            }
        }
    }
    (!w.kind.is_empty() && !w.end.is_empty()).then_some(w)
}

fn parse_p(rest: &str) -> Option<(u64, u32, u64)> {
    let mut it = rest.split_whitespace();
    let pc = hex(it.next()?)?;
    let op = u32::from_str_radix(it.next()?, 16).ok()?;
    let n = it.next()?.parse().ok()?;
    it.next().is_none().then_some((pc, op, n))
}

fn parse_m(rest: &str) -> Option<(u64, char, u32, u64)> {
    let mut it = rest.split_whitespace();
    let a = hex(it.next()?)?;
    let rw = match it.next()? {
        "r" => 'r',
        "w" => 'w',
        _ => return None,
    };
    let size = it.next()?.parse().ok()?;
    let n = it.next()?.parse().ok()?;
    it.next().is_none().then_some((a, rw, size, n))
}

/// Parses the plugin's output `text` (read from `file`, named in errors).
pub fn parse(text: &str, file: &str) -> Result<Windows, WindowError> {
    // A last line without its newline was cut when QEMU was stopped mid-write: not data.
    let text = match text.rfind('\n') {
        Some(i) if i + 1 < text.len() => &text[..=i],
        _ => text,
    };
    let mut lines = text.lines().enumerate();
    let first = lines.next().map(|(_, l)| l).unwrap_or("");
    if !first.starts_with("irqlab-census 1 ") {
        return Err(WindowError::Header { file: file.into(), got: first.chars().take(60).collect() });
    }
    let bad = |line: usize, what: &str| WindowError::Line { file: file.into(), line: line + 1, what: what.into() };
    let mut out = Windows::default();
    let mut cur: Option<Window> = None;
    for (i, l) in lines {
        let (tag, rest) = if !l.is_empty() && l.is_char_boundary(1) { l.split_at(1) } else { (l, "") };
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        match (tag, cur.as_mut()) {
            ("W", None) => cur = Some(parse_w(rest).ok_or_else(|| bad(i, "a malformed W line"))?),
            ("P", Some(w)) => w.pcs.push(parse_p(rest).ok_or_else(|| bad(i, "a malformed P line (pc opcode count)"))?),
            ("M", Some(w)) => w.mmio.push(parse_m(rest).ok_or_else(|| bad(i, "a malformed M line (address r|w size count)"))?),
            ("E", Some(_)) => out.windows.extend(cur.take()),
            ("X", None) => out.exited = true,
            ("", _) => {}
            (_, Some(_)) => {
                // A new record or X before E: the plugin was cut off mid-record only at the end.
                return Err(bad(i, "a record without its E line"));
            }
            _ => return Err(bad(i, &format!("unexpected {tag:?} outside a record"))),
        }
    }
    if cur.is_some() {
        out.truncated += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "irqlab-census 1 cpus=1 ranges=2\n\
W 3 cpu=0 kind=irq end=delivered tag=40081800 insns=12 irqs=1 mmio_dropped=0 r:xen=11 r:guest=1 r:other=0\n\
P 257a80 d10443ff 1\n\
P 40081280 14000142 1\n\
M 8000100 w 4 2\n\
E\n\
W 4 cpu=0 kind=wfi end=overflow tag=0 insns=5 irqs=0 mmio_dropped=0 r:xen=5 r:guest=0 r:other=0\n\
E\n\
X\n";

    #[test]
    fn reads_records() {
        let w = parse(SAMPLE, "c.txt").unwrap();
        assert_eq!(w.windows.len(), 2);
        assert!(w.exited);
        let a = &w.windows[0];
        assert_eq!((a.seq, a.cpu, a.kind.as_str(), a.end.as_str(), a.tag, a.insns), (3, 0, "irq", "delivered", 0x40081800, 12));
        assert_eq!(a.ranges["xen"], 11);
        assert_eq!(a.pcs[0], (0x257a80, 0xd10443ff, 1));
        assert_eq!(a.mmio, vec![(0x8000100, 'w', 4, 2)]);
    }

    #[test]
    fn a_cut_last_record_is_counted_not_an_error() {
        let text = "irqlab-census 1 cpus=1 ranges=0\nW 1 cpu=0 kind=irq end=delivered tag=0 insns=1 irqs=1 mmio_dropped=0 r:other=1\nP 10 0 1\n";
        let w = parse(text, "c").unwrap();
        assert_eq!((w.windows.len(), w.truncated, w.exited), (0, 1, false));
    }

    #[test]
    fn a_line_cut_mid_write_ends_the_record_cut_short() {
        let text = "irqlab-census 1 cpus=1 ranges=0\nW 1 cpu=0 kind=irq end=delivered tag=0 insns=1 irqs=1 mmio_dropped=0 r:other=1\nE\nW 2 cpu=0 kind=irq end=other tag=0 insns=1 irqs=1 mmio_dropped=0 r:other=1\nP 4008";
        let w = parse(text, "c").unwrap();
        assert_eq!((w.windows.len(), w.truncated), (1, 1));
    }

    #[test]
    fn malformed_input_names_file_and_line() {
        assert!(matches!(parse("hello\n", "f"), Err(WindowError::Header { .. })));
        let e = parse("irqlab-census 1 cpus=1\nW 1 cpu=0 kind=irq end=x tag=0 insns=1\nP zz 0 1\nE\n", "f.txt").unwrap_err();
        assert_eq!(e.to_string(), "f.txt:3: a malformed P line (pc opcode count)");
        let e = parse("irqlab-census 1 cpus=1\nP 1 0 1\n", "f").unwrap_err();
        assert!(e.to_string().contains("f:2: unexpected \"P\" outside a record"), "{e}");
    }
}

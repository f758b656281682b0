//! Function symbols of an image, for naming the census's PCs: Xen's `xen-syms.map` (`0xADDR T
//! name`, what Xen's build writes beside `xen-syms`, and what Debian's
//! `xen-hypervisor-4.17-arm64-dbg` ships), a kernel's `System.map` or `nm` output (`ADDR t name`).
//! Only text symbols (`T`/`t`/`W`/`w`) name code; a PC belongs to the nearest text symbol at or
//! below it, within the image's text range. Xen's static functions carry their file
//! (`time.c#vtimer_interrupt`): kept as is, so a name never collides.
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum SymbolError {
    #[error("{file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: no text symbols (expected `ADDR T name` lines, as in xen-syms.map, System.map or nm output)")]
    Empty { file: String },
}

/// An image's text symbols, sorted by address, with where they came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Symbols {
    pub source: String,
    /// (address, name), sorted, one name per address (the first seen: `_stext` before `start`).
    syms: Vec<(u64, String)>,
    /// End of text (`_etext`; without it, unbounded: the caller's image range bounds the PCs).
    end: u64,
}

impl Symbols {
    /// Parses map/nm text; `offset` is added to every address (an image linked at 0 and loaded
    /// elsewhere).
    pub fn parse(text: &str, source: &str, offset: u64) -> Result<Symbols, SymbolError> {
        let mut syms = Vec::new();
        let mut etext = None;
        for l in text.lines() {
            let mut it = l.split_whitespace();
            let (Some(a), Some(t), Some(name), None) = (it.next(), it.next(), it.next(), it.next()) else { continue };
            let Ok(addr) = u64::from_str_radix(a.trim_start_matches("0x"), 16) else { continue };
            if name == "_etext" {
                etext = Some(addr + offset);
            }
            if matches!(t, "T" | "t" | "W" | "w") && !name.starts_with('$') && !name.starts_with(".L") {
                syms.push((addr + offset, name.to_string()));
            }
        }
        if syms.is_empty() {
            return Err(SymbolError::Empty { file: source.into() });
        }
        syms.sort_by_key(|s| s.0);
        syms.dedup_by_key(|s| s.0);
        let end = etext.unwrap_or(u64::MAX);
        Ok(Symbols { source: source.into(), syms, end })
    }

    pub fn load(path: &Path, offset: u64) -> Result<Symbols, SymbolError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| SymbolError::Read { file: file.clone(), source })?;
        Symbols::parse(&text, &file, offset)
    }

    /// The function holding `pc`, if `pc` lies in this image's text.
    pub fn name_of(&self, pc: u64) -> Option<&str> {
        if pc >= self.end {
            return None;
        }
        let i = self.syms.partition_point(|s| s.0 <= pc);
        (i > 0).then(|| self.syms[i - 1].1.as_str())
    }

    /// The address of a symbol.
    pub fn addr(&self, name: &str) -> Option<u64> {
        self.syms.iter().find(|s| s.1 == name).map(|s| s.0)
    }

    /// [first symbol, end of text).
    pub fn text_range(&self) -> (u64, u64) {
        (self.syms.first().map(|s| s.0).unwrap_or(0), self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XEN: &str = "0x200000 T _start\n0x200000 T _stext\n0x200000 t .text\n0x257800 T hyp_traps_vector\n0x2685b0 t time.c#vtimer_interrupt\n0x2686a0 T vtimer_save\n0x27476c T _etext\n0x2c0000 d data.c#x\n";

    #[test]
    fn xen_map_names_pcs() {
        let s = Symbols::parse(XEN, "xen-syms.map", 0).unwrap();
        assert_eq!(s.name_of(0x2685b0), Some("time.c#vtimer_interrupt"));
        assert_eq!(s.name_of(0x26869c), Some("time.c#vtimer_interrupt"));
        assert_eq!(s.name_of(0x200004), Some("_start"), "the first name at an address wins");
        assert_eq!(s.name_of(0x1ffffc), None);
        assert_eq!(s.name_of(0x27476c), None, "past _etext");
        assert_eq!(s.addr("hyp_traps_vector"), Some(0x257800));
        assert_eq!(s.addr("data.c#x"), None, "data symbols are not code");
        assert_eq!(s.text_range(), (0x200000, 0x27476c));
    }

    #[test]
    fn nm_output_with_a_load_offset() {
        let s = Symbols::parse("0000000000001000 t vectors\n0000000000001788 t irq_entry\n", "bench.elf", 0x4008_0000).unwrap();
        assert_eq!(s.name_of(0x4008_1790), Some("irq_entry"));
        assert_eq!(s.addr("vectors"), Some(0x4008_1000));
    }

    #[test]
    fn no_text_symbols_is_an_error_naming_the_file() {
        let e = Symbols::parse("hello world\n0x10 D data\n", "x.map", 0).unwrap_err();
        assert!(e.to_string().starts_with("x.map: no text symbols"), "{e}");
    }
}

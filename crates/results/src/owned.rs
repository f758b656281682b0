//! Who wrote an output file: irqlab's own sidecar record, never the file's text (issue 45). Each
//! write leaves `.irqlab-owned-HASH` next to the file (HASH: FNV-1a 64 of the file's name, so a
//! 255-byte name still has a legal sidecar name) holding `NAME LENGTH FNV1A64` of what was
//! written; the file is irqlab's when that record matches its content now, or when it is empty.
//! `irqlab`'s output files (crates/cli/src/output/file.rs) and `irqlab-lab ab --junit`
//! (crates/lab/src/ab_report.rs) share it, so each recognises the other's files.
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The most an ownership record may hold (one line).
const RECORD_MAX: u64 = 4096;

/// FNV-1a, 64 bits (what the `fnv` crate's `FnvHasher` computes).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The sidecar recording what irqlab wrote at `real`: `.irqlab-owned-HASH` beside it.
pub fn record_path(real: &Path) -> PathBuf {
    let mut h = Fnv::new();
    h.write(real.file_name().map(|n| n.as_encoded_bytes()).unwrap_or_default());
    real.with_file_name(format!(".irqlab-owned-{:016x}", h.0))
}

/// The record's line for `real` holding what `content` reads: `NAME LENGTH FNV1A64`.
pub fn record_line(real: &Path, content: &mut impl Read) -> io::Result<String> {
    let mut h = Fnv::new();
    let (mut len, mut buf) = (0u64, vec![0u8; 64 << 10]);
    loop {
        let n = content.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.write(&buf[..n]);
        len += n as u64;
    }
    Ok(format!("{} {len} {:016x}", real.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(), h.0))
}

/// The record beside `real`, read bounded (a regular file of at most 4 KiB).
pub fn read_record(real: &Path) -> Option<String> {
    crate::read_text_capped(&record_path(real), RECORD_MAX).ok().map(|t| t.trim_end().to_string())
}

/// Did irqlab write the regular file `real` as it is now? Empty, or its record names its
/// content (length and hash, streamed: the file may be large).
pub fn is_ours(real: &Path) -> io::Result<bool> {
    if std::fs::metadata(real)?.len() == 0 {
        return Ok(true);
    }
    let Some(record) = read_record(real) else { return Ok(false) };
    Ok(record == record_line(real, &mut std::fs::File::open(real)?)?)
}

/// Write the record of `bytes` at `real` (before the file itself: a crash between the two leaves
/// a record that does not match the old file, never a file of the user's marked as irqlab's).
pub fn write_record(real: &Path, bytes: &[u8]) -> Result<(), crate::ResultsError> {
    let record = record_line(real, &mut &bytes[..]).map_err(|e| crate::ResultsError::Write { path: real.into(), source: e })?;
    crate::write_atomic(&record_path(real), format!("{record}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_64_known_values() {
        let h = |s: &[u8]| {
            let mut f = Fnv::new();
            f.write(s);
            f.0
        };
        assert_eq!(h(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(h(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(h(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn a_written_file_is_ours_until_it_changes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j.xml");
        std::fs::write(&p, "notes").unwrap();
        assert!(!is_ours(&p).unwrap());
        write_record(&p, b"<x/>").unwrap();
        crate::write_atomic(&p, b"<x/>").unwrap();
        assert!(is_ours(&p).unwrap());
        std::fs::write(&p, "<x/> edited").unwrap();
        assert!(!is_ours(&p).unwrap());
    }
}

//! JSON reading and writing, with the schema version checked before anything else.
use std::io::Write;
use std::path::Path;

use crate::error::ResultsError;
use crate::run::{RunResult, SCHEMA_VERSION};

/// Serialise to pretty JSON with a trailing newline. Deterministic: maps are ordered and no
/// wall-clock data is part of the schema.
pub fn to_json_string(r: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("RunResult always serialises");
    s.push('\n');
    s
}

/// Parse result JSON; `what` names the source in errors (usually the file path). Every stored
/// histogram is decoded here (bounded, see [`crate::decode_histogram`]), so a result that reads
/// is one `report` can use, and a bad histogram is reported with the file that holds it.
pub fn from_json_str(text: &str, what: &str) -> Result<RunResult, ResultsError> {
    let parse = |message: String| ResultsError::Parse { what: what.into(), message };
    let json = |source| ResultsError::Json { what: what.into(), source };
    let value: serde_json::Value = serde_json::from_str(text).map_err(json)?;
    let version = value.get("schema_version").and_then(|v| v.as_u64()).ok_or_else(|| parse("missing `schema_version` (an unsigned integer)".into()))?;
    if version != SCHEMA_VERSION as u64 {
        return Err(ResultsError::SchemaVersion { what: what.into(), found: version, expected: SCHEMA_VERSION });
    }
    let r: RunResult = serde_json::from_value(value).map_err(json)?;
    // A stored question needs a baseline and a variant to be answered (issue 36: one without
    // variants made `report` panic).
    for (i, q) in r.questions.iter().enumerate() {
        if q.variants.is_empty() || q.baseline.is_empty() || q.param.is_empty() {
            return Err(parse(format!("questions[{i}] (`{}`): needs a `param`, a `baseline` and at least one of `variants`", q.title)));
        }
    }
    for c in &r.configs {
        for (class, l) in &c.classes {
            l.histogram(class).map_err(|e| parse(format!("configuration `{}`: {e}", c.name)))?;
            if let Some(why) = l.summary.inconsistency() {
                return Err(parse(format!("configuration `{}`, class `{class}`: summary contradicts itself: {why}", c.name)));
            }
        }
        for (class, l) in c.repetitions.iter().flat_map(|r| &r.pooled) {
            l.histogram(class).map_err(|e| parse(format!("configuration `{}`, pooled repetitions: {e}", c.name)))?;
        }
        if c.traces.len() > crate::SampleTrace::MAX_PER_CONFIG {
            return Err(parse(format!("configuration `{}`: {} sample traces, at most {} are read", c.name, c.traces.len(), crate::SampleTrace::MAX_PER_CONFIG)));
        }
        for t in &c.traces {
            if !(t.start_ns.is_finite() && t.total_ns.is_finite() && t.segments.iter().all(|s| s.1.is_finite())) {
                return Err(parse(format!("configuration `{}`: sample trace `{}` has a non-finite time", c.name, t.label)));
            }
        }
    }
    Ok(r)
}

/// The most a result file may hold: far above the largest result irqlab writes (an 81-point
/// sweep with traces is a few MB), far below what a reader can hold in memory.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

/// Read a whole text file for a reader, bounded like the scenario reader
/// (`sim::scenario::Scenario::load`): a regular file (symlinks followed) of at most `max` bytes.
/// The size is checked before reading and the read itself stops at `max + 1` bytes, so a file
/// growing meanwhile cannot push it past the bound.
pub fn read_text_capped(path: &Path, max: u64) -> Result<String, ResultsError> {
    let bytes = read_bytes_capped(path, max)?;
    String::from_utf8(bytes).map_err(|e| ResultsError::Read { path: path.into(), source: std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text ({e})")) })
}

/// [`read_text_capped`]'s bytes, for a reader that decodes them itself.
pub fn read_bytes_capped(path: &Path, max: u64) -> Result<Vec<u8>, ResultsError> {
    use std::io::Read;
    let read_err = |source| ResultsError::Read { path: path.into(), source };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    if !meta.is_file() {
        return Err(ResultsError::NotRegular { path: path.into() });
    }
    if meta.len() > max {
        return Err(ResultsError::TooLarge { path: path.into(), bytes: meta.len(), max });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path).map_err(read_err)?.take(max + 1).read_to_end(&mut bytes).map_err(read_err)?;
    if bytes.len() as u64 > max {
        return Err(ResultsError::TooLarge { path: path.into(), bytes: bytes.len() as u64, max });
    }
    Ok(bytes)
}

/// Read and check a result file (at most [`MAX_RESULT_BYTES`], a regular file).
pub fn read_json(path: &Path) -> Result<RunResult, ResultsError> {
    let text = read_text_capped(path, MAX_RESULT_BYTES)?;
    from_json_str(&text, &path.display().to_string())
}

/// fsync a directory, so that a rename inside it survives a crash.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    std::fs::File::open(dir)?.sync_all()
}

/// Write `bytes` to `path` so that a reader never sees a half-written file:
/// - a regular file (or none yet) is replaced atomically: a temporary file next to it, fsync,
///   rename, fsync of the directory; the temporary file is removed on any failure;
/// - a symlink is written through: the file it points to is replaced, the link stays;
/// - a device node, FIFO or socket is written to in place (`/dev/null` stays a device);
/// - a directory is refused before anything is created.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let err = |source| ResultsError::Write { path: path.into(), source };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            let real = std::fs::canonicalize(path).map_err(|e| err(std::io::Error::new(e.kind(), format!("symlink to a missing file ({e})"))))?;
            return write_atomic(&real, bytes);
        }
        Ok(m) if m.is_dir() => return Err(err(std::io::Error::other("is a directory"))),
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(path).map_err(err)?;
            return f.write_all(bytes).and_then(|_| f.flush()).map_err(err);
        }
        _ => {}
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        sync_dir(dir)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(e)
    })
}

pub fn write_json(path: &Path, r: &RunResult) -> Result<(), ResultsError> {
    write_atomic(path, to_json_string(r).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConfigResult, LatencyRecorder, ResultKind, RunMeta};
    use std::collections::BTreeMap;

    #[test]
    fn bad_json_keeps_serde_jsons_error_as_the_source() {
        // Not JSON at all, and JSON of the wrong shape: both end in serde_json's error (the
        // message was a string before, and the chain ended at ResultsError). A shape error has
        // no position: serde_json reads it from a parsed value.
        let shape = format!("{{\"schema_version\": {SCHEMA_VERSION}, \"meta\": 3}}");
        for (text, line) in [("{ not json", 1), (shape.as_str(), 0)] {
            let e = from_json_str(text, "r.json").unwrap_err();
            assert!(e.to_string().starts_with("r.json: not valid irqlab result JSON: "), "{e}");
            let src = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<serde_json::Error>()).unwrap_or_else(|| panic!("{e:?}"));
            assert_eq!(src.line(), line);
        }
    }

    fn sample() -> RunResult {
        let mut r = RunResult::new(RunMeta { platform: BTreeMap::from([("profile".into(), "p".into())]), ..RunMeta::named("irqlab test", "s", 7, ResultKind::Predicted) });
        let mut c = ConfigResult::new("a");
        let mut rec = LatencyRecorder::new(1);
        rec.record(100);
        rec.record(250);
        c.classes.insert("timer".into(), rec.finish());
        c.add_counter("exits", 2);
        c.set_figure("iops", 1.5, "1/s");
        r.configs.push(c);
        r
    }

    #[test]
    fn json_round_trip_is_lossless_and_stable() {
        let r = sample();
        let s = to_json_string(&r);
        let back = from_json_str(&s, "mem").unwrap();
        assert_eq!(back, r);
        assert_eq!(to_json_string(&back), s);
    }

    #[test]
    fn other_schema_version_is_a_clear_error() {
        let s = to_json_string(&sample()).replacen("\"schema_version\": 1", "\"schema_version\": 99", 1);
        let e = from_json_str(&s, "old.json").unwrap_err().to_string();
        assert!(e.contains("old.json") && e.contains("99") && e.contains("reads version 1"), "{e}");
    }

    #[test]
    fn missing_version_and_garbage_are_errors() {
        assert!(from_json_str("{}", "x").unwrap_err().to_string().contains("schema_version"));
        assert!(from_json_str("not json", "y.json").unwrap_err().to_string().starts_with("y.json"));
    }

    #[test]
    fn readers_refuse_devices_directories_and_files_above_the_cap() {
        let d = tempfile::tempdir().unwrap();
        for p in [Path::new("/dev/zero"), d.path()] {
            let e = read_json(p).unwrap_err();
            assert!(matches!(e, ResultsError::NotRegular { .. }), "{}: {e}", p.display());
            assert!(e.to_string().starts_with(&format!("{}: not a regular file", p.display())), "{e}");
        }
        let f = d.path().join("big.json");
        std::fs::write(&f, "x".repeat(101)).unwrap();
        let e = read_text_capped(&f, 100).unwrap_err().to_string();
        assert!(e.contains("big.json: 101 bytes; irqlab reads at most 100 bytes"), "{e}");
        assert_eq!(read_text_capped(&f, 101).unwrap().len(), 101);
    }

    #[test]
    fn atomic_write_creates_dirs_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/result.json");
        write_json(&p, &sample()).unwrap();
        assert_eq!(read_json(&p).unwrap(), sample());
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

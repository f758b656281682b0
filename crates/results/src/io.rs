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

/// Parse result JSON; `what` names the source in errors (usually the file path).
pub fn from_json_str(text: &str, what: &str) -> Result<RunResult, ResultsError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| ResultsError::Parse { what: what.into(), message: e.to_string() })?;
    let version = value.get("schema_version").and_then(|v| v.as_u64()).ok_or_else(|| {
        ResultsError::Parse { what: what.into(), message: "missing `schema_version` (an unsigned integer)".into() }
    })?;
    if version != SCHEMA_VERSION as u64 {
        return Err(ResultsError::SchemaVersion { what: what.into(), found: version, expected: SCHEMA_VERSION });
    }
    serde_json::from_value(value).map_err(|e| ResultsError::Parse { what: what.into(), message: e.to_string() })
}

pub fn read_json(path: &Path) -> Result<RunResult, ResultsError> {
    let text = std::fs::read_to_string(path).map_err(|source| ResultsError::Read { path: path.into(), source })?;
    from_json_str(&text, &path.display().to_string())
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory, then rename.
/// A reader never sees a half-written result.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let err = |source| ResultsError::Write { path: path.into(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp).map_err(err)?;
    f.write_all(bytes).map_err(err)?;
    f.sync_all().map_err(err)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(err)
}

pub fn write_json(path: &Path, r: &RunResult) -> Result<(), ResultsError> {
    write_atomic(path, to_json_string(r).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConfigResult, LatencyRecorder, ResultKind, RunMeta};
    use std::collections::BTreeMap;

    fn sample() -> RunResult {
        let mut r = RunResult::new(RunMeta {
            tool_version: "irqlab test".into(),
            scenario: "s".into(),
            description: String::new(),
            seed: 7,
            kind: ResultKind::Predicted,
            platform: BTreeMap::from([("profile".into(), "p".into())]),
            knobs: BTreeMap::new(),
        });
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
    fn atomic_write_creates_dirs_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/result.json");
        write_json(&p, &sample()).unwrap();
        assert_eq!(read_json(&p).unwrap(), sample());
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

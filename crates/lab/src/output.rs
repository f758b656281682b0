//! The `--out` directory: nothing there is replaced without `--force` (checked before anything
//! runs), results are written atomically (`results::write_atomic`), and the scratch directory
//! (patched images, DTBs) is removed afterwards.
use std::path::{Path, PathBuf};

use results::{Provenance, RunResult};

use crate::error::LabError;

/// The files a lab run writes into `--out`.
pub const OUTPUTS: [&str; 3] = ["result.json", "console.log", "xen.dts"];

pub struct Out {
    dir: PathBuf,
}

impl Out {
    /// Creates `dir`; refuses (exit 2) when one of [`OUTPUTS`] is there and `force` is false.
    pub fn prepare(dir: &Path, force: bool) -> Result<Out, LabError> {
        if dir.exists() && !dir.is_dir() {
            return Err(LabError::Usage(format!("--out {}: not a directory", dir.display())));
        }
        if !force {
            if let Some(p) = OUTPUTS.iter().map(|n| dir.join(n)).find(|p| p.exists()) {
                return Err(LabError::Usage(format!("--out: {} already exists; not replacing an earlier result (use --force)", p.display())));
            }
        }
        std::fs::create_dir_all(dir).map_err(LabError::io(dir))?;
        Ok(Out { dir: dir.to_path_buf() })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn work_dir(&self) -> Result<PathBuf, LabError> {
        let w = self.dir.join(format!(".irqlab-lab-{}", std::process::id()));
        std::fs::create_dir_all(&w).map_err(LabError::io(&w))?;
        Ok(w)
    }

    pub fn remove_work_dir(&self) {
        let _ = std::fs::remove_dir_all(self.dir.join(format!(".irqlab-lab-{}", std::process::id())));
    }

    pub fn write_new(&self, name: &str, bytes: &[u8]) -> Result<(), LabError> {
        Ok(results::write_atomic(&self.path(name), bytes)?)
    }

    pub fn write_result(&self, r: &RunResult) -> Result<(), LabError> {
        Ok(results::write_json(&self.path("result.json"), r)?)
    }
}

/// Who ran it, when, on which machine.
pub fn provenance(command: Vec<String>) -> Provenance {
    Provenance {
        command,
        started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        tool_version: format!("irqlab-lab {}", env!("CARGO_PKG_VERSION")),
        git_commit: option_env!("IRQLAB_GIT_COMMIT").unwrap_or("unknown").to_string(),
        hostname: std::fs::read_to_string("/etc/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into()),
        details: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_result_is_not_replaced_without_force() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("result.json"), "{}").unwrap();
        let e = Out::prepare(d.path(), false).err().unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("result.json already exists"), "{e}");
        assert!(Out::prepare(d.path(), true).is_ok());
        assert_eq!(std::fs::read_to_string(d.path().join("result.json")).unwrap(), "{}", "prepare writes nothing");
        let f = d.path().join("file");
        std::fs::write(&f, "x").unwrap();
        assert!(Out::prepare(&f, true).is_err());
    }

    #[test]
    fn work_dir_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let o = Out::prepare(&d.path().join("new"), false).unwrap();
        let w = o.work_dir().unwrap();
        std::fs::write(w.join("guest.bin"), "x").unwrap();
        o.remove_work_dir();
        assert!(!w.exists());
        o.write_new("xen.dts", b"/dts-v1/;").unwrap();
        assert_eq!(std::fs::read(o.path("xen.dts")).unwrap(), b"/dts-v1/;");
    }
}

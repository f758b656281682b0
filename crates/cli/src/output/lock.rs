//! One writer per output directory (issue 36, "nothing lost under concurrency").
//!
//! Two `irqlab run --out R` started together both found no result in R, both measured, both
//! swapped their directory in and both printed "wrote" — and one measurement was gone. The
//! directory is replaced as a whole (see [`super::dir`]), so a lock inside it would be swapped
//! away with it; the lock is a file next to it, `.irqlab-lock-HASH` ([`lock_path`]), held with `flock(2)` from
//! the moment a command checks its output directory (before any work) until the process exits
//! (the kernel drops it then, even on a crash, so a stale lock file holds nothing). A second
//! writer of the directory is refused at once, naming the lock, rather than waiting: a
//! measurement can take hours. A file written *into* an output directory (`report -o
//! DIR/report.html`) waits for the directory's writer instead, so that the file is neither
//! written into a directory about to be swapped out nor lost from the one swapped in.
//!
//! Locks are per process and reentrant here: a process that already holds a directory's lock
//! (`run --out R --samples-out R/s.tsv`) does not take it again (flock locks are per open file,
//! so a second `open` + `flock` in the same process would wait for itself).
use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::error::OutputError;

/// The locks this process holds, by lock file path; kept open until exit.
static HELD: Mutex<BTreeMap<PathBuf, File>> = Mutex::new(BTreeMap::new());

/// The lock file of output directory `real` (absolute): next to it, `.irqlab-lock-HASH` with
/// HASH the FNV-1a hash of the directory's name, so any legal directory name gives a legal,
/// fixed-length lock name. It stays after the run (an unlocked file holds nothing).
pub fn lock_path(real: &Path) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let (parent, name) = (real.parent()?, real.file_name()?);
    let h = name.as_bytes().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    Some(parent.join(format!(".irqlab-lock-{h:016x}")))
}

/// Take the lock of output directory `real` for the rest of the process: refuse (`wait` false)
/// or wait (`wait` true) when another process holds it. `flag` and `shown` are for messages.
pub fn lock_dir(real: &Path, shown: &Path, flag: &str, wait: bool) -> Result<(), OutputError> {
    let Some(path) = lock_path(real) else { return Ok(()) };
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if held.contains_key(&path) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| match unwritable_dir(parent) {
            Some(d) => OutputError::Unusable { flag: flag.into(), path: shown.into(), why: not_writable(&d) },
            None => OutputError::io(flag, shown, "create its parent directory", e),
        })?;
    }
    let f = match std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path) {
        Ok(f) => f,
        // A lock file left by another user (issue 45): flock needs no write access, so the lock
        // is taken on it read-only rather than refusing.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && path.is_file() => {
            File::open(&path).map_err(|e| OutputError::io(flag, shown, format!("open its lock file {} (another user's, read-only)", path.display()), e))?
        }
        Err(e) => {
            return Err(match path.parent().and_then(unwritable_dir) {
                Some(d) => OutputError::Unusable { flag: flag.into(), path: shown.into(), why: not_writable(&d) },
                None => OutputError::io(flag, shown, format!("open its lock file {}", path.display()), e),
            })
        }
    };
    let op = if wait { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
    loop {
        // SAFETY: flock on a descriptor this function owns; no memory is passed.
        if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => {
                return Err(OutputError::Unusable {
                    flag: flag.into(),
                    path: shown.into(),
                    why: format!("is being written by another irqlab (it holds {}); wait for it to finish, or give another {flag}", path.display()),
                })
            }
            _ => return Err(OutputError::io(flag, shown, format!("lock {}", path.display()), e)),
        }
    }
    held.insert(path, f);
    Ok(())
}

/// The nearest existing directory at or above `dir` when this process may not create files in
/// it (`access(2)` with `W_OK`: permissions, a read-only mount), else `None`.
pub(super) fn unwritable_dir(dir: &Path) -> Option<PathBuf> {
    let existing = dir.ancestors().find(|a| a.is_dir())?;
    let c = std::ffi::CString::new(existing.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: access reads the NUL-terminated path `c` owns and keeps no pointer to it.
    let ok = unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0;
    (!ok).then(|| existing.to_path_buf())
}

pub(super) fn not_writable(d: &Path) -> String {
    format!(
        "cannot hold irqlab's output: the directory {} does not let this user create files (read-only, or another user's); give an output in a directory you may write",
        d.display()
    )
}

/// Before writing a file into directory `dir`: if `dir` is an irqlab output directory (it holds
/// a `result.json`, or its lock file exists), wait for its writer. Other directories need no lock.
pub fn wait_for_dir_writer(dir: &Path, shown: &Path, flag: &str) -> Result<(), OutputError> {
    let Ok(real) = std::fs::canonicalize(dir) else { return Ok(()) };
    let Some(path) = lock_path(&real) else { return Ok(()) };
    if !(real.join("result.json").exists() || path.exists()) {
        return Ok(());
    }
    if path.exists() {
        // Tell the user why nothing happens, when something else holds it.
        if let Ok(f) = File::open(&path) {
            // SAFETY: as above.
            let free = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0;
            if !free && !HELD.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&path) {
                crate::term::note(&format!("irqlab: {flag} {}: waiting for another irqlab writing {}\n", shown.display(), real.display()));
            }
        }
    }
    lock_dir(&real, shown, flag, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_sits_next_to_the_directory_and_is_reentrant() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("R");
        assert_eq!(lock_path(&r).unwrap().parent(), Some(d.path()));
        assert_ne!(lock_path(&r), lock_path(&d.path().join("S")));
        lock_dir(&r, &r, "--out", false).unwrap();
        lock_dir(&r, &r, "--out", false).unwrap();
        // another open file description is another holder: refused
        let f = File::open(lock_path(&r).unwrap()).unwrap();
        // SAFETY: as above.
        assert_ne!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }, 0);
    }
}

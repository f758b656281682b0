//! Writing a run's results: `result.json` and `result.csv` in the output directory, together.
//!
//! The two files must never disagree (a kill between two renames once left a JSON of one seed
//! next to a CSV of another). So both are written into a fresh directory next to the target,
//! fsynced, and swapped in with one atomic `renameat2(RENAME_EXCHANGE)` (or one rename when the
//! target does not exist yet); the parent directory is fsynced after. Other regular files and
//! symlinks in the old directory (a `report.html`, say) are carried across as hard links, and the
//! new directory gets the old one's mode (setgid included), owner and group. A directory that
//! holds anything else (subdirectories), that holds the current directory, that is
//! write-protected (no owner write bit, respected even for root), or whose results are the
//! command's own inputs (`merge` into a shard's directory) is not irqlab's to replace and is
//! refused before the run starts ([`check_output_dir`]). Two first writes racing to create the
//! same new directory both succeed (the later one swaps its directory in). On any failure the
//! temporary directory is removed; its name is short (`.irqlab-PID-N.tmp`), so any legal target
//! name works.
//!
//! Ownership (issue 36): a `result.json`/`result.csv` is irqlab's to replace only when the
//! directory's `.irqlab-owned` marker — written in the same swap, so never apart from the files —
//! names it with its length and FNV-1a-64 hash. Any JSON may have a `schema_version` key, and a
//! file edited after irqlab wrote it is the user's now; both are refused naming the file. Results
//! written before the marker existed are refused too (irqlab cannot tell them from a hand-made
//! file), with a message saying how to proceed: delete them or give another `--out`. A command
//! with `--force` (`run`, `import`) replaces them when it is given ([`write_files_forced`]);
//! inputs and directories holding subdirectories are refused even then.
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use results::RunResult;

use super::error::OutputError;
use super::file::{input_at, sweep_stale, temp_name};

/// The files irqlab writes into an output directory.
const OURS: [&str; 2] = ["result.json", "result.csv"];
/// The marker naming the files irqlab wrote, with their lengths and hashes (see the module doc).
const MARKER: &str = ".irqlab-owned";
const MARKER_HEAD: &str = "irqlab output directory v1: the files irqlab wrote (name, length, fnv1a-64); do not edit";
const FLAG: &str = "--out";

/// Write `result.json` and `result.csv` into `dir`, together (see the module doc). `inputs`: the
/// command's input files, never replaced. Returns the JSON path.
pub fn write_files(dir: &Path, r: &RunResult, inputs: &[PathBuf]) -> Result<PathBuf, OutputError> {
    write_files_forced(dir, r, inputs, false)
}

/// [`write_files`] for a command with `--force`: `force` replaces result files irqlab cannot show
/// it wrote (no marker, a changed file, not an irqlab result) — never an input, never a directory
/// that holds anything but files.
pub fn write_files_forced(dir: &Path, r: &RunResult, inputs: &[PathBuf], force: bool) -> Result<PathBuf, OutputError> {
    let files = [(OURS[0], results::to_json_string(r)), (OURS[1], results::to_csv(r))];
    write_together_forced(dir, &files, inputs, force)?;
    Ok(dir.join(OURS[0]))
}

/// Refuse, before anything runs, an output directory irqlab could not replace as a whole.
/// Takes the directory's lock ([`super::lock`]) for the rest of the process: a second writer is
/// refused here, before it does any work.
pub fn check_output_dir(dir: &Path, inputs: &[PathBuf]) -> Result<(), OutputError> {
    check_output_dir_forced(dir, inputs, false)
}

/// [`check_output_dir`] for a command with `--force` (what it replaces: [`write_files_forced`]).
pub fn check_output_dir_forced(dir: &Path, inputs: &[PathBuf], force: bool) -> Result<(), OutputError> {
    let real = resolve(dir).map_err(|e| OutputError::io(FLAG, dir, "resolve it", e))?;
    super::lock::lock_dir(&real, dir, FLAG, false)?;
    existing_entries(dir, &real, inputs, force).map(|_| ())
}

/// The directory itself (symlinks followed, so a linked output directory stays a link).
fn resolve(dir: &Path) -> io::Result<PathBuf> {
    match std::fs::canonicalize(dir) {
        Ok(p) => Ok(p),
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::path::absolute(dir),
        Err(e) => Err(e),
    }
}

/// The old directory's metadata and the names to carry across, or `None` when `real` does not
/// exist. `shown` is the path as the user gave it, for messages.
fn existing_entries(shown: &Path, real: &Path, inputs: &[PathBuf], force: bool) -> Result<Option<(std::fs::Metadata, Vec<OsString>)>, OutputError> {
    let unusable = |why: String| OutputError::Unusable { flag: FLAG.into(), path: shown.into(), why };
    let m = match std::fs::symlink_metadata(real) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        other => other.map_err(|e| OutputError::io(FLAG, shown, "look at it", e))?,
    };
    if m.file_type().is_symlink() {
        let to = std::fs::read_link(real).map(|t| t.display().to_string()).unwrap_or_else(|_| "?".into());
        return Err(unusable(format!("is a symlink to {to}, which does not exist: create that directory, remove the link, or give another {FLAG}")));
    }
    if !m.is_dir() {
        let what = if m.is_file() { "a regular file" } else { "not a directory" };
        return Err(unusable(format!("exists and is {what}; the output is a directory: give another {FLAG}")));
    }
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize).map_err(|e| OutputError::io(FLAG, shown, "find the current directory", e))?;
    if cwd.starts_with(real) {
        return Err(unusable("is (or holds) the current directory; irqlab replaces its output directory as a whole, so give it one of its own".into()));
    }
    if m.mode() & 0o200 == 0 {
        return Err(OutputError::WriteProtected { flag: FLAG.into(), path: shown.into(), mode: m.mode() & 0o7777 });
    }
    for ours in OURS {
        if let Some(input) = input_at(&real.join(ours), inputs) {
            return Err(OutputError::IsInput { flag: FLAG.into(), path: shown.into(), input });
        }
        match ownership(real, ours) {
            Owner::Irqlab => {}
            // Even with --force: the directory is replaced as a whole, and this is no file.
            Owner::NotAFile => {
                return Err(unusable(format!("holds a `{ours}` that is not a regular file (a directory, FIFO, device or dangling link); irqlab replaces only result files it wrote, so move it or give another {FLAG}")));
            }
            // `--force`: the user says the file may go (inputs were refused above).
            _ if force => {}
            Owner::Foreign => {
                return Err(unusable(format!("holds a `{ours}` that irqlab did not write; irqlab replaces only its own results, so move it or give another {FLAG}")));
            }
            Owner::Edited => {
                return Err(unusable(format!(
                    "holds a `{ours}` that was changed after irqlab wrote it ({MARKER} does not match); irqlab leaves it alone, so move it or give another {FLAG}"
                )));
            }
            Owner::Unmarked => {
                return Err(unusable(format!(
                    "holds a `{ours}` without irqlab's ownership marker ({MARKER}): a result of an irqlab older than the marker, or a file made by hand; irqlab cannot tell which, so it leaves it alone: delete it (and the directory's other result file) if it is an old result you no longer need, move it, or give another {FLAG}"
                )));
            }
        }
    }
    let mut carried = Vec::new();
    for e in std::fs::read_dir(real).map_err(|e| OutputError::io(FLAG, shown, "list it", e))? {
        let e = e.map_err(|e| OutputError::io(FLAG, shown, "list it", e))?;
        let name = e.file_name();
        if OURS.iter().chain([&MARKER]).any(|o| name == *o) {
            continue;
        }
        let t = e.file_type().map_err(|e| OutputError::io(FLAG, shown, "list it", e))?;
        if !(t.is_file() || t.is_symlink()) {
            return Err(unusable(format!("holds `{}`, which is not a file; irqlab replaces its output directory as a whole, so give it one of its own", name.to_string_lossy())));
        }
        carried.push(name);
    }
    Ok(Some((m, carried)))
}

/// Whose is the `result.json` / `result.csv` named `name` in directory `real`?
#[derive(Debug, PartialEq)]
enum Owner {
    /// Absent, empty, or named in the marker with its length and hash.
    Irqlab,
    /// The marker names it but the content differs: edited or replaced after irqlab wrote it.
    Edited,
    /// No marker, and the file looks like an irqlab result (an older irqlab's, or made by hand).
    Unmarked,
    /// No marker and not an irqlab result.
    Foreign,
    /// Not a regular file (a directory, FIFO, device or dangling link).
    NotAFile,
}

fn ownership(real: &Path, name: &str) -> Owner {
    // Bounded (issue 45): the type and size are checked before anything is read, so a FIFO named
    // `result.json` cannot block and `/dev/zero` cannot exhaust memory; a directory so named is
    // not taken for an absent file (it was moved aside and later deleted).
    let path = real.join(name);
    let Ok(meta) = std::fs::metadata(&path) else {
        return if std::fs::symlink_metadata(&path).is_ok() { Owner::NotAFile } else { Owner::Irqlab };
    };
    if !meta.is_file() {
        return Owner::NotAFile;
    }
    if meta.len() == 0 {
        return Owner::Irqlab;
    }
    let Ok(text) = results::read_text_capped(&path, results::MAX_RESULT_BYTES) else { return Owner::Foreign };
    let bytes = text.as_bytes();
    let Ok(marker) = results::read_text_capped(&real.join(MARKER), MARKER_MAX) else {
        return if looks_like_a_result(name, bytes) { Owner::Unmarked } else { Owner::Foreign };
    };
    let want = marker_line(name, bytes);
    let mut lines = marker.lines();
    if lines.next() != Some(MARKER_HEAD) {
        return Owner::Foreign;
    }
    match lines.find(|l| l.split(' ').next() == Some(name)) {
        Some(l) if l == want => Owner::Irqlab,
        Some(_) => Owner::Edited,
        None => Owner::Foreign,
    }
}

/// The most the marker may hold (a head and two lines).
const MARKER_MAX: u64 = 4096;

/// The shape of an irqlab result (for the message only; ownership is the marker's).
fn looks_like_a_result(name: &str, bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    if name.ends_with(".json") {
        head.contains("\"schema_version\"")
    } else {
        head.starts_with("scenario,kind,seed,")
    }
}

/// The marker's line for file `name` holding `bytes`.
fn marker_line(name: &str, bytes: &[u8]) -> String {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    format!("{name} {} {:016x}", bytes.len(), h.finish())
}

/// The marker's text for the files irqlab writes.
fn marker_text(files: &[(&str, String)]) -> String {
    let mut t = format!("{MARKER_HEAD}\n");
    for (name, text) in files {
        t.push_str(&marker_line(name, text.as_bytes()));
        t.push('\n');
    }
    t
}

/// Fill `tmp` with the files and the carried links, with `old`'s metadata.
fn fill(tmp: &Path, real: &Path, shown: &Path, files: &[(&str, String)], old: Option<&(std::fs::Metadata, Vec<OsString>)>) -> Result<(), OutputError> {
    let io_err = |step: String, e| OutputError::io(FLAG, shown, step, e);
    let marker = (MARKER, marker_text(files));
    for (file, text) in files.iter().chain([&marker]) {
        let mut f = std::fs::File::create_new(tmp.join(file)).map_err(|e| io_err(format!("create {file} in a temporary directory next to it"), e))?;
        f.write_all(text.as_bytes()).map_err(|e| io_err(format!("write {file}"), e))?;
        f.sync_all().map_err(|e| io_err(format!("sync {file}"), e))?;
    }
    if let Some((m, carried)) = old {
        for name in carried {
            std::fs::hard_link(real.join(name), tmp.join(name)).map_err(|e| {
                io_err(
                    format!(
                        "carry `{}` across (irqlab keeps the other files of its output directory as hard links; move it out of the directory if it is not yours)",
                        name.to_string_lossy()
                    ),
                    e,
                )
            })?;
        }
        let now = std::fs::metadata(tmp).map_err(|e| io_err("stat the new directory".into(), e))?;
        if (now.uid(), now.gid()) != (m.uid(), m.gid()) {
            std::os::unix::fs::chown(tmp, Some(m.uid()), Some(m.gid())).map_err(|e| io_err(format!("keep its owner and group ({}:{})", m.uid(), m.gid()), e))?;
        }
        std::fs::set_permissions(tmp, std::os::unix::fs::PermissionsExt::from_mode(m.mode() & 0o7777)).map_err(|e| io_err("keep its mode".into(), e))?;
    }
    results::sync_dir(tmp).map_err(|e| io_err("sync the new directory".into(), e))
}

#[cfg(test)]
fn write_together(dir: &Path, files: &[(&str, String)], inputs: &[PathBuf]) -> Result<(), OutputError> {
    write_together_forced(dir, files, inputs, false)
}

fn write_together_forced(dir: &Path, files: &[(&str, String)], inputs: &[PathBuf], force: bool) -> Result<(), OutputError> {
    let real = resolve(dir).map_err(|e| OutputError::io(FLAG, dir, "resolve it", e))?;
    let (Some(parent), Some(_)) = (real.parent(), real.file_name()) else {
        return Err(OutputError::Unusable { flag: FLAG.into(), path: dir.into(), why: "is not a directory irqlab can replace".into() });
    };
    std::fs::create_dir_all(parent).map_err(|e| OutputError::io(FLAG, dir, "create its parent directory", e))?;
    super::lock::lock_dir(&real, dir, FLAG, false)?;
    sweep_stale(parent);
    // A concurrent first write may create the directory between our look and our rename: then
    // look again and swap with it.
    for attempt in 0.. {
        let existing = existing_entries(dir, &real, inputs, force)?;
        let tmp = temp_name(parent);
        std::fs::create_dir(&tmp).map_err(|e| OutputError::io(FLAG, dir, "create a temporary directory next to it", e))?;
        let first = existing.is_none();
        let swapped = fill(&tmp, &real, dir, files, existing.as_ref()).and_then(|_| {
            let old = match &existing {
                None => std::fs::rename(&tmp, &real).map(|_| None),
                Some(_) => exchange(&tmp, &real).map(Some),
            };
            old.map_err(|e| OutputError::io(FLAG, dir, "move the new results into place", e))
        });
        match swapped {
            Ok(old) => {
                let _ = results::sync_dir(parent);
                if let Some(old) = old {
                    // The old directory: its results and the links of what was carried across.
                    for f in OURS.iter().chain([&MARKER]).map(OsString::from).chain(existing.into_iter().flat_map(|e| e.1)) {
                        let _ = std::fs::remove_file(old.join(f));
                    }
                    if let Err(e) = std::fs::remove_dir(&old) {
                        crate::term::note(&format!("irqlab: {FLAG} {}: the previous directory stays at {}: {e}; remove it by hand\n", dir.display(), old.display()));
                    }
                }
                return Ok(());
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                let raced = matches!(&e, OutputError::Io { source, .. } if matches!(source.raw_os_error(), Some(libc::ENOTEMPTY) | Some(libc::EEXIST)));
                if !(raced && first && now_exists(&real) && attempt < 5) {
                    return Err(e);
                }
            }
        }
    }
    unreachable!()
}

/// After a failed first rename: does the directory exist now (another writer made it)?
fn now_exists(real: &Path) -> bool {
    std::fs::symlink_metadata(real).is_ok_and(|m| m.is_dir())
}

/// Swap directory `new` into `target` atomically; returns where the old directory now is.
fn exchange(new: &Path, target: &Path) -> io::Result<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (a, b) = (c(new)?, c(target)?);
    // SAFETY: two NUL-terminated paths that live across the call.
    let rc = unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
    if rc == 0 {
        return Ok(new.to_path_buf());
    }
    let e = io::Error::last_os_error();
    if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) {
        return Err(e);
    }
    // No RENAME_EXCHANGE on this filesystem: move the old one aside, then the new one in. A reader
    // may briefly find no directory, never a mixed one.
    let mut aside = new.as_os_str().to_owned();
    aside.push(".old");
    let aside = PathBuf::from(aside);
    std::fs::rename(target, &aside)?;
    if let Err(e) = std::fs::rename(new, target) {
        let _ = std::fs::rename(&aside, target);
        return Err(e);
    }
    Ok(aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| !n.starts_with(".irqlab-lock-")).collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_both_files_keeps_other_files_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("o");
        write_together(&out, &[("result.json", "{\"schema_version\": 1}".into()), ("result.csv", "scenario,kind,seed,1".into())], &[]).unwrap();
        std::fs::write(out.join("report.html"), "mine").unwrap();
        write_together(&out, &[("result.json", "{\"schema_version\": 2}".into()), ("result.csv", "scenario,kind,seed,2".into())], &[]).unwrap();
        assert_eq!(names(&out), [MARKER, "report.html", "result.csv", "result.json"]);
        assert_eq!(std::fs::read_to_string(out.join("result.csv")).unwrap(), "scenario,kind,seed,2");
        assert_eq!(std::fs::read_to_string(out.join("report.html")).unwrap(), "mine");
        assert_eq!(names(d.path()), ["o"], "no temporary or old directory left");
    }

    #[test]
    fn a_result_file_irqlab_did_not_write_is_refused_untouched() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("o");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("result.json"), "{\"my\": \"data\"}").unwrap();
        let e = check_output_dir(&out, &[]).unwrap_err().to_string();
        assert!(e.contains("holds a `result.json` that irqlab did not write"), "{e}");
        // Issue 36: a `schema_version` key and irqlab's CSV header are not ownership.
        std::fs::write(out.join("result.json"), "{\n  \"schema_version\": 1, \"mine\": true\n}").unwrap();
        std::fs::write(out.join("result.csv"), "scenario,kind,seed,config\n").unwrap();
        let e = check_output_dir(&out, &[]).unwrap_err().to_string();
        assert!(e.contains("`result.json` without irqlab's ownership marker") && e.contains("delete it"), "{e}");
        assert!(write_together(&out, &[("result.json", "{}".into()), ("result.csv", "x".into())], &[]).is_err());
        assert_eq!(std::fs::read_to_string(out.join("result.json")).unwrap(), "{\n  \"schema_version\": 1, \"mine\": true\n}");
        // A marker made by hand that does not match the content does not make it ours either.
        std::fs::write(out.join(MARKER), format!("{MARKER_HEAD}\nresult.json 3 0000000000000000\nresult.csv 1 0\n")).unwrap();
        let e = check_output_dir(&out, &[]).unwrap_err().to_string();
        assert!(e.contains("`result.json` that was changed after irqlab wrote it"), "{e}");
        // --force: the user says they may go; the new files and a matching marker replace them.
        check_output_dir_forced(&out, &[], true).unwrap();
        write_together_forced(&out, &[("result.json", "{}".into()), ("result.csv", "x".into())], &[], true).unwrap();
        assert_eq!(std::fs::read_to_string(out.join("result.json")).unwrap(), "{}");
        check_output_dir(&out, &[]).unwrap();
    }

    #[test]
    fn irqlab_replaces_what_it_wrote_but_not_after_an_edit() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("o");
        let files = |v: &str| [("result.json", format!("{{\"schema_version\": {v}}}")), ("result.csv", format!("scenario,kind,seed,{v}"))];
        write_together(&out, &files("1"), &[]).unwrap();
        assert_eq!(names(&out), [MARKER, "result.csv", "result.json"]);
        check_output_dir(&out, &[]).unwrap();
        write_together(&out, &files("2"), &[]).unwrap();
        assert_eq!(std::fs::read_to_string(out.join(MARKER)).unwrap(), marker_text(&files("2").map(|(n, t)| (n, t))));
        // The user edits the CSV: it is theirs now, and nothing is replaced.
        std::fs::write(out.join("result.csv"), "scenario,kind,seed,2,my note").unwrap();
        let e = write_together(&out, &files("3"), &[]).unwrap_err().to_string();
        assert!(e.contains("`result.csv` that was changed after irqlab wrote it"), "{e}");
        assert_eq!(std::fs::read_to_string(out.join("result.json")).unwrap(), "{\"schema_version\": 2}");
        assert_eq!(names(d.path()), ["o"], "no temporary left");
    }

    #[test]
    fn a_directory_holding_directories_is_refused_untouched() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("o/src")).unwrap();
        let e = check_output_dir(&d.path().join("o"), &[]).unwrap_err().to_string();
        assert!(e.contains("holds `src`"), "{e}");
        assert!(write_together(&d.path().join("o"), &[("result.json", "1".into())], &[]).is_err());
        assert_eq!(names(d.path()), ["o"]);
        assert_eq!(names(&d.path().join("o")), ["src"]);
    }

    /// Issue 45: the ownership check read `result.json` whole (a FIFO blocked it, a link to
    /// `/dev/zero` exhausted memory), and a directory named `result.json` counted as absent and
    /// was moved aside with the old directory, later deleted.
    #[test]
    fn a_fifo_a_device_or_a_directory_named_like_a_result_is_refused_unread() {
        for make in ["fifo", "dev", "dir"] {
            let d = tempfile::tempdir().unwrap();
            let out = d.path().join("out");
            std::fs::create_dir(&out).unwrap();
            let p = out.join("result.json");
            match make {
                "fifo" => assert!(std::process::Command::new("mkfifo").arg(&p).status().unwrap().success()),
                "dev" => std::os::unix::fs::symlink("/dev/zero", &p).unwrap(),
                _ => std::fs::create_dir(&p).unwrap(),
            }
            for force in [false, true] {
                let e = check_output_dir_forced(&out, &[], force);
                let e = e.unwrap_err().to_string();
                assert!(e.contains("not a regular file"), "{make}: {e}");
            }
            assert!(std::fs::symlink_metadata(&p).is_ok(), "{make}: left where it was");
        }
    }
}

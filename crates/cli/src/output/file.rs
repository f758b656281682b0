//! Writing one output file — `report -o`, `run --samples-out`, `calibrate -o`/`--table`,
//! `fit -o` — so that nothing a user had is lost:
//! - the command's inputs are never written over, neither directly nor through a symlink or a
//!   hard link to them (same device and inode), `--force` or not;
//! - an existing regular file is replaced only when irqlab wrote it, or with `--force`. Who wrote
//!   it is irqlab's own record, never the file's text (issue 45: a report or samples file the
//!   user edited, or their notes that happened to begin like one, were replaced): each write leaves
//!   a sidecar `.irqlab-owned-HASH` next to the file (HASH: of the file's name, so a 255-byte name
//!   still has a legal sidecar name) holding the name, length and FNV-1a hash of what was written;
//!   the file is irqlab's when that record matches its content now, or when it is empty;
//! - a write-protected file (no write bit for its owner) is left alone, even for root;
//! - the replacement is atomic: a temporary file next to the target (a short name, so a legal
//!   255-byte target name works), fsync, rename, fsync of the directory; it keeps the old file's
//!   mode, owner and group; the temporary file is removed on any failure;
//! - a symlink is written through (the file it points to is replaced, the link stays); a device,
//!   FIFO or socket is written to in place (`/dev/null` stays a device); a directory is refused.
//!
//! [`check`] makes every refusal without touching anything, so commands call it before they
//! spend minutes measuring; [`write`] checks again (the file may have appeared meanwhile).
//! Hand-written rather than `tempfile::NamedTempFile::persist` because the input, ownership and
//! write-protection rules are irqlab's, and the temporary must be created with the old mode.
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::error::OutputError;

/// What kind of file irqlab writes at a target, and how to recognise one it wrote before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Artefact {
    /// `irqlab report` HTML (`<title>irqlab report — …`, crates/report/templates/report.html).
    Report,
    /// `irqlab run --samples-out` (`# config: NAME` first, cmd_run_show::write_samples).
    Samples,
    /// `irqlab calibrate -o` (`# Calibrated platform profile, written by:`, profile_out.rs).
    Profile,
    /// `irqlab fit -o` (`# Fitted by:`, cmd_fit.rs).
    FittedCosts,
    /// `irqlab calibrate --table` (`Measured on `, cmd_calibrate::show).
    Table,
    /// `irqlab compare --junit` / `irqlab-lab ab --junit` (report::compare_doc::junit).
    Junit,
}

impl Artefact {
    fn what(self) -> &'static str {
        match self {
            Artefact::Report => "report",
            Artefact::Samples => "samples file",
            Artefact::Profile => "calibrated profile",
            Artefact::FittedCosts => "fit output",
            Artefact::Table => "calibration table",
            Artefact::Junit => "JUnit report",
        }
    }

    /// Did irqlab write this file as it is now? Empty, or its sidecar record
    /// ([`results::owned`]) names its content. `real` is a regular file ([`plan`] checked).
    fn is_ours(self, real: &Path) -> io::Result<bool> {
        results::owned::is_ours(real)
    }
}

use results::owned::{record_line, record_path};

/// Where an output goes and what protects it.
pub struct Target<'a> {
    /// The flag that named the path (`-o`, `--samples-out`), for messages.
    pub flag: &'a str,
    pub path: &'a Path,
    /// The command's input files.
    pub inputs: &'a [PathBuf],
    /// `--force`: replace a file irqlab did not write.
    pub force: bool,
    pub kind: Artefact,
}

/// How the target will be written.
enum Plan {
    /// Replace (or create) the regular file at this path.
    Replace { real: PathBuf, old: Option<std::fs::Metadata> },
    /// Write in place: a device, FIFO or socket.
    InPlace,
}

/// Is `real` one of `inputs`? Compared as canonical paths and, for existing files, by inode.
pub(crate) fn input_at(real: &Path, inputs: &[PathBuf]) -> Option<PathBuf> {
    let canon = |p: &Path| {
        std::fs::canonicalize(p).ok().or_else(|| {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Some(std::fs::canonicalize(parent).ok()?.join(p.file_name()?))
        })
    };
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let (real_c, real_id) = (canon(real), id(real));
    inputs.iter().find(|i| (real_c.is_some() && canon(i) == real_c) || (real_id.is_some() && id(i) == real_id)).cloned()
}

fn plan(t: &Target) -> Result<Plan, OutputError> {
    let unusable = |why: &str| OutputError::Unusable { flag: t.flag.into(), path: t.path.into(), why: why.into() };
    let real = match std::fs::symlink_metadata(t.path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(t.path).map_err(|e| unusable(&format!("is a symlink to a missing file ({e})")))?,
        _ => t.path.to_path_buf(),
    };
    if let Some(input) = input_at(&real, t.inputs) {
        return Err(OutputError::IsInput { flag: t.flag.into(), path: t.path.into(), input });
    }
    let old = match std::fs::metadata(&real) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Plan::Replace { real, old: None }),
        Err(e) => return Err(OutputError::io(t.flag, t.path, "look at it", e)),
        Ok(m) => m,
    };
    if old.is_dir() {
        return Err(unusable("is a directory; give a file name"));
    }
    if !old.is_file() {
        return Ok(Plan::InPlace);
    }
    if old.mode() & 0o200 == 0 {
        return Err(OutputError::WriteProtected { flag: t.flag.into(), path: t.path.into(), mode: old.mode() & 0o7777 });
    }
    if !t.force && !t.kind.is_ours(&real).map_err(|e| OutputError::io(t.flag, t.path, "read it to see whether irqlab wrote it", e))? {
        return Err(OutputError::Foreign { flag: t.flag.into(), path: t.path.into(), what: t.kind.what() });
    }
    Ok(Plan::Replace { real, old: Some(old) })
}

/// Every refusal [`write`] would make, without writing anything.
pub fn check(t: &Target) -> Result<(), OutputError> {
    plan(t).map(|_| ())
}

/// Remove the temporaries that killed irqlab processes left in `dir`: entries named
/// `.irqlab-PID-N.tmp` (and their `.old` twins) whose PID is not running and that were last
/// modified over 10 minutes ago (a writer in another PID namespace sharing the directory looks
/// dead here; its temporary is young). Best effort: what cannot be removed stays.
pub(crate) fn sweep_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(stale_pid) else { continue };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let young = e.metadata().and_then(|m| m.modified()).map_or(true, |t| t.elapsed().map_or(true, |age| age < STALE_AFTER));
        if young {
            continue;
        }
        let p = e.path();
        let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
    }
}

const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(600);

/// The PID in `.irqlab-PID-N.tmp` or `.irqlab-PID-N.tmp.old`.
fn stale_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(".irqlab-")?;
    let rest = rest.strip_suffix(".tmp.old").or_else(|| rest.strip_suffix(".tmp"))?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// A temporary name in `dir`: short and unique within this process and among processes.
pub(crate) fn temp_name(dir: &Path) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    dir.join(format!(".irqlab-{}-{}.tmp", std::process::id(), N.fetch_add(1, Ordering::Relaxed)))
}

/// Write `bytes` to the target (see the module doc).
pub fn write(t: &Target, bytes: &[u8]) -> Result<(), OutputError> {
    let io_err = |step: &str, e| OutputError::io(t.flag, t.path, step, e);
    let (real, old) = match plan(t)? {
        Plan::InPlace => {
            let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(t.path).map_err(|e| io_err("open it", e))?;
            return f.write_all(bytes).and_then(|_| f.flush()).map_err(|e| io_err("write it", e));
        }
        Plan::Replace { real, old } => (real, old),
    };
    let dir = real.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    // A directory this user may not create files in is named as such (issue 45), before any try.
    if let Some(d) = super::lock::unwritable_dir(&dir) {
        return Err(OutputError::Unusable { flag: t.flag.into(), path: t.path.into(), why: super::lock::not_writable(&d) });
    }
    std::fs::create_dir_all(&dir).map_err(|e| io_err("create its directory", e))?;
    super::lock::wait_for_dir_writer(&dir, t.path, t.flag)?;
    sweep_stale(&dir);
    let tmp = temp_name(&dir);
    let mode = old.as_ref().map_or(0o666, |m| m.mode() & 0o7777);
    let fill = || -> Result<(), OutputError> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(&tmp).map_err(|e| io_err("create a temporary file next to it", e))?;
        if let Some(m) = &old {
            // Keep the old file's owner and group; mode again, as the umask narrowed it.
            let now = f.metadata().map_err(|e| io_err("stat the temporary file", e))?;
            if (now.uid(), now.gid()) != (m.uid(), m.gid()) {
                std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid())).map_err(|e| io_err(&format!("keep its owner and group ({}:{})", m.uid(), m.gid()), e))?;
            }
            f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode)).map_err(|e| io_err("keep its mode", e))?;
        }
        f.write_all(bytes).map_err(|e| io_err("write it", e))?;
        f.sync_all().map_err(|e| io_err("sync it", e))?;
        drop(f);
        // The record first: a crash between the two leaves a record that does not match the old
        // file (refused without --force), never a file of the user's marked as irqlab's.
        let record = record_line(&real, &mut &bytes[..]).map_err(|e| io_err("hash it", e))?;
        results::write_atomic(&record_path(&real), format!("{record}\n").as_bytes()).map_err(|e| io_err("write its ownership record", io::Error::other(e)))?;
        std::fs::rename(&tmp, &real).map_err(|e| io_err("rename the temporary file into place", e))?;
        results::sync_dir(&dir).map_err(|e| io_err("sync its directory", e))
    };
    fill().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn target<'a>(path: &'a Path, inputs: &'a [PathBuf], force: bool) -> Target<'a> {
        Target { flag: "-o", path, inputs, force, kind: Artefact::Samples }
    }

    #[test]
    fn inputs_links_to_inputs_and_hard_links_are_refused_even_with_force() {
        let d = tempfile::tempdir().unwrap();
        let input = d.path().join("in.json");
        std::fs::write(&input, "data").unwrap();
        std::os::unix::fs::symlink(&input, d.path().join("sym")).unwrap();
        std::fs::hard_link(&input, d.path().join("hard")).unwrap();
        let inputs = [input.clone()];
        for p in [input.clone(), d.path().join("sym"), d.path().join("hard"), d.path().join("./in.json")] {
            let e = write(&target(&p, &inputs, true), b"# config: x\n").unwrap_err();
            assert!(matches!(e, OutputError::IsInput { .. }), "{}: {e}", p.display());
        }
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "data");
    }

    #[test]
    fn foreign_files_need_force_ours_are_replaced_keeping_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.tsv");
        std::fs::write(&p, "precious").unwrap();
        let e = write(&target(&p, &[], false), b"# config: a\n").unwrap_err().to_string();
        assert!(e.contains("no record of writing this samples file") && e.contains("--force"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "precious");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        write(&target(&p, &[], true), b"# config: a\n").unwrap();
        write(&target(&p, &[], false), b"# config: b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "# config: b\n");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o7777, 0o600);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = write(&target(&p, &[], true), b"# config: c\n").unwrap_err().to_string();
        assert!(e.contains("write-protected (mode 0444)"), "{e}");
        let mut names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, [record_path(&p).file_name().unwrap().to_str().unwrap(), "s.tsv"], "no temporary left, the record stays");
    }

    /// Issue 45: ownership was the file's text, so a file the user edited after irqlab wrote it,
    /// or their own notes beginning like one, were replaced without --force.
    #[test]
    fn ownership_is_irqlabs_record_not_the_files_text() {
        let d = tempfile::tempdir().unwrap();
        let notes = d.path().join("notes.tsv");
        std::fs::write(&notes, "# config: my own notes, not irqlab's\n").unwrap();
        let e = write(&target(&notes, &[], false), b"# config: a\n").unwrap_err();
        assert!(matches!(e, OutputError::Foreign { .. }), "{e}");
        let p = d.path().join("s.tsv");
        write(&target(&p, &[], false), b"# config: a\n").unwrap();
        std::fs::write(&p, "# config: a\nedited by hand\n").unwrap();
        let e = write(&target(&p, &[], false), b"# config: b\n").unwrap_err();
        assert!(matches!(e, OutputError::Foreign { .. }), "an edited file is the user's: {e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "# config: a\nedited by hand\n");
        // a record that is not a regular file (a FIFO) is not read: the file is not irqlab's
        let q = d.path().join("q.tsv");
        std::fs::write(&q, "x").unwrap();
        assert!(std::process::Command::new("mkfifo").arg(record_path(&q)).status().unwrap().success());
        assert!(matches!(check(&target(&q, &[], false)), Err(OutputError::Foreign { .. })));
    }

    #[test]
    fn temporaries_of_dead_processes_are_swept_live_ones_and_other_names_stay() {
        let d = tempfile::tempdir().unwrap();
        let dead = ".irqlab-999999999-0.tmp";
        std::fs::create_dir(d.path().join(dead)).unwrap();
        std::fs::write(d.path().join(dead).join("result.json"), "x").unwrap();
        std::fs::write(d.path().join(".irqlab-999999999-3.tmp.old"), "x").unwrap();
        let live = format!(".irqlab-{}-7.tmp", std::process::id());
        std::fs::write(d.path().join(&live), "x").unwrap();
        for other in [".irqlab-1-x.tmp", "irqlab-999999999-0.tmp", ".irqlab-999999999-0.tmpx"] {
            std::fs::write(d.path().join(other), "x").unwrap();
        }
        let young = ".irqlab-999999998-0.tmp";
        std::fs::write(d.path().join(young), "x").unwrap();
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for e in std::fs::read_dir(d.path()).unwrap() {
            let p = e.unwrap().path();
            if !p.ends_with(young) {
                std::fs::File::open(&p).unwrap().set_modified(hour_ago).unwrap();
            }
        }
        sweep_stale(d.path());
        let mut names: Vec<String> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        let mut want = vec![".irqlab-1-x.tmp", young, ".irqlab-999999999-0.tmpx", live.as_str(), "irqlab-999999999-0.tmp"];
        want.sort();
        assert_eq!(names, want, "only the dead, old, well-named ones went");
    }

    #[test]
    fn a_255_byte_name_works_and_a_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("y".repeat(255));
        write(&target(&p, &[], false), b"# config: a\n").unwrap();
        write(&target(&p, &[], false), b"# config: b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "# config: b\n");
        let e = check(&target(d.path(), &[], true)).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }
}

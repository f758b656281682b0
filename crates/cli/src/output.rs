//! Writing a run's results: `result.json` and `result.csv` in the output directory, together, and
//! the chosen format on stdout.
//!
//! The two files must never disagree (a kill between two renames once left a JSON of one seed
//! next to a CSV of another). So both are written into a fresh directory next to the target,
//! fsynced, and swapped in with one atomic `renameat2(RENAME_EXCHANGE)` (or one rename when the
//! target does not exist yet); the parent directory is fsynced after. Other regular files and
//! symlinks in the old directory (a `report.html`, say) are carried across as hard links. A
//! directory that holds anything else (subdirectories), or that holds the current directory, is
//! not irqlab's to replace and is refused before the run starts ([`check_output_dir`]). On any
//! failure the temporary directory is removed; nothing named `*.tmp<pid>` stays behind.
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use results::RunResult;

use crate::term::{out, out_data};
use crate::CliError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// The files irqlab writes into an output directory.
const OURS: [&str; 2] = ["result.json", "result.csv"];

/// Write `result.json` and `result.csv` into `dir`, together (see the module doc). Returns the
/// JSON path.
pub fn write_files(dir: &Path, r: &RunResult) -> Result<PathBuf, CliError> {
    let files = [(OURS[0], results::to_json_string(r)), (OURS[1], results::to_csv(r))];
    write_together(dir, &files).map_err(|e| CliError(format!("{}: cannot write results: {e}", dir.display())))?;
    Ok(dir.join(OURS[0]))
}

/// Refuse, before anything runs, an output directory irqlab could not replace as a whole.
pub fn check_output_dir(dir: &Path) -> Result<(), CliError> {
    let refuse = |e: io::Error| CliError(format!("--out {}: {e}", dir.display()));
    let real = resolve(dir).map_err(refuse)?;
    existing_entries(&real).map(|_| ()).map_err(refuse)
}

/// The directory itself (symlinks followed, so a linked output directory stays a link).
fn resolve(dir: &Path) -> io::Result<PathBuf> {
    match std::fs::canonicalize(dir) {
        Ok(p) => Ok(p),
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::path::absolute(dir),
        Err(e) => Err(e),
    }
}

/// `None` when `real` does not exist; otherwise the names to carry across into the new directory.
fn existing_entries(real: &Path) -> io::Result<Option<Vec<OsString>>> {
    let m = match std::fs::symlink_metadata(real) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        other => other?,
    };
    if !m.is_dir() {
        return Err(io::Error::other("exists and is not a directory"));
    }
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize)?;
    if cwd.starts_with(real) {
        return Err(io::Error::other(
            "is (or holds) the current directory; irqlab replaces its output directory as a whole, so give it one of its own",
        ));
    }
    let mut carried = Vec::new();
    for e in std::fs::read_dir(real)? {
        let e = e?;
        let name = e.file_name();
        if OURS.iter().any(|o| name == *o) {
            continue;
        }
        let t = e.file_type()?;
        if !(t.is_file() || t.is_symlink()) {
            return Err(io::Error::other(format!(
                "holds `{}`, which is not a file; irqlab replaces its output directory as a whole, so give it one of its own",
                name.to_string_lossy()
            )));
        }
        carried.push(name);
    }
    Ok(Some(carried))
}

fn write_together(dir: &Path, files: &[(&str, String)]) -> io::Result<()> {
    let real = resolve(dir)?;
    let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else {
        return Err(io::Error::other("is not a directory irqlab can replace"));
    };
    std::fs::create_dir_all(parent)?;
    let existing = existing_entries(&real)?;
    let mut tmp_name = OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = parent.join(tmp_name);
    std::fs::create_dir(&tmp)?;
    let fill_and_swap = || -> io::Result<Option<PathBuf>> {
        for (file, text) in files {
            let mut f = std::fs::File::create_new(tmp.join(file))?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        for carried in existing.iter().flatten() {
            std::fs::hard_link(real.join(carried), tmp.join(carried))?;
        }
        results::sync_dir(&tmp)?;
        let old = match existing {
            None => {
                std::fs::rename(&tmp, &real)?;
                None
            }
            Some(_) => Some(exchange(&tmp, &real)?),
        };
        results::sync_dir(parent)?;
        Ok(old)
    };
    match fill_and_swap() {
        Ok(Some(old)) => {
            // The old directory: its results and the links of what was carried across.
            for f in OURS.iter().map(OsString::from).chain(existing.into_iter().flatten()) {
                let _ = std::fs::remove_file(old.join(f));
            }
            let _ = std::fs::remove_dir(&old);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
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

/// Print the result in the chosen format, latencies in µs.
pub fn print(r: &RunResult, format: Format) -> Result<(), CliError> {
    print_in(r, format, results::LatencyUnit::Us)
}

/// Print the result in the chosen format; `unit` applies to the table and the CSV (JSON is
/// always in ns).
pub fn print_in(r: &RunResult, format: Format, unit: results::LatencyUnit) -> Result<(), CliError> {
    match format {
        Format::Table => {
            out(&report::table::latency_table_in(r, unit))?;
            let figs = report::table::figures_table(r);
            if !figs.is_empty() {
                out("\n")?;
                out(&figs)?;
            }
            Ok(())
        }
        Format::Json => out_data(&results::to_json_string(r)),
        Format::Csv => out_data(&results::to_csv_in(r, unit)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_both_files_keeps_other_files_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("o");
        write_together(&out, &[("result.json", "1".into()), ("result.csv", "1".into())]).unwrap();
        std::fs::write(out.join("report.html"), "mine").unwrap();
        write_together(&out, &[("result.json", "2".into()), ("result.csv", "2".into())]).unwrap();
        assert_eq!(names(&out), ["report.html", "result.csv", "result.json"]);
        assert_eq!(std::fs::read_to_string(out.join("result.csv")).unwrap(), "2");
        assert_eq!(std::fs::read_to_string(out.join("report.html")).unwrap(), "mine");
        assert_eq!(names(d.path()), ["o"], "no temporary or old directory left");
    }

    #[test]
    fn a_directory_holding_directories_is_refused_untouched() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("o/src")).unwrap();
        let e = check_output_dir(&d.path().join("o")).unwrap_err().0;
        assert!(e.contains("holds `src`"), "{e}");
        assert!(write_together(&d.path().join("o"), &[("result.json", "1".into())]).is_err());
        assert_eq!(names(d.path()), ["o"]);
        assert_eq!(names(&d.path().join("o")), ["src"]);
    }
}

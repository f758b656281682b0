//! Why an output could not be written. One enum for the whole output module, because the
//! directory writer and the file writer refuse for the same reasons (an input, a foreign file,
//! write protection) and a caller reports them the same way: a message naming the path, the
//! flag that chose it, and what to do.
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output is one of the command's inputs (directly, through a symlink or a hard link).
    #[error("{flag} {path}: is an input of this command ({input}); irqlab never writes over its inputs, give another {flag}")]
    IsInput { flag: String, path: PathBuf, input: PathBuf },
    /// An existing file that irqlab did not write.
    #[error("{flag} {path}: exists, and irqlab has no record of writing this {what} as it is now (edited since, or not irqlab's); irqlab leaves it alone: give another {flag}{}", force_hint(.flag))]
    Foreign { flag: String, path: PathBuf, what: &'static str },
    /// The file or directory has no write permission for its owner.
    #[error("{flag} {path}: is write-protected (mode {mode:04o}); irqlab leaves it alone: make it writable (chmod u+w) or give another {flag}")]
    WriteProtected { flag: String, path: PathBuf, mode: u32 },
    /// A directory where a file is expected, or the reverse, or an unusable place.
    #[error("{flag} {path}: {why}")]
    Unusable { flag: String, path: PathBuf, why: String },
    /// An I/O step failed; `step` says which, `hint` what to do.
    #[error("{flag} {path}: cannot {step}: {source}{hint}")]
    Io { flag: String, path: PathBuf, step: String, hint: String, source: std::io::Error },
}

impl OutputError {
    pub(crate) fn io(flag: &str, path: &std::path::Path, step: impl Into<String>, source: std::io::Error) -> Self {
        // "Not a directory" names no path: name the file that stands where a directory should
        // (`-o notes.txt/r.html`; issue 45's output-path messages).
        if source.raw_os_error() == Some(libc::ENOTDIR) {
            if let Some(f) = path.ancestors().skip(1).find(|a| !a.as_os_str().is_empty() && a.exists() && !a.is_dir()) {
                return OutputError::Unusable { flag: flag.into(), path: path.into(), why: format!("{} is a file, not a directory: nothing can be written under it", f.display()) };
            }
        }
        let hint = match source.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => {
                "; irqlab may not change something there (another user's file or directory, or an immutable one): fix the permissions or give another output".to_string()
            }
            Some(libc::ENAMETOOLONG) => "; give a shorter output name".to_string(),
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => "; free some space; the earlier output is unchanged".to_string(),
            _ => String::new(),
        };
        OutputError::Io { flag: flag.into(), path: path.into(), step: step.into(), hint, source }
    }
}

/// `--force` replaces a foreign file for every flag but `--samples-out` (it is `--out`'s).
fn force_hint(flag: &str) -> &'static str {
    if flag == "--samples-out" {
        " (--force applies to --out only)"
    } else {
        ", or --force to replace it"
    }
}

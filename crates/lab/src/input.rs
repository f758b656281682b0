//! Reading a file the user named on the command line (`--kernel`, `--kernel-config`, `--xen`),
//! bounded: its type and size are checked from its metadata before a byte is read, so a FIFO, a
//! device such as `/dev/zero` or a multi-GB file is refused with the flag named (exit 2) instead
//! of blocking or exhausting memory (issue 45), and the read itself stops one byte past the
//! bound (a file that grows meanwhile is refused the same way).
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// A user's file the lab will not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{flag} {}: {source}", path.display())]
    Open { flag: String, path: PathBuf, source: std::io::Error },
    #[error("{flag} {}: {kind}, not a regular file", path.display())]
    NotAFile { flag: String, path: PathBuf, kind: &'static str },
    #[error("{flag} {}: {size} bytes, more than the {limit} this flag takes ({what})", path.display())]
    TooBig { flag: String, path: PathBuf, size: u64, limit: u64, what: &'static str },
}

/// The kind of a file that is not a regular file, for the message.
fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The bytes of `path` (given with `flag`), at most `limit` of them; `what` says what the bound
/// allows for (e.g. "an arm64 kernel Image is ~35 MB").
pub fn read_bounded(flag: &str, path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, InputError> {
    let open = |source| InputError::Open { flag: flag.into(), path: path.into(), source };
    let meta = std::fs::metadata(path).map_err(open)?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotAFile { flag: flag.into(), path: path.into(), kind: kind(&meta.file_type()) });
    }
    let too_big = |size| InputError::TooBig { flag: flag.into(), path: path.into(), size, limit, what };
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes)).map_err(open)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// As [`read_bounded`], as text (invalid UTF-8 replaced: a kernel `.config` is ASCII).
pub fn read_text_bounded(flag: &str, path: &Path, limit: u64, what: &'static str) -> Result<String, InputError> {
    read_bounded(flag, path, limit, what).map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_directories_and_big_files_are_refused_before_reading() {
        let e = read_bounded("--kernel", Path::new("/dev/zero"), 1 << 20, "x").unwrap_err();
        assert!(e.to_string().starts_with("--kernel /dev/zero: a character device, not a regular file"), "{e}");
        let d = tempfile::tempdir().unwrap();
        assert!(read_bounded("--xen", d.path(), 10, "x").unwrap_err().to_string().contains("a directory"));
        let fifo = d.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        // A FIFO would block a reader with no writer: refused from its metadata alone.
        assert!(read_bounded("--kernel-config", &fifo, 10, "x").unwrap_err().to_string().contains("a FIFO"));
        let big = d.path().join("big");
        std::fs::File::create(&big).unwrap().set_len(5 << 30).unwrap();
        let e = read_bounded("--kernel", &big, 256 << 20, "an Image is ~35 MB").unwrap_err();
        assert!(e.to_string().contains("5368709120 bytes, more than the 268435456 this flag takes (an Image is ~35 MB)"), "{e}");
        std::fs::write(d.path().join("ok"), b"CONFIG_KVM=y\n").unwrap();
        assert_eq!(read_text_bounded("--kernel-config", &d.path().join("ok"), 100, "x").unwrap(), "CONFIG_KVM=y\n");
        assert!(matches!(read_bounded("--xen", &d.path().join("missing"), 1, "x"), Err(InputError::Open { .. })));
    }
}

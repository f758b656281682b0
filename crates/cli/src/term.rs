//! Writing to stdout and stderr without panicking, and without letting a result file drive the
//! terminal.
//!
//! `print!` panics when stdout fails (EPIPE from `irqlab scenarios | head -0`, ENOSPC from
//! `> /dev/full`). Here a closed pipe ends output quietly, as other command-line tools do (the
//! exit status still says how the run went), and any other write error is a [`CliError`] (exit 2).
//! A stdout that was closed when irqlab started (`>&-`) is an error too, on the first write: the
//! output would otherwise vanish into the `/dev/null` Rust's runtime puts there (see
//! `stdout_is_lost`).
//! Text for people ([`out`], [`note`]) has its control characters escaped, because it quotes
//! strings from result and scenario files: a configuration name holding `ESC [ 2 J` must be
//! shown, not obeyed. Machine output ([`out_data`]: JSON, CSV) is written byte for byte.
use std::borrow::Cow;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::CliError;

/// Set once stdout's reader has gone away; later output is dropped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// `s` with every control character except newline and tab written as an escape (`\u{1b}`, `\r`).
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.chars().map(|c| if bad(c) { c.escape_default().to_string() } else { c.to_string() }).collect())
}

/// Was stdout closed when irqlab started (`irqlab report R -o - >&-`)? Rust's runtime reopens a
/// closed descriptor 0–2 on `/dev/null` before `main` (std `sys::pal::unix::init`,
/// `sanitize_standard_fds`, read for Rust 1.90), so the output would vanish with exit 0. After
/// that reopening a closed stdout cannot be told from a `/dev/null` opened read-write on purpose
/// (Python's `subprocess.DEVNULL`, daemon(3), CI runners: a working stdout, issue 36), so the
/// descriptor is looked at before Rust's runtime touches it: by a function in `.init_array`, which
/// the C runtime calls before `main` and so before `lang_start` sanitises the descriptors.
fn stdout_is_lost() -> bool {
    STDOUT_CLOSED_AT_START.load(Ordering::Relaxed)
}

/// Set by [`probe_stdout_at_start`] when descriptor 1 was not open as the process started.
static STDOUT_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

extern "C" fn probe_stdout_at_start() {
    // SAFETY: F_GETFL on a descriptor number only reads the descriptor's flags; no memory is passed.
    if unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFL) } == -1 {
        STDOUT_CLOSED_AT_START.store(true, Ordering::Relaxed);
    }
}

#[used]
#[cfg_attr(any(target_os = "linux", target_os = "android", target_os = "freebsd"), link_section = ".init_array")]
#[cfg_attr(target_vendor = "apple", link_section = "__DATA,__mod_init_func")]
static PROBE_STDOUT: extern "C" fn() = probe_stdout_at_start;

fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    if !bytes.is_empty() && stdout_is_lost() {
        return Err(CliError("cannot write to stdout: it is closed, so this output would be lost; redirect it to a file (or give -o FILE where there is one)".into()));
    }
    let mut lock = std::io::stdout().lock();
    match lock.write_all(bytes).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(CliError(format!("cannot write to stdout: {e}"))),
    }
}

/// Human-readable text on stdout (tables), control characters escaped.
pub fn out(s: &str) -> Result<(), CliError> {
    write_stdout(escape_controls(s).as_bytes())
}

/// Machine-readable output on stdout (JSON, CSV), unchanged.
pub fn out_data(s: &str) -> Result<(), CliError> {
    write_stdout(s.as_bytes())
}

/// A message on stderr, control characters escaped. Failing to write it is ignored: there is
/// nowhere left to report that.
pub fn note(s: &str) {
    let _ = std::io::stderr().lock().write_all(escape_controls(s).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_text_is_kept() {
        assert_eq!(escape_controls("a\tb\nc"), "a\tb\nc");
        assert_eq!(escape_controls("x\x1b[2Jy\r\u{9b}"), "x\\u{1b}[2Jy\\r\\u{9b}");
        assert_eq!(escape_controls("µs ±5%"), "µs ±5%");
    }
}

//! Runs QEMU with its serial console on a pipe, appends every byte to the console log as it
//! arrives, feeds complete lines to a [`Watcher`], and ends QEMU itself (PSCI SYSTEM_OFF from a
//! domU stops the domU, not Xen) when the watcher says the run is over — always within a bound.
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::LabError;
use crate::watch::{Clock, Outcome, RealClock, Watch};

/// What one QEMU session produced.
#[derive(Debug)]
pub struct Session<W> {
    pub outcome: Outcome,
    pub log: String,
    pub wall: Duration,
    /// The watcher, with what it saw.
    pub watcher: W,
}

/// Splits a byte stream into lines (`\n`), keeping a partial last line for the next chunk.
#[derive(Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                out.push(String::from_utf8_lossy(&self.partial).into_owned());
                self.partial.clear();
            } else {
                self.partial.push(b);
            }
        }
        out
    }
}

/// Starts `qemu args`, watches its console, writes it to `log_path` as it comes.
pub fn run<W: Watch>(qemu: &Path, args: &[String], log_path: &Path, mut watcher: W) -> Result<Session<W>, LabError> {
    let mut log = std::fs::File::create(log_path).map_err(LabError::io(log_path))?;
    let clock = RealClock(Instant::now());
    let mut child = spawn(qemu, args)?;
    let (rx, reader) = read_chunks(child.stdout.take().expect("piped"));
    let mut stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut text = String::new();
    let outcome = watch(&rx, &mut child, &mut watcher, &clock, |bytes, line| {
        if let Some(b) = bytes {
            log.write_all(b).map_err(LabError::io(log_path))?;
        }
        if let Some(l) = line {
            text.push_str(l);
            text.push('\n');
        }
        Ok(())
    })?;
    let wall = clock.now();
    // Our own child, by handle: end it and reap it.
    let _ = child.kill();
    let _ = child.wait();
    drop(rx);
    let _ = reader.join();
    let qemu_err = err_reader.join().unwrap_or_default();
    if !qemu_err.trim().is_empty() {
        let _ = writeln!(log, "\n[irqlab-lab] QEMU stderr:\n{}", qemu_err.trim_end());
    }
    let _ = log.sync_all();
    let outcome = match outcome {
        Outcome::Failed(w) if !qemu_err.trim().is_empty() => Outcome::Failed(format!("{w}; QEMU said: {}", qemu_err.lines().next().unwrap_or("").trim())),
        o => o,
    };
    Ok(Session { outcome, log: text, wall, watcher })
}

/// QEMU started with its output piped; it dies with the lab (a killed or interrupted
/// irqlab-lab leaves no emulator running).
fn spawn(qemu: &Path, args: &[String]) -> Result<std::process::Child, LabError> {
    let mut cmd = Command::new(qemu);
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of the parent.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| LabError::Setup(format!("cannot start {}: {e}", qemu.display())))
}

/// A thread reading `out` in chunks onto a channel (closed at end of file).
fn read_chunks(mut out: std::process::ChildStdout) -> (mpsc::Receiver<Vec<u8>>, std::thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    (rx, reader)
}

/// Feeds the console to `watcher` until it says the run is over or a bound passes; `sink` gets
/// every chunk (for the log) and every complete line (for the text).
fn watch<W: Watch>(
    rx: &mpsc::Receiver<Vec<u8>>,
    child: &mut std::process::Child,
    watcher: &mut W,
    clock: &RealClock,
    mut sink: impl FnMut(Option<&[u8]>, Option<&str>) -> Result<(), LabError>,
) -> Result<Outcome, LabError> {
    let mut split = LineSplitter::default();
    loop {
        let wait = watcher.wait_for(clock.now());
        match rx.recv_timeout(wait.max(Duration::from_millis(1))) {
            Ok(bytes) => {
                sink(Some(&bytes), None)?;
                for line in split.push(&bytes) {
                    sink(None, Some(&line))?;
                    if let Some(o) = watcher.line(&line, clock.now()) {
                        return Ok(o);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
                return Ok(Outcome::Failed(format!("QEMU exited ({status}) before the guest's end line")));
            }
        }
        if let Some(o) = watcher.check(clock.now()) {
            return Ok(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks() {
        let mut s = LineSplitter::default();
        assert_eq!(s.push(b"(XEN) DOM1: @irq"), Vec::<String>::new());
        assert_eq!(s.push(b"lab v1 0 x\r\nnext\n"), vec!["(XEN) DOM1: @irqlab v1 0 x\r".to_string(), "next".to_string()]);
        assert_eq!(s.push(b"\n"), vec![String::new()]);
    }

    #[test]
    fn a_program_that_prints_nothing_is_ended_by_the_bound() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("console.log");
        let b = crate::watch::Bounds { boot: Duration::from_millis(300), first_sample: Duration::from_secs(1), silence: Duration::from_secs(1), total: Duration::from_secs(5) };
        let t = Instant::now();
        let s = run(Path::new("/bin/sleep"), &["30".into()], &log, crate::watch::Watcher::new(b)).unwrap();
        assert!(matches!(s.outcome, Outcome::TimedOut(ref w) if w.contains("no `start` line")), "{:?}", s.outcome);
        assert!(t.elapsed() < Duration::from_secs(5), "the sleeping child was ended");
    }

    #[test]
    fn a_program_that_exits_early_is_a_failure_with_its_log() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("console.log");
        let b = crate::watch::Bounds { boot: Duration::from_secs(5), first_sample: Duration::from_secs(5), silence: Duration::from_secs(5), total: Duration::from_secs(5) };
        let s = run(Path::new("/bin/echo"), &["hello".into()], &log, crate::watch::Watcher::new(b)).unwrap();
        assert!(matches!(s.outcome, Outcome::Failed(ref w) if w.contains("QEMU exited")), "{:?}", s.outcome);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "hello\n");
    }
}

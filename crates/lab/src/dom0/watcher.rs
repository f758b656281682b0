//! Watches a dom0 boot's console: bounds to `/init`, to the NVMe, to fio's end and on the whole
//! run; Xen's and Linux's failure lines; the QEMU log's size at `fio start` and `fio end` (the
//! window the delivery counts are taken from).
use std::path::PathBuf;
use std::time::Duration;

use crate::frame::MARK;
use crate::watch::{Outcome, Watch};

/// Watches a dom0 boot: bounds to `/init`, to the NVMe, to fio's end and on the whole run;
/// notes the QEMU log's size at `fio start` and `fio end` (the counting window).
pub struct Dom0Watcher {
    pub boot: Duration,
    pub job: Duration,
    pub total: Duration,
    qlog: Option<PathBuf>,
    pub init_at: Option<Duration>,
    pub fio_start: Option<(Duration, u64)>,
    pub fio_end: Option<(Duration, u64)>,
    /// Console lines that show a problem (NVMe timeouts, failures), kept for the error.
    pub evidence: Vec<String>,
}

impl Dom0Watcher {
    pub fn new(boot: Duration, job: Duration, total: Duration, qlog: Option<PathBuf>) -> Dom0Watcher {
        Dom0Watcher { boot, job, total, qlog, init_at: None, fio_start: None, fio_end: None, evidence: Vec::new() }
    }
    fn qlog_size(&self) -> u64 {
        self.qlog.as_ref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len()).unwrap_or(0)
    }
}

impl Watch for Dom0Watcher {
    fn line(&mut self, line: &str, now: Duration) -> Option<Outcome> {
        let l = line.trim_end();
        let low = l.to_ascii_lowercase();
        if l.contains("Panic on CPU") || l.contains("Xen BUG at") || l.contains("Kernel panic") {
            self.evidence.push(l.into());
            return Some(Outcome::Failed(l.into()));
        }
        if low.contains("nvme") && (low.contains("timeout") || low.contains("abort")) {
            self.evidence.push(l.into());
            return Some(Outcome::Failed(format!("NVMe I/O timed out in dom0 (interrupts lost?): {l}")));
        }
        if l.contains("Hardware Dom0 halted") || l.contains("Hardware Dom0 shutdown") {
            return Some(Outcome::Failed(format!("dom0 stopped before its report: {l}")));
        }
        let i = l.find(MARK)?;
        let rest = &l[i + MARK.len()..];
        if rest.starts_with("init ") {
            self.init_at = Some(now);
        } else if rest == "fio start" {
            self.fio_start = Some((now, self.qlog_size()));
        } else if rest.starts_with("fio end") {
            self.fio_end = Some((now, self.qlog_size()));
        } else if rest.starts_with("fail") || rest.starts_with("dmesg") || rest.starts_with("fio-output") {
            self.evidence.push(rest.into());
            if let Some(w) = rest.strip_prefix("fail ") {
                return Some(Outcome::Failed(w.into()));
            }
        } else if rest == "done" {
            return Some(Outcome::Done);
        }
        None
    }
    fn wait_for(&self, now: Duration) -> Duration {
        self.deadline().0.saturating_sub(now)
    }
    fn check(&self, now: Duration) -> Option<Outcome> {
        let (at, why) = self.deadline();
        (now >= at).then_some(Outcome::TimedOut(why))
    }
}

impl Dom0Watcher {
    fn deadline(&self) -> (Duration, String) {
        let mut d = vec![(self.total, format!("the whole run took longer than {} s", self.total.as_secs()))];
        match (self.init_at, self.fio_start, self.fio_end) {
            (None, _, _) => d.push((self.boot, format!("dom0 did not reach /init within {} s of QEMU's start (Xen or dom0 did not boot)", self.boot.as_secs()))),
            (Some(t), None, _) => d.push((t + self.boot, format!("the NVMe did not come up (no `fio start`) within {} s of /init", self.boot.as_secs()))),
            (_, Some((t, _)), None) => d.push((t + self.job, format!("fio did not finish within {} s (I/O stalled: interrupts lost?)", self.job.as_secs()))),
            _ => {}
        }
        d.into_iter().min_by_key(|x| x.0).expect("total")
    }
}

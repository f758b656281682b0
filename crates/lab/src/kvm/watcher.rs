//! Watches the KVM lab's console (`session::run` feeds it lines): a bound until `/init` speaks,
//! a bound on the whole session, each bench's start and exit status, the end at `done`.
use std::time::Duration;

use crate::frame::MARK;
use crate::watch::{Outcome, Watch};

/// Watches the KVM lab's console: boot bound until `/init` speaks, total bound, done at `done`.
pub struct KvmWatcher {
    boot: Duration,
    total: Duration,
    pub init_at: Option<Duration>,
    /// Each bench's start on the console (QEMU start → the bench's first sample, within its period).
    pub bench_at: Vec<Duration>,
    /// Each bench's exit status word (`exit CODE [bench I]`), by bench.
    pub exits: std::collections::BTreeMap<usize, String>,
}

impl KvmWatcher {
    pub fn new(boot: Duration, total: Duration) -> KvmWatcher {
        KvmWatcher { boot, total, init_at: None, bench_at: Vec::new(), exits: Default::default() }
    }
}

impl Watch for KvmWatcher {
    fn line(&mut self, line: &str, now: Duration) -> Option<Outcome> {
        if line.contains("Kernel panic") {
            return Some(Outcome::Failed(line.trim().to_string()));
        }
        let rest = line.find(MARK).map(|i| line[i + MARK.len()..].trim_end())?;
        if rest.starts_with("init ") {
            self.init_at = Some(now);
        } else if rest.starts_with("bench ") && rest.ends_with(" start") {
            self.bench_at.push(now);
        } else if let Some((i, code)) = crate::frame::exit_of(rest) {
            self.exits.insert(i, code);
        } else if rest == "done" {
            return Some(Outcome::Done);
        }
        None
    }
    fn wait_for(&self, now: Duration) -> Duration {
        let end = if self.init_at.is_none() { self.boot.min(self.total) } else { self.total };
        end.saturating_sub(now)
    }
    fn check(&self, now: Duration) -> Option<Outcome> {
        if self.init_at.is_none() && now >= self.boot {
            return Some(Outcome::TimedOut(format!("the kernel did not reach /init within {} s", self.boot.as_secs())));
        }
        (now >= self.total).then(|| Outcome::TimedOut(format!("the whole run took longer than {} s", self.total.as_secs())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watcher_bounds_boot_and_finishes_at_done() {
        let mut w = KvmWatcher::new(Duration::from_secs(100), Duration::from_secs(500));
        assert_eq!(w.wait_for(Duration::from_secs(10)), Duration::from_secs(90));
        assert!(matches!(w.check(Duration::from_secs(100)), Some(Outcome::TimedOut(m)) if m.contains("/init")));
        assert_eq!(w.line(&format!("{MARK}init kernel=6.1 kvm=yes"), Duration::from_secs(20)), None);
        assert_eq!(w.check(Duration::from_secs(100)), None);
        assert_eq!(w.wait_for(Duration::from_secs(100)), Duration::from_secs(400));
        w.line(&format!("{MARK}bench 0 start"), Duration::from_secs(25));
        assert_eq!(w.bench_at, vec![Duration::from_secs(25)]);
        w.line(&format!("{MARK}exit 0"), Duration::from_secs(30));
        assert_eq!(w.line(&format!("{MARK}done"), Duration::from_secs(31)), Some(Outcome::Done));
        assert_eq!(w.exits.get(&0).map(String::as_str), Some("0"));
        w.line(&format!("{MARK}exit 3 bench 1"), Duration::from_secs(32));
        assert_eq!(w.exits.get(&1).map(String::as_str), Some("3"));
        assert!(matches!(w.line("[ 1.0] Kernel panic - not syncing", Duration::ZERO), Some(Outcome::Failed(_))));
    }
}

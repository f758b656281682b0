//! The provenance block of a result: command line, start time, tool version and commit, host.
//! `SOURCE_DATE_EPOCH` (reproducible-builds convention) pins the start time, so that two runs
//! of the same command give byte-identical files.
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use results::Provenance;

/// The commit this binary was built from.
pub const GIT_COMMIT: &str = env!("IRQLAB_GIT_COMMIT");

/// Host name of this machine (empty if it cannot be read).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// Now (or `SOURCE_DATE_EPOCH`), UTC, RFC 3339.
pub(crate) fn started() -> String {
    let t = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|s| s.trim().parse::<u64>().ok()).map(|s| UNIX_EPOCH + Duration::from_secs(s)).unwrap_or_else(SystemTime::now);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Provenance of the current process's run.
pub fn current(details: BTreeMap<String, String>) -> Provenance {
    Provenance {
        command: std::env::args().collect(),
        started: started(),
        tool_version: sim::runner::TOOL_VERSION.to_string(),
        git_commit: GIT_COMMIT.to_string(),
        hostname: hostname(),
        details,
    }
}

//! Host-side settings of the vCPU threads (`--pin`, `--priority`, `--mlock`) and which host CPUs
//! they actually ran on. An unpinned thread may migrate; its CPUs are sampled from
//! `/proc/self/task/TID/stat` (field 39, `processor`: the CPU it last ran on), which can be read
//! while the thread sits in KVM_RUN, so the result says where an unpinned run ran.
use std::collections::BTreeSet;

/// A host-side thread setting that was refused; the message names the flag and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThreadError {
    #[error("--pin: cannot pin a vCPU thread to host CPU {cpu}: {why}")]
    Pin { cpu: usize, why: String },
    #[error("--priority {priority}: cannot give the vCPU threads SCHED_FIFO: {why} (needs root or CAP_SYS_NICE, and RLIMIT_RTPRIO ≥ {priority} otherwise)")]
    Priority { priority: i32, why: String },
    #[error("--mlock: mlockall failed: {0} (needs root or CAP_IPC_LOCK, or a RLIMIT_MEMLOCK above the process's size)")]
    Mlock(String),
}

/// The calling thread's id (what tracefs calls `pid`).
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// Pin the calling thread to `cpu`.
pub fn pin_current(cpu: usize) -> Result<(), ThreadError> {
    // SAFETY: a zeroed cpu_set_t, filled with CPU_SET, passed by reference to sched_setaffinity
    // for the calling thread (pid 0); nothing outlives the call.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(ThreadError::Pin { cpu, why: std::io::Error::last_os_error().to_string() })
    }
}

/// Let the calling thread run on any of `cpus` again (undoing [`pin_current`]).
pub fn allow_current(cpus: &[usize]) -> Result<(), ThreadError> {
    // SAFETY: as in pin_current, with every CPU of `cpus` set.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in cpus {
            libc::CPU_SET(*c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(ThreadError::Pin { cpu: cpus.first().copied().unwrap_or(0), why: std::io::Error::last_os_error().to_string() })
    }
}

/// Give the calling thread SCHED_FIFO at `priority` (1–99).
pub fn fifo_current(priority: i32) -> Result<(), ThreadError> {
    let p = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 is the calling thread; `p` lives across the call.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0 {
        Ok(())
    } else {
        Err(ThreadError::Priority { priority, why: std::io::Error::last_os_error().to_string() })
    }
}

/// mlockall(MCL_CURRENT | MCL_FUTURE) for the whole process.
pub fn mlock_all() -> Result<(), ThreadError> {
    // SAFETY: mlockall takes flags only.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        Ok(())
    } else {
        Err(ThreadError::Mlock(std::io::Error::last_os_error().to_string()))
    }
}

pub use crate::config::allowed_cpus;

/// The `processor` field (39) of a `/proc/.../stat` line. The command name (field 2) may hold
/// spaces and parentheses, so fields are counted from its last `)`.
pub fn processor_of_stat(stat: &str) -> Option<usize> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(39 - 3).and_then(|f| f.parse().ok())
}

/// The host CPU thread `tid` of this process last ran on.
pub fn last_cpu(tid: i32) -> Option<usize> {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok().as_deref().and_then(processor_of_stat)
}

/// CPUs seen per vCPU thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuSamples(pub Vec<BTreeSet<usize>>);

impl CpuSamples {
    /// Note where each of `tids` is now.
    pub fn sample(&mut self, tids: &[i32]) {
        self.0.resize(tids.len(), BTreeSet::new());
        for (set, tid) in self.0.iter_mut().zip(tids) {
            if let Some(c) = last_cpu(*tid) {
                set.insert(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processor_is_field_39_counted_past_the_name() {
        // A real line shape with a name holding spaces and a parenthesis; processor = 7.
        let mut fields: Vec<String> = (4..=52).map(|i| (i * 10).to_string()).collect();
        fields[39 - 4] = "7".into();
        let line = format!("1234 (vcpu 0) x) S {}", fields.join(" "));
        assert_eq!(processor_of_stat(&line), Some(7));
        assert_eq!(processor_of_stat("garbage"), None);
    }

    #[test]
    fn this_thread_is_seen_on_an_allowed_cpu() {
        let tid = gettid();
        let mut s = CpuSamples::default();
        s.sample(&[tid]);
        let cpu = *s.0[0].iter().next().expect("a CPU for this thread");
        assert!(allowed_cpus().contains(&cpu));
        assert_eq!(crate::measurement::describe_cpus(&s.0), format!("vcpu0: {cpu}"));
    }

    #[test]
    fn impossible_priority_is_refused_with_its_reason() {
        let e = fifo_current(1000).unwrap_err();
        assert!(matches!(e, ThreadError::Priority { priority: 1000, .. }));
        let e = e.to_string();
        assert!(e.starts_with("--priority 1000: cannot give the vCPU threads SCHED_FIFO"), "{e}");
    }
}

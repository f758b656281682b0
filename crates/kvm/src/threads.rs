//! Host-side settings of the vCPU threads (`--pin`, `--priority`, `--mlock`) and which host CPUs
//! they actually ran on. An unpinned thread may migrate; its CPUs are sampled from
//! `/proc/self/task/TID/stat` (field 39, `processor`: the CPU it last ran on), which can be read
//! while the thread sits in KVM_RUN, so the result says where an unpinned run ran.
use std::collections::BTreeSet;

/// Pin the calling thread to `cpu`.
pub fn pin_current(cpu: usize) -> Result<(), String> {
    // SAFETY: plain libc affinity call on the current thread with a zeroed, then filled, set.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("--pin: cannot pin a vCPU thread to host CPU {cpu}: {}", std::io::Error::last_os_error()))
    }
}

/// Give the calling thread SCHED_FIFO at `priority` (1–99).
pub fn fifo_current(priority: i32) -> Result<(), String> {
    let p = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 is the calling thread; `p` lives across the call.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0 {
        Ok(())
    } else {
        let e = std::io::Error::last_os_error();
        Err(format!("--priority {priority}: cannot give the vCPU threads SCHED_FIFO: {e} (needs root or CAP_SYS_NICE, and RLIMIT_RTPRIO ≥ {priority} otherwise)"))
    }
}

/// mlockall(MCL_CURRENT | MCL_FUTURE) for the whole process.
pub fn mlock_all() -> Result<(), String> {
    // SAFETY: no pointers involved.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        Ok(())
    } else {
        let e = std::io::Error::last_os_error();
        Err(format!("--mlock: mlockall failed: {e} (needs root or CAP_IPC_LOCK, or a RLIMIT_MEMLOCK above the process's size)"))
    }
}

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
        // SAFETY: gettid cannot fail.
        let tid = unsafe { libc::gettid() };
        let mut s = CpuSamples::default();
        s.sample(&[tid]);
        let cpu = *s.0[0].iter().next().expect("a CPU for this thread");
        assert!(crate::config::allowed_cpus().contains(&cpu));
        assert_eq!(crate::measurement::describe_cpus(&s.0), format!("vcpu0: {cpu}"));
    }

    #[test]
    fn impossible_priority_is_refused_with_its_reason() {
        let e = fifo_current(1000).unwrap_err();
        assert!(e.starts_with("--priority 1000: cannot give the vCPU threads SCHED_FIFO"), "{e}");
    }
}

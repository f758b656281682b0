//! A tracefs instance of our own (Documentation/trace/ftrace.rst, "Instances"):
//! `instances/irqlab-<pid>` has its own buffer, trace clock and event switches, so the run never
//! touches the top-level tracing state other tools use. The [`Instance`] guard removes the
//! directory on drop (end of run, error, watchdog, panic); SIGINT/SIGTERM remove it from a
//! signal handler (`rmdir` is async-signal-safe) before the default action runs (the handler
//! knows the most recent live instance of the process; irqlab runs one at a time). Instances left
//! by irqlab processes that no longer exist are removed when a new one is created.
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};

use super::TraceError;

/// Where tracefs is mounted on current kernels.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// A usable tracefs mount.
#[derive(Debug, Clone)]
pub struct Tracefs {
    pub root: PathBuf,
    /// This process mounted it (it was absent); the run says so.
    pub mounted_now: bool,
}

/// This process mounted tracefs (every run's result says so, not only the first).
static MOUNTED_BY_US: AtomicBool = AtomicBool::new(false);

/// Find tracefs, mounting it at /sys/kernel/tracing if it is absent (as trace-cmd does).
pub fn locate_or_mount() -> Result<Tracefs, TraceError> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    if let Some(mp) = mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&"tracefs")).then(|| f[1].to_string())
    }) {
        return Ok(Tracefs { root: PathBuf::from(mp), mounted_now: MOUNTED_BY_US.load(Ordering::Relaxed) });
    }
    let fss = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !fss.lines().any(|l| l.split_whitespace().last() == Some("tracefs")) {
        return Err(TraceError::NoTracefs);
    }
    let c = |s: &str| CString::new(s).expect("no NUL");
    let (src, target, fstype) = (c("nodev"), c(TRACEFS), c("tracefs"));
    // SAFETY: valid NUL-terminated strings; no mount data.
    let rc = unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, std::ptr::null()) };
    if rc != 0 {
        return Err(TraceError::NotMounted(std::io::Error::last_os_error().to_string()));
    }
    MOUNTED_BY_US.store(true, Ordering::Relaxed);
    Ok(Tracefs { root: PathBuf::from(TRACEFS), mounted_now: true })
}

fn access(path: &Path) -> impl FnOnce(std::io::Error) -> TraceError + '_ {
    move |source| TraceError::Access { path: path.display().to_string(), source }
}

/// Instances this process created so far (the second and later get a `-<n>` suffix).
static CREATED: AtomicU32 = AtomicU32::new(0);

/// The path of the live instance, for the signal handler (a leaked CString, or null).
static LIVE: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn on_signal(sig: libc::c_int) {
    let p = LIVE.swap(std::ptr::null_mut(), Ordering::AcqRel);
    // SAFETY: rmdir, signal and raise are async-signal-safe; `p` came from CString::into_raw.
    unsafe {
        if !p.is_null() {
            libc::rmdir(p);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// An instance directory, removed on drop.
#[derive(Debug)]
pub struct Instance {
    pub dir: PathBuf,
    /// Stale instances of dead irqlab processes removed on creation.
    pub removed_stale: Vec<String>,
    old_handlers: Vec<(libc::c_int, libc::sighandler_t)>,
}

impl Instance {
    /// Create `instances/irqlab-<pid>` (`irqlab-<pid>-<n>` for this process's n-th; a stale
    /// directory of that name is replaced).
    pub fn create(fs: &Tracefs) -> Result<Instance, TraceError> {
        let instances = fs.root.join("instances");
        let removed_stale = remove_stale(&instances);
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let name = if n == 0 { format!("irqlab-{}", std::process::id()) } else { format!("irqlab-{}-{n}", std::process::id()) };
        let dir = instances.join(name);
        if dir.exists() {
            std::fs::remove_dir(&dir).map_err(access(&dir))?;
        }
        std::fs::create_dir(&dir).map_err(access(&dir))?;
        let raw = CString::new(dir.as_os_str().as_encoded_bytes()).map(CString::into_raw).unwrap_or(std::ptr::null_mut());
        let old = LIVE.swap(raw, Ordering::AcqRel);
        free(old);
        let old_handlers = [libc::SIGINT, libc::SIGTERM]
            .iter()
            // SAFETY: installing a handler that only calls async-signal-safe functions.
            .map(|&s| (s, unsafe { libc::signal(s, on_signal as *const () as libc::sighandler_t) }))
            .inspect(|&(s, old)| {
                if old == libc::SIG_IGN {
                    // An ignored signal stays ignored (nohup, background jobs).
                    // SAFETY: restoring the previous disposition.
                    unsafe { libc::signal(s, libc::SIG_IGN) };
                }
            })
            .collect();
        Ok(Instance { dir, removed_stale, old_handlers })
    }

    pub fn write(&self, file: &str, value: &str) -> Result<(), TraceError> {
        let p = self.dir.join(file);
        std::fs::write(&p, value).map_err(access(&p))
    }

    pub fn read(&self, file: &str) -> Result<String, TraceError> {
        let p = self.dir.join(file);
        std::fs::read_to_string(&p).map_err(access(&p))
    }

    /// Use trace clock `clock` (`x86-tsc`: the TSC the guest stamps with; `mono_raw`: ns, mapped
    /// onto the counter afterwards).
    pub fn use_clock(&self, clock: &'static str) -> Result<(), TraceError> {
        let clocks = self.read("trace_clock")?;
        if !clocks.split_whitespace().any(|c| c.trim_matches(['[', ']']) == clock) {
            return Err(TraceError::NoClock { clock, file: self.dir.join("trace_clock").display().to_string() });
        }
        self.write("trace_clock", clock)
    }

    /// Enable `system/name` with an optional filter; a filter the kernel refuses is dropped and
    /// reported (the splitter checks threads and fields itself).
    pub fn enable(&self, event: &str, filter: Option<&str>) -> Result<Option<String>, TraceError> {
        let mut refused = None;
        if let Some(f) = filter {
            if self.write(&format!("events/{event}/filter"), f).is_err() {
                refused = Some(format!("{event}: filter `{f}` refused by the kernel; recorded unfiltered"));
            }
        }
        self.write(&format!("events/{event}/enable"), "1")?;
        Ok(refused)
    }

    /// Events the ring buffer overwrote or dropped (per_cpu/cpuN/stats `overrun` + `dropped events`).
    pub fn overruns(&self) -> u64 {
        let Ok(cpus) = std::fs::read_dir(self.dir.join("per_cpu")) else { return 0 };
        cpus.flatten()
            .filter_map(|d| std::fs::read_to_string(d.path().join("stats")).ok())
            .flat_map(|s| {
                s.lines()
                    .filter(|l| l.starts_with("overrun:") || l.starts_with("dropped events:"))
                    .filter_map(|l| l.rsplit(':').next().and_then(|v| v.trim().parse::<u64>().ok()))
                    .collect::<Vec<_>>()
            })
            .sum()
    }
}

fn free(p: *mut libc::c_char) {
    if !p.is_null() {
        // SAFETY: `p` came from CString::into_raw and is no longer published.
        drop(unsafe { CString::from_raw(p) });
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.write("tracing_on", "0");
        free(LIVE.swap(std::ptr::null_mut(), Ordering::AcqRel));
        for (s, h) in &self.old_handlers {
            // SAFETY: restoring the handler that was installed before ours.
            unsafe { libc::signal(*s, *h) };
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Remove `irqlab-<pid>` instances whose process is gone; returns their names.
fn remove_stale(instances: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(instances) else { return Vec::new() };
    rd.flatten()
        .filter_map(|d| {
            let name = d.file_name().to_string_lossy().to_string();
            let rest = name.strip_prefix("irqlab-")?;
            let pid: u32 = rest.split('-').next()?.parse().ok()?;
            let dead = pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists();
            (dead && std::fs::remove_dir(d.path()).is_ok()).then_some(name)
        })
        .collect()
}

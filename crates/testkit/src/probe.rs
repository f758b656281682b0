//! Resource probes: whether this host has what a `needs_<resource>` test needs, and if not, why
//! not in words a reader can act on. `scripts/test.sh` probes the same resources in shell (it
//! runs before anything is built) and names them the same way; `resource_names_match_test_sh`
//! keeps the two lists equal.
use std::path::Path;

/// Something a test may need from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// /dev/kvm opens read-write.
    Kvm,
    /// /dev/kvm, root and tracefs (the traced runs).
    Tracefs,
    /// strace that may trace (the fault-injection tests).
    Strace,
    /// taskset and at least 2 CPUs (pinning).
    TwoCpus,
    /// `chattr +i` works (root, a filesystem with the immutable flag).
    Chattr,
    /// The aarch64 cross binutils, with which `armguest`'s build script assembles the guest image.
    ArmGuest,
    /// qemu-system-aarch64, and the armguest image.
    QemuArm,
    /// qemu-system-aarch64 and the aarch64 cross gcc: the KVM lab boots (with a stand-in irqlab).
    CrossLab,
    /// The QEMU lab running the real aarch64 irqlab: the cross lab and `IRQLAB_LAB_IRQLAB`
    /// naming the binary (scripts/test.sh builds it and sets it for `needs_arm_lab::`).
    ArmLab,
    /// The cross lab and Xen's GICv4 RFC series (a directory with `xen-base.tar.xz` and `series/`
    /// at `IRQLAB_XEN_GICV4_RFC`, default [`XEN_SERIES_DEFAULT`]); it cannot be installed.
    XenSeries,
    /// fio on PATH (the live fio import).
    Fio,
    /// cyclictest on PATH and allowed to run (rt-tests; the live cyclictest import).
    Cyclictest,
    /// cpio(1) on PATH (the lab's initramfs).
    Cpio,
    /// PostgreSQL's server programs (`initdb`, `pg_ctl`; Debian's postgresql) and, as root,
    /// `runuser` to start them as `postgres`: the shared results history's tests.
    Postgres,
    /// xmllint (libxml2-utils): the JUnit reports are validated against the JUnit schema.
    Xmllint,
    /// Chromium, headless: the Markdown step summary is rendered in a real browser.
    Chromium,
}

impl Resource {
    /// Every resource this crate probes.
    pub const ALL: [Resource; 16] = [
        Resource::Kvm,
        Resource::Tracefs,
        Resource::Strace,
        Resource::TwoCpus,
        Resource::Chattr,
        Resource::ArmGuest,
        Resource::QemuArm,
        Resource::CrossLab,
        Resource::ArmLab,
        Resource::XenSeries,
        Resource::Fio,
        Resource::Cyclictest,
        Resource::Cpio,
        Resource::Postgres,
        Resource::Xmllint,
        Resource::Chromium,
    ];

    /// The name in `needs_<name>` modules and in `scripts/test.sh`.
    pub fn name(self) -> &'static str {
        match self {
            Resource::Kvm => "kvm",
            Resource::Tracefs => "tracefs",
            Resource::Strace => "strace",
            Resource::TwoCpus => "two_cpus",
            Resource::Chattr => "chattr",
            Resource::ArmLab => "arm_lab",
            Resource::XenSeries => "xen_series",
            Resource::ArmGuest => "arm_guest",
            Resource::QemuArm => "qemu_arm",
            Resource::CrossLab => "cross_lab",
            Resource::Fio => "fio",
            Resource::Cyclictest => "cyclictest",
            Resource::Cpio => "cpio",
            Resource::Postgres => "postgres",
            Resource::Xmllint => "xmllint",
            Resource::Chromium => "chromium",
        }
    }

    /// Whether `scripts/ensure-deps.sh` installs it (then a CI run without it is a failure, not
    /// a skip). /dev/kvm is the host's, and cpio the system's, not the project's.
    pub fn installed_by_project(self) -> bool {
        !matches!(self, Resource::Kvm | Resource::Tracefs | Resource::TwoCpus | Resource::Chattr | Resource::XenSeries)
    }
}

/// Why a resource is missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    /// A program is not on PATH.
    #[error("needs {program} on PATH ({hint})")]
    Program { program: &'static str, hint: &'static str },
    /// A device or file does not open.
    #[error("needs {what}: {why}")]
    Unusable { what: &'static str, why: String },
}

/// Whether `program` is an executable file in one of PATH's directories.
pub fn on_path(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| is_executable(&d.join(program)))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

fn program(program: &'static str, hint: &'static str) -> Result<(), Missing> {
    if on_path(program) {
        Ok(())
    } else {
        Err(Missing::Program { program, hint })
    }
}

/// Whether this host has `r`, and if not, why not.
pub fn probe(r: Resource) -> Result<(), Missing> {
    match r {
        Resource::Kvm => std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").map(|_| ()).map_err(|e| Missing::Unusable { what: "/dev/kvm", why: e.to_string() }),
        Resource::ArmGuest => program("aarch64-linux-gnu-as", "binutils-aarch64-linux-gnu; scripts/ensure-deps.sh installs it"),
        Resource::QemuArm => {
            program("qemu-system-aarch64", "qemu-system-arm; scripts/ensure-deps.sh installs it")?;
            probe(Resource::ArmGuest)
        }
        Resource::CrossLab => {
            program("qemu-system-aarch64", "qemu-system-arm; scripts/ensure-deps.sh installs it")?;
            program("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu; scripts/ensure-deps.sh installs it")
        }
        Resource::Fio => program("fio", "scripts/ensure-deps.sh installs it"),
        Resource::Cyclictest => {
            program("cyclictest", "rt-tests; scripts/ensure-deps.sh installs it")?;
            // Installed is not enough: it needs to be allowed to set up its timer thread here.
            let o = std::process::Command::new("cyclictest").args(["-l", "2", "-i", "200", "-q"]).output();
            match o {
                Ok(o) if o.status.success() => Ok(()),
                Ok(o) => Err(Missing::Unusable { what: "cyclictest", why: String::from_utf8_lossy(&o.stderr).trim().to_string() }),
                Err(e) => Err(Missing::Unusable { what: "cyclictest", why: e.to_string() }),
            }
        }
        Resource::Cpio => program("cpio", "the cpio package; scripts/ensure-deps.sh installs it"),
        Resource::Postgres => match postgres_bin() {
            Some(_) => program("runuser", "util-linux; the server runs as the postgres user when the tests run as root"),
            None => Err(Missing::Unusable { what: "PostgreSQL's initdb", why: "no /usr/lib/postgresql/*/bin/initdb (postgresql; scripts/ensure-deps.sh installs it)".into() }),
        },
        Resource::Xmllint => program("xmllint", "libxml2-utils; scripts/ensure-deps.sh installs it"),
        Resource::Chromium => program("chromium", "chromium; scripts/ensure-deps.sh installs it"),
        Resource::Tracefs => {
            probe(Resource::Kvm)?;
            shell_ok("tracefs", "[ \"$(id -u)\" -eq 0 ] && grep -qw tracefs /proc/filesystems", "needs root and tracefs")
        }
        Resource::Strace => {
            program("strace", "scripts/ensure-deps.sh installs it")?;
            shell_ok("strace", "strace -f -qq -o /dev/null true", "ptrace is not permitted here")
        }
        Resource::TwoCpus => {
            program("taskset", "util-linux")?;
            let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
            if n >= 2 {
                Ok(())
            } else {
                Err(Missing::Unusable { what: "two CPUs", why: format!("{n} CPU here") })
            }
        }
        Resource::Chattr => shell_ok(
            "chattr",
            "f=$(mktemp) && chattr +i \"$f\" 2>/dev/null && chattr -i \"$f\" && rm -f \"$f\"",
            "chattr +i does not work here (needs root and a filesystem with the immutable flag)",
        ),
        Resource::XenSeries => {
            probe(Resource::CrossLab)?;
            let d = std::env::var_os("IRQLAB_XEN_GICV4_RFC").map(std::path::PathBuf::from).unwrap_or_else(|| XEN_SERIES_DEFAULT.into());
            if d.join("xen-base.tar.xz").is_file() && d.join("series").is_dir() {
                Ok(())
            } else {
                Err(Missing::Unusable { what: "Xen's GICv4 series", why: format!("no xen-base.tar.xz and series/ in {} (set IRQLAB_XEN_GICV4_RFC)", d.display()) })
            }
        }
        Resource::ArmLab => {
            probe(Resource::CrossLab)?;
            match std::env::var_os("IRQLAB_LAB_IRQLAB").map(std::path::PathBuf::from) {
                Some(p) if p.is_file() => Ok(()),
                Some(p) => Err(Missing::Unusable { what: "the aarch64 irqlab", why: format!("IRQLAB_LAB_IRQLAB={} is not a file", p.display()) }),
                None => Err(Missing::Unusable { what: "the aarch64 irqlab", why: "IRQLAB_LAB_IRQLAB is not set (scripts/test.sh builds it and sets it)".into() }),
            }
        }
    }
}

/// The directory of PostgreSQL's server programs (`initdb`, `pg_ctl`): Debian installs them in
/// /usr/lib/postgresql/VERSION/bin, off PATH; the newest version wins.
pub fn postgres_bin() -> Option<std::path::PathBuf> {
    let mut found: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| is_executable(&bin.join("initdb")))
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// The first line of a `needs_<resource>` test: fails the test, saying what is missing, when the
/// host lacks `r` (the test is `#[ignore]`d, so this happens only when it is run by hand or by
/// `scripts/test.sh` after its own probe said yes).
/// Where the Xen GICv4 series is looked for without `IRQLAB_XEN_GICV4_RFC`.
pub const XEN_SERIES_DEFAULT: &str = "/work/shared/lab/xen-gicv4-rfc";

/// A probe that is a shell command (the same line as scripts/test.sh's `has_…`).
fn shell_ok(what: &'static str, sh: &str, why: &str) -> Result<(), Missing> {
    let ok =
        std::process::Command::new("sh").args(["-c", sh]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).status().map(|s| s.success()).unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(Missing::Unusable { what, why: why.into() })
    }
}

pub fn require(r: Resource) {
    if let Err(why) = probe(r) {
        panic!("this test {why}; `scripts/test.sh` lists it as skipped where {} is missing", r.name());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_found_only_on_path() {
        assert!(on_path("sh"), "every test host has sh");
        assert!(!on_path("irqlab-no-such-program"));
        assert_eq!(program("irqlab-no-such-program", "hint").unwrap_err().to_string(), "needs irqlab-no-such-program on PATH (hint)");
    }

    #[test]
    fn require_fails_naming_the_resource() {
        // Whichever resources this host lacks, requiring one fails with its name and reason.
        for r in Resource::ALL {
            let got = std::panic::catch_unwind(|| require(r));
            assert_eq!(got.is_ok(), probe(r).is_ok(), "{}", r.name());
            if let Err(p) = got {
                let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
                assert!(msg.contains("needs") && msg.contains(r.name()), "{msg}");
            }
        }
    }

    /// The resources here are the ones `scripts/test.sh` probes, under the same names, and the
    /// ones it fails on with CI set are the ones the project installs.
    #[test]
    fn resource_names_match_test_sh() {
        let sh = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/test.sh")).expect("scripts/test.sh");
        let installed = sh.lines().find_map(|l| l.strip_prefix("installed_by_project=\"")).expect("installed_by_project= in test.sh");
        let installed: Vec<&str> = installed.trim_end_matches('"').split(' ').collect();
        for r in Resource::ALL {
            assert!(sh.contains(&format!("has_{}()", r.name())), "scripts/test.sh has no has_{}()", r.name());
            assert_eq!(installed.contains(&r.name()), r.installed_by_project(), "{}", r.name());
        }
        // And the other way: every probe test.sh has is a resource here.
        let probes: Vec<&str> = sh.lines().filter_map(|l| l.strip_prefix("has_")).filter_map(|l| l.split_once("()")).map(|(n, _)| n).collect();
        assert_eq!(probes.len(), Resource::ALL.len(), "test.sh probes {probes:?}");
        for p in probes {
            assert!(Resource::ALL.iter().any(|r| r.name() == p), "scripts/test.sh probes has_{p}, which testkit::Resource lacks");
        }
    }
}

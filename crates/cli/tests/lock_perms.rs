//! Issue 45: a leftover lock file of another user (`.irqlab-lock-HASH` next to an output
//! directory, which the kernel no longer holds) blocked every later writer ("cannot open its lock
//! file: Permission denied"), though `flock(2)` needs no write access; and a read-only parent
//! directory was blamed on "another user's file". As root the test drops to `nobody` with
//! util-linux's `setpriv` (root may open anything); as another user it makes the file read-only.
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// irqlab in `cwd`, as `nobody` when the test runs as root.
fn irqlab_unprivileged(args: &[&str], cwd: &Path) -> Output {
    let bin = env!("CARGO_BIN_EXE_irqlab");
    let mut c = if as_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
        c
    } else {
        Command::new(bin)
    };
    c.args(args).current_dir(cwd).output().expect("irqlab runs")
}

fn open_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

#[test]
fn another_users_leftover_lock_file_does_not_block_writing() {
    let d = open_dir();
    // A first run leaves the lock file; made unwritable for the second writer.
    let o = irqlab_unprivileged(&["sim", "demo-timer-inject", "--out", "R"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lock =
        std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_string_lossy().starts_with(".irqlab-lock-")).expect("a lock file");
    std::fs::remove_dir_all(d.path().join("R")).unwrap();
    if as_root() {
        // root's file, mode 0644: nobody may read it, not write it
        std::fs::remove_file(&lock).unwrap();
        std::fs::write(&lock, "").unwrap();
        std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o644)).unwrap();
    } else {
        std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    let o = irqlab_unprivileged(&["sim", "demo-timer-inject", "--out", "R"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.path().join("R/result.json").is_file());
}

#[test]
fn a_read_only_parent_directory_is_named_as_such() {
    let d = open_dir();
    let o = irqlab_unprivileged(&["sim", "demo-timer-inject", "--out", "R"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    for args in [["sim", "demo-timer-inject", "--out", "ro/R"], ["sim", "demo-timer-inject", "--out", "ro/x/R"]] {
        let o = irqlab_unprivileged(&args, d.path());
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains("--out ro/") && e.contains("does not let this user create files") && e.contains(&ro.display().to_string()), "{e}");
        assert!(!e.contains("another user's file"), "{e}");
    }
    let o = irqlab_unprivileged(&["report", "../R/result.json", "-o", "r.html"], &ro);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("-o r.html") && e.contains("does not let this user create files"), "{e}");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

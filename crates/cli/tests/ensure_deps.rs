//! scripts/ensure-deps.sh refuses a Rust older than the workspace's `rust-version` at once, with
//! the version needed and how to get it, and accepts a new enough one.
use std::path::Path;
use std::process::Command;

fn fake_toolchain(dir: &Path, rustc_version: &str) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, body) in [("rustc", format!("echo 'rustc {rustc_version} (0000000 2022-11-02)'")), ("cargo", "echo cargo".to_string())] {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        Command::new("chmod").arg("755").arg(&p).status().unwrap();
    }
}

fn ensure_deps(home: &Path) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ensure-deps.sh");
    Command::new("bash").arg(script).env("HOME", home).env("PATH", format!("{}:/usr/bin:/bin", home.join("bin").display())).output().unwrap()
}

fn workspace_rust_version() -> String {
    let toml = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml")).unwrap();
    let line = toml.lines().find(|l| l.starts_with("rust-version = ")).expect("workspace declares rust-version");
    line.split('"').nth(1).unwrap().to_string()
}

#[test]
fn an_old_rustc_is_refused_with_the_version_needed() {
    // The kvm crate's build needs binutils, so a build that reached this test has them.
    assert!(
        Path::new("/usr/bin/as").exists() && Path::new("/usr/bin/objcopy").exists() && Path::new("/usr/bin/cc").exists(),
        "binutils and cc must be in /usr/bin (scripts/ensure-deps.sh installs them)"
    );
    let need = workspace_rust_version();
    let d = tempfile::tempdir().unwrap();
    fake_toolchain(d.path(), "1.65.0");
    let o = ensure_deps(d.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("needs Rust {need} or newer")) && err.contains("1.65.0") && err.contains("rustup"), "{err}");

    let d = tempfile::tempdir().unwrap();
    fake_toolchain(d.path(), &need);
    let o = ensure_deps(d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

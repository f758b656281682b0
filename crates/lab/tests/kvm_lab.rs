//! Boots Debian's arm64 kernel with KVM under QEMU (GICv4, ITS) and runs a stand-in for the
//! aarch64 irqlab inside (tests/data/fake-irqlab.c, built with aarch64-linux-gnu-gcc -static):
//! the whole path — kernel and busybox fetched, initramfs, /init, arguments with `--out`
//! replaced, files back over the serial console — is exercised, ~35 s here. The real irqlab is
//! cross-built by `irqlab-lab kvm` itself once crates/kvm builds for aarch64.
//! Skipped with a printed reason when QEMU or the cross compiler is missing and `CI` is not set.
use std::process::Command;

fn have(bin: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| d.join(bin).is_file())
}

#[test]
fn kvm_lab_runs_a_program_inside_and_brings_its_files_back() {
    for bin in ["qemu-system-aarch64", "aarch64-linux-gnu-gcc"] {
        if !have(bin) {
            assert!(std::env::var_os("CI").is_none(), "CI is set and {bin} is missing");
            eprintln!("SKIP: {bin} not installed");
            return;
        }
    }
    let d = tempfile::tempdir().unwrap();
    let fake = d.path().join("fake-irqlab");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fake-irqlab.c");
    let o = Command::new("aarch64-linux-gnu-gcc").args(["-static", "-O2", "-o"]).arg(&fake).arg(src).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab"))
        .args(["kvm", "--gic", "v4", "--irqlab"])
        .arg(&fake)
        .args(["--", "run", "timer", "--samples", "it's 5", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let check = std::fs::read_to_string(out.join("kvm-check.txt")).unwrap();
    assert!(check.starts_with("KVM_GET_API_VERSION=12\n"), "/dev/kvm works inside the lab: {check}");
    assert!(check.contains("arg run\narg timer\narg --samples\narg it's 5\narg --out\narg /out\n"), "{check}");
    let log = std::fs::read_to_string(out.join("kvm-console.log")).unwrap();
    assert!(log.contains("@irqlab-lab init kernel=6.1"), "Debian's 6.1 kernel reached /init");
    assert!(log.contains("GICv4 support enabled"), "kvm-arm.vgic_v4_enable=1 took effect");
    // The same --out again: refused, nothing replaced.
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).args(["kvm", "--irqlab"]).arg(&fake).args(["--", "run", "--out"]).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(out.join("kvm-check.txt")).unwrap(), check);
}

#[test]
fn kvm_lab_needs_out_among_the_irqlab_arguments() {
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).args(["kvm", "--", "run", "timer"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--out DIR"));
    let o = Command::new(env!("CARGO_BIN_EXE_irqlab-lab")).args(["kvm", "--gic", "v5", "--", "run", "--out", "x"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--gic"));
}

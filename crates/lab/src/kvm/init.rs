//! The KVM lab's initramfs: `/init` (busybox sh) sets up what the flags ask for (a device's
//! modules and binding, a busy loop, the peers), runs each bench's `irqlab`, frames every file
//! of `/out` on the console (`frame.rs`) and powers off.
use std::path::{Path, PathBuf};

use super::benches::Bench;
use crate::config::{KvmConfig, LabDevice};
use crate::error::LabError;
use crate::frame::MARK;
use crate::initramfs::Entry;
use crate::own_kernel::KernelChoice;

/// The lab kernel's host name, so a result's "measured … on HOST" names the lab, not `(none)`.
pub const LAB_HOSTNAME: &str = "irqlab-lab-kvm";

/// The guest's `/init`: `setup` (shell lines, may be empty) runs first (`--device`'s modules and
/// binding, `--busy-cpu`'s loop), then an optional vCPU mover (`--move-vcpus-ms`) is started before
/// irqlab and KVM's exit reasons are traced around it (`--exit-reasons`).
pub fn init_script_with(benches: &[Bench], setup: &str, move_ms: Option<u64>, exit_reasons: bool) -> String {
    let runs = super::benches::run_lines(benches);
    let frame = crate::frame::frame_lines();
    let mut mover = move_ms.map(crate::its_trace::mover_script).unwrap_or_default();
    let mut after = String::new();
    if exit_reasons {
        mover = crate::kvm_events::before() + &mover;
        after = crate::kvm_events::after();
    }
    let pre = crate::initramfs::INIT_PREAMBLE;
    format!(
        r#"{pre}mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
hostname {LAB_HOSTNAME}
echo "{m}init kernel=$(uname -r) kvm=$([ -e /dev/kvm ] && echo yes || echo no)"
dmesg | grep -i -E 'kvm|gicv4|its:' | sed 's/^/{m}dmesg /'
{setup}mkdir -p /out
{mover}{runs}{after}{frame}echo "{m}done"
poweroff -f
"#,
        m = MARK,
        setup = setup,
        mover = mover,
        after = after
    )
}

/// `/init` lines starting a busy loop pinned to `cpu` (busybox `taskset`), said on the console.
pub fn busy_loop(cpu: u32) -> String {
    format!("taskset -c {cpu} sh -c 'while :; do :; done' &\necho \"{MARK}busy loop on CPU {cpu}: pid $!\"\n")
}

/// The two programs every KVM lab initramfs carries.
pub struct Contents {
    /// The aarch64 irqlab (stripped).
    pub irqlab: PathBuf,
    /// busybox-static's aarch64 `busybox`.
    pub busybox: PathBuf,
}

fn read(p: &Path) -> Result<Vec<u8>, LabError> {
    std::fs::read(p).map_err(LabError::io(p))
}

/// The initramfs: busybox, irqlab, `--device`'s modules, the peers' programs (built into the
/// cache now when missing) and `/init`; with the peer that was built, for the result.
pub fn entries(k: &KvmConfig, benches: &[Bench], choice: &KernelChoice, c: &Contents, cache: &Path) -> Result<(Vec<Entry>, Option<crate::peers::Peer>), LabError> {
    let mut entries: Vec<Entry> = ["/bin", "/dev", "/proc", "/sys", "/tmp", "/out"].iter().map(|d| Entry::Dir { path: d.to_string() }).collect();
    entries.push(Entry::CharDev { path: "/dev/console".into(), major: 5, minor: 1 });
    entries.push(Entry::File { path: "/bin/busybox".into(), mode: 0o755, data: read(&c.busybox)? });
    entries.push(Entry::File { path: "/bin/irqlab".into(), mode: 0o755, data: read(&c.irqlab)? });
    let mut setup = k.busy_cpu.map(busy_loop).unwrap_or_default();
    if k.device == Some(LabDevice::Edu) {
        setup += &device_entries(k, choice, cache, &mut entries)?;
    }
    let peer = match (&k.peer_kvm_unit_tests, &k.peer_kvmtool) {
        (Some(kut), Some(tool)) => {
            let p = crate::peers::build(kut, tool, cache).map_err(|e| LabError::Setup(e.to_string()))?;
            entries.push(Entry::Dir { path: "/peer".into() });
            entries.push(Entry::File { path: "/bin/lkvm".into(), mode: 0o755, data: read(&p.lkvm)? });
            entries.push(Entry::File { path: "/peer/micro-bench.flat".into(), mode: 0o644, data: read(&p.flat)? });
            setup += &crate::peers::init_fragment();
            Some(p)
        }
        _ => None,
    };
    entries.push(Entry::File { path: "/init".into(), mode: 0o755, data: init_script_with(benches, &setup, k.move_vcpus_ms, k.exit_reasons).into_bytes() });
    Ok((entries, peer))
}

/// `--device edu`: the vfio modules (Debian's, or the user's kernel's tree; none when built in)
/// into the initramfs, and the `/init` lines that load them and bind the device.
fn device_entries(k: &KvmConfig, choice: &KernelChoice, cache: &Path, entries: &mut Vec<Entry>) -> Result<String, LabError> {
    entries.push(Entry::Dir { path: "/lib".into() });
    entries.push(Entry::Dir { path: "/lib/vfio".into() });
    let mods = match (&k.kernel, &choice.modules) {
        (None, _) => crate::vfio::modules(cache)?,
        (Some(_), Some(tree)) => crate::vfio::modules_in(tree)?,
        // Checked by preflight: VFIO is built in, nothing to load.
        (Some(_), None) => Vec::new(),
    };
    let setup = crate::vfio::init_fragment(&mods.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>());
    for (n, ko) in mods {
        entries.push(Entry::File { path: crate::vfio::module_path(&n).display().to_string(), mode: 0o644, data: ko });
    }
    Ok(setup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_quotes_arguments() {
        let one = |a: &[&str]| vec![Bench { inner: a.iter().map(|w| w.to_string()).collect(), out: "/tmp/o".into() }];
        let s = init_script_with(&one(&["sim", "it's", "--out", "/out"]), "", None, false);
        assert!(s.contains("/bin/irqlab 'sim' 'it'\\''s' '--out' '/out'\n"), "{s}");
        assert!(s.starts_with("#!/bin/busybox sh\n") && s.contains("poweroff -f"));
        assert!(s.contains("mount -t tracefs tracefs /sys/kernel/tracing"), "--breakdown needs tracefs in the lab");
        assert!(s.contains(&format!("\nhostname {LAB_HOSTNAME}\n")), "results name the lab as their host, not `(none)`");
        assert!(!s.contains("taskset"));
        assert!(!s.contains("kvm_exit"));
        let e = init_script_with(&one(&["run"]), "", None, true);
        let (on, run, count) = (e.find("echo 1 > $T/tracing_on").unwrap(), e.find("/bin/irqlab 'run'").unwrap(), e.find("kvm-exit-reasons.txt").unwrap());
        assert!(on < run && run < count && e[run..count].contains("exit $?"), "{e}");
        let m = init_script_with(&one(&["run"]), "", Some(20), false);
        let (mover, run) = (m.find("taskset").unwrap(), m.find("/bin/irqlab 'run'").unwrap());
        assert!(mover < run, "the mover starts before irqlab");
        let s = init_script_with(&one(&["run"]), &busy_loop(1), None, false);
        assert!(s.contains("taskset -c 1 sh -c 'while :; do :; done' &\n"), "{s}");
        assert!(s.find("taskset").unwrap() < s.find("/bin/irqlab 'run'").unwrap(), "the loop runs before irqlab");
    }
}

//! Whether this host's KVM/arm64 uses GICv4 direct injection, and whether `--gicv4 on|off` can be
//! had. Linux 6.1 has no per-VM switch: `kvm-arm.vgic_v4_enable` is a boot option
//! (arch/arm64/kvm/vgic/vgic-v3.c, `early_gicv4_enable`), read once in `vgic_v3_probe`, which
//! prints `GICv4 support enabled`/`disabled` (or `GICv4.1 …`) when the GIC has GICv4 and
//! nothing when it has not. So the state is read off the kernel log (and the command line), and
//! a `--gicv4` that differs from it is refused with the boot option to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The GIC has GICv4 and KVM uses it (`GICv4 support enabled`).
    On,
    /// The GIC has GICv4 but KVM does not use it (`GICv4 support disabled`).
    Off,
    /// The kernel log from boot has no GICv4 line: the GIC has no GICv4.
    Absent,
    /// The log no longer reaches back to boot and says nothing: cannot tell.
    Unknown,
}

impl State {
    /// From the kernel log (`dmesg`) and /proc/cmdline.
    pub fn from_log(kmsg: &str) -> State {
        if let Some(l) = kmsg.lines().rfind(|l| l.contains("GICv4") && l.contains(" support ")) {
            return if l.contains("support enabled") { State::On } else { State::Off };
        }
        if kmsg.contains("Booting Linux") {
            State::Absent
        } else {
            State::Unknown
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            State::On => "on (KVM: GICv4 support enabled)",
            State::Off => "off (the GIC has GICv4; KVM: GICv4 support disabled)",
            State::Absent => "absent (no GICv4 in this host's GIC)",
            State::Unknown => "unknown (the kernel log no longer reaches back to KVM's start)",
        }
    }

    /// `--gicv4 on|off` against this state: Ok, or why not (with what to do).
    pub fn check(self, want_on: bool) -> Result<(), Gicv4Error> {
        match (want_on, self) {
            (true, State::On) | (false, State::Off | State::Absent) => Ok(()),
            (true, State::Off) => Err(Gicv4Error::NotUsed),
            (true, State::Absent) => Err(Gicv4Error::Absent),
            (false, State::On) => Err(Gicv4Error::AlwaysOn),
            (_, State::Unknown) => Err(Gicv4Error::Unknown),
        }
    }
}

/// Why `--gicv4 on|off` cannot be had on this host, with what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Gicv4Error {
    #[error("this host's GIC has GICv4 but KVM does not use it; Linux 6.1 decides at boot for every VM: boot with kvm-arm.vgic_v4_enable=1")]
    NotUsed,
    #[error("this host's GIC has no GICv4 (KVM printed no `GICv4 support` line at boot), so there is no direct vLPI injection here")]
    Absent,
    #[error("KVM uses GICv4 for every VM on this host and Linux 6.1 has no per-VM switch: boot without kvm-arm.vgic_v4_enable=1 (or with =0) to measure it off")]
    AlwaysOn,
    #[error("cannot tell whether KVM uses GICv4: the kernel log as read here does not reach back to KVM's `GICv4 support` line (it has wrapped, or reading it needs root or dmesg_restrict=0)")]
    Unknown,
}

/// The kernel log as `dmesg` shows it (klogctl SYSLOG_ACTION_READ_ALL), or empty.
pub fn kernel_log() -> String {
    // SAFETY: klogctl with a NULL buffer and SIZE_BUFFER (10) only returns a size.
    let size = unsafe { libc::klogctl(10, std::ptr::null_mut(), 0) };
    if size <= 0 {
        return String::new();
    }
    let mut buf = vec![0u8; size as usize];
    // SAFETY: READ_ALL (3) writes at most `size` bytes into `buf`, which has that many.
    let n = unsafe { libc::klogctl(3, buf.as_mut_ptr() as *mut libc::c_char, size) };
    if n <= 0 {
        return String::new();
    }
    buf.truncate(n as usize);
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_comes_from_kvms_boot_line() {
        assert_eq!(State::from_log("[0.0] Booting Linux on physical CPU 0x0\n[1.2] kvm [1]: GICv4 support enabled\n"), State::On);
        assert_eq!(State::from_log("[0.0] Booting Linux\n[1.2] kvm [1]: GICv4.1 support disabled\n"), State::Off);
        assert_eq!(State::from_log("[0.0] Booting Linux\n[0.5] ITS: Enabling GICv4 support\n"), State::Absent, "the ITS driver's line is not KVM's");
        assert_eq!(State::from_log("[9999.0] something late\n"), State::Unknown);
    }

    #[test]
    fn a_flag_that_differs_from_the_host_is_refused_with_the_boot_option() {
        assert!(State::On.check(true).is_ok() && State::Off.check(false).is_ok() && State::Absent.check(false).is_ok());
        assert!(State::Off.check(true).unwrap_err().to_string().contains("kvm-arm.vgic_v4_enable=1"));
        assert!(State::On.check(false).unwrap_err().to_string().contains("no per-VM switch"));
        assert!(State::Absent.check(true).unwrap_err().to_string().contains("no GICv4"));
        assert!(State::Unknown.check(true).is_err() && State::Unknown.check(false).is_err());
    }
}

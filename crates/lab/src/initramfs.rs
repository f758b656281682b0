//! A gzip-free `newc` cpio archive (the initramfs format of the kernel's
//! Documentation/driver-api/early-userspace/buffer-format.rst), written here rather than with
//! `cpio(1)` so the archive is deterministic (fixed inode numbers, mtime 0, owner root) and can
//! carry `/dev/console` without root privileges. The kernel accepts it uncompressed.

/// The first lines of every lab `/init` (KVM host and Xen dom0): busybox's applets, then proc,
/// sysfs and devtmpfs mounted.
pub const INIT_PREAMBLE: &str = "#!/bin/busybox sh\n/bin/busybox --install -s /bin\nmount -t proc proc /proc\nmount -t sysfs sys /sys\nmount -t devtmpfs dev /dev\n";

/// One archive member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir {
        path: String,
    },
    File {
        path: String,
        mode: u32,
        data: Vec<u8>,
    },
    /// A character device (`/dev/console` is 5:1).
    CharDev {
        path: String,
        major: u32,
        minor: u32,
    },
}

fn pad4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

fn header(out: &mut Vec<u8>, ino: u32, mode: u32, size: usize, rdev: (u32, u32), name: &str) {
    let fields = [ino, mode, 0, 0, 1, 0, size as u32, 0, 0, rdev.0, rdev.1, name.len() as u32 + 1, 0];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08x}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad4(out);
}

/// The archive: entries in the order given (parents before children), then the trailer.
pub fn newc(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let ino = i as u32 + 1;
        match e {
            Entry::Dir { path } => header(&mut out, ino, 0o040755, 0, (0, 0), path.trim_start_matches('/')),
            Entry::CharDev { path, major, minor } => header(&mut out, ino, 0o020600, 0, (*major, *minor), path.trim_start_matches('/')),
            Entry::File { path, mode, data } => {
                header(&mut out, ino, 0o100000 | mode, data.len(), (0, 0), path.trim_start_matches('/'));
                out.extend_from_slice(data);
                pad4(&mut out);
            }
        }
    }
    header(&mut out, 0, 0, 0, (0, 0), "TRAILER!!!");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newc_layout() {
        let a = newc(&[
            Entry::Dir { path: "/bin".into() },
            Entry::File { path: "/init".into(), mode: 0o755, data: b"#!x\n".to_vec() },
            Entry::CharDev { path: "/dev/console".into(), major: 5, minor: 1 },
        ]);
        assert_eq!(&a[..6], b"070701");
        assert_eq!(a.len() % 4, 0);
        // First header: ino 1, mode 040755, name "bin\0" (namesize 4).
        assert_eq!(&a[6..14], b"00000001");
        assert_eq!(&a[14..22], b"000041ed");
        assert_eq!(&a[94..102], b"00000004");
        assert_eq!(&a[110..114], b"bin\0");
        // The file's data follows its padded name.
        let i = a.windows(5).position(|w| w == b"init\0").unwrap();
        assert_eq!(&a[i + 6..i + 10], b"#!x\n", "110-byte header + 5-byte name, padded to 116");
        assert!(a.windows(13).any(|w| w == b"dev/console\0\0" || w.starts_with(b"dev/console\0")));
        let t = a.windows(10).position(|w| w == b"TRAILER!!!").unwrap();
        assert_eq!(&a[t - 110..t - 104], b"070701");
        assert_eq!(newc(&[Entry::Dir { path: "/bin".into() }]), newc(&[Entry::Dir { path: "/bin".into() }]), "deterministic");
    }
}

#[cfg(test)]
mod needs_cpio {
    use super::*;

    #[test]
    #[ignore = "needs cpio(1): scripts/test.sh runs it where cpio is"]
    fn cpio_tool_reads_it_when_present() {
        testkit::require(testkit::Resource::Cpio);
        let a = newc(&[
            Entry::Dir { path: "/bin".into() },
            Entry::File { path: "/bin/x".into(), mode: 0o755, data: vec![7; 5] },
            Entry::CharDev { path: "/dev/console".into(), major: 5, minor: 1 },
        ]);
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.cpio");
        std::fs::write(&f, a).unwrap();
        let o = std::process::Command::new("cpio").args(["-t", "-v", "-F"]).arg(&f).output().unwrap();
        let list = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(list.contains("bin/x") && list.contains("dev/console") && list.contains("crw"), "{list}");
    }
}

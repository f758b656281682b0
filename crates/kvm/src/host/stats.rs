//! KVM binary statistics (KVM_GET_STATS_FD, Documentation/virt/kvm/api.rst 4.133): a header,
//! descriptors with names, then data. Parsed from bytes, so tests use a made-up buffer.
use std::collections::BTreeMap;

/// Why a stats fd cannot be opened or read; the text says which part.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("stats header truncated")]
    HeaderTruncated,
    #[error("stats descriptor {0} truncated")]
    DescriptorTruncated(usize),
    #[error("KVM_GET_STATS_FD: {0}")]
    Ioctl(std::io::Error),
    #[error("{0}")]
    Read(std::io::Error),
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    b.get(off..off + 4).map(|s| u32::from_le_bytes(s.try_into().expect("a 4-byte slice")))
}

/// One statistic's descriptor.
#[derive(Debug, Clone, PartialEq)]
pub struct StatDesc {
    pub name: String,
    pub flags: u32,
    pub size: u16,
    pub offset: u32,
}

/// The header and descriptors of a stats fd.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsLayout {
    pub data_offset: u32,
    pub descs: Vec<StatDesc>,
}

/// Parse header + descriptors from the first bytes of a stats fd.
pub fn parse_layout(b: &[u8]) -> Result<StatsLayout, StatsError> {
    let name_size = u32_at(b, 4).ok_or(StatsError::HeaderTruncated)? as usize;
    let num_desc = u32_at(b, 8).ok_or(StatsError::HeaderTruncated)? as usize;
    let desc_offset = u32_at(b, 16).ok_or(StatsError::HeaderTruncated)? as usize;
    let data_offset = u32_at(b, 20).ok_or(StatsError::HeaderTruncated)?;
    let desc_size = 16 + name_size;
    let mut descs = Vec::with_capacity(num_desc);
    for i in 0..num_desc {
        let d = desc_offset + i * desc_size;
        let rec = b.get(d..d + desc_size).ok_or(StatsError::DescriptorTruncated(i))?;
        let name_bytes = &rec[16..];
        let end = name_bytes.iter().position(|c| *c == 0).unwrap_or(name_bytes.len());
        descs.push(StatDesc {
            flags: u32::from_le_bytes(rec[0..4].try_into().expect("4 bytes")),
            size: u16::from_le_bytes(rec[6..8].try_into().expect("2 bytes")),
            offset: u32::from_le_bytes(rec[8..12].try_into().expect("4 bytes")),
            name: String::from_utf8_lossy(&name_bytes[..end]).into_owned(),
        });
    }
    Ok(StatsLayout { data_offset, descs })
}

/// Counter values (first u64 of each statistic) from the data block.
pub fn values(layout: &StatsLayout, data: &[u8]) -> BTreeMap<String, u64> {
    layout
        .descs
        .iter()
        .filter_map(|d| {
            let off = d.offset as usize;
            data.get(off..off + 8).map(|s| (d.name.clone(), u64::from_le_bytes(s.try_into().expect("an 8-byte slice"))))
        })
        .collect()
}

/// after − before for counters that grew (cumulative stats); gauges that shrank are skipped.
pub fn delta(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(k, a)| {
            let b = before.get(k).copied().unwrap_or(0);
            (*a > b).then(|| (k.clone(), a - b))
        })
        .collect()
}

pub mod fd {
    //! Reading a live stats fd with pread (allowed while the vCPU runs).
    use std::collections::BTreeMap;
    use std::os::unix::fs::FileExt;

    use super::{parse_layout, values, StatsError, StatsLayout};

    const KVM_GET_STATS_FD: libc::c_ulong = 0xAECE; // _IO(KVMIO, 0xce)

    pub struct StatsFd {
        file: std::fs::File,
        layout: StatsLayout,
        data_len: usize,
    }

    impl StatsFd {
        /// Open the stats fd of a VM or vCPU fd.
        pub fn open(raw_fd: i32) -> Result<StatsFd, StatsError> {
            // SAFETY: KVM_GET_STATS_FD takes no argument and returns a new fd or -1.
            let fd = unsafe { libc::ioctl(raw_fd, KVM_GET_STATS_FD as _, 0) };
            if fd < 0 {
                return Err(StatsError::Ioctl(std::io::Error::last_os_error()));
            }
            // SAFETY: fd is a fresh descriptor we own.
            let file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
            let mut head = vec![0u8; 1 << 16];
            let n = file.read_at(&mut head, 0).map_err(StatsError::Read)?;
            head.truncate(n);
            let layout = parse_layout(&head)?;
            let data_len = layout.descs.iter().map(|d| d.offset as usize + 8 * d.size.max(1) as usize).max().unwrap_or(0);
            Ok(StatsFd { file, layout, data_len })
        }

        pub fn read(&self) -> BTreeMap<String, u64> {
            let mut buf = vec![0u8; self.data_len];
            match self.file.read_at(&mut buf, self.layout.data_offset as u64) {
                Ok(_) => values(&self.layout, &buf),
                Err(_) => BTreeMap::new(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made_up() -> Vec<u8> {
        // header (24 bytes), name_size 16, 2 descriptors at 24, data at 24 + 2*32 = 88
        let mut b = Vec::new();
        for v in [0u32, 16, 2, 0, 24, 88] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for (name, off) in [("exits", 0u32), ("halt_exits", 8)] {
            b.extend_from_slice(&0u32.to_le_bytes()); // flags
            b.extend_from_slice(&0i16.to_le_bytes()); // exponent
            b.extend_from_slice(&1u16.to_le_bytes()); // size
            b.extend_from_slice(&off.to_le_bytes());
            b.extend_from_slice(&0u32.to_le_bytes()); // bucket size
            let mut n = name.as_bytes().to_vec();
            n.resize(16, 0);
            b.extend_from_slice(&n);
        }
        b
    }

    #[test]
    fn parses_descriptors_and_values() {
        let b = made_up();
        let l = parse_layout(&b).unwrap();
        assert_eq!(l.data_offset, 88);
        assert_eq!(l.descs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["exits", "halt_exits"]);
        let mut data = 41u64.to_le_bytes().to_vec();
        data.extend_from_slice(&7u64.to_le_bytes());
        let v = values(&l, &data);
        assert_eq!(v["exits"], 41);
        assert_eq!(v["halt_exits"], 7);
        let before = BTreeMap::from([("exits".to_string(), 40u64), ("halt_exits".to_string(), 7)]);
        assert_eq!(delta(&before, &v), BTreeMap::from([("exits".to_string(), 1)]));
        assert_eq!(parse_layout(&b[..10]).unwrap_err().to_string(), "stats header truncated");
    }
}

//! The assigned device, opened through rust-vmm's `vfio-ioctls` (container → group → device, the
//! legacy type1 flow of Documentation/driver-api/vfio.rst): memory space and bus master enabled
//! in its command register, BAR0 mmap'ed for a KVM memory slot (so the guest's register writes
//! reach the device without an exit), and its MSI (one vector) or INTx signalled to eventfds.
//! No guest memory is mapped into the device's IOMMU domain: the only DMA (edu's `dma` trigger)
//! reads one host page of this process, mapped at [`DMA_IOVA`] by [`Assigned::map_dma_page`].
//!
//! `vfio-ioctls` swallows config-space read/write errors (it logs them), so every config write
//! is read back and checked.
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use vfio_bindings::bindings::vfio::{VFIO_PCI_BAR0_REGION_INDEX, VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_INTX_IRQ_INDEX, VFIO_PCI_MSI_IRQ_INDEX, VFIO_REGION_INFO_FLAG_MMAP};
use vfio_ioctls::{VfioContainer, VfioDevice};
use vmm_sys_util::eventfd::EventFd;

use super::VfioError;

/// PCI command register (offset 0x04): Memory Space (bit 1) and Bus Master (bit 2) enabled,
/// INTx Disable (bit 10) cleared so that INTx can be signalled (PCI Local Bus 3.0, 6.2.2).
pub fn command_with_memory_and_master(cmd: u16) -> u16 {
    (cmd | 0x2 | 0x4) & !0x400
}

/// Why a device's BAR0 does not suit the benchmark.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarError {
    #[error("BAR0 is not implemented (size 0)")]
    Absent,
    #[error("BAR0 ({size} bytes) cannot be mmap'ed (VFIO_REGION_INFO_FLAG_MMAP clear); forwarding its MMIO exits is not implemented")]
    NotMappable { size: u64 },
    #[error("BAR0 is {size} bytes, not a multiple of the {page}-byte page KVM maps")]
    NotPageSized { size: u64, page: u64 },
}

/// What the benchmark needs of BAR0: mmap-able, page-sized or more; the error says what is missing.
pub fn check_bar(flags: u32, size: u64, page: u64) -> Result<(), BarError> {
    if size == 0 {
        return Err(BarError::Absent);
    }
    if flags & VFIO_REGION_INFO_FLAG_MMAP == 0 {
        return Err(BarError::NotMappable { size });
    }
    if size % page != 0 {
        return Err(BarError::NotPageSized { size, page });
    }
    Ok(())
}

/// Where [`Assigned::map_dma_page`] maps its page for the device (below edu's 28-bit DMA mask).
pub const DMA_IOVA: u64 = 0x10_0000;

/// An opened, enabled device and its BAR0 mapping.
pub struct Assigned {
    pub path: PathBuf,
    pub bdf: String,
    pub vendor_device: (u16, u16),
    device: VfioDevice,
    // Kept open for the device's life (the group and its IOMMU context hang off it).
    _container: Arc<VfioContainer>,
    bar: *mut libc::c_void,
    pub bar_size: u64,
    /// A host page mapped for the device's DMA at [`DMA_IOVA`], if any.
    dma_page: Option<*mut libc::c_void>,
}

// SAFETY: `bar` is a shared MMIO mapping only handed to KVM and unmapped on drop; VfioDevice is
// Send + Sync.
unsafe impl Send for Assigned {}
// SAFETY: as for Send: the mapping is only read and written through volatile accesses.
unsafe impl Sync for Assigned {}

fn vfio(step: &'static str) -> impl FnOnce(vfio_ioctls::VfioError) -> VfioError {
    move |source| VfioError::Vfio { step, source }
}

impl Assigned {
    /// Open the device at `path` (a sysfs directory bound to vfio-pci, see [`super::locate`]).
    pub fn open(path: &Path) -> Result<Assigned, VfioError> {
        let bdf = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let container = Arc::new(VfioContainer::new(None).map_err(vfio("open /dev/vfio/vfio"))?);
        let device = VfioDevice::new(path, container.clone(), false).map_err(vfio("open the group and device"))?;
        let mut id = [0u8; 4];
        device.region_read(VFIO_PCI_CONFIG_REGION_INDEX, &mut id, 0);
        let vendor_device = (u16::from_le_bytes([id[0], id[1]]), u16::from_le_bytes([id[2], id[3]]));
        let mut c = [0u8; 2];
        device.region_read(VFIO_PCI_CONFIG_REGION_INDEX, &mut c, 4);
        let want = command_with_memory_and_master(u16::from_le_bytes(c));
        device.region_write(VFIO_PCI_CONFIG_REGION_INDEX, &want.to_le_bytes(), 4);
        device.region_read(VFIO_PCI_CONFIG_REGION_INDEX, &mut c, 4);
        if u16::from_le_bytes(c) & 0x6 != 0x6 {
            return Err(VfioError::Unsuitable(format!("{bdf}: memory space and bus master did not stay enabled (command register {:#06x})", u16::from_le_bytes(c))));
        }
        let flags = device.get_region_flags(VFIO_PCI_BAR0_REGION_INDEX);
        let size = device.get_region_size(VFIO_PCI_BAR0_REGION_INDEX);
        // SAFETY: sysconf has no memory effects.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        check_bar(flags, size, page).map_err(|why| VfioError::Unsuitable(format!("{bdf}: {why}")))?;
        let offset = device.get_region_offset(VFIO_PCI_BAR0_REGION_INDEX);
        // SAFETY: a fresh shared mapping of the device fd's BAR0 window (offset and size from
        // VFIO_DEVICE_GET_REGION_INFO); unmapped in Drop, never aliased as Rust memory.
        let bar = unsafe { libc::mmap(std::ptr::null_mut(), size as usize, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, device.as_raw_fd(), offset as libc::off_t) };
        if bar == libc::MAP_FAILED {
            return Err(VfioError::Io { path: format!("{bdf} BAR0 mmap"), source: std::io::Error::last_os_error() });
        }
        Ok(Assigned { path: path.to_path_buf(), bdf, vendor_device, device, _container: container, bar, bar_size: size, dma_page: None })
    }

    /// One zeroed host page the device may DMA from/to at [`DMA_IOVA`] (VFIO_IOMMU_MAP_DMA).
    pub fn map_dma_page(&mut self) -> Result<(), VfioError> {
        // SAFETY: a fresh anonymous shared page, never referenced from Rust; unmapped in Drop.
        let page = unsafe { libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0) };
        if page == libc::MAP_FAILED {
            return Err(VfioError::Io { path: "DMA page mmap".into(), source: std::io::Error::last_os_error() });
        }
        self.dma_page = Some(page);
        // SAFETY: the page is only ever touched by the device (no Rust reference to it exists) and
        // is unmapped from the IOMMU before it is munmap'ed (Drop).
        unsafe { self._container.vfio_dma_map(DMA_IOVA, 4096, page as *mut u8) }.map_err(vfio("VFIO_IOMMU_MAP_DMA"))
    }

    /// A 64-bit register write to BAR0 at `offset` through this process's mapping (before the
    /// guest is let loose: the DMA set-up of edu's `dma` trigger).
    pub fn bar_write_u64(&self, offset: u64, value: u64) -> Result<(), VfioError> {
        if offset % 8 != 0 || offset + 8 > self.bar_size {
            return Err(VfioError::Unsuitable(format!("{}: BAR0 write at {offset:#x} is outside its {} bytes or unaligned", self.bdf, self.bar_size)));
        }
        // SAFETY: inside the live, aligned MMIO mapping; a volatile store is one bus write.
        unsafe { std::ptr::write_volatile((self.bar as *mut u8).add(offset as usize) as *mut u64, value) };
        Ok(())
    }

    /// The host address of the BAR0 mapping (for KVM_SET_USER_MEMORY_REGION).
    pub fn bar_host_addr(&self) -> u64 {
        self.bar as u64
    }

    /// Signal the device's MSI vector 0 to `efd` (VFIO_DEVICE_SET_IRQS, MSI, ACTION_TRIGGER):
    /// the host kernel enables MSI in the device and, with the irqfd on the same eventfd,
    /// the irq-bypass manager connects VFIO's producer to KVM's consumer.
    pub fn enable_msi(&self, efd: &EventFd) -> Result<(), VfioError> {
        match self.device.get_irq_info(VFIO_PCI_MSI_IRQ_INDEX) {
            Some(i) if i.count >= 1 => {}
            _ => return Err(VfioError::Unsuitable(format!("{}: the device offers no MSI vector", self.bdf))),
        }
        self.device.enable_msi(vec![efd]).map_err(vfio("VFIO_DEVICE_SET_IRQS (MSI trigger)"))
    }

    /// Signal INTx to `efd` and unmask on `resample` (VFIO_IRQ_SET_ACTION_UNMASK with an
    /// eventfd: KVM's resamplefd, written at the guest's EOI, unmasks the host line).
    pub fn enable_intx(&self, efd: &EventFd, resample: &EventFd) -> Result<(), VfioError> {
        match self.device.get_irq_info(VFIO_PCI_INTX_IRQ_INDEX) {
            Some(i) if i.count == 1 => {}
            _ => return Err(VfioError::Unsuitable(format!("{}: the device has no INTx pin", self.bdf))),
        }
        self.device.enable_irq(VFIO_PCI_INTX_IRQ_INDEX, vec![efd]).map_err(vfio("VFIO_DEVICE_SET_IRQS (INTx trigger)"))?;
        self.device.set_irq_resample_fd(VFIO_PCI_INTX_IRQ_INDEX, vec![resample]).map_err(vfio("VFIO_DEVICE_SET_IRQS (INTx unmask eventfd)"))
    }
}

impl Drop for Assigned {
    fn drop(&mut self) {
        let _ = self.device.disable_msi();
        let _ = self.device.disable_irq(VFIO_PCI_INTX_IRQ_INDEX);
        if let Some(page) = self.dma_page {
            if self._container.vfio_dma_unmap(DMA_IOVA, 4096).is_ok() {
                // SAFETY: no longer reachable by the device; mapped by map_dma_page.
                unsafe { libc::munmap(page, 4096) };
            }
        }
        // SAFETY: `bar` was mapped with `bar_size` in `open` and is not used after this.
        unsafe { libc::munmap(self.bar, self.bar_size as usize) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_register_gains_memory_and_master_and_loses_intx_disable() {
        assert_eq!(command_with_memory_and_master(0x0000), 0x0006);
        assert_eq!(command_with_memory_and_master(0x0401), 0x0007, "I/O space kept, INTx Disable cleared");
        assert_eq!(command_with_memory_and_master(0x0106), 0x0106, "SERR kept");
    }

    #[test]
    fn bar0_must_be_mappable() {
        let mmap = VFIO_REGION_INFO_FLAG_MMAP | 0x3;
        assert!(check_bar(mmap, 1 << 20, 4096).is_ok(), "edu's 1 MiB BAR0");
        assert!(check_bar(mmap, 0, 4096).unwrap_err().to_string().contains("size 0"));
        assert!(check_bar(0x3, 1 << 20, 4096).unwrap_err().to_string().contains("cannot be mmap'ed"));
        assert!(check_bar(mmap, 0x800, 4096).unwrap_err().to_string().contains("not a multiple"));
        assert!(check_bar(mmap, 0x1_0000, 0x1_0000).is_ok(), "64 KiB pages");
    }
}

//! `irqlab-lab kvm --census`: the path census of the KVM mode ([`crate::census`]), with the lab
//! kernel as the hypervisor. Debian's `System.map` is a stub (the real one is in an 800 MB `-dbg`
//! package), so the kernel's symbols are taken in the lab: a short *symbol boot* of the same
//! kernel, booted `nokaslr` as the census boot is, prints its text symbols from `/proc/kallsyms`
//! (gzip, framed on the console, `frame.rs`); they are cached by the image's sha256
//! (`<cache>/kallsyms/<sha>.txt`), so a kernel costs one symbol boot on a machine.
//!
//! Paths start at the kernel's IRQ vector entries: with VHE (QEMU's `-cpu max` has it, so the
//! host kernel runs at EL2) the host's own `vectors` (arch/arm64/kernel/entry.S: IRQ from EL2h
//! and from EL0) and, while a vCPU runs, KVM's `__kvm_hyp_vector` (arch/arm64/kvm/hyp/hyp-entry.S:
//! IRQ from a lower EL) or one of its Spectre-hardened copies (`__bp_harden_hyp_vecs`). They end
//! at the guest's IRQ vector, as in the Xen mode. The VMM's userspace (irqlab at EL0) is in no
//! image: its instructions are counted under `unknown`.
use std::path::{Path, PathBuf};

use super::KvmWatcher;
use crate::census::{self, plugin::Plugin, symbols::Symbols, Plan};
use crate::error::LabError;
use crate::initramfs::{newc, Entry};
use crate::qemu::{Machine, QemuCmd};

/// Where irqlab's arm64 VMM loads the guest (crates/kvm/src/arch/aarch64/boot.rs `IMAGE`).
pub const GUEST_BASE: u64 = 0x4008_0000;
/// What the census boot adds to the kernel's command line: fixed addresses, so the symbol
/// boot's addresses are the census boot's.
pub const NOKASLR: &str = "nokaslr";
/// The framed file of the symbol boot.
const KALLSYMS_FILE: &str = "kallsyms.gz";

/// The cached symbols of the kernel whose image has `sha256`.
pub fn cached(cache: &Path, sha256: &str) -> PathBuf {
    cache.join("kallsyms").join(format!("{sha256}.txt"))
}

/// The kernel's text symbols, from the cache or a symbol boot (QEMU `qemu`, the kernel `image`).
pub fn kernel_symbols(qemu: &Path, image: &Path, sha256: &str, cmdline: &str, busybox: &Path, cache: &Path) -> Result<Symbols, LabError> {
    let file = cached(cache, sha256);
    if !file.is_file() {
        symbol_boot(qemu, image, cmdline, busybox, &file)?;
    }
    let text = std::fs::read_to_string(&file).map_err(LabError::io(&file))?;
    Ok(Symbols::parse(&text, &format!("/proc/kallsyms of the lab kernel (symbol boot; cached as {})", file.display()), 0).map_err(census::CensusError::from)?)
}

/// `/init` of the symbol boot: the kernel's text symbols (types t/T/w/W, modules left out, as
/// `Symbols::parse` reads them) into `/out`, framed; then power off.
fn symbol_init() -> String {
    let m = crate::frame::MARK;
    format!(
        "{pre}echo \"{m}init kernel=$(uname -r) kvm=symbols\"\ngrep -E '^[0-9a-f]+ [tTwW] [^ ]+$' /proc/kallsyms | gzip > /out/{KALLSYMS_FILE}\n{frame}echo \"{m}done\"\npoweroff -f\n",
        pre = crate::initramfs::INIT_PREAMBLE,
        frame = crate::frame::frame_lines()
    )
}

fn symbol_boot(qemu: &Path, image: &Path, cmdline: &str, busybox: &Path, into: &Path) -> Result<(), LabError> {
    let dir = into.parent().expect("a file in the cache");
    std::fs::create_dir_all(dir).map_err(LabError::io(dir))?;
    let work = tempdir_in(dir)?;
    let bb = std::fs::read(busybox).map_err(LabError::io(busybox))?;
    let mut entries: Vec<Entry> = ["/bin", "/dev", "/proc", "/sys", "/out"].iter().map(|d| Entry::Dir { path: d.to_string() }).collect();
    entries.push(Entry::CharDev { path: "/dev/console".into(), major: 5, minor: 1 });
    entries.push(Entry::File { path: "/bin/busybox".into(), mode: 0o755, data: bb });
    entries.push(Entry::File { path: "/init".into(), mode: 0o755, data: symbol_init().into_bytes() });
    let initrd = work.join("initrd.cpio");
    std::fs::write(&initrd, newc(&entries)).map_err(LabError::io(&initrd))?;
    let args = QemuCmd::new(&Machine::kvm_host(crate::config::Gic::V3, None)).kernel(image).initrd(&initrd).append(cmdline).finish(&Default::default());
    let log = work.join("console.log");
    eprintln!("irqlab-lab: census: taking the kernel's symbols in a short boot (once per kernel; console → {})", log.display());
    let w = KvmWatcher::new(std::time::Duration::from_secs(120), std::time::Duration::from_secs(300));
    let s = crate::session::run(qemu, &args, &log, w)?;
    let boot_err = |why: String| LabError::Boot { why: format!("the census's symbol boot: {why}"), log: log.clone() };
    if let crate::watch::Outcome::Failed(w) | crate::watch::Outcome::TimedOut(w) = &s.outcome {
        return Err(boot_err(w.clone()));
    }
    let files = crate::frame::framed_files(&s.log).map_err(|e| boot_err(e.to_string()))?;
    let gz = files.iter().find(|(n, _)| n == KALLSYMS_FILE).map(|(_, b)| b).ok_or_else(|| boot_err(format!("no {KALLSYMS_FILE} came back")))?;
    let text = gunzip(gz).map_err(|e| boot_err(format!("{KALLSYMS_FILE}: {e}")))?;
    Symbols::parse(&text, "/proc/kallsyms", 0).map_err(|e| boot_err(e.to_string()))?;
    let tmp = work.join("kallsyms.txt");
    std::fs::write(&tmp, &text).map_err(LabError::io(&tmp))?;
    std::fs::rename(&tmp, into).map_err(LabError::io(into))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn tempdir_in(dir: &Path) -> Result<PathBuf, LabError> {
    let w = dir.join(format!(".boot.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&w);
    std::fs::create_dir_all(&w).map_err(LabError::io(&w))?;
    Ok(w)
}

fn gunzip(b: &[u8]) -> std::io::Result<String> {
    use std::io::Read;
    let mut s = String::new();
    flate2::read::GzDecoder::new(b).take(256 << 20).read_to_string(&mut s)?;
    Ok(s)
}

/// A KVM census plan: the lab kernel's symbols, the guest at [`GUEST_BASE`].
pub fn kvm_plan(kernel: Symbols, guest_len: u64, out: PathBuf) -> Result<Plan, census::CensusError> {
    let (guest, close, classes) = census::guest_image(GUEST_BASE, guest_len)?;
    let need = |n: &str| kernel.addr(n).ok_or_else(|| census::CensusError::Usage(format!("--census: the kernel's symbols ({}) have no `{n}`", kernel.source)));
    let host = need("vectors")?;
    let hyp = need("__kvm_hyp_vector")?;
    // entry.S: IRQ from the current EL with SP_ELx (0x280) and from a lower EL (0x480).
    let mut tables = vec![host, hyp];
    if let Some(h) = kernel.addr("__bp_harden_hyp_vecs") {
        // BP_HARDEN_EL2_SLOTS (4) copies of the hyp vectors, 2 KiB each (arch/arm64/include/asm/spectre.h).
        tables.extend((0..4).map(|i| h + i * 0x800));
    }
    let mut open = vec![host + 0x280, host + 0x480];
    open.extend(tables[1..].iter().map(|t| t + 0x480));
    let img = census::aggregate::Image { side: "hyp".into(), el: "EL2".into(), range: kernel.text_range(), vectors: tables, symbols: Some(kernel), no_symbols: None };
    Ok(Plan { images: vec![img, guest], classes, open, close, out })
}

/// The census's plan and plugin, before the census boot.
pub fn prepare(qemu: &Path, choice: &crate::own_kernel::KernelChoice, cmdline: &str, irqlab: &Path, busybox: &Path, out: PathBuf) -> Result<(Plan, Plugin), LabError> {
    census::plugin::check_qemu(qemu)?;
    let guest = armguest::image().map_err(|e| census::CensusError::Usage(format!("--census: {e}")))?;
    same_guest(irqlab, guest)?;
    let cache = crate::deps::cache_dir();
    let syms = kernel_symbols(qemu, &choice.image, &choice.sha256, cmdline, busybox, &cache)?;
    let plan = kvm_plan(syms, guest.len() as u64, out)?;
    let plugin = census::plugin::ensure(&cache)?;
    Ok((plan, plugin))
}

/// The census names the guest's code from this build's guest image: the irqlab run inside must
/// carry the same image (an `--irqlab` of another commit would be named wrongly), exit 2 if not.
fn same_guest(irqlab: &Path, guest: &[u8]) -> Result<(), LabError> {
    let bin = std::fs::read(irqlab).map_err(LabError::io(irqlab))?;
    if guest.is_empty() || !bin.windows(guest.len()).any(|w| w == guest) {
        return Err(LabError::Usage(format!(
            "--census: {} does not carry this irqlab-lab's arm64 guest image (another commit?): its code could not be named; build both from one tree (scripts/arm-lab.sh does)",
            irqlab.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KALLSYMS: &str = "ffff800008000000 T _text\nffff800008010000 T vectors\nffff800008012000 T __kvm_hyp_vector\nffff800008020000 t vgic_v3_dispatch_sgi\nffff800008030000 T _etext\nffff800009000000 d some_data\nffff800008040000 t mod_fn\t[kvm]\n";

    #[test]
    fn the_plan_opens_at_the_host_and_hyp_irq_vectors() {
        let s = Symbols::parse(KALLSYMS, "/proc/kallsyms", 0).unwrap();
        let p = kvm_plan(s, 0x3000, "/o/census.txt".into()).unwrap();
        assert_eq!(p.open, vec![0xffff800008010280, 0xffff800008010480, 0xffff800008012480]);
        assert_eq!(p.images[0].range, (0xffff800008000000, 0xffff800008030000));
        assert_eq!(p.images[1].range, (GUEST_BASE, GUEST_BASE + 0x3000));
        let no_hyp = Symbols::parse("ffff800008000000 T _text\nffff800008010000 T vectors\n", "k", 0).unwrap();
        assert!(kvm_plan(no_hyp, 0x3000, "/o/c".into()).unwrap_err().to_string().contains("`__kvm_hyp_vector`"));
    }

    #[test]
    fn an_irqlab_without_this_guest_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let (with, without) = (d.path().join("a"), d.path().join("b"));
        std::fs::write(&with, b"ELF....GUESTIMAGE....").unwrap();
        std::fs::write(&without, b"ELF....GUESTIMAGF....").unwrap();
        assert!(same_guest(&with, b"GUESTIMAGE").is_ok());
        let e = same_guest(&without, b"GUESTIMAGE").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("does not carry this irqlab-lab's arm64 guest image"), "{e}");
    }

    #[test]
    fn hardened_vector_slots_open_too() {
        let s = Symbols::parse(&format!("{KALLSYMS}ffff800008014000 T __bp_harden_hyp_vecs\n"), "k", 0).unwrap();
        let p = kvm_plan(s, 0x3000, "/o/c".into()).unwrap();
        assert_eq!(p.open.len(), 7);
        assert!(p.open.contains(&(0xffff800008014000 + 3 * 0x800 + 0x480)));
    }

    #[test]
    fn the_symbol_init_keeps_text_symbols_only_and_frames_them() {
        let s = symbol_init();
        assert!(s.contains("/proc/kallsyms | gzip > /out/kallsyms.gz"), "{s}");
        assert!(s.contains("[tTwW]") && s.find("kallsyms").unwrap() < s.find("base64").unwrap());
        assert!(s.trim_end().ends_with("poweroff -f"));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, KALLSYMS.as_bytes()).unwrap();
        assert_eq!(gunzip(&gz.finish().unwrap()).unwrap(), KALLSYMS);
    }
}

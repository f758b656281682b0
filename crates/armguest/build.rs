//! Generates `params.inc` from `src/abi.rs` and assembles `guest/bench.S` with the aarch64 GNU
//! binutils (`aarch64-linux-gnu-as/ld/objcopy`; another prefix through `ARMGUEST_CROSS`, e.g.
//! empty on an aarch64 host). The guest is linked at two bases and the flat images compared, so a
//! non-PC-relative reference fails the build. Without binutils the crate still builds: it sets
//! no `armguest_image` cfg and `image()` returns the reason (`ARMGUEST_MISSING`).
#![allow(clippy::unwrap_used)] // a build script fails by panicking: unwrap is its error path
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "src/abi.rs"]
#[allow(dead_code)]
mod abi;

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    match cmd.output() {
        Err(e) => Err(format!("cannot run {what}: {e}")),
        Ok(o) if !o.status.success() => Err(format!("{what} failed: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Ok(_) => Ok(()),
    }
}

fn assemble(out: &Path, src: &Path, cross: &str) -> Result<(), String> {
    let obj = out.join("bench.o");
    let guest_dir = src.parent().expect("guest/");
    run(Command::new(format!("{cross}as")).arg("-I").arg(out).arg("-I").arg(guest_dir).arg("-o").arg(&obj).arg(src), &format!("{cross}as"))?;
    let mut images = Vec::new();
    for (i, base) in ["0x0", "0x12340000"].iter().enumerate() {
        let elf = out.join(format!("bench{i}.elf"));
        let bin = out.join(format!("bench{i}.bin"));
        run(
            Command::new(format!("{cross}ld")).args(["-nostdlib", "-static", "--no-dynamic-linker", "-e", "_start"]).arg(format!("-Ttext={base}")).arg("-o").arg(&elf).arg(&obj),
            &format!("{cross}ld"),
        )?;
        run(Command::new(format!("{cross}objcopy")).args(["-O", "binary", "-j", ".text"]).arg(&elf).arg(&bin), &format!("{cross}objcopy"))?;
        images.push(std::fs::read(&bin).map_err(|e| format!("read {}: {e}", bin.display()))?);
    }
    if images[0] != images[1] {
        return Err("guest/bench.S is not position-independent: linked at two bases, the images differ (use adr, never an absolute address)".into());
    }
    // The guest's symbols (image offsets, linked at 0), for the lab's path census.
    let nm = Command::new(format!("{cross}nm")).arg(out.join("bench0.elf")).output().map_err(|e| format!("cannot run {cross}nm: {e}"))?;
    if !nm.status.success() {
        return Err(format!("{cross}nm failed: {}", String::from_utf8_lossy(&nm.stderr).trim()));
    }
    std::fs::write(out.join("symbols.txt"), &nm.stdout).map_err(|e| e.to_string())?;
    std::fs::write(out.join("bench.bin"), &images[0]).map_err(|e| e.to_string())
}

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let src = dir.join("guest/bench.S");
    println!("cargo:rerun-if-changed={}", dir.join("guest").display());
    println!("cargo:rerun-if-changed=src/abi.rs");
    println!("cargo:rerun-if-env-changed=ARMGUEST_CROSS");
    println!("cargo:rustc-check-cfg=cfg(armguest_image)");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("params.inc"), abi::asm_include()).expect("write params.inc");
    let cross = std::env::var("ARMGUEST_CROSS").unwrap_or_else(|_| "aarch64-linux-gnu-".into());
    match assemble(&out, &src, &cross) {
        Ok(()) => println!("cargo:rustc-cfg=armguest_image"),
        Err(e) if e.starts_with("cannot run") => {
            println!("cargo:warning=armguest: {e}; the guest image is not built (install binutils-aarch64-linux-gnu)");
            println!("cargo:rustc-env=ARMGUEST_MISSING={e} (install binutils-aarch64-linux-gnu)");
        }
        Err(e) => panic!("armguest: {e}"),
    }
}

//! Assembles the benchmark guest (`guest/bench.S`) with GNU binutils into a flat binary loaded at
//! 0x10000, and exports its handler offsets. No cross toolchain is needed (none can be installed
//! on these machines): `as` and `ld` for the host target produce position-fixed 64-bit code.
use std::path::PathBuf;
use std::process::Command;

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("kvm guest build: cannot run {what}: {e} (install binutils)"));
    if !out.status.success() {
        panic!("kvm guest build: {what} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
}

fn main() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("guest/bench.S");
    println!("cargo:rerun-if-changed={}", src.display());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let (obj, elf, bin) = (out.join("bench.o"), out.join("bench.elf"), out.join("bench.bin"));
    run(Command::new("as").arg("--64").arg("-o").arg(&obj).arg(&src), "as");
    run(
        Command::new("ld").args(["-nostdlib", "-static", "--no-dynamic-linker", "-Ttext=0x10000", "-e", "_start", "-o"]).arg(&elf).arg(&obj),
        "ld",
    );
    run(Command::new("objcopy").args(["-O", "binary", "-j", ".text"]).arg(&elf).arg(&bin), "objcopy");
    let nm = Command::new("nm").arg(&elf).output().expect("nm (binutils)");
    let syms = String::from_utf8_lossy(&nm.stdout);
    let mut rs = String::new();
    for name in ["timer_isr", "device_isr", "ipi_target_isr", "ipi_reply_isr", "period_isr", "spurious_isr"] {
        let addr = syms
            .lines()
            .find(|l| l.ends_with(&format!(" {name}")))
            .and_then(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
            .unwrap_or_else(|| panic!("guest symbol {name} missing"));
        rs.push_str(&format!("pub const {}: u64 = {addr:#x};\n", name.to_uppercase()));
    }
    std::fs::write(out.join("guest_symbols.rs"), rs).unwrap();
}

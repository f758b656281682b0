//! # irqlab-lab — irqlab's Arm lab
//!
//! Boots Debian's real hypervisors under `qemu-system-aarch64` (TCG) on an x86 machine and runs
//! irqlab's arm64 benchmarks inside: `xen` runs the `armguest` guest as a dom0less domU of
//! Debian's Xen 4.17 and turns its console into a result (docs/xen-arm-lab.md); `kvm` boots
//! Debian's arm64 kernel with (nested) KVM and runs an aarch64 `irqlab` inside; `guest` writes
//! the patched guest for a real board. Times are
//! emulation times (or instruction counts under `--icount`), labelled so in every result: the lab
//! checks paths, orderings and ratios, never hardware latency (reference/arm-lab.md).
//!
//! Exit codes: 0 a complete result; 1 an environment/boot failure (one line, the log's path) or
//! an incomplete result (written, with its error stated); 2 bad input (flags, an existing result,
//! a configuration Debian's Xen cannot do), nothing started; 3 (kvm mode) the `irqlab run` inside
//! was stopped by `--stop-above`, its result complete and brought back, as irqlab itself exits.
use lab::{cli, its_script, kvm, xen};

use clap::Parser;

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let cli = match cli::Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let words = match &cli.mode {
        cli::Mode::Xen(x) => Some(&x.bench),
        cli::Mode::Kvm(k) => Some(&k.args),
        _ => None,
    };
    if let Some(n) = words.and_then(|w| lab::grammar::alias_note(w)) {
        eprintln!("irqlab-lab: note: {n}");
    }
    if let cli::Mode::Xen(x) = &cli.mode {
        if lab::grammar::segments(&x.bench).len() > 1 {
            eprintln!("irqlab-lab xen: several benches after `--`: the Xen mode boots one guest image per bench (a boot is ~1–5 s); give one bench per command (the KVM mode runs several in one boot)");
            std::process::exit(2);
        }
    }
    let code = match cli.mode {
        cli::Mode::Xen(x) if lab::grammar::xen_words(&x.bench).first().map(String::as_str) == Some("fio") => {
            match <lab::dom0::FioArgs as clap::Parser>::try_parse_from(lab::grammar::xen_words(&x.bench)) {
                Err(e) => {
                    eprint!("irqlab-lab xen: fio arguments: {e}");
                    2
                }
                Ok(f) => match lab::dom0::run(&x, &f, argv) {
                    Ok(c) => c,
                    Err(e) => {
                        eprintln!("irqlab-lab: {e}");
                        e.exit_code()
                    }
                },
            }
        }
        cli::Mode::Xen(x) => match cli::BenchArgs::parse_words(&lab::grammar::xen_words(&x.bench)) {
            Err(e) => {
                eprint!("irqlab-lab xen: bench arguments: {e}");
                2
            }
            Ok(b) => match xen::run(&x, &b, argv) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("irqlab-lab: {e}");
                    e.exit_code()
                }
            },
        },
        cli::Mode::Guest(g) => match cli::BenchArgs::parse_words(&lab::grammar::xen_words(&g.bench)) {
            Err(e) => {
                eprint!("irqlab-lab guest: bench arguments: {e}");
                2
            }
            Ok(b) => match xen::write_guest(&g, &b) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("irqlab-lab: {e}");
                    e.exit_code()
                }
            },
        },
        cli::Mode::ItsConvert(a) => match its_script::convert_command(&a) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("irqlab-lab: {e}");
                e.exit_code()
            }
        },
        cli::Mode::Ab(a) => match lab::ab::run(&a, argv) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("irqlab-lab ab: {e}");
                e.exit_code()
            }
        },
        cli::Mode::Kvm(k) => match kvm::run(&k, argv) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("irqlab-lab: {e}");
                e.exit_code()
            }
        },
    };
    std::process::exit(code);
}

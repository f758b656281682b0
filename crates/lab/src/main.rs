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
fn main() {
    std::process::exit(lab::route::main(std::env::args().collect()));
}

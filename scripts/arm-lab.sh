#!/usr/bin/env bash
# irqlab's Arm lab: builds `irqlab-lab` (crates/lab) and runs it with these arguments.
#   scripts/arm-lab.sh xen [--sched credit|credit2|null] [--vwfi trap|native] [--neighbour idle|busy] \
#       [--cpu cortex-a53|cortex-a57|neoverse-n1|max] [--gic 2|3|4] \
#       [--vcpus N] [--icount] -- timer|ipi --out DIR [--samples N] [--period-us U] [--wait wfi|busy]
#   scripts/arm-lab.sh xen [--xen FILE | --xen-src DIR|TARBALL [--patches DIR|FILE...] [--xen-config KEY=VALUE...]] \
#       [--sched credit2|null] [--vwfi trap|native] [--dom0-vcpus N] [--dom0-pin] [--icount] \
#       -- fio --job 4k-qd1|16k-qd1|4k-qd4|4k-qd1-nj4 [--runtime 5s] [--repeat N] [--no-counts] --out DIR
#       (dom0 + QEMU NVMe behind a GICv4 ITS, fio inside; see docs/xen-gicv4-lab.md)
#   scripts/arm-lab.sh guest [--counter-hz HZ] [--gic 2|3] -- timer|ipi --out DIR ...   (image for a real board)
#   scripts/arm-lab.sh kvm [--gic v3|v4] [--cpu max|neoverse-n1|cortex-a57|cortex-a53] [--device edu] [--busy-cpu N] [--icount] [--trace-its FILE] \
#       [--move-vcpus-ms MS] [--exit-reasons] [--census] -- <irqlab arguments with --out DIR>
#       (Debian's arm64 KVM; --device edu: QEMU's edu behind an SMMUv3, bound to vfio-pci, for
#        `run device --via vfio-msi|vfio-intx`; see docs/arm64-lab.md)
#   scripts/arm-lab.sh kvm ... --kernel IMAGE|PKG.deb [--modules DIR] [--kernel-config FILE] -- timer ...
#       (your own kernel, checked before booting; what follows `--` is the bench first in every
#        mode, `-- run timer` accepted as an alias)
#   scripts/arm-lab.sh kvm ... -- timer ... --out D1 -- ipi ... --out D2 -- device --via msi ... --out D3
#       (several benches in ONE boot, in order, each with its own --out; the Xen mode takes one)
#   scripts/arm-lab.sh ab kvm|xen --a '<mode options>' --b '<mode options>' [--repeat N|--single-run] \
#       [--fail-on slower[:STAT]] -- <bench and options> [-- <bench and options> ...] --out DIR
#       (A against B, interleaved fresh boots, irqlab compare's verdicts; exit 4 = B resolvably
#        slower with --fail-on; see docs/patch-gate.md)
# See docs/xen-arm-lab.md. Relative paths are taken from the current directory.
# The lab itself builds and installs nothing: this script builds `irqlab-lab` and, for the kvm
# and `ab kvm` modes, cross-builds this workspace's aarch64 `irqlab` (static) and passes it as
# IRQLAB_LAB_IRQLAB (unless that is set already or --irqlab is given); scripts/ensure-deps.sh
# installs QEMU, dtc, the cross compiler and the rustup target.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p lab
mode="${1:-}"; [ "$mode" = ab ] && mode="ab-${2:-}"
if { [ "$mode" = kvm ] || [ "$mode" = ab-kvm ]; } && [ -z "${IRQLAB_LAB_IRQLAB:-}" ] && [[ " $* " != *" --irqlab "* ]]; then
  echo "arm-lab.sh: cross-building irqlab for aarch64 (cargo build --release --target aarch64-unknown-linux-gnu -p cli)" >&2
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --quiet --manifest-path "$root/Cargo.toml" --target aarch64-unknown-linux-gnu -p cli
  export IRQLAB_LAB_IRQLAB="$root/target/aarch64-unknown-linux-gnu/release/irqlab"
fi
exec "$root/target/release/irqlab-lab" "$@"

#!/usr/bin/env bash
# Install what irqlab needs to build, if it is missing: a Rust toolchain (cargo) and GNU binutils
# (`as`, `objcopy`, used to build the KVM benchmark guests), the aarch64 binutils, QEMU and dtc for
# the arm64 guest and the Xen lab; and for the tests, the tools whose outputs `irqlab import`
# reads (fio, rt-tests, rtla), jq and cpio; and PostgreSQL, xmllint and chromium for the tests of
# the CI outputs (the results history, JUnit XML, the Markdown summary). Idempotent; quiet when all
# is there.
#
# The Rust toolchain must be at least the workspace's `rust-version` (Cargo.toml). Debian's own
# cargo is used only when it is new enough (bookworm ships 1.63, trixie 1.85: both too old for the
# dependencies); otherwise this fails at once, naming the version needed and how to get it, instead
# of a compile error minutes later.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$HOME/.cargo/bin:$PATH"
NEED=$(sed -n 's/^rust-version = "\([0-9.]*\)".*/\1/p' Cargo.toml | head -1)

# 0 when version $1 >= version $2 (dotted numbers).
version_ge() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]
}

too_old() {
  echo "ensure-deps: irqlab needs Rust $NEED or newer; $1." >&2
  echo "ensure-deps: install it with rustup (https://rustup.rs):" >&2
  echo "    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y" >&2
  echo "  or, where rustup is already installed:  rustup update stable" >&2
  exit 1
}

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
need_apt=()
if ! command -v cargo >/dev/null 2>&1; then
  # Debian's rustc, only if its candidate version is new enough.
  cand=$(apt-cache policy rustc 2>/dev/null | sed -n 's/^ *Candidate: *\([0-9][0-9.]*\).*/\1/p' | head -1)
  if [ -n "$cand" ] && version_ge "$cand" "$NEED"; then
    need_apt+=(cargo rustc)
  else
    too_old "no cargo on PATH or in ~/.cargo/bin, and Debian's rustc is ${cand:-not available}"
  fi
fi
command -v as >/dev/null 2>&1 || need_apt+=(binutils)
command -v objcopy >/dev/null 2>&1 || need_apt+=(binutils)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
# The test script's fault-injection tests use strace; `taskset` comes with util-linux.
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
# The arm64 benchmark guest (crates/armguest) and the Xen lab (crates/lab, docs/xen-arm-lab.md).
command -v aarch64-linux-gnu-as >/dev/null 2>&1 || need_apt+=(binutils-aarch64-linux-gnu)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need_apt+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v qemu-system-aarch64 >/dev/null 2>&1 || need_apt+=(qemu-system-arm)
# qemu-aarch64 (user mode) runs the kvm crate's aarch64 unit tests on this x86 machine.
command -v qemu-aarch64 >/dev/null 2>&1 || need_apt+=(qemu-user)
command -v dtc >/dev/null 2>&1 || need_apt+=(device-tree-compiler)
# Xen from source for the lab's dom0 fio mode (crates/lab/src/xen_build.rs, docs/xen-gicv4-lab.md):
# Xen's Kconfig needs flex and bison; the tree is a .tar.xz; patches go in with patch(1); the static
# aarch64 fio is built from Debian's source package (apt-get source → dpkg-source, from dpkg-dev).
command -v flex >/dev/null 2>&1 || need_apt+=(flex)
command -v bison >/dev/null 2>&1 || need_apt+=(bison)
command -v make >/dev/null 2>&1 || need_apt+=(make)
command -v patch >/dev/null 2>&1 || need_apt+=(patch)
command -v xz >/dev/null 2>&1 || need_apt+=(xz-utils)
command -v dpkg-source >/dev/null 2>&1 || need_apt+=(dpkg-dev)
if ! dpkg --print-foreign-architectures 2>/dev/null | grep -qx arm64; then
  echo "ensure-deps: adding dpkg architecture arm64 (the lab fetches Xen's arm64 package)" >&2
  $SUDO dpkg --add-architecture arm64
  need_apt_update=1
fi
# The tools whose outputs `irqlab import` reads: the import tests run them where they are
# installed (fio, cyclictest, rtla), and scripts/compare-false-positives.sh needs jq.
command -v fio >/dev/null 2>&1 || need_apt+=(fio)
command -v cyclictest >/dev/null 2>&1 || need_apt+=(rt-tests)
command -v rtla >/dev/null 2>&1 || need_apt+=(rtla)
command -v jq >/dev/null 2>&1 || need_apt+=(jq)
# The CI recipes' YAML is checked with python3's yaml module (crates/lab/tests/ci_examples.rs).
python3 -c 'import yaml' >/dev/null 2>&1 || need_apt+=(python3-yaml)
# The initramfs tests compare the lab's own newc writer with cpio(1) (`needs_cpio`).
command -v cpio >/dev/null 2>&1 || need_apt+=(cpio)
# taskset (`needs_two_cpus`, the lab's vCPU mover) and chattr come with util-linux / e2fsprogs.
command -v taskset >/dev/null 2>&1 || need_apt+=(util-linux)
# The CI outputs (issue 46): the results history's PostgreSQL tests start a throwaway server
# (initdb/pg_ctl from postgresql), the JUnit reports are checked with xmllint against the JUnit
# schema, and the Markdown summary is rendered in headless chromium.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
command -v xmllint >/dev/null 2>&1 || need_apt+=(libxml2-utils)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)

if [ ${#need_apt[@]} -eq 0 ] && [ -n "${need_apt_update:-}" ]; then
  $SUDO apt-get update -qq
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "ensure-deps: installing ${need_apt[*]} from Debian packages" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

have=$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9][0-9.]*\).*/\1/p')
if [ -z "$have" ] || ! version_ge "$have" "$NEED"; then
  too_old "this machine's rustc is ${have:-missing} ($(command -v rustc || echo 'not on PATH'))"
fi

# The test script checks that the workspace builds for arm64 (the kvm crate's aarch64 port).
if command -v rustup >/dev/null 2>&1; then
  if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    echo "ensure-deps: adding the rustup target aarch64-unknown-linux-gnu" >&2
    rustup target add aarch64-unknown-linux-gnu >&2 || { echo "ensure-deps: cannot add the rustup target aarch64-unknown-linux-gnu (needed by scripts/test.sh's arm64 check)" >&2; exit 1; }
  fi
fi

#!/usr/bin/env bash
# The whole test suite: what the README's test command and .ci/run run.
#  1. `cargo test --workspace --release`: every test that needs nothing from the host; tests that
#     need a resource are #[ignore]d with the reason and listed by libtest as ignored.
#  2. For each resource this host has, those tests (module `needs_<resource>::`) with --ignored;
#     for each it lacks, the tests skipped and why — or, with CI set, a failure when the resource
#     is one scripts/ensure-deps.sh installs (`installed_by_project`). Run by hand without the
#     resource they fail (testkit::require). The probes match crates/testkit/src/probe.rs.
#  3. `cargo check --target aarch64-unknown-linux-gnu --workspace`: the arm64 build stays whole;
#     then irqlab built for aarch64 and run on real KVM/arm64 in the QEMU lab (needs_arm_lab::).
#  4. The code gates: `cargo fmt --check` and `cargo clippy --workspace --all-targets --release --
#     -D warnings` (the lints are [workspace.lints] in Cargo.toml; unwrap_used outside tests only);
#     a failing gate fails the run after the tests have been reported.
# Each section header says the seconds elapsed and the load average (1, 5, 15 min) as it starts;
# when the next begins, a line says the wall time the last one took; the run ends with every
# section's time and the load at the end (the timing recipe: BENCHMARKS.md, "scripts/test.sh by
# section"), and the last line what the arm64 part took.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
section_name=""
section_start=0
timings=()
load() { cut -d' ' -f1-3 /proc/loadavg; }
# End the running section (its wall time) and start the next one, named $1.
section() {
  if [ -n "$section_name" ]; then
    echo "== [${SECONDS} s] took $((SECONDS - section_start)) s: $section_name"
    timings+=("$(printf '%6d s  %s' $((SECONDS - section_start)) "$section_name")")
  fi
  section_name="$1"
  section_start=$SECONDS
  [ -n "$1" ] && echo "== [${SECONDS} s] (load $(load)) $1"
  return 0
}
echo "== [${SECONDS} s] scripts/test.sh starts; load average $(load)"
section "cargo test --workspace --release"
cargo test --workspace --release

has_kvm()     { [ -r /dev/kvm ] && [ -w /dev/kvm ] && (exec 3<>/dev/kvm) 2>/dev/null; }
has_tracefs() { has_kvm && [ "$(id -u)" -eq 0 ] && grep -qw tracefs /proc/filesystems; }
has_strace()  { command -v strace >/dev/null && strace -f -qq -o /dev/null true 2>/dev/null; }
has_two_cpus() { command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; }
has_chattr()  { local f; f=$(mktemp) && chattr +i "$f" 2>/dev/null && chattr -i "$f" && rm -f "$f"; }
has_arm_guest() { command -v aarch64-linux-gnu-as >/dev/null; }
has_qemu_arm() { command -v qemu-system-aarch64 >/dev/null && has_arm_guest; }
has_cross_lab() { command -v qemu-system-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null; }
has_fio()     { command -v fio >/dev/null; }
has_cyclictest() { command -v cyclictest >/dev/null && cyclictest -l 2 -i 200 -q >/dev/null 2>&1; }
has_cpio()    { command -v cpio >/dev/null; }
# PostgreSQL's server programs (off PATH in Debian) and, as root, runuser to start them as postgres.
has_postgres() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && { [ "$(id -u)" -ne 0 ] || command -v runuser >/dev/null; }; }
has_xmllint() { command -v xmllint >/dev/null; }
has_chromium() { command -v chromium >/dev/null; }
# The lab with the real aarch64 irqlab: its QEMU and cross gcc (irqlab is built below, in its section).
has_arm_lab() { has_cross_lab; }
# Xen's GICv4 RFC series for the dom0 fio A/B (not installable: a directory of the user's).
has_xen_series() { local d="${IRQLAB_XEN_GICV4_RFC:-/work/shared/lab/xen-gicv4-rfc}"; has_cross_lab && [ -f "$d/xen-base.tar.xz" ] && [ -d "$d/series" ]; }
# What scripts/ensure-deps.sh installs: with CI set, one of these missing is a failure.
installed_by_project="strace arm_guest qemu_arm cross_lab arm_lab fio cyclictest cpio postgres xmllint chromium"
why() {
  case $1 in
    kvm) echo "/dev/kvm does not open here" ;;
    tracefs) echo "needs /dev/kvm, root and tracefs" ;;
    strace) echo "strace is missing or ptrace is not permitted" ;;
    two_cpus) echo "needs taskset and 2 CPUs" ;;
    chattr) echo "chattr +i does not work here (needs root and a filesystem with the immutable flag)" ;;
    arm_guest) echo "aarch64-linux-gnu-as is missing (binutils-aarch64-linux-gnu; the armguest image)" ;;
    qemu_arm) echo "qemu-system-aarch64 or aarch64-linux-gnu-as is missing" ;;
    cross_lab) echo "qemu-system-aarch64 or aarch64-linux-gnu-gcc is missing" ;;
    fio) echo "fio is missing" ;;
    cyclictest) echo "cyclictest (rt-tests) is missing or may not run here" ;;
    cpio) echo "cpio is missing" ;;
    postgres) echo "PostgreSQL's initdb (postgresql) or runuser is missing" ;;
    xmllint) echo "xmllint (libxml2-utils) is missing" ;;
    chromium) echo "chromium is missing" ;;
    xen_series) echo "the Xen GICv4 series is not at \${IRQLAB_XEN_GICV4_RFC:-/work/shared/lab/xen-gicv4-rfc} (or QEMU / the cross gcc is missing)" ;;
  esac
}
skipped=()
for r in kvm tracefs strace two_cpus chattr arm_guest qemu_arm cross_lab fio cyclictest cpio postgres xmllint chromium; do
  if "has_$r"; then
    section "tests that need $r: running"
    cargo test --workspace --release -- --ignored "needs_$r::"
  elif [ -n "${CI:-}" ] && [[ " $installed_by_project " == *" $r "* ]]; then
    echo "test.sh: CI is set and $r is missing: $(why "$r") (scripts/ensure-deps.sh installs it)" >&2
    exit 1
  else
    section "tests that need $r: SKIPPED ($(why "$r")):"
    cargo test --workspace --release -q -- --list --ignored "needs_$r::" 2>/dev/null | grep ': test$' | sed 's/^/   /' || true
    skipped+=("$r")
  fi
done

arm_start=$SECONDS
section "cargo check --target aarch64-unknown-linux-gnu --workspace"
cargo check --target aarch64-unknown-linux-gnu --workspace --tests
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static"
if command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null; then
  section "the kvm crate's unit tests built for aarch64, run under qemu-aarch64 (user mode)"
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64 cargo test --release --target aarch64-unknown-linux-gnu -p kvm --lib
else
  if [ -n "${CI:-}" ]; then echo "test.sh: CI is set and qemu-aarch64 (qemu-user) or aarch64-linux-gnu-gcc is missing" >&2; exit 1; fi
  section "the kvm crate's aarch64 unit tests: SKIPPED (qemu-aarch64 from qemu-user, or aarch64-linux-gnu-gcc, missing)"
  skipped+=("aarch64_unit")
fi

if has_arm_lab; then
  section "irqlab for aarch64, and the tests that run it on KVM/arm64 in the QEMU lab"
  cargo build --release --target aarch64-unknown-linux-gnu -p cli
  export IRQLAB_LAB_IRQLAB="$PWD/target/aarch64-unknown-linux-gnu/release/irqlab"
  cargo test --workspace --release -- --ignored "needs_arm_lab::"
  # Xen's GICv4 series in the lab (dom0 + NVMe + fio, one run per side; Xen builds cached in the
  # lab cache): each test prints what it cost (TIME: …).
  if has_xen_series; then
    section "Xen GICv4 series A/B in the lab (dom0 fio, base tree vs series)"
    dom0_start=$SECONDS
    cargo test --workspace --release -- --ignored --show-output "needs_xen_series::"
    echo "== [${SECONDS} s] the dom0 fio lab tests took $((SECONDS - dom0_start)) s"
  else
    section "tests that need xen_series: SKIPPED ($(why xen_series)):"
    cargo test --workspace --release -q -- --list --ignored "needs_xen_series::" 2>/dev/null | grep ': test$' | sed 's/^/   /' || true
    skipped+=("xen_series")
  fi
else
  if [ -n "${CI:-}" ]; then echo "test.sh: CI is set and the arm lab's QEMU or cross gcc is missing (scripts/ensure-deps.sh should have installed them)" >&2; exit 1; fi
  section "tests that need the arm lab: SKIPPED (qemu-system-aarch64 or aarch64-linux-gnu-gcc missing; scripts/ensure-deps.sh installs them):"
  cargo test --workspace --release -q -- --list --ignored "needs_arm_lab::" 2>/dev/null | grep ': test$' | sed 's/^/   /' || true
  skipped+=("arm_lab")
fi
if [ ${#skipped[@]} -gt 0 ]; then echo "== [${SECONDS} s] skipped on this host (reasons above): ${skipped[*]}"; else echo "== [${SECONDS} s] no test skipped"; fi
gates_failed=()
section "gate: cargo fmt --check"
cargo fmt --all --check >/dev/null 2>&1 || { echo "   cargo fmt --check: FAILED (run cargo fmt --all)"; gates_failed+=(fmt); }
# Every target (tests included) with every lint but unwrap_used, then the libraries and binaries
# with it too: clippy.toml's allow-unwrap-in-tests covers #[test] functions only, not the helpers
# of integration-test files.
section "gate: cargo clippy --workspace --all-targets --release -- -D warnings (unwrap allowed in tests)"
cargo clippy --workspace --all-targets --release -q -- -D warnings -A clippy::unwrap_used || gates_failed+=(clippy)
cargo clippy --workspace --lib --bins --release -q -- -D warnings || gates_failed+=(clippy-unwrap)
section ""
echo "== [${SECONDS} s] every section's wall time (load average at the end: $(load)):"
printf '%s\n' "${timings[@]}"
echo "== [${SECONDS} s] done; the arm64 part (check, unit tests under qemu-aarch64, cross build, lab boots) took $((SECONDS - arm_start)) s"
if [ ${#gates_failed[@]} -gt 0 ]; then echo "test.sh: code gates failed: ${gates_failed[*]}" >&2; exit 1; fi

#!/usr/bin/env bash
# Install what irqlab needs to build, if it is missing: a Rust toolchain (cargo) and GNU binutils
# (`as`, `objcopy`, used to build the KVM benchmark guests). Idempotent; quiet when all is there.
set -euo pipefail

need_apt=()
command -v cargo >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/cargo" ] || need_apt+=(cargo rustc)
command -v as >/dev/null 2>&1 || need_apt+=(binutils)
command -v objcopy >/dev/null 2>&1 || need_apt+=(binutils)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "ensure-deps: installing ${need_apt[*]} from Debian packages" >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  echo "ensure-deps: cargo is in ~/.cargo/bin; add it to PATH" >&2
fi

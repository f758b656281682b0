#!/usr/bin/env bash
# Fresh machine → results: install what is needed, build irqlab (release), and run the default
# scenario. Results land in out/<scenario>/result.json and result.csv, plus an HTML report.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/ensure-deps.sh
cargo build --release --workspace
# Also compile every test binary now, with the profile and features `cargo test --workspace
# --release` uses, so that the test command afterwards only runs tests (README: "Run every test").
cargo test --workspace --release --no-run
DEFAULT_SCENARIO="${1:-xen-arm-zynq-timer}"
IRQLAB="${CARGO_TARGET_DIR:-target}/release/irqlab"
"$IRQLAB" sim "$DEFAULT_SCENARIO" --stats
"$IRQLAB" report "out/$DEFAULT_SCENARIO/result.json" -o "out/$DEFAULT_SCENARIO/report.html"

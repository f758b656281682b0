#!/usr/bin/env bash
# The whole loop on a host with /dev/kvm: measure every benchmark `irqlab run` has, calibrate the
# kvm-x86 model's profile on a training subset, predict every benchmark on that profile, and
# print/write measured vs predicted p50/p99 per benchmark (held-out ones are the test). Then ask
# "what would it buy here?": the same benchmarks with APIC-timer virtualization and with
# APICv + posted interrupts, on the calibrated profile, beside the measured baseline.
#
# usage: scripts/validate-host.sh [OUT_DIR] [SAMPLES]       (default: out/validate-host 2000)
# env:   IRQLAB=path/to/irqlab (default: target/release/irqlab, built if missing)
#        TRAIN=timer-hlt,device-irqfd,ipi-oneway (the training subset)
# Output: OUT_DIR/measured/*/result.json, host.toml, predicted/, what-if-*/, comparison.md
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-out/validate-host}"
N="${2:-2000}"
TRAIN="${TRAIN:-timer-hlt,device-irqfd,ipi-oneway}"
IRQLAB="${IRQLAB:-${CARGO_TARGET_DIR:-target}/release/irqlab}"
[ -x "$IRQLAB" ] || cargo build --release -p cli
mkdir -p "$OUT/measured"

measure() { # NAME ARGS...
    local name=$1; shift
    echo "== irqlab run $* --samples $N" >&2
    "$IRQLAB" run "$@" --samples "$N" --out "$OUT/measured/$name" --format json >/dev/null
}
measure timer-hlt        timer --wait hlt
measure timer-hlt-poll0  timer --wait hlt --halt-poll-ns 0
measure timer-busy       timer --wait busy
for via in irqfd msi line level; do measure "device-$via" device --via "$via"; done
measure ipi              ipi

MEASURED=("$OUT"/measured/*/result.json)
echo "== irqlab calibrate (training: $TRAIN)" >&2
"$IRQLAB" calibrate "${MEASURED[@]}" --train "$TRAIN" -o "$OUT/host.toml" | tee "$OUT/calibrate.txt"

echo "== irqlab sim kvm-x86-host --profile $OUT/host.toml" >&2
SIM=("$IRQLAB" sim kvm-x86-host --profile "$OUT/host.toml" --set "workload.samples=$N" --format json)
"${SIM[@]}" --out "$OUT/predicted" >/dev/null
"${SIM[@]}" --out "$OUT/what-if-apic-timer-virt" --set hypervisor.apicv=true --set hypervisor.timer_virt=l1-only >/dev/null
"${SIM[@]}" --out "$OUT/what-if-posted-interrupts" --set hypervisor.apicv=true --set hypervisor.posted_interrupts=true >/dev/null

echo "== measured vs predicted" >&2
"$IRQLAB" calibrate "${MEASURED[@]}" --train "$TRAIN" \
    --against "$OUT/predicted/result.json" \
    --against "$OUT/what-if-apic-timer-virt/result.json" \
    --against "$OUT/what-if-posted-interrupts/result.json" \
    --table "$OUT/comparison.md"

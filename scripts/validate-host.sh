#!/usr/bin/env bash
# The whole loop on a host with /dev/kvm: measure every benchmark `irqlab run` has, calibrate the
# kvm-x86 model's profile on a training subset, predict every benchmark on that profile, and
# print/write measured vs predicted p50/p99 per benchmark (held-out ones are the test). Then ask
# "what would it buy here?": the same benchmarks with APIC-timer virtualization and with
# APICv + posted interrupts, on the calibrated profile, beside the measured baseline.
#
# The costs come from `irqlab run primitives` (measured alone, composed into the paths by
# `calibrate --primitives`; docs/validate-host.md); PRIMITIVES=0 fits scale factors instead.
# Placement (docs/validate-host.md): one-vCPU benchmarks run with the vCPU and the trigger thread
# on host CPU 0 (taskset -c 0 --pin 0), the IPI's vCPUs on CPUs 0 and 1.
#
# usage: scripts/validate-host.sh [OUT_DIR] [SAMPLES]       (default: out/validate-host 2000)
# env:   IRQLAB=path/to/irqlab (default: target/release/irqlab, built if missing)
#        TRAIN=timer-hlt,device-irqfd,ipi-oneway (the training subset)
#        PRIMITIVES=1 (0: no primitives, fit the profile's scale factors on TRAIN)
#        RUN_FLAGS="--priority 50" (extra flags for every `irqlab run`; default none)
# Output: OUT_DIR/measured/*/result.json, primitives/, host.toml, predicted/, what-if-*/, comparison.md
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-out/validate-host}"
N="${2:-2000}"
TRAIN="${TRAIN:-timer-hlt,device-irqfd,ipi-oneway}"
PRIMITIVES="${PRIMITIVES:-1}"
read -r -a RUN_FLAGS <<< "${RUN_FLAGS:-}"
IRQLAB="${IRQLAB:-${CARGO_TARGET_DIR:-target}/release/irqlab}"
[ -x "$IRQLAB" ] || cargo build --release -p cli
mkdir -p "$OUT/measured"

CPU0=(taskset -c 0)
measure() { # NAME PLACEMENT ARGS...
    local name=$1 where=$2; shift 2
    local pre=(); [ "$where" = cpu0 ] && pre=("${CPU0[@]}")
    echo "== irqlab run $* --samples $N ${RUN_FLAGS[*]}" >&2
    "${pre[@]}" "$IRQLAB" run "$@" --samples "$N" "${RUN_FLAGS[@]}" --out "$OUT/measured/$name" --format json >/dev/null
}
measure timer-hlt        cpu0 timer --wait hlt --pin 0
measure timer-hlt-poll0  cpu0 timer --wait hlt --halt-poll-ns 0 --pin 0
measure timer-busy       cpu0 timer --wait busy --pin 0
for via in irqfd msi line level; do measure "device-$via" cpu0 device --via "$via" --pin 0; done
measure ipi              any  ipi --pin 0,1
PRIM=()
if [ "$PRIMITIVES" != 0 ]; then
    echo "== irqlab run primitives --samples $N --pin 0 ${RUN_FLAGS[*]}" >&2
    "$IRQLAB" run primitives --samples "$N" --pin 0 "${RUN_FLAGS[@]}" --out "$OUT/primitives" --format json >/dev/null
    PRIM=(--primitives "$OUT/primitives/result.json")
fi

MEASURED=("$OUT"/measured/*/result.json)
echo "== irqlab calibrate (training: $TRAIN)" >&2
"$IRQLAB" calibrate "${MEASURED[@]}" "${PRIM[@]}" --train "$TRAIN" -o "$OUT/host.toml" | tee "$OUT/calibrate.txt"

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

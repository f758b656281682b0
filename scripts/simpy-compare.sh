#!/usr/bin/env bash
# Side by side on the same S3 path and the same number of interrupts: irqlab's xen-arm model
# (scenarios/xen-arm-zynq-timer.toml, configuration vwfi=trap) and a SimPy peer of it
# (scripts/simpy_xen_timer.py), SimPy installed from PyPI into a throwaway virtual environment.
# Prints both rates (simulated interrupts per second, simulation loop only, one core each,
# run one after the other) and the ratio.
#
#   scripts/simpy-compare.sh [N]     (default 1000000 interrupts)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
if [ -z "${IRQLAB:-}" ]; then
    cargo build --release -q -p cli
    IRQLAB=$PWD/target/release/irqlab
fi

V=$(mktemp -d /tmp/irqlab-simpy.XXXXXX)
trap 'rm -rf "$V"' EXIT
python3 -m venv "$V/venv"
"$V/venv/bin/pip" install -q --disable-pip-version-check simpy
echo "SimPy $("$V/venv/bin/python" -c 'import simpy; print(simpy.__version__)'), $("$V/venv/bin/python" --version)"

# The scenario's period (0.5 s) times 1e8 rounds would pass irqlab's 100-simulated-day bound;
# the period does not change the work per interrupt, so it is shortened for large N.
"$IRQLAB" sim xen-arm-zynq-timer --config vwfi=trap --seeds 1 --set "workload.samples=$N" \
    --set workload.period_us=50000 --stats --format json --out "$V/out" > "$V/irqlab.out" 2> "$V/irqlab.err"
wall=$(grep -ho 'wall: [0-9.]* s' "$V/irqlab.out" "$V/irqlab.err" | head -n1 | awk '{print $2}')
mean=$(jq '.configs[0].classes.timer.summary.mean' "$V/out/result.json")
irq_rate=$(awk -v n="$N" -v w="$wall" 'BEGIN { printf "%.4g", n / w }')
echo "irqlab: interrupts $N wall $wall s rate $irq_rate /s mean_ns $mean (includes the cold first round)"

py=$("$V/venv/bin/python" scripts/simpy_xen_timer.py "$N")
echo "simpy:  $py"
py_rate=$(awk '{for (i = 1; i < NF; i++) if ($i == "rate") print $(i + 1)}' <<< "$py")
awk -v a="$irq_rate" -v b="$py_rate" 'BEGIN { printf "ratio irqlab/simpy: %.1f\n", a / b }'

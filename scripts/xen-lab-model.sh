#!/usr/bin/env bash
# The S3 model (scenario xen-arm-zynq-timer, its calibrated costs) on the paths the Xen lab
# measures: credit1/credit2 x vwfi trap/native x idle/busy neighbour, tbm period 1 ms, one seed.
# Built from the shipped scenario at run time (its [[configs]] and references replaced), so it
# follows the model's calibration. Usage: scripts/xen-lab-model.sh OUT_DIR [more irqlab sim flags,
# e.g. --set workload.timer=virtual]   (docs/xen-arm-lab.md)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/xen-lab-model.sh OUT_DIR [irqlab sim flags]}
shift
mkdir -p "$out"
scen="$out/xen-lab-paths.toml"
awk '/^\[\[configs\]\]/ { exit } { sub(/^seeds = 8$/, "seeds = 1"); print }' scenarios/xen-arm-zynq-timer.toml > "$scen"
for s in credit1 credit2; do for w in trap native; do for o in idle busy; do
  extra=""
  [ "$o" = busy ] && extra=', "workload.other" = "busy", "hypervisor.vcpus_per_pcpu" = 2'
  printf '[[configs]]\nname = "%s %s %s"\nset = { "hypervisor.scheduler" = "%s", "hypervisor.vwfi" = "%s"%s }\n\n' "$s" "$w" "$o" "$s" "$w" "$extra" >> "$scen"
done; done; done
irqlab=${IRQLAB:-target/release/irqlab}
"$irqlab" sim "$scen" --set workload.period_us=1000 --set workload.samples=1000 --out "$out" --unit ns "$@"

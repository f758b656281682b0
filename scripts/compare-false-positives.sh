#!/usr/bin/env bash
# How often `irqlab compare` claims a difference between two runs of the SAME configuration
# (issue 25's false-positive figure), and which changes it resolves (power).
#
#   scripts/compare-false-positives.sh [PAIRS] [SEEDS] [SCENARIO] [CONFIDENCE]
#
# For i in 1..PAIRS it simulates SCENARIO (default demo-timer-inject) with base seeds 2i and
# 2i+1 (each point run with SEEDS seeds, default 1: no repetitions), compares the two with
# `irqlab compare --format json --confidence CONFIDENCE`, and counts, per statistic, the pairs
# whose verdict is "faster" or "slower", the pairs where ANY statistic claimed one, and how often
# the regression gate `--fail-on slower` tripped. Every
# configuration of the scenario counts as a pair. Deterministic: the same arguments print the
# same figures. Needs jq and a built irqlab (target/release, or irqlab on PATH).
#
# Power: SHIFT_NS=20 makes B's demo-timer-inject list-register write (`lr_inject`, 150 ns in
# the demo profile, on every sample's path) 20 ns slower, a known shift of every sample; the
# "claimed" counts are then how often the shift is resolved. SAMPLES=10000 sets
# workload.samples on both sides.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-50}
SEEDS=${2:-1}
SCENARIO=${3:-demo-timer-inject}
CONF=${4:-0.95}
SHIFT_NS=${SHIFT_NS:-0}
SAMPLES=${SAMPLES:-}
export PATH="$PWD/target/release:$PATH"
command -v jq >/dev/null || { echo "compare-false-positives: needs jq (apt-get install jq)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$PAIRS"); do
  for s in $((2 * i)) $((2 * i + 1)); do
    extra=()
    [ -n "$SAMPLES" ] && extra+=(--set "workload.samples=$SAMPLES")
    if [ "$s" = $((2 * i + 1)) ] && [ "$SHIFT_NS" != 0 ]; then
      extra+=(--set "platform.costs.lr_inject.ns=$((150 + SHIFT_NS))" --set 'platform.costs.lr_inject.source="compare-false-positives.sh: shifted"' --set 'platform.costs.lr_inject.basis="guess"')
    fi
    irqlab sim "$SCENARIO" --seed "$s" --seeds "$SEEDS" --out "$work/s$s" --format json "${extra[@]}" >/dev/null
  done
  irqlab compare "$work/s$((2 * i))/result.json" "$work/s$((2 * i + 1))/result.json" --format json --confidence "$CONF" \
    | jq -c '.verdicts.classes[] | {c: (.config + "/" + .class), s: [.stats[] | {stat, v: .verdict, i: (.interval != null), a: .a_ns}], ks: .ks.differs}' >>"$work/verdicts.jsonl"
  st=0
  irqlab compare "$work/s$((2 * i))/result.json" "$work/s$((2 * i + 1))/result.json" --confidence "$CONF" --fail-on slower $( [ "$SEEDS" -lt 2 ] && echo --single-run ) >/dev/null 2>&1 || st=$?
  case $st in 0) ;; 4) echo gate >>"$work/gate" ;; *) echo "compare-false-positives: compare exited $st" >&2; exit 1 ;; esac
done
touch "$work/gate"
echo "scenario $SCENARIO, $PAIRS seed pairs x $SEEDS seed(s) per side, confidence $CONF, samples ${SAMPLES:-as in the scenario}, B shifted by ${SHIFT_NS} ns"
jq -rs '
  length as $n
  | "compared classes: \($n)",
    (["mean","min","p50","p90","p99","p99.9","p99.99","max","warm_max"][] as $st
      | [.[] | .s[] | select(.stat == $st)] as $rows
      | ($rows | map(select(.i)) | length) as $with
      | ($rows | map(select(.v == "faster" or .v == "slower")) | length) as $claims
      | "\($st): \($claims) of \($n) claimed faster/slower (\($with) had an interval)"),
    "any statistic: \([.[] | select(any(.s[]; .v == "faster" or .v == "slower"))] | length) of \($n)",
    "KS test rejected: \([.[] | select(.ks == true)] | length) of \($n)",
    (group_by(.c)[] as $g | $g[0].c as $c
      | (["p50", "p99"][] as $st
         | [$g[] | .s[] | select(.stat == $st)] as $r
         | "  \($c) \($st) (A ~\($r | map(.a) | add / length | floor) ns): claimed in \($r | map(select(.v == "faster" or .v == "slower")) | length) of \($r | length)"))
' "$work/verdicts.jsonl"
echo "--fail-on slower (any statistic, one-sided Bonferroni over the checks that can trip) tripped: $(wc -l <"$work/gate") of $PAIRS comparisons"

#!/usr/bin/env bash
# Run the README's tour exactly as written: every ```sh block under "## A short tour", line by
# line, from the root of a scratch copy of this checkout (so `out/` and `my.toml` of the tour do not
# touch the working tree). A block preceded by the line `<!-- tour: needs /dev/kvm -->` in the
# README needs KVM: it runs only where /dev/kvm opens, and is reported as skipped otherwise (no
# block is assumed to need KVM by its position). Besides each line's exit status, a few lines'
# outputs are checked against what the README says they print (EXPECT below).
#
#   scripts/check-tour.sh        exit status non-zero at the first tour line that fails
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release -q -p cli --manifest-path "$ROOT/Cargo.toml"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# The tour runs from a clone's root: it needs the repository's files, and target/release/irqlab.
git -C "$ROOT" ls-files -z | (cd "$ROOT" && xargs -0 cp --parents -t "$WORK")
mkdir -p "$WORK/target/release"
cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/irqlab" "$WORK/target/release/"

# The tour's code blocks: from "## A short tour" to the next "## " heading.
# Each line is printed as BLOCK<TAB>NEEDS_KVM<TAB>LINE.
awk '/^## A short tour/{t=1;next} /^## /{t=0} t&&/^<!-- tour: needs \/dev\/kvm -->/{kvm=1;next} t&&/^```sh/{b++;inb=1;next} t&&/^```/{inb=0;kvm=0;next} t&&inb{print b"\t"(kvm?1:0)"\t"$0}' \
    "$ROOT/README.md" > "$WORK/tour.lines"
[ -s "$WORK/tour.lines" ] || { echo "check-tour: no tour found in README.md" >&2; exit 1; }

kvm=0
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then kvm=1; else echo "check-tour: /dev/kvm unusable, skipping the measurement block"; fi
cd "$WORK"
export PATH="$WORK/target/release:$PATH"
# Output checks: a line starting with the first field must print a line matching the second (ERE).
EXPECT=(
    $'irqlab scenarios    \t^xen-wfi-policy '
    $'irqlab sim xen-arm-zynq-timer    \t^ANSWER: vwfi trap → native lowers mean timer latency'
    $'irqlab sim xen-arm-zynq-timer --check\t^exit 1$'
    $'irqlab compare out/xen-wfi-policy/result.json --by\t^ANSWER: vwfi trap → adaptive'
    $'irqlab compare out/demo/result.json out/demo-8\t^idle=trap +timer +mean +µs'
    $'irqlab sim demo-timer-inject --stats\tevents/s: [0-9]'
)
n=0 skipped=0
while IFS=$'\t' read -r block needs line; do
    if [ "$needs" = 1 ] && [ $kvm -eq 0 ]; then skipped=$((skipped+1)); echo "SKIP (needs /dev/kvm): $line"; continue; fi
    n=$((n+1))
    echo "== $line"
    # The exit status of the command itself; --check is expected to pass on shipped scenarios.
    if ! bash -c "set -e; export PATH=\"$PATH\"; $line" > "$WORK/last.out" 2>&1; then
        cat "$WORK/last.out" >&2
        echo "check-tour: FAILED: $line" >&2
        exit 1
    fi
    for e in "${EXPECT[@]}"; do
        prefix=${e%%$'\t'*} want=${e#*$'\t'}
        if [[ "$line" == "$prefix"* ]] && ! grep -Eq -- "$want" "$WORK/last.out"; then
            cat "$WORK/last.out" >&2
            echo "check-tour: FAILED: \`$line\` printed no line matching /$want/" >&2
            exit 1
        fi
    done
done < "$WORK/tour.lines"
echo "check-tour: $n tour lines ran, $skipped skipped (need /dev/kvm)"

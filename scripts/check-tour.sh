#!/usr/bin/env bash
# Run the README's tour exactly as written: every ```sh block under "## A short tour", line by
# line, from the root of a scratch copy of this checkout (so `out/` and `my.toml` of the tour do not
# touch the working tree). The KVM block is run only where /dev/kvm opens.
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
awk '/^## A short tour/{t=1;next} /^## /{t=0} t&&/^```sh/{b++;inb=1;next} t&&/^```/{inb=0;next} t&&inb{print b"\t"$0}' \
    "$ROOT/README.md" > "$WORK/tour.lines"
[ -s "$WORK/tour.lines" ] || { echo "check-tour: no tour found in README.md" >&2; exit 1; }

kvm=0
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then kvm=1; else echo "check-tour: /dev/kvm unusable, skipping the measurement block"; fi
cd "$WORK"
export PATH="$WORK/target/release:$PATH"
n=0
while IFS=$'\t' read -r block line; do
    if [ "$block" -ge 2 ] && [ $kvm -eq 0 ]; then continue; fi
    n=$((n+1))
    echo "== $line"
    # The exit status of the command itself; --check is expected to pass on shipped scenarios.
    if ! bash -c "set -e; export PATH=\"$PATH\"; $line" > "$WORK/last.out" 2>&1; then
        cat "$WORK/last.out" >&2
        echo "check-tour: FAILED: $line" >&2
        exit 1
    fi
done < "$WORK/tour.lines"
echo "check-tour: $n tour lines ran"

#!/usr/bin/env bash
# Render the HTML reports of the shipped scenarios that matter most and of a measured run, check
# that every plot has x and y tick labels and axis titles, and take full-page PNG screenshots in
# headless Chromium for a person to look at.
#
#   scripts/check-reports.sh [OUTDIR]        (default OUTDIR: out/check-reports)
#
# Reports: xen-arm-zynq-timer (the default scenario), xen-wfi-policy (81-point sweep),
# kvm-pv-ipi-skylake, and a measured run: `irqlab run timer --samples 2000` when /dev/kvm opens,
# else the checked-in tests/data/measured-timer.json. Installs Debian's chromium if missing.
# Exit status: non-zero when a report fails to build, a plot lacks tick labels or an axis title,
# or a screenshot cannot be taken.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/check-reports}
mkdir -p "$OUT"
IRQLAB=${IRQLAB:-}
if [ -z "$IRQLAB" ]; then
    cargo build --release -q -p cli
    IRQLAB=./target/release/irqlab
fi

for s in xen-arm-zynq-timer xen-wfi-policy kvm-pv-ipi-skylake; do
    echo "== sim $s"
    "$IRQLAB" sim "$s" --out "$OUT/$s" --format json > /dev/null
    "$IRQLAB" report "$OUT/$s/result.json" -o "$OUT/$s.html"
done
if [ -r /dev/kvm ] && [ -w /dev/kvm ] && "$IRQLAB" run timer --samples 2000 --out "$OUT/measured" > /dev/null 2>"$OUT/measured.log"; then
    MEASURED="$OUT/measured/result.json"
else
    echo "== /dev/kvm unusable here: using the checked-in measured result"
    MEASURED=crates/cli/tests/data/measured-timer.json
fi
"$IRQLAB" report "$MEASURED" -o "$OUT/measured.html"
"$IRQLAB" report "$OUT/xen-arm-zynq-timer/result.json" "$MEASURED" -o "$OUT/model-vs-measured.html"

echo "== plot labels"
python3 - "$OUT"/*.html <<'PY'
import re, sys
from html.parser import HTMLParser

class Svg(HTMLParser):
    """Collects, per <svg>, the text of <text class=...> elements by class."""
    def __init__(self):
        super().__init__()
        self.plots, self.cur, self.cls = [], None, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.cur = {"title": "", "texts": {}}
            self.plots.append(self.cur)
        elif tag == "text" and self.cur is not None:
            self.cls = a.get("class", "")
            self.cur["texts"].setdefault(self.cls, []).append("")
    def handle_endtag(self, tag):
        if tag == "svg":
            self.cur = None
        elif tag == "text":
            self.cls = None
    def handle_data(self, data):
        if self.cur is not None and self.cls is not None:
            self.cur["texts"][self.cls][-1] += data

bad = 0
for path in sys.argv[1:]:
    p = Svg()
    p.feed(open(path, encoding="utf-8").read())
    if not p.plots:
        print(f"{path}: no plots"); bad += 1
    for i, plot in enumerate(p.plots):
        t = plot["texts"]
        name = (t.get("plot-title") or [f"plot {i}"])[0]
        problems = []
        for c in ("x-tick", "y-tick"):
            labels = [x.strip() for x in t.get(c, []) if x.strip()]
            if len(labels) < 2:
                problems.append(f"fewer than 2 {c} labels {labels}")
            if len(set(labels)) != len(labels):
                problems.append(f"duplicate {c} labels {labels}")
            if any(re.search(r"\d(µs|ns|ms)|e[+-]?\d", l) for l in labels):
                problems.append(f"{c} labels carry units or exponents {labels}")
        for c in ("x-title", "y-title"):
            if len([x for x in t.get(c, []) if x.strip()]) != 1:
                problems.append(f"missing {c}")
        xt = (t.get("x-title") or [""])[0]
        if "latency" in xt and not re.search(r"\((µs|ns)", xt):
            problems.append(f"latency axis title without unit: {xt!r}")
        for pr in problems:
            print(f"{path}: {name}: {pr}"); bad += 1
    print(f"{path}: {len(p.plots)} plots checked")
sys.exit(1 if bad else 0)
PY

echo "== screenshots"
if ! command -v chromium > /dev/null; then
    apt-get install -y chromium > /dev/null
fi
for f in "$OUT"/*.html; do
    png="${f%.html}.png"
    profile=$(mktemp -d)
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --window-size=1280,4000 \
        --screenshot="$png" "file://$(realpath "$f")" > /dev/null 2>&1
    rm -rf "$profile"
    [ -s "$png" ] || { echo "$f: no screenshot"; exit 1; }
    echo "$png"
done
echo "all reports have labelled axes; look at the PNGs in $OUT"

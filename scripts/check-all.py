#!/usr/bin/env python3
"""The project's held-out score in one command: `irqlab sim --check` over every shipped scenario.

For each scenario (`irqlab scenarios`), runs `irqlab sim NAME --format json` into a temporary
directory (nothing is written in the work tree) and prints one table: the number of `fit`
references and their residuals (median and worst |deviation|), the number of held-out `check`
references and their errors (median and worst |deviation|, signed worst beside it), how many are
out of tolerance, and the run time; a scenario with no reference at all is listed as an unverified
prediction. `--rows` also lists every reference. Exit status: 0 when
every check reference is within tolerance, 1 when some are not (like `irqlab sim --check`), 2 when
a scenario fails to run (its stderr is printed).

    scripts/check-all.py [--irqlab target/release/irqlab] [--rows] [--skip NAME ...] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def scenarios(irqlab):
    out = subprocess.run([irqlab, "scenarios"], capture_output=True, text=True, check=True).stdout
    names = []
    for line in out.splitlines():
        if not line.strip() or line.startswith("("):
            continue
        names.append(line.split()[0])
    return names


def deviation(ref):
    if ref.get("model") is None or ref["published"] == 0:
        return None
    return ref["model"] / ref["published"] - 1.0


def summarize(refs, role):
    rows = [r for r in refs if r["role"] == role]
    devs = [d for d in (deviation(r) for r in rows) if d is not None]
    out = [r for r in rows if deviation(r) is None or abs(deviation(r)) > r["tolerance"] + 1e-12]
    if not devs:
        return {"n": len(rows), "median": None, "worst": None, "out": len(out)}
    worst = max(devs, key=abs)
    return {"n": len(rows), "median": statistics.median(abs(d) for d in devs), "worst": worst, "out": len(out)}


def pct(x, signed=False):
    if x is None:
        return "-"
    return f"{x * 100:+.1f}%" if signed else f"{x * 100:.1f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--irqlab", default=os.environ.get("IRQLAB", "target/release/irqlab"))
    ap.add_argument("--rows", action="store_true", help="list every reference too")
    ap.add_argument("--skip", nargs="*", default=[], help="scenarios not to run")
    ap.add_argument("--json", help="also write the per-scenario summary here (a new file; refused if it exists)")
    a = ap.parse_args()
    if a.json and os.path.exists(a.json):
        print(f"check-all: --json {a.json}: exists; not overwritten", file=sys.stderr)
        return 2
    table, failed, every = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in scenarios(a.irqlab):
            if name in a.skip:
                continue
            t0 = time.time()
            p = subprocess.run([a.irqlab, "sim", name, "--format", "json", "--out", os.path.join(tmp, name)], capture_output=True, text=True)
            secs = time.time() - t0
            if p.returncode not in (0, 1):
                failed.append(name)
                print(f"check-all: {name}: exit {p.returncode}\n{p.stderr}", file=sys.stderr)
                continue
            out = json.loads(p.stdout)
            refs = out.get("references", [])
            fit, chk = summarize(refs, "fit"), summarize(refs, "check")
            fit["kind"] = out.get("meta", {}).get("kind")
            table.append((name, fit, chk, secs))
            every += [(name, r) for r in refs]
    hdr = f"{'SCENARIO':<24} {'FIT':>4} {'FIT MED|dev|':>12} {'FIT WORST':>10} {'CHECK':>6} {'HELD-OUT MED|err|':>17} {'HELD-OUT WORST':>14} {'OUT':>4} {'TIME':>7}"
    print(hdr)
    print("-" * len(hdr))
    unverified = []
    for name, fit, chk, secs in table:
        # A scenario with no reference at all is a prediction nobody has compared yet.
        tag = "  unverified prediction" if fit["n"] == 0 and chk["n"] == 0 and fit.get("kind") == "predicted" else ""
        if tag:
            unverified.append(name)
        print(f"{name:<24} {fit['n']:>4} {pct(fit['median']):>12} {pct(fit['worst'], True):>10} {chk['n']:>6} {pct(chk['median']):>17} {pct(chk['worst'], True):>14} {chk['out']:>4} {secs:>6.1f}s{tag}")
    if unverified:
        print(f"\nunverified predictions (no reference to compare with; issue 35's derivations: docs/predictions.md): {', '.join(unverified)}")
    allchk = [deviation(r) for _, r in every if r["role"] == "check" and deviation(r) is not None]
    nout = sum(c["out"] for _, _, c, _ in table)
    if allchk:
        print(f"\nall held-out references: {len(allchk)}, median |error| {pct(statistics.median(abs(d) for d in allchk))}, worst {pct(max(allchk, key=abs), True)}, {nout} out of tolerance")
    if a.rows:
        print()
        for name, r in every:
            over = f" / {r['over']}" if r.get("over") else ""
            print(f"{name:<24} {r['role']:<5} {r['config'] + over:<60} {r['class']:<6} {r['stat']:<12} published {r['published']:>12g} model {format(r['model'], '.6g') if r.get('model') is not None else '-':>12} {pct(deviation(r), True):>8} ±{r['tolerance'] * 100:g}%")
    if a.json:
        with open(a.json, "x") as f:
            json.dump([{"scenario": n, "fit": fi, "check": c, "seconds": s, "unverified_prediction": n in unverified} for n, fi, c, s in table], f, indent=1)
    if failed:
        return 2
    return 1 if nout else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Regenerates crates/sim/census/lab/*.json: the lab's path census of the Xen paths the models time
(issue 43). Each file holds the census of one lab run and the run that produced it (command,
Xen build, irqlab commit), so a model segment can name its source. Usage, from the repository
root after the setup command:

    python3 scripts/census-data.py            # all runs below, about 10-20 s each
    python3 scripts/census-data.py xen-timer-credit2-trap   # one

Counts are emulation instruction counts under -icount (deterministic), never hardware time.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAB = os.path.join(ROOT, "target", "release", "irqlab-lab")
OUT = os.path.join(ROOT, "crates", "sim", "census", "lab")
RUNS = {
    f"xen-{bench}-{sched}-{vwfi}": ["xen", "--icount", "--census", "--sched", sched, "--vwfi", vwfi, "--", bench, "--samples", "20"]
    for bench in ["timer", "ipi"]
    for sched in ["credit2", "credit"]
    for vwfi in ["trap", "native"]
}


def commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def one(name, args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        p = subprocess.run([LAB, *args, "--out", out], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"census-data: {name}: irqlab-lab failed (exit {p.returncode}):\n{p.stderr}")
        with open(os.path.join(out, "result.json")) as f:
            r = json.load(f)
    c = r["configs"][0]
    keep = ["xen_version", "xen.binary", "xen.tree", "xen.patches", "xen.config", "sched", "vwfi", "bench", "icount", "machine"]
    doc = {
        "lab_run": {
            "command": "scripts/arm-lab.sh " + " ".join(args) + " --out DIR",
            "regenerate": f"python3 scripts/census-data.py {name}",
            "irqlab_commit": commit(),
            "params": {k: v for k, v in c["params"].items() if k in keep},
            "platform": r["meta"].get("platform", {}),
        },
        "census": c["census"],
    }
    path = os.path.join(OUT, f"{name}.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    print(f"census-data: wrote {os.path.relpath(path, ROOT)}")


def main():
    names = sys.argv[1:] or list(RUNS)
    for n in names:
        if n not in RUNS:
            sys.exit(f"census-data: unknown run {n!r}; known: {', '.join(RUNS)}")
    os.makedirs(OUT, exist_ok=True)
    for n in names:
        one(n, RUNS[n])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Regenerates crates/sim/census/lab/*.json: the lab's path census of the Xen paths the models time
(issue 43). Each file holds the census of one lab run and the run that produced it (command,
Xen build, irqlab commit), so a model segment can name its source. Usage, from the repository
root after the setup command:

    python3 scripts/census-data.py            # all runs below, about 10-20 s each
    python3 scripts/census-data.py xen-timer-credit2-trap   # one

Counts are emulation instruction counts under -icount (deterministic), never hardware time.

The `xen-a53v2-*` runs are S3's class of board as QEMU 7.2 has it (issue 42 item 3): a Cortex-A53
with a GICv2 (`--cpu cortex-a53 --gic 2`). Their null-scheduler rows need Xen 4.17 built with
CONFIG_SCHED_NULL (Debian's has none): Debian's xen source package, unpacked with
`dpkg-source -x`, at $XEN_417_SRC (docs/xen-arm-lab.md, "The boards of the seeds"); the
`-src` rows run credit2 on that same build, so null and credit2 are compared on one binary.
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
A53V2 = ["--cpu", "cortex-a53", "--gic", "2"]
# A Xen 4.17 source tree: "{XEN_SRC}" in a run's arguments is $XEN_417_SRC when it runs.
XEN_SRC = ["--xen-src", "{XEN_SRC}", "--xen-config", "EXPERT=y", "--xen-config", "UNSUPPORTED=y", "--xen-config", "SCHED_NULL=y"]
RUNS.update({
    f"xen-a53v2-{bench}-{sched}-{vwfi}": ["xen", "--icount", "--census", *A53V2, "--sched", sched, "--vwfi", vwfi, "--", bench, "--samples", "20"]
    for bench in ["timer", "ipi"]
    for sched in ["credit2", "credit"]
    for vwfi in ["trap", "native"]
})
# The null scheduler runs one vCPU per pCPU: under -icount the lab has one pCPU, so only the timer.
RUNS.update({
    f"xen-a53v2-timer-{sched}-{vwfi}{suffix}": ["xen", "--icount", "--census", *A53V2, *XEN_SRC, "--sched", sched, "--vwfi", vwfi, "--", "timer", "--samples", "20"]
    for (sched, suffix) in [("null", ""), ("credit2", "-src")]
    for vwfi in ["trap", "native"]
})

# KVM/arm64 (Debian's 6.1 kernel, VHE) SGI dispatch by the target vCPU's index in a 64-vCPU VM
# (issue 42 item 4c): the sender (vCPU 0) pinned to the lab's CPU 0, every other vCPU to CPU 1.
# Needs IRQLAB_LAB_IRQLAB (the aarch64 irqlab; scripts/arm-lab.sh builds it).
PIN64 = ",".join(["0"] + ["1"] * 63)
KVM_RUNS = {
    f"kvm-ipi-v64-t{t}": ["kvm", "--icount", "--census", "--", "ipi", "--samples", "10", "--vcpus", "64", "--ipi-target", str(t), "--pin", PIN64]
    for t in [1, 32, 63]
}
RUNS.update(KVM_RUNS)


def commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def xen_src():
    src = os.environ.get("XEN_417_SRC")
    if not src or not os.path.isfile(os.path.join(src, "xen", "Kconfig")):
        sys.exit("census-data: set XEN_417_SRC to a Xen 4.17 source tree (Debian's xen source package, dpkg-source -x; docs/xen-arm-lab.md)")
    return src


def one(name, args, from_dir=None):
    if from_dir:
        # A run made earlier with exactly RUNS[name]'s arguments (the lab records them).
        with open(os.path.join(from_dir, "result.json")) as f:
            r = json.load(f)
        write(name, args, r, "not recorded: packaged from an earlier run (--from); its irqlab is platform's lab.irqlab.sha256")
        return
    run = [xen_src() if a == "{XEN_SRC}" else a for a in args]
    if name in KVM_RUNS and not os.environ.get("IRQLAB_LAB_IRQLAB"):
        sys.exit("census-data: the kvm runs need IRQLAB_LAB_IRQLAB, the aarch64 irqlab (scripts/arm-lab.sh cross-builds it)")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        p = subprocess.run([LAB, *run, "--out", out], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"census-data: {name}: irqlab-lab failed (exit {p.returncode}):\n{p.stderr}")
        with open(os.path.join(out, "result.json")) as f:
            r = json.load(f)
    write(name, args, r, commit())


def write(name, args, r, irqlab_commit):
    c = r["configs"][0]
    keep = ["xen_version", "xen.binary", "xen.tree", "xen.patches", "xen.config", "sched", "vwfi", "bench", "icount", "machine", "cpu", "gic", "vcpus", "ipi_target", "pin"]
    doc = {
        "lab_run": {
            "command": "scripts/arm-lab.sh " + " ".join("$XEN_417_SRC" if a == "{XEN_SRC}" else a for a in args) + " --out DIR",
            "regenerate": f"python3 scripts/census-data.py {name}",
            "irqlab_commit": irqlab_commit,
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
    args = sys.argv[1:]
    from_dir = None
    if "--from" in args:
        # census-data.py NAME --from DIR: package a run already made with NAME's arguments.
        i = args.index("--from")
        if i + 1 >= len(args) or len(args) != 3:
            sys.exit("census-data: usage: census-data.py NAME --from DIR")
        from_dir = args[i + 1]
        args = args[:i] + args[i + 2:]
    names = args or list(RUNS)
    for n in names:
        if n not in RUNS:
            sys.exit(f"census-data: unknown run {n!r}; known: {', '.join(RUNS)}")
    os.makedirs(OUT, exist_ok=True)
    for n in names:
        one(n, RUNS[n], from_dir)


if __name__ == "__main__":
    main()

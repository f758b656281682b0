#!/usr/bin/env python3
"""What direct injection buys in S1 over stall frequency x stall length (docs/xen-gicv4-fio.md).

Runs the shipped `xen-gicv4-fio` scenario for one job and scheduler (default 4k-qd1-nj4, credit2),
direct LPIs off vs on, with `hypervisor.pcpu0_stall_rate_hz` and `hypervisor.pcpu0_stall_us` set
to every pair of the grid, and prints a Markdown table of the p99.9 gain (1 - on/off), the mean
gain and the IOPS gain. Usage:
    scripts/s1_stall_table.py [--irqlab target/release/irqlab] [--completions 300000]
Deterministic: the scenario's seed and device seed are used unchanged.
"""
import argparse, json, os, subprocess, sys, tempfile

p = argparse.ArgumentParser()
p.add_argument("--irqlab", default="target/release/irqlab")
p.add_argument("--completions", type=int, default=300000)
p.add_argument("--job", default="4k-qd1-nj4")
p.add_argument("--scheduler", default="credit2")
p.add_argument("--rates", default="0.3,1,3,10,30,100")
p.add_argument("--lengths", default="100,300,1000,2000,5000")
a = p.parse_args()

scen = subprocess.run([a.irqlab, "scenarios", "show", "xen-gicv4-fio"], capture_output=True, text=True, check=True).stdout
lines = []
for line in scen.splitlines():
    if line.startswith('"workload.job" ='):
        line = f'"workload.job" = ["{a.job}"]'
    elif line.startswith('"hypervisor.scheduler" ='):
        line = f'"hypervisor.scheduler" = ["{a.scheduler}"]'
    lines.append(line)
scen = "\n".join(lines)
# The fit reference names configurations of the full sweep; this grid does not need it.
scen = scen.split("\n[[reference]]")[0] + "\n"

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "s1-grid.toml")
    open(path, "w").write(scen)

    def run(rate, length):
        cmd = [a.irqlab, "sim", path, "--out", os.path.join(d, "out"), "--format", "json", "--config", "xen",
               "--set", f"workload.completions={a.completions}",
               "--set", f"hypervisor.pcpu0_stall_rate_hz={rate}", "--set", f"hypervisor.pcpu0_stall_us={length}"]
        r = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        out = {}
        for c in r["configs"]:
            s = c["classes"]["io"]["summary"]
            out[c["params"]["hypervisor.direct_lpi"]] = (s["p99.9"], s["mean"], c["figures"]["iops"]["value"])
        off, on = out["off"], out["on"]
        return 1 - on[0] / off[0], 1 - on[1] / off[1], on[2] / off[2] - 1

    rates = [float(x) for x in a.rates.split(",")]
    lengths = [float(x) for x in a.lengths.split(",")]
    print(f"{a.job}, {a.scheduler}, {a.completions} completions: p99.9 gain / mean gain / IOPS gain of direct LPIs")
    print()
    print("| stall length \\ rate | " + " | ".join(f"{r:g} Hz" for r in rates) + " |")
    print("|---|" + "---|" * len(rates))
    for L in lengths:
        cells = []
        for r in rates:
            g = run(r, L)
            cells.append(f"{g[0]*100:.0f} % / {g[1]*100:.1f} % / {g[2]*100:+.1f} %")
        print(f"| {L:g} µs | " + " | ".join(cells) + " |", flush=True)

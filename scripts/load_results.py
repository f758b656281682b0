#!/usr/bin/env python3
"""Load irqlab result.json files into pandas and plot latency CDFs.

    pip install pandas hdrhistogram matplotlib
    python3 scripts/load_results.py out/xen-arm-zynq-timer/result.json [more.json ...] [-o cdf.png]

What is in a result.json (schema_version 1):
  meta      scenario, description, kind (predicted | calibrated | measured), seed, platform, knobs
  configs[] name, params {key: value}, seed, classes {class: {unit, summary, histogram}},
            counters {name: int}, figures {name: {value, unit}}, breakdown, notes, error

Each class's `histogram` is an HDR histogram of latencies in nanoseconds: the base64 text of the
standard compressed V2 encoding (zlib-deflated, cookie 0x1c849304), the same format the Java and
Python HdrHistogram libraries exchange. The Python `hdrhistogram` package (module `hdrh`) reads it:

    from hdrh.histogram import HdrHistogram
    h = HdrHistogram.decode(cls["histogram"])
    h.get_value_at_percentile(99.9)          # ns

`summary` has the exact count/min/mean/max/warm_max and the percentiles p50 p90 p99 p99.9 p99.99
(ns) — the same names as the tables and the CSV's `p99.9_us` columns (files written before
2026-11-23 spell the last two p999 and p9999; both are read).

This script builds one DataFrame row per (file, configuration, class) with the parameters,
summary, figures and counters as columns (like result.csv), prints it, and plots each
histogram's CDF on a "nines" axis (p50, p90, p99, p99.9, ... evenly spaced).
"""
import argparse
import json
import math
import sys


def load(paths):
    """DataFrame of every (file, configuration, class) and a dict of decoded histograms."""
    import pandas as pd
    from hdrh.histogram import HdrHistogram

    rows, hists = [], {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        meta = r["meta"]
        for c in r["configs"]:
            base = {"file": path, "scenario": meta["scenario"], "kind": meta["kind"], "seed": meta["seed"],
                    "config": c["name"], "config_seed": c.get("seed"), "error": c.get("error")}
            base.update(c.get("params", {}))
            base.update({f"figure.{k}_{v['unit']}" if v["unit"] else f"figure.{k}": v["value"]
                         for k, v in c.get("figures", {}).items()})
            base.update({f"counter.{k}": v for k, v in c.get("counters", {}).items()})
            for cls, lat in (c.get("classes") or {None: None}).items():
                row = dict(base, **{"class": cls})
                if lat is not None:
                    s = lat["summary"]
                    old = {"p999": "p99.9", "p9999": "p99.99"}
                    row.update({f"{old.get(k, k)}_ns": v for k, v in s.items()
                                if old.get(k, k) in ("count", "min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max", "warm_max")})
                    row["count"] = row.pop("count_ns")
                    hists[(path, c["name"], cls)] = HdrHistogram.decode(lat["histogram"])
                rows.append(row)
    return pd.DataFrame(rows), hists


def cdf_points(h):
    """(latency µs, nines) along the histogram's recorded values."""
    total = h.get_total_count()
    xs, ys, cum = [], [], 0
    cap = max(1.0, math.log10(total)) if total else 1.0
    for item in h.get_recorded_iterator():
        cum += item.count_added_in_this_iter_step
        p = cum / total
        xs.append(h.get_highest_equivalent_value(item.value_iterated_to) / 1000.0)
        ys.append(cap if p >= 1 else min(cap, -math.log10(1 - p)))
    return xs, ys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+", help="result.json files")
    ap.add_argument("-o", "--output", default="cdf.png", help="PNG to write (default cdf.png)")
    a = ap.parse_args()
    df, hists = load(a.results)
    import pandas as pd
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df[[c for c in ["config", "class", "count", "mean_ns", "p50_ns", "p99_ns", "p99.99_ns", "max_ns"] if c in df]])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 5))
    for (path, config, cls), h in hists.items():
        xs, ys = cdf_points(h)
        ax.plot(xs, ys, label=f"{config} / {cls}" + (f" ({path})" if len(a.results) > 1 else ""))
    top = math.ceil(max((max(cdf_points(h)[1], default=1) for h in hists.values()), default=1))
    ticks = [0, math.log10(2)] + list(range(1, top + 1))
    ax.set_yticks(ticks, ["p0", "p50"] + ["p90" if n == 1 else "p99" + ("." + "9" * (n - 2) if n > 2 else "") for n in range(1, top + 1)])
    ax.set_xscale("log")
    ax.set_xlabel("latency (µs, log scale)")
    ax.set_ylabel("percentile")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(f"wrote {a.output}", file=sys.stderr)


if __name__ == "__main__":
    main()

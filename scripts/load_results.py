#!/usr/bin/env python3
"""Load irqlab result.json files into pandas and plot latency CDFs.

    pip install pandas hdrhistogram matplotlib      (Debian: python3-pandas python3-matplotlib)
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

Use it from Python in two lines (from the repository root, or with scripts/ on PYTHONPATH):

    import sys; sys.path.insert(0, "scripts"); from load_results import read_csv, load
    df = read_csv("out/xen-gicv4-fio/result.csv")      # or: df, hists = load(["out/x/result.json"])

result.csv loads with pandas' plain `pd.read_csv` without losing a value: a text cell pandas
would read as missing (the scheduler name `null`, `NA`, `None`, `nan`…) is written with a leading
`'` (`'null`), as is a value that itself begins with `'`. `read_csv` here reads every parameter
column as text and removes that mark (`null` again). Only an empty cell is missing. `load` builds the same
columns from result.json files (latencies in µs, `_us`, as in the CSV) and, when the `hdrh`
module is installed, decodes every histogram.

Run as a script it prints the table and plots each histogram's CDF on a "nines" axis (p50, p90,
p99, p99.9, ... evenly spaced); that part needs matplotlib and hdrhistogram.
"""
import argparse
import json
import math
import sys

# Latency statistics of a class, as the CSV names them (the value columns are NAME_us).
LATENCY_COLUMNS = ("min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max", "warm_max")


def read_csv(path):
    """DataFrame of a result.csv: parameters and names stay text (`null` is a scheduler, not
    NaN); latency (`_us`), figure and counter columns are numbers."""
    import pandas as pd

    df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    # One leading ' marks a text cell pandas would read as missing (docs/results-csv.md).
    unmark = lambda v: v[1:] if isinstance(v, str) and v.startswith("'") else v
    df.columns = [unmark(c) for c in df.columns]
    for col in df.columns:
        numeric = col in ("seed", "config_seed", "count", "clamped_low", "clamped_high") or col.endswith("_us") \
            or col.startswith("figure.") or col.startswith("counter.") or col.startswith("segment.")
        if numeric:
            df[col] = pd.to_numeric(df[col], errors="coerce")
        else:
            df[col] = df[col].map(unmark)
    return df


def load(paths):
    """DataFrame of every (file, configuration, class) of result.json files, with the CSV's
    column names (latencies in µs), and a dict of decoded histograms (empty without `hdrh`)."""
    import pandas as pd
    try:
        from hdrh.histogram import HdrHistogram
    except ImportError:
        HdrHistogram = None

    rows, hists = [], {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        meta = r["meta"]
        for c in r["configs"]:
            base = {"file": path, "scenario": meta["scenario"], "kind": meta["kind"], "seed": meta["seed"],
                    "config": c["name"], "config_seed": c.get("seed"), "error": c.get("error")}
            base.update({k: str(v) for k, v in c.get("params", {}).items()})
            base.update({f"figure.{k}_{v['unit']}" if v["unit"] else f"figure.{k}": v["value"]
                         for k, v in c.get("figures", {}).items()})
            base.update({f"counter.{k}": v for k, v in c.get("counters", {}).items()})
            for cls, lat in (c.get("classes") or {None: None}).items():
                row = dict(base, **{"class": cls})
                if lat is not None:
                    s = lat["summary"]
                    old = {"p999": "p99.9", "p9999": "p99.99"}
                    row["count"] = s.get("count")
                    row.update({f"{old.get(k, k)}_us": v / 1000.0 for k, v in s.items()
                                if old.get(k, k) in LATENCY_COLUMNS and isinstance(v, (int, float))})
                    if HdrHistogram is not None:
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
        print(df[[c for c in ["config", "class", "count", "mean_us", "p50_us", "p99_us", "p99.99_us", "max_us"] if c in df]])
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

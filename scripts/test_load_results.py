#!/usr/bin/env python3
"""Checks scripts/load_results.py with pandas on a result: python3 scripts/test_load_results.py DIR

DIR holds result.json and result.csv of a run whose `hypervisor.scheduler` takes the value
`null` (crates/cli/tests/load_results_py.rs makes one). Exits non-zero on the first failure."""
import sys

sys.path.insert(0, "scripts"); from load_results import read_csv, load  # the documented two lines
d = sys.argv[1]
df = read_csv(f"{d}/result.csv")
configs = df["config"].nunique()
assert df["hypervisor.scheduler"].isna().sum() == 0, "a scheduler name became NaN"
assert set(df["hypervisor.scheduler"]) == {"credit2", "null"}, set(df["hypervisor.scheduler"])
by = df.groupby("hypervisor.scheduler")["mean_us"].count()
assert by.sum() == len(df) and by["null"] == by["credit2"], by  # no row lost by the groupby
assert df["mean_us"].dtype.kind == "f" and (df["mean_us"] > 0).all()
# pandas' plain read_csv loses nothing either: the null scheduler is marked `'null`, not NaN
import pandas as pd
plain = pd.read_csv(f"{d}/result.csv")
assert plain["hypervisor.scheduler"].isna().sum() == 0, "plain read_csv: a scheduler became NaN"
assert set(plain["hypervisor.scheduler"]) == {"credit2", "'null"}, set(plain["hypervisor.scheduler"])
assert len(plain.groupby("hypervisor.scheduler")["mean_us"].count()) == 2
j, _ = load([f"{d}/result.json"])
assert set(j["hypervisor.scheduler"]) == {"credit2", "null"}
m = j.set_index("config")["mean_us"]
c = df.set_index("config")["mean_us"]
for name in m.index:
    assert abs(m[name] - c[name]) < 0.001 + 1e-6 * abs(c[name]), (name, m[name], c[name])  # same µs as the CSV
print(f"ok: {configs} configurations, {len(df)} rows, schedulers {sorted(set(df['hypervisor.scheduler']))}")

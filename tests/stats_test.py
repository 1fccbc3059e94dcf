#!/usr/bin/python3
"""scripts/stats.py against a textbook example: Student's sleep data (R's `sleep`), whose paired
t-test R reports as mean -1.58, 95% interval [-2.4598858, -0.7001142], and the one-sample test
of the first group as 0.75 [-0.5297804, 2.0297804]; and `gbasim sweep --table --against` (whose
intervals are base/stats.h's) on a sweep summary holding the same numbers.

Usage: stats_test.py SCRIPTS_FOLDER GBASIM"""
import math
import sys

sys.path.insert(0, sys.argv[1])
from stats import excludes_zero, mean_interval, paired_difference  # noqa: E402

drug1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
drug2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
failures = []


def check(name, got, want, tolerance=1e-6):
    if not abs(got - want) <= tolerance:
        failures.append(f"{name}: {got} (expected {want})")


d = paired_difference(drug1, drug2)
check("paired mean", d.mean, -1.58, 1e-12)
check("paired low", d.low, -2.4598858)
check("paired high", d.high, -0.7001142)
if not excludes_zero(d):
    failures.append("the paired difference should exclude 0")
m = mean_interval(drug1)
check("one-sample low", m.low, -0.5297804)
check("one-sample high", m.high, 2.0297804)
if excludes_zero(m):
    failures.append("the one-sample interval should hold 0")
if not math.isnan(mean_interval([1.0]).low):
    failures.append("one value should have no interval")
# gbasim sweep --table --against: the sleep data as two settings of an axis, paired by seed.
import csv  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

with tempfile.TemporaryDirectory() as sweep:
    fields = ["point", "seed", "x", "status", "time_to_auc_s", "target_auc", "final_auc",
              "mean_staleness", "dropped_share", "decayed_share", "simulated_time_s"]
    with open(os.path.join(sweep, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for x, values in (("a", drug1), ("b", drug2)):
            for seed, v in enumerate(values, 1):
                w.writerow([f"x-{x}_seed-{seed}", seed, x, "done", 10 + v, 0.75, 10 + v, 0, 0, 0, 1])
    table = [sys.argv[2], "sweep", "--table", "--out", sweep]
    done = subprocess.run(table + ["--against", "x=b"], capture_output=True, text=True)
    row = next((l for l in done.stdout.splitlines() if l.startswith("| a | -1.58")), "")
    if "| -1.58 [-2.46, -0.70] * (n=10) | -1.5800 [-2.4599, -0.7001] * (n=10) |" not in row:
        failures.append(f"sweep --table --against x=b: {done.stdout[-400:]} {done.stderr}")
    done = subprocess.run(table + ["--against", "y=b"], capture_output=True, text=True)
    if done.returncode != 2 or "not an axis" not in done.stderr:
        failures.append(f"sweep --table --against y=b must fail with exit 2: {done.stderr}")
for f in failures:
    print("FAIL:", f)
print("stats_test.py:", "failed" if failures else "ok")
sys.exit(1 if failures else 0)

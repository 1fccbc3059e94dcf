#!/usr/bin/python3
"""`gbasim sweep --table` (whose intervals are base/stats.h's) against a textbook example:
Student's sleep data (R's `sleep`) as two settings of an axis, paired by seed. R's `t.test`
reports the paired difference as -1.58, 95% interval [-2.4598858, -0.7001142], and the one-sample
interval of the first group as 0.75 [-0.5297804, 2.0297804]. An --against naming no axis is
refused with exit 2.

Usage: sweep_table_stats_test.py GBASIM"""
import csv
import os
import subprocess
import sys
import tempfile

drug1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
drug2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
failures = []

with tempfile.TemporaryDirectory() as sweep:
    fields = ["point", "seed", "x", "status", "time_to_auc_s", "target_auc", "final_auc",
              "mean_staleness", "dropped_share", "decayed_share", "simulated_time_s"]
    with open(os.path.join(sweep, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for x, values in (("a", drug1), ("b", drug2)):
            for seed, v in enumerate(values, 1):
                w.writerow([f"x-{x}_seed-{seed}", seed, x, "done", 10 + v, 0.75, 10 + v, 0, 0, 0, 1])
    table = [sys.argv[1], "sweep", "--table", "--out", sweep]
    done = subprocess.run(table + ["--against", "x=b"], capture_output=True, text=True)
    # Each combination's mean over seeds: the first group's, shifted by 10.
    row = next((l for l in done.stdout.splitlines() if l.startswith("| a | 10 |")), "")
    if not row.startswith("| a | 10 | 10.75 [9.47, 12.03] (10/10) | 10.7500 [9.4702, 12.0298] |"):
        failures.append(f"sweep --table, group a: {done.stdout[-600:]} {done.stderr}")
    row = next((l for l in done.stdout.splitlines() if l.startswith("| a | -1.58")), "")
    if "| -1.58 [-2.46, -0.70] * (n=10) | -1.5800 [-2.4599, -0.7001] * (n=10) |" not in row:
        failures.append(f"sweep --table --against x=b: {done.stdout[-400:]} {done.stderr}")
    done = subprocess.run(table + ["--against", "y=b"], capture_output=True, text=True)
    if done.returncode != 2 or "not an axis" not in done.stderr:
        failures.append(f"sweep --table --against y=b must fail with exit 2: {done.stderr}")
for f in failures:
    print("FAIL:", f)
print("sweep_table_stats_test.py:", "failed" if failures else "ok")
sys.exit(1 if failures else 0)

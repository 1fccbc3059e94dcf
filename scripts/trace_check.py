#!/usr/bin/python3
"""Compares a replay's simulated compute times with a PAI trace, read here independently.

Usage: trace_check.py TRACE.csv RESULT.json OFFSET
The trace is read as docs/spec.md says the simulator reads it: rows with an empty or
non-positive batch_time_norm are gaps; a worker's slowdown at an iteration is its time over
the median of the workers sampled there; between samples it is linear, beyond them held.
Simulated worker w replays trace worker w mod T (in order); its step k the iteration
first + OFFSET + k. Its compute time must be nominal_step_s x the sum of those slowdowns.
"""
import bisect
import csv
import json
import statistics
import sys


def read_trace(path):
    times = {}  # iteration -> {worker: time}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            text = row["batch_time_norm"].strip()
            if not text or float(text) <= 0:
                continue
            times.setdefault(int(row["time"]), {})[int(row["worker"])] = float(text)
    series = {}
    for iteration in sorted(times):
        middle = statistics.median(times[iteration].values())
        for worker, t in times[iteration].items():
            xs, ys = series.setdefault(worker, ([], []))
            xs.append(iteration)
            ys.append(t / middle)
    return series


def slowdown_at(xs, ys, x):
    i = bisect.bisect_left(xs, x)
    if i == 0:
        return ys[0]
    if i == len(xs):
        return ys[-1]
    t = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
    return ys[i - 1] + t * (ys[i] - ys[i - 1])


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__.strip())
    series = read_trace(argv[1])
    result = json.load(open(argv[2]))
    offset = float(argv[3])
    ids = sorted(series)
    start = min(xs[0] for xs, _ in series.values()) + offset
    print(f"{'worker':>6} {'trace worker':>12} {'steps':>6} {'simulated mean slowdown':>24} "
          f"{'trace mean slowdown':>20} {'rel. error':>11}")
    worst = 0.0
    for w in result["workers"]:
        trace_worker = ids[w["worker"] % len(ids)]
        xs, ys = series[trace_worker]
        steps = w["steps"]
        expected = sum(slowdown_at(xs, ys, start + k) for k in range(steps))
        simulated = w["compute_s"] / w["nominal_step_s"]
        error = abs(simulated - expected) / expected
        worst = max(worst, error)
        print(f"{w['worker']:>6} {trace_worker:>12} {steps:>6} {simulated / steps:>24.6f} "
              f"{expected / steps:>20.6f} {error:>11.2e}")
    print(f"largest relative error: {worst:.2e} ({'follows the trace' if worst <= 1e-6 else 'DOES NOT follow the trace'})")
    sys.exit(0 if worst <= 1e-6 else 1)


if __name__ == "__main__":
    main(sys.argv)

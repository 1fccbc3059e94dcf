#!/usr/bin/python3
"""gbasim compare on a small spec (FM on a small synthetic set, 4 workers, one 3x slower), 3
seeds, sync, async and GBA at a given learning rate. Its statistics are recomputed from the
runs' own results with scipy's t-tests (`ttest_1samp` through scripts/outputs.py, and
`ttest_rel`), an implementation nobody here wrote, against gbasim's over Boost. Its
recommendation is checked against the documented rule; a second run (every point done: nothing
runs again) must write the same compare.json byte for byte; a bad --modes is refused with exit 2.

Usage: compare_test.py GBASIM PLATFORMS_FOLDER SCRIPTS_FOLDER"""
import json
import math
import os
import subprocess
import sys
import tempfile

from gbasim_run import small_fm_spec

SEEDS = 3
MODES = ["sync", "async", "gba"]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    gbasim, platforms, scripts = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    sys.path.insert(0, scripts)
    from outputs import Interval, mean_interval
    from scipy import stats
    failures = []

    def close(name, got, want):
        if want is None or (isinstance(want, float) and math.isnan(want)):
            if got is not None:
                failures.append(f"{name}: {got} (expected none)")
        elif got is None or abs(got - want) > 1e-9 * max(1.0, abs(want)):
            failures.append(f"{name}: {got} (expected {want})")

    with tempfile.TemporaryDirectory() as work:
        spec = small_fm_spec(os.path.join(work, "small.json"), platforms, samples=16000, workers=4,
                             stragglers={"persistent_fraction": 0.25, "persistent_slowdown": 3,
                                         "noise_cv": 0.1, "transient_rate_per_s": 0},
                             evaluation={"interval_s": 0.005, "target_auc": 0.67})
        out = os.path.join(work, "compare")
        command = [gbasim, "compare", "--spec", spec, "--learning-rate", "1", "--seeds",
                   str(SEEDS), "--modes", ",".join(MODES), "--out", out, "-j", "2"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"FAIL: {' '.join(command)}: exit {done.returncode}: {done.stderr[-2000:]}")
        with open(os.path.join(out, "compare.json"), "rb") as f:
            first = f.read()
        doc = json.loads(first)

        runs = {}
        for mode in MODES:
            times, aucs = [], []
            for seed in range(1, SEEDS + 1):
                with open(os.path.join(out, "points", f"mode-{mode}_seed-{seed}.json")) as f:
                    s = json.load(f)["summary"]
                times.append(s["time_to_auc"] if s["time_to_auc"] is not None else math.nan)
                aucs.append(s["final_auc"] if s["status"] == "completed" else math.nan)
            runs[mode] = (times, aucs)

        def paired(a, b):
            pairs = [(x, y) for x, y in zip(a, b) if not math.isnan(x) and not math.isnan(y)]
            if len(pairs) < 2:
                return mean_interval([x - y for x, y in pairs])
            ci = stats.ttest_rel([p[0] for p in pairs], [p[1] for p in pairs]).confidence_interval()
            return Interval(len(pairs), sum(x - y for x, y in pairs) / len(pairs), ci.low, ci.high)

        def check(name, got, want):
            close(name + ".mean", got["mean"], want.mean if want.n else None)
            close(name + ".low", got["low"], want.low if want.n >= 2 else None)
            close(name + ".high", got["high"], want.high if want.n >= 2 else None)

        by_mode = {m["mode"]: m for m in doc["modes"]}
        for mode in MODES:
            times, aucs = runs[mode]
            got = by_mode[mode]
            check(f"{mode}.time_to_auc", got["time_to_auc"],
                  mean_interval([t for t in times if not math.isnan(t)]))
            check(f"{mode}.final_auc", got["final_auc"],
                  mean_interval([a for a in aucs if not math.isnan(a)]))
            check(f"{mode}.auc_vs_sync", got["auc_vs_sync"], paired(aucs, runs["sync"][1]))
            check(f"{mode}.time_vs_gba", got["time_vs_gba"], paired(times, runs["gba"][0]))
            if got["reached_target"] != sum(not math.isnan(t) for t in times):
                failures.append(f"{mode}: reached_target {got['reached_target']}")

        # The rule: among the modes reaching the target on every seed whose paired final AUC is
        # not below sync's by more than the tolerance, the fastest; sync unless that one is
        # faster than sync beyond the noise.
        tolerance = doc["tolerance"]
        candidates = [m for m in MODES if by_mode[m]["reached_target"] == SEEDS and
                      (m == "sync" or by_mode[m]["auc_vs_sync"]["mean"] >= -tolerance)]
        want = min(candidates, key=lambda m: by_mode[m]["time_to_auc"]["mean"]) if candidates else ""
        if want and want != "sync":
            d = by_mode[want]["time_vs_sync"]
            if not (d["high"] is not None and d["high"] < 0):
                want = "sync"
        if doc["recommendation"] != want:
            failures.append(f"recommendation {doc['recommendation']!r}, the rule gives {want!r}")
        print("compare_test.py: recommendation:", doc["recommendation_text"])

        again = subprocess.run(command, capture_output=True, text=True)
        with open(os.path.join(out, "compare.json"), "rb") as f:
            if again.returncode != 0 or f.read() != first:
                failures.append("a second run did not write the same compare.json")
        if "0 to run" not in again.stderr:
            failures.append("a second run ran points again")

        bad = subprocess.run([gbasim, "compare", "--spec", spec, "--modes", "sync,fast"],
                             capture_output=True, text=True)
        if bad.returncode != 2 or "not 'fast'" not in bad.stderr:
            failures.append(f"--modes sync,fast: exit {bad.returncode}: {bad.stderr.strip()}")
    for f in failures:
        print("FAIL:", f)
    print("compare_test.py:", "failed" if failures else "ok")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

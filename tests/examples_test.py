#!/usr/bin/env python3
"""Examples that cannot rot: each examples/NAME.json runs on a small budget and its summary is
compared with the committed examples/NAME.expected.json (as SimGrid ships each example with
its expected output). A change that moves a number must update the file on purpose:

  examples_test.py GBASIM EXAMPLE.json            check one example
  examples_test.py GBASIM EXAMPLE.json --update   run it and rewrite its expected file

Counts and simulated times must match exactly (the simulator's clock depends on flops and
bytes, not on this machine); AUCs to EXPECT_AUC, time-to-AUC to one evaluation interval, since
float rounding may differ between instruction-set levels (GBASIM_ARCH in CMakeLists.txt)."""
import json
import os
import sys

from gbasim_run import run_summary

# The small budget: a tenth of the default data, small batches, frequent evaluations, and a
# target that the small budget reaches.
SMALL = ["data.train_samples=100000", "data.test_samples=3000", "training.local_batch=64",
         "evaluation.test_samples=0", "evaluation.interval_s=0.05", "evaluation.target_auc=0.65"]
EXACT = ["global_steps", "samples", "gradients"]
EXPECT_AUC = 2e-3
TIME_REL = 1e-9


def run(gbasim, example):
    summary = run_summary(gbasim, example, SMALL)
    keys = EXACT + ["simulated_time", "time_to_auc", "final_auc", "mean_staleness"]
    return {k: summary[k] for k in keys}


def differences(got, want):
    found = []
    for k in EXACT:
        if got[k] != want[k]:
            found.append(f"{k}: {got[k]} (expected {want[k]})")
    if abs(got["simulated_time"] - want["simulated_time"]) > TIME_REL * want["simulated_time"]:
        found.append(f"simulated_time: {got['simulated_time']} (expected {want['simulated_time']})")
    if abs(got["mean_staleness"] - want["mean_staleness"]) > 1e-9:
        found.append(f"mean_staleness: {got['mean_staleness']} (expected {want['mean_staleness']})")
    if abs(got["final_auc"] - want["final_auc"]) > EXPECT_AUC:
        found.append(f"final_auc: {got['final_auc']} (expected {want['final_auc']} +- {EXPECT_AUC})")
    a, b = got["time_to_auc"], want["time_to_auc"]
    if (a is None) != (b is None) or (a is not None and abs(a - b) > 0.05 + 1e-9):
        found.append(f"time_to_auc: {a} (expected {b} +- one interval of 0.05 s)")
    return found


def main():
    args = sys.argv[1:]
    update = "--update" in args
    args = [a for a in args if a != "--update"]
    if len(args) != 2:
        sys.exit(__doc__)
    gbasim, example = args
    expected_path = os.path.splitext(example)[0] + ".expected.json"
    got = run(gbasim, example)
    if update:
        doc = {"command": "tests/examples_test.py build/bin/gbasim " + os.path.relpath(
            example, os.path.join(os.path.dirname(__file__), "..")) + " --update",
               "small_budget": SMALL, "summary": got}
        with open(expected_path, "w") as f:
            f.write(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {expected_path}")
        return 0
    if not os.path.exists(expected_path):
        print(f"FAIL: {example} has no {os.path.basename(expected_path)} (write it with --update)")
        return 1
    with open(expected_path) as f:
        want = json.load(f)["summary"]
    found = differences(got, want)
    for d in found:
        print(f"FAIL: {os.path.basename(example)}: {d}")
    if not found:
        print(f"{os.path.basename(example)}: {got['global_steps']} steps, final AUC "
              f"{got['final_auc']:.4f}, time-to-AUC {got['time_to_auc']} as expected")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

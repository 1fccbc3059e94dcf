#!/usr/bin/env python3
"""gbasim tune finds the optimum a brute-force grid finds: FM with plain SGD on a small
synthetic set (2 workers, sync), where the best learning rate is interior (AUC rises to about
1-2 and falls beyond; at 10 the model diverges). The tuner's choice must lie within a factor of
2 of the best value of a 1/8-decade grid from 0.1 to 5.6 run here with `gbasim run` (same
seeds), its diverged runs must be recorded as such and scored as the worst, and the fragment it
writes must be taken by `gbasim run --with`.

Usage: tune_test.py GBASIM PLATFORMS_FOLDER"""
import json
import os
import subprocess
import sys
import tempfile

from gbasim_run import small_fm_spec

SEEDS = 2


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gbasim, platforms = sys.argv[1], os.path.abspath(sys.argv[2])
    failures = []
    with tempfile.TemporaryDirectory() as work:
        spec = small_fm_spec(os.path.join(work, "tiny.json"), platforms, samples=8000, workers=2,
                             stragglers={"persistent_fraction": 0, "noise_cv": 0,
                                         "transient_rate_per_s": 0},
                             evaluation={"interval_s": 0.01, "target_auc": 0.6})
        out = os.path.join(work, "tune")
        done = subprocess.run([gbasim, "tune", "--spec", spec, "--from", "0.01", "--to", "10",
                               "--seeds", str(SEEDS), "--out", out, "-j", "2"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"FAIL: gbasim tune exited {done.returncode}: {done.stderr[-2000:]}")
        with open(os.path.join(out, "tune.json")) as f:
            tune = json.load(f)
        with open(os.path.join(out, "tuned.json")) as f:
            chosen = json.load(f)["optimizer"]["learning_rate"]
        if chosen != tune["chosen"]:
            failures.append(f"tuned.json says {chosen}, tune.json {tune['chosen']}")
        rows = {r["value"]: r for r in tune["values"]}
        diverged = rows.get(10.0)
        if diverged is None or len(diverged["not_completed"]) != SEEDS or \
                any("diverged" not in n for n in diverged["not_completed"]) or \
                diverged["final_auc"]["mean"] != 0:
            failures.append(f"learning rate 10 should diverge on every seed and score 0: {diverged}")

        # The brute-force grid, 1/8 decade apart.
        def score(lr):
            aucs = []
            for seed in range(1, SEEDS + 1):
                result = os.path.join(work, "r.json")
                run = subprocess.run([gbasim, "run", "--spec", spec, "--set", "training.mode=sync",
                                      "--set", f"optimizer.learning_rate={lr}", "--set",
                                      f"seed={seed}", "-q", "--out", result],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    sys.exit(f"FAIL: gbasim run at {lr}: {run.stderr[-1000:]}")
                with open(result) as f:
                    s = json.load(f)["summary"]
                aucs.append(s["final_auc"] if s["status"] == "completed" else 0.0)
            return sum(aucs) / len(aucs)
        grid = [float(f"{0.1 * 10 ** (i / 8):.3g}") for i in range(15)]
        scores = {lr: score(lr) for lr in grid}
        best = max(scores, key=scores.get)
        print(f"tune_test.py: tuned {chosen}, brute-force best {best} "
              f"({scores[best]:.4f}) of {len(grid)} values from {grid[0]} to {grid[-1]}")
        if not best / 2 <= chosen <= best * 2:
            failures.append(f"tuned {chosen} is not within a factor 2 of the grid's best {best}")

        # The fragment goes into a run's spec.
        result = os.path.join(work, "with.json")
        run = subprocess.run([gbasim, "run", "--spec", spec, "--with", os.path.join(out, "tuned.json"),
                              "--set", "budget.max_samples=640", "-q", "--out", result],
                             capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"gbasim run --with: {run.stderr[-1000:]}")
        else:
            with open(result) as f:
                lr = json.load(f)["spec"]["optimizer"]["learning_rate"]
            if lr != chosen:
                failures.append(f"gbasim run --with gave learning rate {lr}, not {chosen}")
    for f in failures:
        print("FAIL:", f)
    print("tune_test.py:", "failed" if failures else "ok")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

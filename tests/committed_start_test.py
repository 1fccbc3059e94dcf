"""The committed demo results' first snapshots are reproduced to the bit on this machine.

The snapshot at time 0 (before any update) is the synthetic data generator, the model's initial
parameters and the evaluation's forward pass alone: on every CPU of the default build's
instruction set it must come out as committed, whatever the CPU's cache sizes (Eigen's product
blocking is pinned, models/layers.cc) or maker. The next snapshots add the training itself
(gradients, the all-reduce's or the server's sums, Adam with its exact square root,
docs/architecture.md): sync and GBA run on a budget of 300,000 samples, and every snapshot of
theirs before the budget's end must equal the committed run's at the same simulated time, every
field. A failure means the code no longer computes what results/ holds, or the build is not the
default one.

Usage: committed_start_test.py GBASIM REPOSITORY_ROOT"""
import glob
import json
import os
import subprocess
import sys
import tempfile

gbasim, root = sys.argv[1], sys.argv[2]
# One result a mode (results/demo/sweep.json, the sweep that made them, is not one).
committed = sorted(p for p in glob.glob(os.path.join(root, "results", "demo", "*.json"))
                   if os.path.basename(p) != "sweep.json")
if not committed:
    print(f"SKIP: no committed demo results in {os.path.join(root, 'results', 'demo')}")
    sys.exit(77)

with tempfile.TemporaryDirectory() as work:
    out = os.path.join(work, "start.json")
    env = dict(os.environ)
    env.pop("GBASIM_DATA_CACHE", None)  # generated here, not read from a cache
    command = [gbasim, "run", "--spec", os.path.join(root, "examples", "demo.json"), "-q",
               "--set", "budget.max_samples=1", "--out", out]
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)}: {done.stderr.strip()}")
    with open(out) as f:
        now = json.load(f)

failures = 0
start = now["curve"][0]
for path in committed:
    with open(path) as f:
        then = json.load(f)
    name = os.path.relpath(path, root)
    for key in ("test_auc", "test_logloss"):
        ok = then["curve"][0][key] == start[key] and then["curve"][0]["samples"] == 0
        print(f"{'ok' if ok else 'FAIL'} {name}: first snapshot's {key} {start[key]!r}"
              f" (committed {then['curve'][0][key]!r})")
        failures += not ok
    ok = then["summary"]["bayes_auc"] == now["summary"]["bayes_auc"]
    print(f"{'ok' if ok else 'FAIL'} {name}: Bayes AUC {now['summary']['bayes_auc']!r}")
    failures += not ok

# A prefix of the committed sync and GBA runs: the same spec on a smaller budget follows the same
# timeline until the budget is spent, so its snapshots before its last one are the committed ones.
for mode in ("sync", "gba"):
    path = os.path.join(root, "results", "demo", f"{mode}.json")
    if not os.path.exists(path):
        print(f"FAIL: {path} is missing")
        failures += 1
        continue
    with open(path) as f:
        then = {point["time"]: point for point in json.load(f)["curve"]}
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, f"{mode}.json")
        command = [gbasim, "run", "--spec", os.path.join(root, "examples", "demo.json"), "-q",
                   "--set", f"training.mode={mode}", "--set", "budget.max_samples=300000",
                   "--out", out]
        done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"FAIL: {' '.join(command)}: {done.stderr.strip()}")
        with open(out) as f:
            curve = json.load(f)["curve"]
    compared = 0
    for point in curve[1:-1]:  # after the start, before the budget's end
        ok = then.get(point["time"]) == point
        print(f"{'ok' if ok else 'FAIL'} results/demo/{mode}.json: snapshot at "
              f"{point['time']!r} s {point!r} (committed {then.get(point['time'])!r})")
        failures += not ok
        compared += 1
    if compared == 0:
        print(f"FAIL: {mode} on 300,000 samples left no snapshot to compare")
        failures += 1
sys.exit(1 if failures else 0)

#!/usr/bin/python3
"""scripts/industrial_table.py's time-to-AUC rows against numbers worked out by hand, from a
learning sweep of two paired seeds: GBA's speed-up to the target (sync's time over GBA's, paired
by seed), the final-AUC gap, and each mode's step over the epoch (simulated time over global
steps) with GBA's paired speed-up a step; and the note under a section's heading naming the
network model its sweep sets (and none for a sweep that sets none); and bad input (a sweep spec
or summary it cannot read) gives an error naming the file, a non-zero exit and no table.

Usage: industrial_table_test.py SCRIPTS_DIR"""
import csv
import json
import os
import subprocess
import sys
import tempfile

FIELDS = ["point", "seed", "stragglers.persistent_slowdown", "training.mode", "status",
          "time_to_auc_s", "target_auc", "final_auc", "simulated_time_s", "global_steps"]
# seed 1: sync 0.2 s a step, GBA 0.5; seed 2: sync 0.3, GBA 0.3 (200 steps of 60 s).
ROWS = [["sync-1", 1, 1, "sync", "done", 10, 0.75, 0.7650, 20, 100],
        ["sync-2", 2, 1, "sync", "done", 12, 0.75, 0.7660, 30, 100],
        ["gba-1", 1, 1, "gba", "done", 40, 0.75, 0.7600, 50, 100],
        ["gba-2", 2, 1, "gba", "done", 60, 0.75, 0.7590, 60, 200]]
EXPECTED = {"seeds": 2, "both_reached": 2,
            "speedup": (10 / 40 + 12 / 60) / 2,             # 0.225
            "final_auc_gap": ((0.7600 - 0.7650) + (0.7590 - 0.7660)) / 2,  # -0.006
            "step_speedup": (0.2 / 0.5 + 0.3 / 0.3) / 2}    # 0.7

failures = []
with tempfile.TemporaryDirectory() as folder:
    os.makedirs(os.path.join(folder, "runs", "auc-256"))
    with open(os.path.join(folder, "runs", "auc-256", "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(FIELDS)
        w.writerows(ROWS)
    # auc-256 sets its own network model; auc-256-pai, whose runs the section also reads, does not.
    os.makedirs(os.path.join(folder, "sweeps"))
    for name, set_ in (("auc-256", {"cluster.network_model": "LV08", "training.workers": 256}),
                       ("auc-256-pai", {"training.workers": 256})):
        with open(os.path.join(folder, "sweeps", name + ".json"), "w") as f:
            json.dump({"base": "../base.json", "set": set_}, f)
    run = subprocess.run([sys.executable, os.path.join(sys.argv[1], "industrial_table.py"), folder],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"FAIL industrial_table.py exited {run.returncode}: {run.stderr}")
    rows = json.load(open(os.path.join(folder, "summary.json")))["time_to_auc"]
    if len(rows) != 1:
        sys.exit(f"FAIL {len(rows)} time-to-AUC rows, want 1: {rows}")
    for key, want in EXPECTED.items():
        got = rows[0][key]
        ok = abs(got - want) <= 1e-9
        print(f"{'ok  ' if ok else 'FAIL'} {key}: {got} (want {want})")
        if not ok:
            failures.append(key)
    table = open(os.path.join(folder, "table.md")).read()
    # sync's step over the epoch: 250 ms, GBA's 400 ms, in the table's own columns.
    note = "Network model set by the sweep: LV08 (`sweeps/auc-256.json`); the other"
    for cell in ("| 250.0 [", "| 400.0 [", "| 0.700 [", note):
        ok = cell in table
        print(f"{'ok  ' if ok else 'FAIL'} table.md has '{cell}'")
        if not ok:
            failures.append(cell)
    models = json.load(open(os.path.join(folder, "summary.json"))).get("network_models_set")
    ok = models == {"auc-256": "LV08"}
    print(f"{'ok  ' if ok else 'FAIL'} summary.json's network_models_set: {models}")
    if not ok:
        failures.append("network_models_set")

# Bad input: a clear error naming the file (and the line), a non-zero exit, no traceback, and
# no table written.
BAD = [("a sweep spec that is not JSON", "sweeps/severity-256.json", '{"set": {',
        "sweeps/severity-256.json: not valid JSON"),
       ("a sweep spec whose set is a list", "sweeps/severity-256.json", '{"set": []}',
        "sweeps/severity-256.json: key 'set' is not an object"),
       ("a done point whose time is not a number", "runs/auc-256/summary.csv",
        ",".join(FIELDS) + "\nsync-1,1,1,sync,done,10,0.75,0.765,abc,100\n",
        "runs/auc-256/summary.csv, line 2: a done point"),
       ("a done point with an infinite time", "runs/auc-256/summary.csv",
        ",".join(FIELDS) + "\nsync-1,1,1,sync,done,10,0.75,0.765,inf,100\n",
        "runs/auc-256/summary.csv, line 2: simulated_time_s is inf"),
       ("a summary without global_steps", "runs/auc-256/summary.csv",
        "point,seed,status,simulated_time_s\nsync-1,1,done,20\n",
        "runs/auc-256/summary.csv: no column 'global_steps'")]
for what, rel, content, message in BAD:
    with tempfile.TemporaryDirectory() as folder:
        os.makedirs(os.path.join(folder, os.path.dirname(rel)))
        with open(os.path.join(folder, rel), "w") as f:
            f.write(content)
        run = subprocess.run([sys.executable, os.path.join(sys.argv[1], "industrial_table.py"),
                              folder], capture_output=True, text=True)
        ok = (run.returncode != 0 and message in run.stderr and "Traceback" not in run.stderr
              and not os.path.exists(os.path.join(folder, "table.md")))
        print(f"{'ok  ' if ok else 'FAIL'} {what}: exit {run.returncode}, {run.stderr.strip()}")
        if not ok:
            failures.append(what)
sys.exit(f"industrial_table: {len(failures)} failed" if failures else 0)

#!/usr/bin/python3
"""Where a step's time goes before any straggler: every mode of the demo experiment on a
straggler-free cluster (no persistent slowdowns, no noise, no episodes), timing-only, for 100
global steps of G = 4096 samples, on each cluster below. Per mode: the simulated time, and a
worker's mean step split into compute, communication (ring, pulls and pushes) and waiting (for
admission: the step barrier in sync, the token in the server modes); "other" is the rest (the
worker's optimizer work in sync).

Usage: scripts/step_split.py [GBASIM] [OUT_FOLDER]   (defaults: build/bin/gbasim,
results/cluster-model). Writes OUT_FOLDER/table.md and OUT_FOLDER/split.json."""
import json
import os
import subprocess
import sys
import tempfile

MODES = ["sync", "async", "gba", "ssp", "backup"]
QUIET = ["stragglers.persistent_fraction=0", "stragglers.noise_cv=0",
         "stragglers.transient_rate_per_s=0", "simulation.timing_only=true",
         "budget.max_samples=409600", "data.train_samples=409600", "data.test_samples=1000"]
HOSTS = ["cluster.gpus_per_node=1", "cluster.nics_per_node=1", "cluster.allreduce=ring",
         "cluster.embedding_exchange=all_gather"]
CLUSTERS = {
    "16 GPU hosts on a switch (a 25 Gb/s NIC each), ring all-reduce, ring all-gather of the rows":
        HOSTS,
    "2 GPU nodes of 8 (NVLink, 2 x 25 Gb/s NICs a node), hierarchical all-reduce, ring all-gather":
        ["cluster.embedding_exchange=all_gather"],
    "the default: 2 GPU nodes of 8, hierarchical all-reduce, embedding all-to-all": [],
}


def run(gbasim, sets):
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "r.json")
        command = [gbasim, "run", "--spec", "examples/demo.json", "-q", "--out", out]
        for s in QUIET + sets:
            command += ["--set", s]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"step_split.py: {' '.join(command)} failed: {done.stderr.strip()}")
        with open(out) as f:
            return json.load(f)


def split(result):
    workers = result["workers"]
    steps = sum(w["steps"] for w in workers)
    mean = lambda key: sum(w[key] for w in workers) / steps
    step = result["summary"]["simulated_time"] * len(workers) / steps
    parts = {"step_s": step, "compute_s": mean("compute_s"), "comm_s": mean("comm_s"),
             "wait_s": mean("wait_s")}
    parts["other_s"] = step - parts["compute_s"] - parts["comm_s"] - parts["wait_s"]
    return parts


def main():
    gbasim = sys.argv[1] if len(sys.argv) > 1 else "build/bin/gbasim"
    folder = sys.argv[2] if len(sys.argv) > 2 else "results/cluster-model"
    os.makedirs(folder, exist_ok=True)
    rows, doc = [], {}
    for name, sets in CLUSTERS.items():
        doc[name] = {}
        for mode in MODES:
            print(f"step_split.py: {mode} on {name}", file=sys.stderr)
            r = run(gbasim, sets + [f"training.mode={mode}"])
            s = split(r)
            s["simulated_time_s"] = r["summary"]["simulated_time"]
            s["global_steps"] = r["summary"]["global_steps"]
            doc[name][mode] = s
            rows.append(f"| {name} | {mode} | {s['simulated_time_s']:.3f} | {s['global_steps']} | "
                        f"{1e3 * s['step_s']:.2f} | {1e3 * s['compute_s']:.2f} | "
                        f"{1e3 * s['comm_s']:.2f} | {1e3 * s['wait_s']:.2f} | "
                        f"{1e3 * s['other_s']:.2f} |")
    table = ("| cluster | mode | simulated time (s) | global steps | worker step (ms) | compute (ms) "
             "| communication (ms) | waiting (ms) | other (ms) |\n"
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")
    for path, text in [("table.md", table), ("split.json", json.dumps(doc, indent=1) + "\n")]:
        tmp = os.path.join(folder, path + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(folder, path))
    print(table)


if __name__ == "__main__":
    main()

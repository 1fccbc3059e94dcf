#!/usr/bin/python3
"""Where a step's time goes before any straggler: every mode of the demo experiment on a
straggler-free cluster (no persistent slowdowns, no noise, no episodes), timing-only, for 100
global steps of G = 4096 samples, on each cluster below, over SEEDS seeds (1 to SEEDS; a seed
changes the data order, hence the rows each batch moves). Per mode: the simulated time, and a
worker's mean step split into compute, communication (ring, pulls and pushes) and waiting (for
admission: the step barrier in sync, the token in the server modes); "other" is the rest (the
worker's optimizer work in sync). Each is the mean over the seeds with its 95% interval
(scripts/stats.py).

Usage: scripts/step_split.py [--seeds K] [--jobs J] [GBASIM] [OUT_FOLDER]   (defaults: 5 seeds,
2 runs at a time, build/bin/gbasim, results/cluster-model). Writes OUT_FOLDER/table.md and
OUT_FOLDER/split.json."""
import argparse
import concurrent.futures
import json
import os
import sys

from outputs import run_json, write_text
from stats import mean_interval, text

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


PARTS = ["simulated_time_s", "step_s", "compute_s", "comm_s", "wait_s", "other_s"]


def run(gbasim, sets):
    return run_json([gbasim, "run", "--spec", "examples/demo.json", "-q"], QUIET + sets,
                    "step_split.py")


def split(result):
    workers = result["workers"]
    steps = sum(w["steps"] for w in workers)
    mean = lambda key: sum(w[key] for w in workers) / steps
    step = result["summary"]["simulated_time"] * len(workers) / steps
    parts = {"simulated_time_s": result["summary"]["simulated_time"],
             "global_steps": result["summary"]["global_steps"], "step_s": step,
             "compute_s": mean("compute_s"), "comm_s": mean("comm_s"), "wait_s": mean("wait_s")}
    parts["other_s"] = step - parts["compute_s"] - parts["comm_s"] - parts["wait_s"]
    return parts


def cell(values, scale, digits):
    """'mean [low, high]' of `values` times `scale` (scripts/stats.py)."""
    return text(mean_interval([scale * v for v in values]), digits)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds 1 to K (default 5)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument("gbasim", nargs="?", default="build/bin/gbasim")
    parser.add_argument("folder", nargs="?", default="results/cluster-model")
    args = parser.parse_args()
    if args.seeds < 1 or args.jobs < 1:
        parser.error("--seeds and --jobs must be at least 1")
    seeds = list(range(1, args.seeds + 1))
    os.makedirs(args.folder, exist_ok=True)
    points = [(name, mode, seed) for name in CLUSTERS for mode in MODES for seed in seeds]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {p: pool.submit(run, args.gbasim, CLUSTERS[p[0]] +
                                  [f"training.mode={p[1]}", f"seed={p[2]}"]) for p in points}
        done = 0
        results = {}
        for p in points:
            results[p] = split(futures[p].result())
            done += 1
            print(f"step_split.py: {done}/{len(points)}: {p[1]} seed {p[2]} on {p[0]}",
                  file=sys.stderr)
    rows, doc = [], {}
    for name in CLUSTERS:
        doc[name] = {}
        for mode in MODES:
            runs = [results[(name, mode, seed)] for seed in seeds]
            entry = {"seeds": seeds, "global_steps": [r["global_steps"] for r in runs]}
            for key in PARTS:
                m = mean_interval([r[key] for r in runs])
                entry[key] = {"mean": m.mean, "low": m.low, "high": m.high,
                              "per_seed": [r[key] for r in runs]}
            doc[name][mode] = entry
            steps = sorted(set(entry["global_steps"]))
            steps_text = str(steps[0]) if len(steps) == 1 else f"{steps[0]}-{steps[-1]}"
            rows.append(f"| {name} | {mode} | {cell([r['simulated_time_s'] for r in runs], 1, 3)} | "
                        f"{steps_text} | " +
                        " | ".join(cell([r[k] for r in runs], 1e3, 2) for k in PARTS[1:]) + " |")
    table = (f"Mean over seeds {seeds[0]} to {seeds[-1]} [95% interval] (`split.json` has each "
             "seed's value).\n\n"
             "| cluster | mode | simulated time (s) | global steps | worker step (ms) | compute (ms) "
             "| communication (ms) | waiting (ms) | other (ms) |\n"
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")
    write_text(os.path.join(args.folder, "table.md"), table)
    write_text(os.path.join(args.folder, "split.json"), json.dumps(doc, indent=1) + "\n")
    print(table)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Where a step's time goes before any straggler: the table of results/cluster-model/. Its three
sweeps (FOLDER/sweeps/*.json, run by `scripts/reproduce.sh cluster-model` into FOLDER/runs/) run every
mode of the demo experiment on a straggler-free cluster (no persistent slowdowns, no noise, no
episodes), timing-only, for one epoch of the demo's data (489 global steps of G = 4096
samples), on one cluster each, over seeds 1 to 5 (a seed changes the data order, hence the rows
each batch moves). Per mode: the simulated time, and a worker's mean step split into compute,
communication (ring, pulls and pushes) and waiting (for admission: the step barrier in sync, the
token in the server modes); "other" is the rest (the worker's optimizer work in sync). Each is the
mean over the seeds with its 95% interval (scipy's, through scripts/outputs.py).

Usage: scripts/step_split.py [FOLDER]   (default results/cluster-model). Reads the sweeps' points;
writes FOLDER/table.md and FOLDER/split.json. `bash scripts/reproduce.sh cluster-model` runs the
sweeps, then this."""
import argparse
import csv
import json
import os
import sys

from outputs import mean_interval, text, write_text

MODES = ["sync", "async", "gba", "ssp", "backup"]
# The table's label of each sweep of FOLDER/sweeps/, in the table's order.
CLUSTERS = {
    "1-hosts":
        "16 GPU hosts on a switch (a 25 Gb/s NIC each), ring all-reduce, ring all-gather of the rows",
    "2-nodes-all-gather":
        "2 GPU nodes of 8 (NVLink, 2 x 25 Gb/s NICs a node), NCCL's all-reduce, ring all-gather",
    "3-nodes-all-to-all": "the default: 2 GPU nodes of 8, NCCL's all-reduce, embedding all-to-all",
}


PARTS = ["simulated_time_s", "step_s", "compute_s", "comm_s", "wait_s", "other_s"]


def load_sweep(folder, sweep):
    """{(mode, seed): result} of the sweep's finished points; ends the script naming what is
    missing or failed."""
    runs = os.path.join(folder, "runs", sweep)
    try:
        with open(os.path.join(runs, "summary.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"step_split.py: {e}; run `bash scripts/reproduce.sh cluster-model` first")
    results = {}
    for row in rows:
        if row.get("status") != "done":
            sys.exit(f"step_split.py: {runs}/summary.csv: point {row.get('point')} is "
                     f"{row.get('status')} ({row.get('error') or 'no result'})")
        with open(os.path.join(runs, "points", row["point"] + ".json")) as f:
            results[(row["training.mode"], int(row["seed"]))] = json.load(f)
    return results


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
    """'mean [low, high]' of `values` times `scale`."""
    return text(mean_interval([scale * v for v in values]), digits)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default="results/cluster-model")
    args = parser.parse_args()
    results = {}
    for sweep in CLUSTERS:
        for (mode, seed), result in load_sweep(args.folder, sweep).items():
            results[(CLUSTERS[sweep], mode, seed)] = split(result)
    seeds = sorted({seed for (_, _, seed) in results})
    rows, doc = [], {}
    for name in CLUSTERS.values():
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

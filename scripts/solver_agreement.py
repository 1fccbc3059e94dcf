#!/usr/bin/env python3
"""The fluid network model against SimGrid's (cluster.network_solver, docs/cluster.md "Two
network models"): the same timing-only runs of the demo spec under both, and how far apart they
end. A cell agrees when the simulated time for the budget is within 2% (--time-tolerance) and the
mean staleness within 5% (or both under 0.05 steps).

Grids:
  test  every mode at 16, 64 and 256 workers on three clusters (hosts with their own NIC on a
        star, the demo's GPU nodes, a 2:1 oversubscribed fat-tree), 2 shards, 10 steps a
        worker; the one-queue server at 64 workers, 20 steps; sync on NCCL's collectives
        (allreduce "nccl", CM02) on the GPU nodes at 64 workers: what CTest runs (about 2
        minutes)
  full  the same with 20 steps a worker, each cluster's GBA and async at 64 workers on 8
        shards, and GBA and async at 1,024 workers on 2 shards (10 steps a worker, the star and
        the GPU nodes); results/network-solvers/

Usage: solver_agreement.py GBASIM SPEC [--grid test|full] [--out DIR] [--jobs J] [--check]
                           [--time-tolerance T]
  --out DIR  writes DIR/agreement.json (every run's figures) and DIR/table.md
  --check    exits 1 when a cell does not agree
  --time-tolerance T  the simulated times' largest relative difference that agrees (0.02)
Only Python's standard library."""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

STALENESS_TOLERANCE = 0.05
STALENESS_FLOOR = 0.05  # steps: below this in both, staleness agrees

# Every cluster runs LV08 with the former latency estimates, as results/network-solvers/ was
# made, whatever platforms/gpu-nodes.json now says (CM02, NCCL's algorithms, measured latencies).
FORMER = ["cluster.network_model=LV08", "cluster.intra_node_latency=2e-6",
          "cluster.gpu_nic_latency=1e-6", "cluster.nic_latency=1e-5"]
CLUSTERS = {
    "star": FORMER + ["cluster.gpus_per_node=1", "cluster.nics_per_node=1",
                      "cluster.allreduce=ring", "cluster.embedding_exchange=all_gather"],
    "gpu-nodes": FORMER + ["cluster.allreduce=hierarchical"],  # platforms/gpu-nodes.json's nodes
    "fat-tree-2:1": FORMER + ["cluster.gpus_per_node=1", "cluster.nics_per_node=1",
                              "cluster.allreduce=ring", "cluster.embedding_exchange=all_gather",
                              "cluster.topology=fat_tree", "cluster.fat_tree.oversubscription=2"],
}
MODES = ["sync", "gba", "async", "ssp", "backup"]


def cells(grid):
    """(cluster, mode, workers, shards, steps, extra sets) of the grid."""
    steps = 10 if grid == "test" else 20
    out = []
    for cluster in CLUSTERS:
        for workers in [16, 64, 256]:
            for mode in MODES:
                out.append((cluster, mode, workers, 2, steps, []))
        # 20 steps in both grids: in the first rounds every worker's messages reach the one
        # queue at the same instants, the two engines order such ties differently, and over 10
        # steps that alone moves mean staleness by up to 7% (the fat-tree; 2% at 20 steps).
        out.append((cluster, "gba", 64, 1, 20, ["cluster.server_model=one_queue"]))
        if grid == "full":
            for mode in ["gba", "async"]:
                out.append((cluster, mode, 64, 8, steps, []))
    # Sync on NCCL's collectives (allreduce "nccl": its all-reduce and ring all-gather as
    # streams of every channel at once), under CM02 as it is meant to run.
    out.append(("gpu-nodes", "sync", 64, 2, steps,
                ["cluster.allreduce=nccl", "cluster.network_model=CM02",
                 "cluster.embedding_exchange=all_gather"]))
    if grid == "full":  # SimGrid's model takes minutes a run here: 10 steps, two clusters
        for cluster in ["star", "gpu-nodes"]:
            for mode in ["gba", "async"]:
                out.append((cluster, mode, 1024, 2, 10, []))
    return out


def run(gbasim, spec, cell, solver):
    cluster, mode, workers, shards, steps, extra = cell
    sets = CLUSTERS[cluster] + extra + [
        f"training.mode={mode}", f"training.workers={workers}", f"cluster.ps_shards={shards}",
        "simulation.timing_only=true", f"budget.max_samples={workers * 256 * steps}",
        f"data.train_samples={max(workers * 256, 50000)}", "data.test_samples=1000",
        f"cluster.network_solver={solver}"]
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "out.json")
        command = [gbasim, "run", "--spec", spec, "-q", "--out", out]
        for s in sets:
            command += ["--set", s]
        began = time.monotonic()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - began
        if done.returncode != 0:
            sys.exit(f"FAIL: {' '.join(command)}: {done.stderr.strip()}")
        with open(out) as f:
            summary = json.load(f)["summary"]
    return {"simulated_time": summary["simulated_time"],
            "mean_staleness": summary["mean_staleness"],
            "global_steps": summary["global_steps"], "wall_s": round(wall, 2)}


def label(cell):
    cluster, mode, workers, shards, steps, extra = cell
    note = ""
    if "cluster.server_model=one_queue" in extra:
        note = " (one_queue)"
    elif "cluster.allreduce=nccl" in extra:
        note = " (nccl, CM02)"
    return (f"{cluster} | {mode}{note} | {workers} | {shards} | "
            f"{steps}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gbasim")
    parser.add_argument("spec")
    parser.add_argument("--grid", choices=["test", "full"], default="test")
    parser.add_argument("--out")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--time-tolerance", type=float, default=0.02)
    args = parser.parse_args()
    grid = cells(args.grid)
    jobs = [(cell, solver) for cell in grid for solver in ["simgrid", "fluid"]]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda job: run(args.gbasim, args.spec, *job), jobs))
    rows, records, failures = [], [], 0
    for i, cell in enumerate(grid):
        a, b = results[2 * i], results[2 * i + 1]
        dt = b["simulated_time"] / a["simulated_time"] - 1.0
        sa, sb = a["mean_staleness"], b["mean_staleness"]
        ds = 0.0 if max(sa, sb) < STALENESS_FLOOR else sb / sa - 1.0 if sa > 0 else float("inf")
        ok = abs(dt) <= args.time_tolerance and abs(ds) <= STALENESS_TOLERANCE
        failures += not ok
        rows.append(f"| {label(cell)} | {a['simulated_time']:.4f} | {b['simulated_time']:.4f} | "
                    f"{100 * dt:+.2f}% | {sa:.3f} | {sb:.3f} | {100 * ds:+.1f}% | "
                    f"{a['wall_s']:.1f} | {b['wall_s']:.1f} | {'yes' if ok else 'NO'} |")
        records.append({"cluster": cell[0], "mode": cell[1], "workers": cell[2],
                        "shards": cell[3], "steps_a_worker": cell[4], "sets": cell[5],
                        "simgrid": a, "fluid": b, "agrees": ok})
    header = ("| cluster | mode | workers | shards | steps a worker | simulated s, SimGrid | "
              "simulated s, fluid | difference | staleness, SimGrid | staleness, fluid | "
              "difference | wall s, SimGrid | wall s, fluid | agrees |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    table = header + "\n" + "\n".join(rows) + "\n"
    print(table)
    print(f"{len(grid) - failures} of {len(grid)} cells agree (simulated time within "
          f"{100 * args.time_tolerance:g}%, mean staleness within {100 * STALENESS_TOLERANCE:.0f}%)")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for name, text in [("table.md", table),
                           ("agreement.json", json.dumps(records, indent=1) + "\n")]:
            path = os.path.join(args.out, name)
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.replace(path + ".tmp", path)
    if args.check and failures:
        sys.exit(1)


if __name__ == "__main__":
    main()

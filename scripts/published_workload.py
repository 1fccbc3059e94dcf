#!/usr/bin/python3
"""The dlrm-dcnv2 workload on DGX H100 nodes against MLPerf Training's published throughput
(results/published-workload/). Sync training of the preset at each published run's nodes and
global batch on platforms/dgx-h100.json, timing only; simulated samples a second against the
published ones.

One number is fitted: the sustained flop/s of a GPU on the model (cluster.worker_speed), so that
the one-node run matches its published throughput. The 8- and 16-node runs, and an 8 x A100 node
at the same share of its peak, are then predictions.

Usage: scripts/published_workload.py [GBASIM]   (default build/bin/gbasim)"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outputs import run_json, write_text  # noqa: E402

FOLDER = "results/published-workload"
TOLERANCE = 0.25
STEPS = 20  # global steps a run
# MLPerf Training v4.0, NVIDIA's dlrm_dcnv2 results (mlcommons/training_results_v4.0, NVIDIA/
# results/eos*_ngc24.04_merlin_hugectr/dlrm_dcnv2/result_*.txt): the median over 10 runs of the
# samples a second between evaluations (the logs' epoch fractions x 4,195,197,692 samples over
# the wall time from each eval_stop to the next eval_start; the logs' own "throughput", which
# counts the evaluations' pauses, in brackets). Global batches from the same logs.
PUBLISHED = [
    # name, nodes, GPUs a node, global batch, samples/s between evaluations, logged throughput
    ("1 x DGX H100", 1, 55296, 15.65e6, 13.74e6),
    ("8 x DGX H100", 8, 135168, 56.04e6, 47.97e6),
    ("16 x DGX H100", 16, 135168, 74.19e6, 65.85e6),
]
# MLPerf Training v3.0, Dell XE9680 with 8 A100-SXM-80GB (training_results_v3.0, Dell/results/
# XE9680x8A100-SXM-80GB/dlrm_dcnv2/): NVLink 3 through NVSwitch, 600 GB/s both ways a GPU
# (3e11 bytes/s each way), PCIe 4.0 x16 to the NICs (31.5 GB/s).
A100 = ("1 x 8 A100 (Dell XE9680)", 1, 55296, 7.73e6, 6.39e6)
A100_SETS = ["cluster.intra_node_bandwidth=3e11", "cluster.gpu_nic_bandwidth=3.15e10",
             "cluster.gpu_generation=ampere"]
# Dense tensor peaks (NVIDIA's datasheets): H100 SXM 989.5 TFLOP/s, A100 SXM 312 TFLOP/s (FP16).
PEAK_H100, PEAK_A100 = 989.5e12, 312e12
# NVIDIA's submissions train in mixed precision (config_DGXH100_*.sh: USE_MIXED_PRECISION=true):
# 2 bytes a value on the wire.
COMMON = ["workload.preset=dlrm-dcnv2", "workload.value_bytes=2", "training.mode=sync",
          "training.local_batch=16", "simulation.timing_only=true",
          "data.train_samples=100000", "data.test_samples=1000",
          "stragglers.persistent_fraction=0", "stragglers.noise_cv=0",
          "stragglers.transient_rate_per_s=0"]


def spec_file(work):
    path = os.path.join(work, "spec.json")
    with open(path, "w") as f:
        json.dump({"cluster": {"platform": os.path.abspath("platforms/dgx-h100.json")}}, f)
    return path


def run(gbasim, work, nodes, global_batch, speed, extra=()):
    workers = 8 * nodes
    sets = COMMON + [f"training.workers={workers}",
                     f"workload.local_batch={global_batch // workers}",
                     f"cluster.worker_speed={speed!r}",
                     f"budget.max_samples={workers * 16 * STEPS}"] + list(extra)
    result = run_json([gbasim, "run", "--spec", spec_file(work), "-q"], sets,
                      "published_workload.py")
    steps = result["summary"]["global_steps"]
    time = result["summary"]["simulated_time"]
    compute = result["workers"][0]["nominal_step_s"]
    return {"step_s": time / steps, "compute_s": compute,
            "samples_per_s": global_batch * steps / time}


def main():
    gbasim = sys.argv[1] if len(sys.argv) > 1 else "build/bin/gbasim"
    rows = []
    with tempfile.TemporaryDirectory() as work:
        # Fit: the step's communication does not depend on the speed; solve for the speed at
        # which compute + communication is the published step.
        name, nodes, batch, measured, _ = PUBLISHED[0]
        probe_speed = 1.8e14
        probe = run(gbasim, work, nodes, batch, probe_speed)
        other = probe["step_s"] - probe["compute_s"]
        target = batch / measured
        flops = probe["compute_s"] * probe_speed
        speed = flops / (target - other)
        for name, nodes, batch, measured, logged in PUBLISHED:
            r = run(gbasim, work, nodes, batch, speed)
            rows.append((name, nodes, batch, measured, logged, r, name == PUBLISHED[0][0]))
        name, nodes, batch, measured, logged = A100
        r = run(gbasim, work, nodes, batch, speed * PEAK_A100 / PEAK_H100, A100_SETS)
        rows.append((name, nodes, batch, measured, logged, r, False))

    lines = [
        "| run | GPUs | global batch | published samples/s (logged) | simulated samples/s | "
        "simulated / published | step: compute, other (ms) | within 25% |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    doc = {"fitted_worker_speed": speed, "share_of_h100_peak": speed / PEAK_H100, "runs": []}
    for name, nodes, batch, measured, logged, r, fitted in rows:
        ratio = r["samples_per_s"] / measured
        within = abs(ratio - 1.0) <= TOLERANCE
        note = "fitted" if fitted else ("yes" if within else "no")
        lines.append(
            f"| {name} | {8 * nodes} | {batch:,} | {measured / 1e6:.2f} M ({logged / 1e6:.2f} M) | "
            f"{r['samples_per_s'] / 1e6:.2f} M | {ratio:.3f} | {r['compute_s'] * 1e3:.3f}, "
            f"{(r['step_s'] - r['compute_s']) * 1e3:.3f} | {note} |")
        doc["runs"].append({"run": name, "gpus": 8 * nodes, "global_batch": batch,
                            "published_samples_per_s": measured, "logged_samples_per_s": logged,
                            "simulated_samples_per_s": r["samples_per_s"],
                            "step_s": r["step_s"], "compute_s": r["compute_s"],
                            "fitted": fitted, "within_25_percent": within})
    table = "\n".join(lines) + "\n"
    header = (f"Fitted GPU speed on the model: {speed:.4g} flop/s "
              f"({100 * speed / PEAK_H100:.1f}% of the H100's dense FP16 peak).\n\n")
    print(header + table, end="")
    write_text(os.path.join(FOLDER, "table.md"), header + table)
    write_text(os.path.join(FOLDER, "comparison.json"), json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()

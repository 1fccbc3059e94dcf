"""simulation.timing_only against the real run: without the model's math, the same spec must
give the same simulated timeline, to the bit, since message sizes come from each batch's rows
(counted without sorting in timing-only runs) and nothing else the timeline depends on reads a
gradient's values. Every worker's step ends, the global steps, the staleness histogram and the
simulated time are compared, in every mode, on the default GPU nodes (the rows' all-to-all),
with the hybrid exchange (rows on 3 server shards), and with the one-queue server.

Usage: timing_only_test.py GBASIM EXAMPLES_DIR"""
import os
import sys

from gbasim_run import run_result

gbasim, examples = sys.argv[1], sys.argv[2]
spec = os.path.join(examples, "demo.json")
workers = 8
base = [f"training.workers={workers}", f"budget.max_samples={workers * 256 * 8}",
        "data.train_samples=40000", "data.test_samples=2000", "evaluation.interval_s=0.01"]
cases = [[f"training.mode={m}"] for m in ("sync", "gba", "async", "ssp", "backup")]
cases += [["training.mode=sync", "cluster.embedding_exchange=hybrid", "cluster.ps_shards=3"],
          ["training.mode=gba", "cluster.ps_shards=3", "cost.merge_flops_per_value=2"],
          ["training.mode=gba", "cluster.server_model=one_queue", "cluster.ps_shards=1"]]
failures = 0
for case in cases:
    real = run_result(gbasim, spec, base + case)
    timing = run_result(gbasim, spec, base + case + ["simulation.timing_only=true"])
    checks = {
        "step ends": ([w["step_ends"] for w in real["workers"]],
                      [w["step_ends"] for w in timing["workers"]]),
        "global steps": (real["summary"]["global_steps"], timing["summary"]["global_steps"]),
        "staleness": (real["staleness_histogram"], timing["staleness_histogram"]),
        "simulated time": (real["summary"]["simulated_time"], timing["summary"]["simulated_time"]),
    }
    steps = sum(len(w["step_ends"]) for w in real["workers"])
    if steps < workers * 4:
        print(f"FAIL {' '.join(case)}: only {steps} worker steps; the case tests little")
        failures += 1
    for what, (a, b) in checks.items():
        if a != b:
            print(f"FAIL {' '.join(case)}: {what} differ: real {str(a)[:200]} timing-only {str(b)[:200]}")
            failures += 1
    print(f"{'ok' if failures == 0 else '--'} {' '.join(case)}: {steps} worker steps, "
          f"{real['summary']['simulated_time']:.6f} s simulated")
sys.exit(1 if failures else 0)

#!/usr/bin/env python3
"""The aggregate ring (one message a worker a step, cluster.ring_model "aggregate") against the
message-level ring (a message a pass): sync in timing-only runs of the demo spec, straggler-free
and with a quarter of the workers 3x slower, under SimGrid's CM02 and LV08, at 2, 8 and 64
workers, on hosts on a star (one GPU each, the ring all-reduce and the ring all-gather of the
embedding rows, whatever the demo spec's own cluster). The simulated times must agree within 2%
and the steps exactly.

The same for the aggregate all-to-all of the embedding rows (cluster.all_to_all_model
"aggregate": two messages a worker) against every pair at once: sync on the demo's own cluster
(GPU nodes of 8, hierarchical all-reduce, the rows' all-to-all) with 2 and 4 nodes, and 16 hosts
on a star, under CM02 and LV08, with and without the stragglers; and 8 nodes, LV08, no stragglers.

Usage: collectives_test.py GBASIM DEMO_SPEC"""
import sys

from gbasim_run import run_summary

TOLERANCE = 0.02


def simulated(gbasim, spec, workers, network, straggler_share, ring, cluster=None):
    steps = 10
    if cluster is None:
        cluster = ["cluster.gpus_per_node=1", "cluster.nics_per_node=1", "cluster.allreduce=ring",
                   "cluster.embedding_exchange=all_gather", f"cluster.ring_model={ring}"]
    sets = cluster + [
            "training.mode=sync", "simulation.timing_only=true", f"training.workers={workers}",
            f"budget.max_samples={workers * 256 * steps}",
            f"data.train_samples={workers * 256 * steps}", "data.test_samples=1000",
            "stragglers.noise_cv=0", "stragglers.transient_rate_per_s=0",
            f"stragglers.persistent_fraction={straggler_share}", "stragglers.persistent_slowdown=3",
            f"cluster.network_model={network}"]
    summary = run_summary(gbasim, spec, sets)
    return summary["simulated_time"], summary["global_steps"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gbasim, spec = sys.argv[1:]
    failures = 0
    for network in ["CM02", "LV08"]:
        for workers in [2, 8, 64]:
            for share in [0, 0.25]:
                t_msg, s_msg = simulated(gbasim, spec, workers, network, share, "messages")
                t_agg, s_agg = simulated(gbasim, spec, workers, network, share, "aggregate")
                error = (t_agg - t_msg) / t_msg
                ok = abs(error) <= TOLERANCE and s_msg == s_agg
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {network} {workers:3d} workers, stragglers "
                      f"{share}: messages {t_msg:.6f} s, aggregate {t_agg:.6f} s "
                      f"({100 * error:+.3f}%), steps {s_msg} / {s_agg}")
    cases = 12
    for network in ["CM02", "LV08"]:
        for workers, nodes in [(16, True), (32, True), (16, False), (64, True)]:
            for share in [0, 0.25]:
                if workers == 64 and (network == "CM02" or share > 0):
                    continue  # every pair at once at 64 workers takes a minute a run
                cluster = (["cluster.ring_model=messages"] if nodes else
                           ["cluster.gpus_per_node=1", "cluster.nics_per_node=1",
                            "cluster.allreduce=ring", "cluster.ring_model=messages"]) + [
                               "cluster.embedding_exchange=all_to_all"]
                t_msg, s_msg = simulated(gbasim, spec, workers, network, share, None,
                                         cluster + ["cluster.all_to_all_model=messages"])
                t_agg, s_agg = simulated(gbasim, spec, workers, network, share, None,
                                         cluster + ["cluster.all_to_all_model=aggregate"])
                error = (t_agg - t_msg) / t_msg
                ok = abs(error) <= TOLERANCE and s_msg == s_agg
                failures += not ok
                cases += 1
                where = f"nodes of 8" if nodes else "hosts on a star"
                print(f"{'ok  ' if ok else 'FAIL'} all-to-all, {network} {workers:3d} workers ({where}), "
                      f"stragglers {share}: messages {t_msg:.6f} s, aggregate {t_agg:.6f} s "
                      f"({100 * error:+.3f}%), steps {s_msg} / {s_agg}")
    print(f"collectives: {failures} of {cases} configurations outside {100 * TOLERANCE:.0f}%")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

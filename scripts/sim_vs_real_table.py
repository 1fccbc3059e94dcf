"""The table of scripts/sim_vs_real.sh, from the results it left in OUT_DIR/runs/.

Usage: /usr/bin/python3 scripts/sim_vs_real_table.py OUT_DIR ROUNDS

Per mode: the median over the rounds of the real time to the target AUC (interpolated
between snapshots), the simulated one (the median over the simulations of the mode, one per
order of service: runs/sim-MODE.json or runs/sim-MODE-SEED.json), the relative error, the
final AUCs, the spread of the
real runs, the samples applied by then (time to AUC = samples to AUC x time per sample: the
first is how well the rule learns, the second how fast the cluster runs), and the mean
staleness of the gradients applied, real (median) and simulated.
Writes OUT_DIR/table.csv and OUT_DIR/runs.csv (every real run) and prints the table.
"""

import csv
import glob
import io
import json
import os
import re
import statistics
import sys


def at_target(doc, key):
    """The curve's `key` ("time" or "samples") when test AUC first reaches the target,
    interpolated linearly between the snapshots around it (the summary's time_to_auc is the
    first snapshot at or above it, on the grid of evaluation.interval_s); None if never."""
    target = doc["summary"]["target_auc"]
    curve = doc["curve"]
    for before, after in zip(curve, curve[1:]):
        if after["test_auc"] >= target > before["test_auc"]:
            f = (target - before["test_auc"]) / (after["test_auc"] - before["test_auc"])
            return before[key] + f * (after[key] - before[key])
    return None


def write_csv(path, rows):
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    with open(path + ".tmp", "w") as f:
        f.write(text.getvalue())
    os.replace(path + ".tmp", path)
    return text.getvalue()


def fmt(x, digits=3):
    return "" if x is None else f"{x:.{digits}f}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    out, rounds = sys.argv[1], int(sys.argv[2])
    runs = [["round", "mode", "real_time_to_auc_s", "real_samples_to_auc", "real_final_auc",
             "real_run_time_s", "real_mean_staleness"]]
    table = [["mode", "real_time_to_auc_s", "sim_time_to_auc_s", "rel_error", "real_final_auc",
              "sim_final_auc", "real_runs", "real_time_to_auc_quartiles_s",
              "real_time_to_auc_range_s", "real_samples_to_auc", "sim_samples_to_auc",
              "real_mean_staleness", "sim_mean_staleness"]]
    target = None
    worst = 0.0
    # gba-queue: GBA with data.sharding "queue" (the server hands out the batches), where the
    # folder has it (older measurements do not).
    modes = ["sync", "async", "gba"] + (
        ["gba-queue"] if glob.glob(f"{out}/runs/real-gba-queue-*.json") else [])
    for mode in modes:
        paths = sorted(p for p in glob.glob(f"{out}/runs/sim-{mode}*.json")
                       if re.fullmatch(rf"sim-{re.escape(mode)}(-\d+)?\.json", os.path.basename(p)))
        if not paths:
            sys.exit(f"sim_vs_real_table.py: no simulation of {mode} in {out}/runs/")
        sims = [json.load(open(p)) for p in paths]
        reached = [t for t in (at_target(d, "time") for d in sims) if t is not None]
        s = statistics.median(reached) if len(reached) * 2 > len(sims) else None

        def sim_median(value):
            values = [v for v in (value(d) for d in sims) if v is not None]
            return statistics.median(values) if values else None
        times, samples, aucs, staleness = [], [], [], []
        for k in range(1, rounds + 1):
            real = json.load(open(f"{out}/runs/real-{mode}-{k}.json"))
            target = real["summary"]["target_auc"]
            r = at_target(real, "time")
            n = at_target(real, "samples")
            runs.append([k, mode, fmt(r), fmt(n, 0), fmt(real["summary"]["final_auc"], 4),
                         fmt(real["summary"]["run_time"]), fmt(real["summary"]["mean_staleness"], 2)])
            if r is not None:
                times.append(r)
                samples.append(n)
            aucs.append(real["summary"]["final_auc"])
            staleness.append(real["summary"]["mean_staleness"])
        cells = ["", "", ""]
        if times and s is not None:
            rm = statistics.median(times)
            worst = max(worst, abs(s - rm) / rm)
            cells = [fmt(rm), fmt(s), f"{(s - rm) / rm:+.3f}"]
        q = statistics.quantiles(times, n=4) if len(times) > 1 else times * 3
        table.append([mode] + cells + [
            fmt(statistics.median(aucs), 4), fmt(sim_median(lambda d: d["summary"]["final_auc"]), 4),
            f"{len(times)} of {rounds}", f"{q[0]:.3f}-{q[2]:.3f}" if q else "",
            f"{min(times):.3f}-{max(times):.3f}" if times else "",
            fmt(statistics.median(samples), 0) if samples else "",
            fmt(sim_median(lambda d: at_target(d, "samples")), 0),
            fmt(statistics.median(staleness), 2),
            fmt(sim_median(lambda d: d["summary"]["mean_staleness"]), 2)])
    write_csv(f"{out}/runs.csv", runs)
    print(write_csv(f"{out}/table.csv", table), end="")
    print(f"largest |relative error| of the median time to AUC {target}: {worst:.1%} "
          "(goal: 15% or less)")


if __name__ == "__main__":
    main()

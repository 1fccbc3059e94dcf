#!/usr/bin/env bash
# Simulator against real hardware: the same small spec (specs/sim-vs-real.json: 4 workers,
# one of them twice slower, DeepFM on 200k synthetic samples) trained for real with gbasim-mpi
# on this machine (4 ranks for sync, 5 with the server otherwise, sharing its cores) and
# simulated on the platform `gbasim calibrate` measures here, for sync, async and GBA.
#
# Each repetition calibrates afresh (microbenchmarks, then the message latency and the server's
# work per push fitted to the real straggler-free sync and async runs; gbasim calibrate
# --help) and runs
# every mode for real and simulated. The table gives, per mode, the medians over the
# repetitions of the real and simulated time to the target AUC (interpolated between
# snapshots), the relative error of the medians, the final AUCs, and the spread of each side.
#
# Usage: scripts/sim_vs_real.sh [OUT_DIR] [REPETITIONS]   (default results/sim-vs-real, 3)
# Writes OUT_DIR/table.csv (the summary), OUT_DIR/runs.csv (every repetition) and
# OUT_DIR/rep-<k>/ (calibration, platform, each run's result).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/sim-vs-real}
reps=${2:-3}
spec=specs/sim-vs-real.json
bash scripts/setup.sh
bash scripts/build.sh
mkdir -p "$out"
for rep in $(seq 1 "$reps"); do
  dir=$out/rep-$rep
  mkdir -p "$dir"
  echo "sim_vs_real.sh: repetition $rep of $reps: calibrating" >&2
  ./build/sim/gbasim calibrate --spec "$spec" --out "$dir/platform.json" --report "$dir/calibration.json" \
    >"$dir/calibration.txt" 2>"$dir/calibration.log"
  # The cost settings the calibration reports, as --set arguments.
  mapfile -t costs < <(/usr/bin/python3 -c "import json,sys; [print(f'--set\n{o}') for o in json.load(open(sys.argv[1]))['overrides']]" "$dir/calibration.json")
  platform=$(cd "$dir" && pwd)/platform.json
  for mode in sync async gba; do
    ranks=4
    [ $mode = sync ] || ranks=5
    echo "sim_vs_real.sh: repetition $rep: $mode, real ($ranks ranks) and simulated" >&2
    bash scripts/mpirun.sh $ranks --spec "$spec" --set training.mode=$mode -q --out "$dir/real-$mode.json"
    ./build/sim/gbasim run --spec "$spec" --set training.mode=$mode --set cluster.platform="$platform" \
      "${costs[@]}" -q --out "$dir/sim-$mode.json" >/dev/null
  done
done
/usr/bin/python3 - "$out" "$reps" <<'PY'
import csv, io, json, os, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])


def crossing(doc):
    """When test AUC first reaches the target, interpolated linearly between the snapshots
    around it (the summary's time_to_auc is the first snapshot at or above it, on the grid of
    evaluation.interval_s)."""
    target = doc["summary"]["target_auc"]
    curve = doc["curve"]
    for before, after in zip(curve, curve[1:]):
        if after["test_auc"] >= target > before["test_auc"]:
            f = (target - before["test_auc"]) / (after["test_auc"] - before["test_auc"])
            return before["time"] + f * (after["time"] - before["time"])
    return None


def write_csv(path, rows):
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    with open(path + ".tmp", "w") as f:
        f.write(text.getvalue())
    os.replace(path + ".tmp", path)
    return text.getvalue()


runs = [["repetition", "mode", "real_time_to_auc_s", "sim_time_to_auc_s", "rel_error",
         "real_final_auc", "sim_final_auc", "real_run_time_s", "sim_run_time_s"]]
table = [["mode", "real_time_to_auc_s", "sim_time_to_auc_s", "rel_error", "real_final_auc",
          "sim_final_auc", "repetitions", "real_time_to_auc_range_s", "sim_time_to_auc_range_s"]]
target = None
worst = 0.0
for mode in ["sync", "async", "gba"]:
    r_t, s_t, r_auc, s_auc = [], [], [], []
    for rep in range(1, reps + 1):
        real = json.load(open(f"{out}/rep-{rep}/real-{mode}.json"))
        sim = json.load(open(f"{out}/rep-{rep}/sim-{mode}.json"))
        target = real["summary"]["target_auc"]
        r, s = crossing(real), crossing(sim)
        err = "" if r is None or s is None else f"{(s - r) / r:+.3f}"
        runs.append([rep, mode, "" if r is None else f"{r:.3f}", "" if s is None else f"{s:.3f}", err,
                     f"{real['summary']['final_auc']:.4f}", f"{sim['summary']['final_auc']:.4f}",
                     f"{real['summary']['run_time']:.3f}", f"{sim['summary']['simulated_time']:.3f}"])
        if r is not None:
            r_t.append(r)
        if s is not None:
            s_t.append(s)
        r_auc.append(real["summary"]["final_auc"])
        s_auc.append(sim["summary"]["final_auc"])
    if r_t and s_t:
        rm, sm = statistics.median(r_t), statistics.median(s_t)
        worst = max(worst, abs(sm - rm) / rm)
        cells = [f"{rm:.3f}", f"{sm:.3f}", f"{(sm - rm) / rm:+.3f}"]
    else:
        cells = ["", "", ""]
    table.append([mode] + cells + [f"{statistics.median(r_auc):.4f}", f"{statistics.median(s_auc):.4f}", reps,
                  f"{min(r_t):.3f}-{max(r_t):.3f}" if r_t else "", f"{min(s_t):.3f}-{max(s_t):.3f}" if s_t else ""])
write_csv(f"{out}/runs.csv", runs)
print(write_csv(f"{out}/table.csv", table), end="")
print(f"largest |relative error| of the median time to AUC {target}: {worst:.1%} (goal: 15% or less)")
PY

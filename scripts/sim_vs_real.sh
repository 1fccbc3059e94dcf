#!/usr/bin/env bash
# Simulator against real hardware: the same small spec (specs/sim-vs-real.json: 4 workers,
# one of them twice slower, DeepFM on 200k synthetic samples) trained for real with gbasim-mpi
# on this machine (4 ranks for sync, 5 with the server otherwise, sharing its cores) and
# simulated on the platform `gbasim calibrate` measures here, for sync, async and GBA.
#
# One calibration (microbenchmarks, then the message latency and the server's work per push
# fitted to the medians of 5 real straggler-free sync and async runs each; gbasim calibrate
# --help), one simulation per mode on it (the simulator is deterministic), and ROUNDS real
# runs per mode, the modes taking turns (sync async gba, async gba sync, ...) so that a slow
# spell of the machine falls on all of them. The table gives, per mode, the median of the
# real time to the target AUC (interpolated between snapshots), the simulated one, the
# relative error, the final AUCs, the spread of the real runs, the samples applied by the
# time the target is reached and the mean staleness (scripts/sim_vs_real_table.py, which
# also recomputes the table from OUT_DIR/runs/ alone).
#
# Usage: scripts/sim_vs_real.sh [OUT_DIR] [ROUNDS]   (default results/sim-vs-real, 7)
# Writes OUT_DIR/table.csv (the summary), OUT_DIR/runs.csv (every real run),
# OUT_DIR/calibration.{json,txt}, OUT_DIR/platform.json, and each run's result under
# OUT_DIR/runs/ (real-<mode>-<round>.json, sim-<mode>.json).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/sim-vs-real}
rounds=${2:-7}
spec=specs/sim-vs-real.json
bash scripts/setup.sh
bash scripts/build.sh
mkdir -p "$out/runs"
echo "sim_vs_real.sh: calibrating (about two minutes)" >&2
./build/sim/gbasim calibrate --spec "$spec" --out "$out/platform.json" --report "$out/calibration.json" \
  >"$out/calibration.txt" 2>"$out/calibration.log"
# The cost settings the calibration reports, as --set arguments.
mapfile -t costs < <(/usr/bin/python3 -c "import json,sys; [print(f'--set\n{o}') for o in json.load(open(sys.argv[1]))['overrides']]" "$out/calibration.json")
platform=$(cd "$out" && pwd)/platform.json
modes=(sync async gba)
for mode in "${modes[@]}"; do
  ./build/sim/gbasim run --spec "$spec" --set training.mode=$mode --set cluster.platform="$platform" \
    "${costs[@]}" -q --out "$out/runs/sim-$mode.json" >/dev/null
done
for round in $(seq 1 "$rounds"); do
  for k in 0 1 2; do
    mode=${modes[$(((round - 1 + k) % 3))]}
    ranks=4
    [ $mode = sync ] || ranks=5
    echo "sim_vs_real.sh: round $round of $rounds: $mode for real ($ranks ranks)" >&2
    bash scripts/mpirun.sh $ranks --spec "$spec" --set training.mode=$mode -q \
      --out "$out/runs/real-$mode-$round.json"
  done
done
/usr/bin/python3 scripts/sim_vs_real_table.py "$out" "$rounds"

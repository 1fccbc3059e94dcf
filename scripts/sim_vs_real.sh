#!/usr/bin/env bash
# Simulator against real hardware: the same small spec (examples/sim-vs-real.json: 4 workers,
# one of them twice slower, DeepFM on 200k synthetic samples) trained for real with gbasim-mpi
# on this machine (4 ranks for sync, 5 with the server otherwise, sharing its cores) and
# simulated on the platform `gbasim calibrate` measures here, for sync, async and GBA.
#
# ROUNDS rounds of six real runs, in turn (one more before them warms the machine up): the
# spec's sync and async without stragglers, then its sync, async and GBA, and GBA with
# data.sharding "queue" (the server hands out every batch; "gba-queue" in the table), each
# round starting one further along, so that a slow spell of the machine falls on all of them
# alike. Then one
# calibration (gbasim calibrate --help): microbenchmarks, and the message latency and the
# server's work per push fitted to the medians of the straggler-free runs, which saw the
# machine as the compared runs did; and simulations on it: sync once (the simulator is
# deterministic), the server modes once per order of service (seeds 1 to ROUNDS of
# cluster.ps_service_seed: the real server's order is not the order of arrival, and varies).
# The table gives, per mode, the median of the real time to the target AUC (interpolated
# between snapshots), the simulated one (the median over orders), the relative error, the final AUCs,
# the spread of the real runs, the samples applied by the time the target is reached and the
# mean staleness (scripts/sim_vs_real_table.py, which also recomputes the table from
# OUT_DIR/runs/ alone).
#
# Single real runs on a shared 2-core machine spread over a factor of 1.5 (the operating
# system's scheduler, the host), so that a median of 7 moved by 10-20% between measurements
# minutes apart; 15 rounds (about 9 minutes in all) narrow that by a third (the noise of a
# median falls as the square root of the runs).
#
# Usage: scripts/sim_vs_real.sh [OUT_DIR] [ROUNDS]   (default results/sim-vs-real, 15)
# Writes OUT_DIR/table.csv (the summary), OUT_DIR/runs.csv (every real run),
# OUT_DIR/calibration.{json,txt}, OUT_DIR/platform.json, and each run's result under
# OUT_DIR/runs/ (real-<mode>-<round>.json, free-<mode>-<round>.json, sim-sync.json,
# sim-<mode>-<seed>.json).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case ${1:-} in -h | --help) usage; exit 0 ;; esac
if [ $# -gt 2 ]; then
  echo "sim_vs_real.sh: at most two arguments, OUT_DIR and ROUNDS (--help)" >&2
  exit 2
fi
rounds=${2:-15}
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "sim_vs_real.sh: ROUNDS must be a whole number of rounds, 1 or more; got '$rounds' (--help)" >&2
  exit 2
fi
out=${1:-results/sim-vs-real}
mkdir -p "$out"
out=$(cd "$out" && pwd)  # relative to where it was called from
cd "$(dirname "$0")/.."
spec=examples/sim-vs-real.json
bash scripts/setup.sh
bash scripts/build.sh
mkdir -p "$out/runs"
free=(--set stragglers.persistent_fraction=0 --set stragglers.noise_cv=0
  --set stragglers.transient_rate_per_s=0 --set stragglers.network_rate_per_s=0
  --set stragglers.colocated_fraction=0 --set stragglers.trace.format= --set stragglers.trace.path=)
real() {  # NAME MODE [--set ...]: one real run into runs/NAME.json
  local name=$1 mode=$2 ranks=4
  shift 2
  [ "$mode" = sync ] || ranks=5
  bash scripts/mpirun.sh $ranks --spec "$spec" --set training.mode="$mode" "$@" -q --out "$out/runs/$name.json"
}
echo "sim_vs_real.sh: one run to warm the machine up" >&2
real warm-up sync "${free[@]}"
jobs=(free-sync free-async sync async gba gba-queue)
for round in $(seq 1 "$rounds"); do
  for k in 0 1 2 3 4 5; do
    job=${jobs[$(((round - 1 + k) % 6))]}
    echo "sim_vs_real.sh: round $round of $rounds: $job" >&2
    case $job in
      free-*) real "$job-$round" "${job#free-}" "${free[@]}" ;;
      gba-queue) real "real-$job-$round" gba --set data.sharding=queue ;;
      *) real "real-$job-$round" "$job" ;;
    esac
  done
done
run_times() {  # MODE: the straggler-free run times of every round
  for round in $(seq 1 "$rounds"); do
    /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['run_time'])" \
      "$out/runs/free-$1-$round.json"
  done
}
echo "sim_vs_real.sh: calibrating on the straggler-free runs (about a minute)" >&2
./build/bin/gbasim calibrate --spec "$spec" --out "$out/platform.json" --report "$out/calibration.json" \
  --real-sync-s $(run_times sync) --real-async-s $(run_times async) \
  >"$out/calibration.txt" 2>"$out/calibration.log"
# The cost settings the calibration reports, as --set arguments.
mapfile -t costs < <(/usr/bin/python3 -c "import json,sys; [print(f'--set\n{o}') for o in json.load(open(sys.argv[1]))['overrides']]" "$out/calibration.json")
platform=$out/platform.json  # out is absolute
echo "sim_vs_real.sh: simulating sync once, async and GBA once per order of service 1 to $rounds" >&2
./build/bin/gbasim run --spec "$spec" --set training.mode=sync --set cluster.platform="$platform" \
  "${costs[@]}" -q --out "$out/runs/sim-sync.json" >/dev/null
for job in async gba gba-queue; do  # one simulation per order of service (docs/spec.md: ps_service_seed)
  mode=${job%-queue} sharding=()
  [ "$job" = gba-queue ] && sharding=(--set data.sharding=queue)
  rm -f "$out/runs/sim-$job.json" "$out/runs/sim-$job-"[0-9]*.json  # none left from other rounds
  for seed in $(seq 1 "$rounds"); do
    ./build/bin/gbasim run --spec "$spec" --set training.mode=$mode --set cluster.platform="$platform" \
      "${costs[@]}" "${sharding[@]}" --set cluster.ps_service_seed="$seed" -q \
      --out "$out/runs/sim-$job-$seed.json" >/dev/null
  done
done
/usr/bin/python3 scripts/sim_vs_real_table.py "$out" "$rounds"

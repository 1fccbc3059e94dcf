#!/usr/bin/env bash
# The simulator's own cost (bench/README.md, "The simulator"):
#  1. overhead at 16 workers in every mode: (model math + simulator) / model math, from
#     `gbasim run`'s wall-clock breakdown of the demo spec (evaluation excluded: one snapshot
#     at each end); beside it the update rule's share of the simulator (the real sums of
#     gradients in sync, GBA and backup workers) and the overhead with that work counted as
#     the training's math, (math + simulator) / (math + rule);
#  2. timing-only runs (no math) of every mode from 16 to MAX workers (default 4096), 20 steps
#     a worker, under both network models (cluster.network_solver "fluid" and "simgrid") side
#     by side with bench/bare_engine.cc (the bare SimGrid program of the same actors,
#     mailboxes, messages and computations): wall time in the engine, wall time per worker
#     step, simulated time and peak memory of each; SimGrid's model and the bare program up to
#     --simgrid-max workers (default 256; beyond, a run takes minutes to hours). Where
#     SimGrid's 20 steps take under a second in the engine (timer noise would be the ratio),
#     every program runs again with the steps that take it about 2 s, at most 640 a worker;
#  3. with --shards K (e.g. 64): the same at MAX workers and K server shards, STEPS steps a
#     worker (--steps, default 5), in every server mode.
# A run that takes longer than LIMIT seconds (--limit, default 900) is stopped; its row says so.
# Usage: bash bench/sim_bench.sh [--max-workers MAX] [--modes "sync gba ..."] [--skip-overhead]
#                                [--shards K [--steps STEPS]] [--limit LIMIT] [--simgrid-max N]
# Outputs: out/bench/sim-*.json (the runs' results) and the tables on standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
max=4096 modes="sync gba async ssp backup" overhead=1 shards=0 scale_steps=5 limit=900 simgrid_max=256
while [ $# -gt 0 ]; do
  case $1 in
    --max-workers) max=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --skip-overhead) overhead=0; shift ;;
    --shards) shards=$2; shift 2 ;;
    --steps) scale_steps=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --simgrid-max) simgrid_max=$2; shift 2 ;;
    *) echo "usage: bash bench/sim_bench.sh [--max-workers MAX] [--modes \"sync gba ...\"] [--skip-overhead] [--shards K [--steps S]] [--limit S] [--simgrid-max N]" >&2; exit 2 ;;
  esac
done
bash scripts/build.sh
mkdir -p out/bench
gbasim=./build/bin/gbasim bare=./build/bench/bare_engine
py=/usr/bin/python3
field() { sed -E "s/$1/\\1/" <<<"$2"; }

if [ $overhead -eq 1 ]; then
  echo "| mode | workers | model math (s) | simulator (s) | of it: update rule (s) | overhead | overhead, the rule's work as math |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for mode in $modes; do
    line=$($gbasim run --profile --spec examples/demo.json --set training.mode=$mode --set evaluation.interval_s=1000 \
           --set data.train_samples=500000 --out out/bench/sim-overhead-$mode.json 2>&1 >/dev/null | grep 'in the engine')
    math=$(field '.*model math ([0-9.]+) s.*' "$line") sim=$(field '.*simulator ([0-9.]+) s.*' "$line")
    rule=$(field '.*update rule ([0-9.]+) s.*' "$line")
    echo "| $mode | 16 | $math | $sim | $rule | $(field '.*math = ([0-9.]+).*' "$line") |" \
         "$($py -c "import sys; m, s, r = map(float, sys.argv[1:]); print(f'{(m + s) / (m + r):.3f}')" $math $sim $rule) |"
  done
  echo
fi

# One timing-only run of `gbasim run` under each network model (cluster.network_solver) and of
# bare_engine: a table row. SimGrid's model and bare_engine run up to --simgrid-max workers.
# side_by_side MODE WORKERS STEPS [--set ...]
side_by_side() {
  local mode=$1 workers=$2 steps=$3
  shift 3
  local sets=(--set training.mode=$mode --set training.workers=$workers "$@")
  local samples=$((workers * 256 > 200000 ? workers * 256 : 200000))
  local fluid simgrid="" bare_line="" more
  gbasim_timed() {  # SOLVER: its wall line, peak memory and result file; fails past the limit
    local out=out/bench/sim-timing-$mode-$workers-$1.json
    timeout $limit /usr/bin/time -f "rss %M" $gbasim run --profile --spec examples/demo.json "${sets[@]}" \
      --set simulation.timing_only=true --set cluster.network_solver=$1 \
      --set budget.max_samples=$((workers * 256 * steps)) --set data.train_samples=$samples \
      --out $out 2>&1 >/dev/null && echo "result $out"
  }
  fluid=$(gbasim_timed fluid) || { echo "| $mode | $workers | the fluid model did not finish within $limit s |"; return; }
  if [ "$workers" -le "$simgrid_max" ]; then
    simgrid=$(gbasim_timed simgrid) || simgrid="limit"
    # Where SimGrid's 20 steps take under a second in the engine (timer noise would be the
    # ratio), every program runs again with the steps that take it about 2 s, at most 640.
    if [ "$simgrid" != limit ]; then
      more=$($py -c "import math,re,sys; w=float(re.search(r'wall ([0-9.]+) s in the engine', sys.argv[1]).group(1)); \
print(min(640, math.ceil(int(sys.argv[2]) * 2 / max(w, 0.002))) if w < 1 else 0)" "$simgrid" $steps)
      if [ "$more" -gt "$steps" ]; then
        steps=$more
        fluid=$(gbasim_timed fluid) || { echo "| $mode | $workers | the fluid model did not finish $steps steps within $limit s |"; return; }
        simgrid=$(gbasim_timed simgrid) || simgrid="limit"
      fi
    fi
    bare_line=$(timeout $limit $bare --spec examples/demo.json "${sets[@]}" --set data.train_samples=$samples \
                --steps $steps | tail -1) || bare_line="limit"
  fi
  $py - "$mode" "$workers" "$limit" "$fluid" "$simgrid" "$bare_line" <<'EOF'
import json, re, sys
mode, n, limit, fluid, simgrid, bare = sys.argv[1:]

def run(text):  # (wall s in the engine, worker steps, simulated s, peak MB) of a gbasim run
    if not text or text == "limit":
        return text or None
    wall = float(re.search(r"wall ([0-9.]+) s in the engine", text).group(1))
    peak = int(re.search(r"^rss ([0-9]+)", text, re.M).group(1)) // 1024
    with open(re.search(r"^result (\S+)", text, re.M).group(1)) as f:
        doc = json.load(f)
    steps = sum(w["steps"] for w in doc["workers"])
    return wall, steps, doc["summary"]["simulated_time"], peak

def cells(r):
    if r is None:
        return ["-"] * 4
    if r == "limit":
        return [f"over {limit} s", "", "", ""]
    return [f"{r[0]:.3f}", f"{1e6 * r[0] / r[1]:.1f}", f"{r[2]:.4f}", f"{r[3]}"]

f, g = run(fluid), run(simgrid)
row = [mode, n, str(f[1])] + cells(f) + cells(g)
if bare in ("", "limit"):
    row += ["-" if not bare else f"over {limit} s", "-", "-"]
else:
    bwall = float(re.search(r"wall ([0-9.]+) s in the engine", bare).group(1))
    bsteps = int(re.search(r" ([0-9]+) worker steps", bare).group(1))
    ratio = f"{g[0] / bwall:.2f}" if isinstance(g, tuple) else "-"
    row += [f"{bwall:.3f}", f"{1e6 * bwall / bsteps:.1f}", ratio]
print("| " + " | ".join(row) + " |")
EOF
}

header() {
  echo "| mode | workers | worker steps | fluid wall (s) | fluid us/worker step | fluid simulated (s) |" \
       "fluid peak MB | SimGrid wall (s) | SimGrid us/worker step | SimGrid simulated (s) |" \
       "SimGrid peak MB | bare wall (s) | bare us/worker step | SimGrid / bare |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
}

header
for mode in $modes; do
  for workers in 16 64 256 1024 4096; do
    [ $workers -le $max ] || continue
    side_by_side $mode $workers 20
  done
done

if [ $shards -gt 0 ]; then
  echo
  echo "$max workers, $shards server shards, $scale_steps steps a worker:"
  echo
  header
  for mode in $modes; do
    [ $mode = sync ] && continue  # sync has no server shards
    side_by_side $mode $max $scale_steps --set cluster.ps_shards=$shards
  done
fi

#!/usr/bin/env bash
# The simulator's own cost (bench/README.md, "The simulator"):
#  1. overhead at 16 workers in every mode: (model math + simulator) / model math, from
#     `gbasim run`'s wall-clock breakdown of the demo spec (evaluation excluded: one snapshot
#     at each end); beside it the update rule's share of the simulator (the real sums of
#     gradients in sync, GBA and backup workers) and the overhead with that work counted as
#     the training's math, (math + simulator) / (math + rule);
#  2. timing-only runs (no math) of every mode from 16 to MAX workers (default 4096), 20 steps
#     a worker, side by side with bench/bare_engine.cc (the bare SimGrid program of the same
#     actors, mailboxes, messages and computations): wall time in the engine, messages, wall
#     time per worker step of each and their ratio, gbasim's peak memory. Where gbasim's 20
#     steps take under a second in the engine (timer noise would be the ratio), both programs
#     run again with the steps that take gbasim about 2 s, at most 640 a worker;
#  3. with --shards K (e.g. 64): the same at MAX workers and K server shards, STEPS steps a
#     worker (--steps, default 5).
# A run that takes longer than LIMIT seconds (--limit, default 900) is stopped; its row says so.
# Usage: bash bench/sim_bench.sh [--max-workers MAX] [--modes "sync gba ..."] [--skip-overhead]
#                                [--shards K [--steps STEPS]] [--limit LIMIT]
# Outputs: out/bench/sim-*.json (the runs' results) and the tables on standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
max=4096 modes="sync gba async ssp backup" overhead=1 shards=0 scale_steps=5 limit=900
while [ $# -gt 0 ]; do
  case $1 in
    --max-workers) max=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --skip-overhead) overhead=0; shift ;;
    --shards) shards=$2; shift 2 ;;
    --steps) scale_steps=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    *) echo "usage: bash bench/sim_bench.sh [--max-workers MAX] [--modes \"sync gba ...\"] [--skip-overhead] [--shards K [--steps S]] [--limit S]" >&2; exit 2 ;;
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
    line=$($gbasim run --spec examples/demo.json --set training.mode=$mode --set evaluation.interval_s=1000 \
           --set data.train_samples=500000 --out out/bench/sim-overhead-$mode.json 2>&1 >/dev/null | grep 'in the engine')
    math=$(field '.*model math ([0-9.]+) s.*' "$line") sim=$(field '.*simulator ([0-9.]+) s.*' "$line")
    rule=$(field '.*update rule ([0-9.]+) s.*' "$line")
    echo "| $mode | 16 | $math | $sim | $rule | $(field '.*math = ([0-9.]+).*' "$line") |" \
         "$($py -c "import sys; m, s, r = map(float, sys.argv[1:]); print(f'{(m + s) / (m + r):.3f}')" $math $sim $rule) |"
  done
  echo
fi

# One timing-only run of `gbasim run` and of bare_engine: a table row.
# side_by_side MODE WORKERS STEPS [--set ...]
side_by_side() {
  local mode=$1 workers=$2 steps=$3
  shift 3
  local sets=(--set training.mode=$mode --set training.workers=$workers "$@")
  local samples=$((workers * 256 > 200000 ? workers * 256 : 200000))
  local out=out/bench/sim-timing-$mode-$workers.json
  local timed line wall messages rss per_step bare_line bare_wall bare_steps bare_messages
  gbasim_timed() {
    timeout $limit /usr/bin/time -f "rss %M" $gbasim run --spec examples/demo.json "${sets[@]}" --set simulation.timing_only=true \
      --set budget.max_samples=$((workers * 256 * steps)) --set data.train_samples=$samples \
      --out $out 2>&1 >/dev/null
  }
  if ! timed=$(gbasim_timed); then
    echo "| $mode | $workers | gbasim did not finish within $limit s | | | | | | | | | |"
    return
  fi
  local more
  more=$($py -c "import math,re,sys; w=float(re.search(r'wall ([0-9.]+) s in the engine', sys.argv[1]).group(1)); \
print(min(640, math.ceil(int(sys.argv[2]) * 2 / max(w, 0.002))) if w < 1 else 0)" "$timed" $steps)
  if [ "$more" -gt "$steps" ]; then
    steps=$more
    if ! timed=$(gbasim_timed); then
      echo "| $mode | $workers | gbasim did not finish $steps steps a worker within $limit s | | | | | | | | | |"
      return
    fi
  fi
  line=$(grep 'in the engine' <<<"$timed")
  rss=$(( $(field '.*rss ([0-9]+).*' "$(grep '^rss' <<<"$timed")") / 1024 ))
  wall=$(field '.*wall ([0-9.]+) s in the engine.*' "$line")
  messages=$(field '.*\(([0-9]+) messages.*' "$line")
  steps_done=$($py -c "import json,sys; print(sum(w['steps'] for w in json.load(open(sys.argv[1]))['workers']))" $out)
  if ! bare_line=$(timeout $limit $bare --spec examples/demo.json "${sets[@]}" --set data.train_samples=$samples --steps $steps | tail -1); then
    echo "| $mode | $workers | $steps_done | $wall | $messages | | | bare_engine did not finish within $limit s | | | | $rss |"
    return
  fi
  bare_wall=$(field '.*wall ([0-9.]+) s in the engine.*' "$bare_line")
  bare_steps=$(field '.* ([0-9]+) worker steps.*' "$bare_line")
  bare_messages=$(field '.* ([0-9]+) messages.*' "$bare_line")
  $py - "$mode" "$workers" "$steps_done" "$wall" "$messages" "$rss" "$bare_steps" "$bare_wall" "$bare_messages" <<'EOF'
import sys
mode, n, steps, wall, msgs, rss, bsteps, bwall, bmsgs = sys.argv[1:]
steps, wall, msgs, bsteps, bwall, bmsgs = int(steps), float(wall), int(msgs), int(bsteps), float(bwall), int(bmsgs)
us, bus = 1e6 * wall / steps, 1e6 * bwall / bsteps
print(f"| {mode} | {n} | {steps} | {wall:.3f} | {msgs} | {msgs / wall:,.0f} | {us:.1f} | "
      f"{bwall:.3f} | {bmsgs / bwall:,.0f} | {bus:.1f} | {us / bus:.2f} | {rss} |")
EOF
}

echo "| mode | workers | worker steps | gbasim wall (s) | messages | messages/s | us/worker step | bare wall (s) | bare messages/s | bare us/worker step | ratio | gbasim peak MB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
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
  echo "| mode | workers | worker steps | gbasim wall (s) | messages | messages/s | us/worker step | bare wall (s) | bare messages/s | bare us/worker step | ratio | gbasim peak MB |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for mode in $modes; do
    side_by_side $mode $max $scale_steps --set cluster.ps_shards=$shards
  done
fi

#!/usr/bin/env bash
# The simulator's own cost (bench/README.md, "The simulator"):
#  1. overhead at 16 workers: (model math + simulator) / model math, from `gbasim run`'s
#     wall-clock breakdown of the demo spec (evaluation excluded: one snapshot at each end);
#  2. timing-only runs (no math) from 16 to 1024 workers, 20 steps a worker: wall time,
#     simulated messages and messages per second.
# Outputs: out/bench/sim-*.json (the runs' results) and the tables on standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
mkdir -p out/bench
gbasim=./build/bin/gbasim

echo "| mode | workers | model math (s) | simulator (s) | overhead |"
echo "| --- | --- | --- | --- | --- |"
for mode in sync gba async; do
  line=$($gbasim run --spec examples/demo.json --set training.mode=$mode --set evaluation.interval_s=1000 \
         --set data.train_samples=500000 --out out/bench/sim-overhead-$mode.json 2>&1 >/dev/null | grep 'in the engine')
  math=$(sed -E 's/.*model math ([0-9.]+) s.*/\1/' <<<"$line")
  sim=$(sed -E 's/.*simulator ([0-9.]+) s.*/\1/' <<<"$line")
  overhead=$(sed -E 's/.*math = ([0-9.]+).*/\1/' <<<"$line")
  echo "| $mode | 16 | $math | $sim | $overhead |"
done

echo
echo "| mode | workers | worker steps | wall in the engine (s) | messages | messages per second | microseconds per worker step |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for mode in gba sync; do
  for workers in 16 64 256 1024; do
    line=$($gbasim run --spec examples/demo.json --set training.mode=$mode --set training.workers=$workers \
           --set simulation.timing_only=true --set budget.max_samples=$((workers * 256 * 20)) \
           --set data.train_samples=200000 --out out/bench/sim-timing-$mode-$workers.json 2>&1 >/dev/null \
           | grep 'in the engine')
    wall=$(sed -E 's/.*wall ([0-9.]+) s in the engine.*/\1/' <<<"$line")
    messages=$(sed -E 's/.*\(([0-9]+) messages.*/\1/' <<<"$line")
    rate=$(sed -E 's/.*messages, ([0-9]+) a second.*/\1/' <<<"$line")
    steps=$(/usr/bin/python3 -c "import json,sys; print(sum(w['steps'] for w in json.load(open(sys.argv[1]))['workers']))" \
            out/bench/sim-timing-$mode-$workers.json)
    per_step=$(/usr/bin/python3 -c "import sys; print(f'{1e6 * float(sys.argv[1]) / int(sys.argv[2]):.1f}')" "$wall" "$steps")
    echo "| $mode | $workers | $steps | $wall | $messages | $rate | $per_step |"
  done
done

#!/usr/bin/env bash
# Checks that a replayed PAI mini-batch-time trace sets the simulated step times: runs the
# demo experiment timing-only on a straggler-free platform (no synthetic stragglers) with the
# trace replayed in order, then compares every worker's simulated compute time with what the
# trace says, recomputed here independently of the simulator (scripts/trace_check.py).
#
# Usage: scripts/trace_check.sh TRACE.csv [WORKERS] [OFFSET]
#   WORKERS  simulated workers (default 16; fewer trace workers are reused in turn)
#   OFFSET   trace iterations to skip (default 0)
# Prints a table per worker and the largest relative error; exits 1 above 1e-6.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ ! -f "$1" ]; then
  echo "usage: scripts/trace_check.sh TRACE.csv [WORKERS] [OFFSET] (a PAI mini-batch-time CSV)" >&2
  exit 2
fi
trace=$1 workers=${2:-16} offset=${3:-0}
bash scripts/build.sh >&2
out=out/trace-check
mkdir -p "$out"
./build/bin/gbasim run --spec examples/demo.json --quiet \
  --set training.mode=async --set training.workers="$workers" --set simulation.timing_only=true \
  --set stragglers.persistent_fraction=0 --set stragglers.noise_cv=0 --set stragglers.transient_rate_per_s=0 \
  --set stragglers.trace.format=pai --set stragglers.trace.path="$trace" \
  --set stragglers.trace.offset="$offset" --out "$out/result.json" >"$out/summary.txt"
/usr/bin/python3 scripts/trace_check.py "$trace" "$out/result.json" "$offset"

#!/usr/bin/env bash
# Replays the three Alibaba PAI jobs (../shared/traces/alibaba-pai-minibatch) on the demo
# experiment: each job's trace statistics and per-worker slowdowns (<job>-stats.txt,
# <job>-slowdowns.png/pdf), then the sweep results/trace-replay/sweep.json (3 jobs x sync, async
# and GBA x 5 seeds, at the demo's tuned learning rate, the synthetic straggler models off)
# through scripts/reproduce.sh: summary.csv, table.md (intervals, paired differences) and a
# convergence figure per job (figures-<job>/).
#
# Usage: scripts/trace_replay.sh [--fresh] [--jobs J]   (reproduce.sh's options)
set -euo pipefail
cd "$(dirname "$0")/.."
traces=../shared/traces/alibaba-pai-minibatch
if [ ! -f "$traces/job_1_norm.csv" ]; then
  echo "trace_replay.sh: no PAI traces in $traces (expected job_1_norm.csv ...)" >&2
  exit 1
fi
bash scripts/build.sh
out=results/trace-replay
logs=out/trace-replay-logs
mkdir -p "$out" "$logs"
for job in job_1 job_2 job_3; do
  ./build/bin/gbasim trace-stats "$traces/${job}_norm.csv" --json "$logs/$job-stats.json" >"$out/$job-stats.txt"
  /usr/bin/python3 scripts/plot_trace.py "$out/$job-slowdowns" "$logs/$job-stats.json"
done
bash scripts/reproduce.sh trace-replay "$@"

#!/usr/bin/env bash
# results/industrial-scale/: the paper's claims at 256 and 1,024 workers timing production
# workloads (docs/workload.md). Runs each sweep of results/industrial-scale/sweeps/ (resumable:
# finished points are kept unless --fresh), then writes table.md and summary.json
# (scripts/industrial_table.py).
#
# Usage: scripts/industrial_scale.sh [--fresh] [--jobs J]
set -euo pipefail
cd "$(dirname "$0")/.."
fresh=0 jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --fresh) fresh=1; shift ;;
    --jobs) [ $# -ge 2 ] || { echo "usage: scripts/industrial_scale.sh [--fresh] [--jobs J]" >&2; exit 2; }; jobs=$2; shift 2 ;;
    *) echo "usage: scripts/industrial_scale.sh [--fresh] [--jobs J]" >&2; exit 2 ;;
  esac
done
dir=results/industrial-scale
[ -f ../shared/traces/alibaba-pai-minibatch/job_1_norm.csv ] \
  || echo "industrial_scale.sh: ../shared/traces/alibaba-pai-minibatch is missing: the pai sweeps' points will fail" >&2
export GBASIM_DATA_CACHE=${GBASIM_DATA_CACHE:-$PWD/out/data-cache}
start=$(date +%s)
for sweep in severity-256 pai-256 cpu-pool severity-1024 pai-1024 auc-256 auc-256-wide-deep auc-256-pai; do
  out=$dir/runs/$sweep
  [ $fresh -eq 0 ] || rm -rf "$out"
  began=$(date +%s)
  ./build/bin/gbasim sweep --spec "$dir/sweeps/$sweep.json" --out "$out" --jobs "$jobs" || status=$?
  echo "industrial_scale.sh: $sweep: $(( $(date +%s) - began )) s${status:+ (exit $status)}" >&2
  unset status
done
/usr/bin/python3 scripts/industrial_table.py "$dir"
echo "industrial_scale.sh: done in $(( $(date +%s) - start )) s: $dir/table.md" >&2

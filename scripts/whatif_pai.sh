#!/usr/bin/env bash
# results/whatif-pai/: what each Alibaba PAI job's trace costs sync, async and GBA on the demo
# experiment (gbasim whatif; the synthetic straggler models off, as in results/trace-replay/,
# so the trace is the one source), 5 paired seeds, at the demo's tuned learning rate. One
# folder a job: whatif.md, whatif.json, figures/whatif.png; the runs under points/ (resumable,
# not committed).
#
# Usage: scripts/whatif_pai.sh [--jobs J]
set -euo pipefail
cd "$(dirname "$0")/.."
traces=../shared/traces/alibaba-pai-minibatch
[ -f "$traces/job_1_norm.csv" ] || { echo "whatif_pai.sh: no PAI traces in $traces" >&2; exit 1; }
jobs=$(nproc)
[ "${1:-}" != --jobs ] || jobs=$2
bash scripts/build.sh
export GBASIM_DATA_CACHE=${GBASIM_DATA_CACHE:-$PWD/out/data-cache}
for job in job_1 job_2 job_3; do
  ./build/bin/gbasim whatif --spec examples/demo.json --modes sync,async,gba --jobs "$jobs" \
    --set stragglers.persistent_fraction=0 --set stragglers.noise_cv=0 \
    --set stragglers.transient_rate_per_s=0 --set stragglers.trace.format=pai \
    --set "stragglers.trace.path=$traces/${job}_norm.csv" --out "results/whatif-pai/$job"
done

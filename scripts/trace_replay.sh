#!/usr/bin/env bash
# Replays the three Alibaba PAI jobs (../shared/traces/alibaba-pai-minibatch) on the demo
# experiment (examples/demo.json, 16 workers, the synthetic straggler models off so that the
# trace alone sets the slowdowns) under sync, async and GBA; writes results/trace-replay/:
# <run>-<mode>.json, <run>-convergence.png/pdf, <job>-slowdowns.png/pdf, and table.md.
# A run replays a job from iteration 1 (the demo makes about 490 steps a worker), and job_1
# once more from iteration 1501, which takes in its straggler episode (iterations 1811-1881).
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${1:-../shared/traces/alibaba-pai-minibatch}
if [ ! -f "$traces/job_1_norm.csv" ]; then
  echo "trace_replay.sh: no PAI traces in $traces (expected job_1_norm.csv ...)" >&2
  exit 1
fi
bash scripts/build.sh
out=results/trace-replay
logs=out/trace-replay-logs
mkdir -p "$out" "$logs"
jobs="job_1 job_2 job_3"
runs="job_1:0 job_2:0 job_3:0 job_1:1500"  # job:offset
modes="sync async gba"
name() { [ "${1#*:}" = 0 ] && echo "${1%%:*}" || echo "${1%%:*}-from-$((${1#*:} + 1))"; }
for job in $jobs; do
  ./build/bin/gbasim trace-stats "$traces/${job}_norm.csv" --json "$logs/$job-stats.json" >"$out/$job-stats.txt"
  /usr/bin/python3 scripts/plot_trace.py "$out/$job-slowdowns" "$logs/$job-stats.json"
done
for run in $runs; do for mode in $modes; do echo "$(name $run) ${run%%:*} ${run#*:} $mode"; done; done |
  xargs -P "$(nproc)" -n 4 sh -c \
  "./build/bin/gbasim run --spec examples/demo.json --set training.mode=\$3 \
     --set stragglers.persistent_fraction=0 --set stragglers.noise_cv=0 --set stragglers.transient_rate_per_s=0 \
     --set stragglers.trace.format=pai --set stragglers.trace.path=$traces/\$1_norm.csv --set stragglers.trace.offset=\$2 \
     --out $out/\$0-\$3.json > $logs/\$0-\$3.summary 2> $logs/\$0-\$3.log && echo \"trace_replay.sh: \$0 \$3 done\""
for run in $runs; do
  /usr/bin/python3 scripts/plot_convergence.py "$out/$(name $run)-convergence" \
    $(for m in $modes; do echo "$out/$(name $run)-$m.json"; done)
done
/usr/bin/python3 - "$out" $(for run in $runs; do name $run; done) <<'PY'
import json, sys
out, runs = sys.argv[1], sys.argv[2:]
lines = ["| run | mode | time-to-AUC 0.75 (simulated s) | final AUC | simulated time (s) | mean staleness |",
         "| --- | --- | --- | --- | --- | --- |"]
for job in runs:
    for mode in ["sync", "async", "gba"]:
        s = json.load(open(f"{out}/{job}-{mode}.json"))["summary"]
        t = "not reached" if s["time_to_auc"] is None else f"{s['time_to_auc']:.1f}"
        lines.append(f"| {job} | {mode} | {t} | {s['final_auc']:.4f} | {s['simulated_time']:.3f} | {s['mean_staleness']:.2f} |")
table = "\n".join(lines) + "\n"
with open(f"{out}/table.md.tmp", "w") as f:
    f.write(table)
import os
os.replace(f"{out}/table.md.tmp", f"{out}/table.md")
print(table)
PY

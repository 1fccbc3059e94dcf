#!/usr/bin/env bash
# The main job: installs what is missing, builds, and simulates the default experiment
# (examples/demo.json: DeepFM on the default synthetic data, 16 workers on the default cluster
# with its stragglers) in every mode, the modes in parallel processes; then plots the
# convergence and prints the summary table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# Every run reads the same synthetic data: generated once, kept here (docs/data.md).
export GBASIM_DATA_CACHE=${GBASIM_DATA_CACHE:-$PWD/out/data-cache}
out=results/demo
logs=out/demo-logs
mkdir -p "$out" "$logs"
modes="sync async gba ssp backup"
echo "demo.sh: simulating $modes on $(nproc) cores (progress of each run in $logs/<mode>.log)"
printf '%s\n' $modes | xargs -P "$(nproc)" -I{} sh -c \
  "./build/bin/gbasim run --spec examples/demo.json --set training.mode={} --out $out/{}.json > $logs/{}.summary 2> $logs/{}.log \
   && echo 'demo.sh: {} done' || { echo 'demo.sh: {} failed, see $logs/{}.log'; exit 255; }"
/usr/bin/python3 scripts/plot_convergence.py "$out/convergence" $(for m in $modes; do echo "$out/$m.json"; done)
echo
head -n 1 "$logs/sync.summary"
for m in $modes; do tail -n 1 "$logs/$m.summary"; done
echo
echo "demo.sh: results in $out/: <mode>.json (one result per mode), convergence.png and convergence.pdf"

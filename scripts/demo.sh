#!/usr/bin/env bash
# The main job: installs what is missing, builds, and simulates the default experiment
# (examples/demo.json: DeepFM on the default synthetic data, 16 workers on the default cluster
# with its stragglers) in every mode. The modes are the sweep results/demo/sweep.json, run by
# `gbasim sweep` in parallel processes; then the convergence is plotted and the sweep's table
# printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# Every run reads the same synthetic data: generated once, kept here (docs/data.md).
export GBASIM_DATA_CACHE=${GBASIM_DATA_CACHE:-$PWD/out/data-cache}
out=results/demo
runs=out/demo  # the sweep's folder: points/<point>.{json,log}, summary.csv
modes="sync async gba ssp backup"
# The demo always simulates: a sweep keeps finished points, so the earlier ones go first.
rm -rf "$runs/points"
echo "demo.sh: simulating $modes on $(nproc) cores (progress of each run in $runs/points/<point>.log)"
./build/bin/gbasim sweep --spec "$out/sweep.json" --out "$runs" --jobs "$(nproc)"
for m in $modes; do  # the committed results: one `gbasim run` result a mode
  cp "$runs/points/mode-$m.json" "$out/$m.json.tmp"
  mv "$out/$m.json.tmp" "$out/$m.json"
done
/usr/bin/python3 scripts/plot_convergence.py "$out/convergence" $(for m in $modes; do echo "$out/$m.json"; done)
echo
# The sweep's first table: a row a mode (one seed, so no intervals).
./build/bin/gbasim sweep --table --out "$runs" | sed '/^$/q'
echo "demo.sh: results in $out/: <mode>.json (one result per mode), convergence.png and convergence.pdf"

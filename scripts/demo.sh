#!/usr/bin/env bash
# The main job: installs what is missing, builds, trains LR and DeepFM on the default
# synthetic data set in one process each, and plots their test AUC curves.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
out=out/demo
mkdir -p "$out"
for model in lr deepfm; do
  ./build/sim/gbasim train --model "$model" --out "$out/train-$model.json"
done
/usr/bin/python3 scripts/plot_training.py "$out/training" "$out/train-lr.json" "$out/train-deepfm.json"
echo
echo "demo.sh: results in $out/:"
echo "  train-lr.json, train-deepfm.json   curves and final test AUC / log-loss (JSON)"
echo "  training.png, training.pdf         test AUC and log-loss against training samples"

#!/usr/bin/env bash
# Trains every model once on the default synthetic data set with the default budget
# (one epoch, Adam 1e-3, batch 256) and prints the table of test AUCs in docs/models.md.
# Results: out/models/<model>.json. Usage: scripts/model_table.sh [extra gbasim train options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
mkdir -p out/models
for model in lr fm deepfm widedeep dlrm; do
  echo "model_table.sh: training $model" >&2
  ./build/bin/gbasim train --model "$model" --out "out/models/$model.json" -q "$@"
done
/usr/bin/python3 - <<'PY'
import json
rows = [json.load(open(f"out/models/{m}.json")) for m in ["lr", "fm", "deepfm", "widedeep", "dlrm"]]
lr_auc = rows[0]["final_auc"]
print("| model | test AUC | test log-loss | AUC - LR | Bayes AUC - AUC |")
print("| --- | --- | --- | --- | --- |")
for r in rows:
    print(f"| {r['model']['name']} | {r['final_auc']:.4f} | {r['final_logloss']:.4f} | "
          f"{r['final_auc'] - lr_auc:+.4f} | {r['bayes_auc'] - r['final_auc']:.4f} |")
print(f"\nBayes-optimal test AUC: {rows[0]['bayes_auc']:.4f}")
PY

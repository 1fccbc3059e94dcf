#!/usr/bin/env bash
# End-to-end checks of the gbasim command line: help, errors, atomic output, determinism.
# Usage: cli_test.sh PATH/TO/gbasim
set -uo pipefail
gbasim=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Small and fast: a few thousand synthetic samples.
small=(--train-samples 3000 --test-samples 1000 --batch-size 100 -q)

# Whole outputs are captured before grep reads them: grep -q on a pipe would stop early
# and fail the writer with SIGPIPE under pipefail.
help=$("$gbasim" --help) || fail "gbasim --help must succeed"
grep -q 'train' <<<"$help" || fail "gbasim --help lists no commands"
help=$("$gbasim" train --help) || fail "gbasim train --help must succeed"
grep -q -- '--model' <<<"$help" || fail "train --help lists no --model"

"$gbasim" nonsense >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown command must exit 2"
msg=$("$gbasim" train --model resnet "${small[@]}" --out "$work/x.json" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "an unknown model must exit 2 (got $rc)"
grep -q "unknown model 'resnet'" <<<"$msg" || fail "unknown model message: $msg"
msg=$("$gbasim" train --mlp 128,x "${small[@]}" --out "$work/x.json" 2>&1)
grep -q -- "--mlp must be a comma-separated list" <<<"$msg" || fail "bad --mlp message: $msg"
msg=$("$gbasim" train --ctr 2 "${small[@]}" --out "$work/x.json" 2>&1)
grep -q "'target_ctr'" <<<"$msg" || fail "bad --ctr message: $msg"
[ ! -e "$work/x.json" ] || fail "a failed run must write nothing"

# A malformed Criteo file: the error names file and line; an earlier result survives.
printf '1\t5\n' >"$work/bad.tsv"
echo '{"kept": true}' >"$work/kept.json"
msg=$("$gbasim" train --data "$work/bad.tsv" --out "$work/kept.json" -q 2>&1); rc=$?
[ $rc -ne 0 ] || fail "a malformed data file must fail"
grep -q "$work/bad.tsv:1: expected 40 tab-separated columns, found 2" <<<"$msg" || fail "malformed file message: $msg"
grep -q '"kept"' "$work/kept.json" || fail "a failed run must leave the earlier result intact"

# Same options, same bytes; another seed, other bytes.
"$gbasim" train --model dlrm "${small[@]}" --out "$work/a.json" || fail "train run a"
"$gbasim" train --model dlrm "${small[@]}" --out "$work/b.json" || fail "train run b"
"$gbasim" train --model dlrm "${small[@]}" --seed 2 --out "$work/c.json" || fail "train run c"
cmp -s "$work/a.json" "$work/b.json" || fail "the same options must give byte-identical results"
cmp -s "$work/a.json" "$work/c.json" && fail "another seed must give another result"
for key in final_auc final_logloss bayes_auc curve; do
  grep -q "\"$key\"" "$work/a.json" || fail "result lacks $key"
done
ls "$work" | grep -q '\.tmp\.' && fail "temporary files were left behind"

# A Criteo file trains end to end.
for i in $(seq 1 200); do
  label=$((i % 3 == 0 ? 1 : 0))
  printf '%d\t%d\t\t3%s\t%x\t%x%s\n' "$label" "$i" "$(printf '\t1%.0s' {1..10})" $((i % 7)) $((label * 5 + i % 2)) \
    "$(printf '\tab%.0s' {1..24})"
done >"$work/tiny.tsv"
"$gbasim" train --model fm --data "$work/tiny.tsv" --batch-size 20 --epochs 3 -q --out "$work/criteo.json" \
  || fail "training on a Criteo file"
grep -q '"source": "criteo"' "$work/criteo.json" || fail "criteo result lacks its source"

described=$("$gbasim" data --train-samples 2000 --test-samples 500) || fail "gbasim data must succeed"
grep -q '"bayes_auc"' <<<"$described" || fail "gbasim data prints no Bayes AUC"

if [ $failures -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all command-line checks passed"

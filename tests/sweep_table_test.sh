#!/usr/bin/env bash
# gbasim sweep --table against the committed tables: every results/NAME/ with a summary.csv and
# a table.md gets its table again from the summary (with results/NAME/against as --against),
# byte for byte.
# Usage: sweep_table_test.sh GBASIM REPOSITORY_ROOT
set -u
gbasim=$1
root=$2
checked=0 failed=0
for dir in "$root"/results/*/; do
  [ -f "$dir/summary.csv" ] && [ -f "$dir/table.md" ] || continue
  against=()
  if [ -f "$dir/against" ]; then
    read -r -a pairs <"$dir/against"
    against=(--against "${pairs[@]}")
  fi
  if ! "$gbasim" sweep --table --out "$dir" "${against[@]}" | cmp -s - "$dir/table.md"; then
    echo "FAIL: $dir: gbasim sweep --table differs from its table.md"
    "$gbasim" sweep --table --out "$dir" "${against[@]}" | diff - "$dir/table.md" | head -10
    failed=$((failed + 1))
  fi
  checked=$((checked + 1))
done
# Planted: a changed summary must change the table.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/results/severity/summary.csv" "$root/results/severity/table.md" "$work/"
sed -i '2s/,done,/,failed,/' "$work/summary.csv"
if "$gbasim" sweep --table --out "$work" | cmp -s - "$work/table.md"; then
  echo "FAIL: a summary with a failed point gave the same table"
  failed=$((failed + 1))
fi
[ "$checked" -ge 5 ] || { echo "FAIL: only $checked committed tables found"; failed=$((failed + 1)); }
echo "sweep_table_test.sh: $checked committed tables, $failed failures"
[ "$failed" -eq 0 ]

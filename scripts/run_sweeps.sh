#!/usr/bin/env bash
# Runs every sweep file of DIR/sweeps/ with `gbasim sweep`, each into DIR/runs/<sweep>/
# (points/, summary.csv), one after the other. Resumable: finished points are kept unless
# --fresh. A sweep with failed points does not stop the others; the script then exits 1.
# An experiment made of several sweeps (results/cluster-model/, results/industrial-scale/)
# runs this, then writes its own table from DIR/runs/ (scripts/reproduce.sh NAME).
#
# Usage: scripts/run_sweeps.sh DIR [--fresh] [--jobs J]
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/run_sweeps.sh DIR [--fresh] [--jobs J]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$1
shift
fresh=0 jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --fresh) fresh=1; shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    *) usage ;;
  esac
done
compgen -G "$dir/sweeps/*.json" >/dev/null || { echo "run_sweeps.sh: no sweep files in $dir/sweeps/" >&2; exit 2; }
export GBASIM_DATA_CACHE=${GBASIM_DATA_CACHE:-$PWD/out/data-cache}
failed=0
for file in "$dir"/sweeps/*.json; do
  sweep=$(basename "$file" .json)
  out=$dir/runs/$sweep
  [ $fresh -eq 0 ] || rm -rf "$out"
  began=$(date +%s)
  status=0
  ./build/bin/gbasim sweep --spec "$file" --out "$out" --jobs "$jobs" || status=$?
  echo "run_sweeps.sh: $sweep: $(( $(date +%s) - began )) s$([ $status -eq 0 ] || echo " (exit $status)")" >&2
  [ $status -eq 0 ] || failed=1
  [ $status -ne 130 ] || exit 130  # interrupted: stop here
done
exit $failed

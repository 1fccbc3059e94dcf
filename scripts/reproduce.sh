#!/usr/bin/env bash
# Regenerates one committed experiment: results/NAME/sweep.json is run with `gbasim sweep`
# (its points go to results/NAME/points/, not committed), then results/NAME/summary.csv,
# the figures listed in results/NAME/plots (one `plot_sweep.py` KIND and its options a
# line) and results/NAME/table.md (scripts/sweep_table.py; with the KEY=VALUE pairs of
# results/NAME/against, if there is one, as its --against reference) are written.
#
# Usage: scripts/reproduce.sh NAME [--fresh] [--jobs J]
#   --fresh   remove the experiment's earlier points first (by default finished points are
#             kept, so that an interrupted reproduction goes on where it stopped)
#   --jobs J  points run at once (default: the number of cores)
# Experiments: the folders of results/ that hold a sweep.json (results/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
  echo "usage: scripts/reproduce.sh NAME [--fresh] [--jobs J]; NAME is one of:" >&2
  for d in results/*/sweep.json; do echo "  $(basename "$(dirname "$d")")" >&2; done
  exit 2
}
[ $# -ge 1 ] || usage
name=$1
shift
fresh=0 jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --fresh) fresh=1; shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    *) usage ;;
  esac
done
dir=results/$name
[ -f "$dir/sweep.json" ] || { echo "reproduce.sh: no experiment '$name' ($dir/sweep.json)" >&2; usage; }
bash scripts/setup.sh
bash scripts/build.sh
# Every run reads the same synthetic data: generated once, kept here (docs/data.md).
export GBASIM_DATA_CACHE=${GBASIM_DATA_CACHE:-$PWD/out/data-cache}
[ $fresh -eq 0 ] || rm -rf "$dir/points" "$dir/summary.csv"
start=$(date +%s)
./build/bin/gbasim sweep --spec "$dir/sweep.json" --jobs "$jobs"
if [ -f "$dir/plots" ]; then
  while read -r line; do
    case $line in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2086  # the line holds the plot's arguments
    eval "/usr/bin/python3 scripts/plot_sweep.py $line"
  done <"$dir/plots"
fi
against=()
if [ -f "$dir/against" ]; then
  read -r -a against <"$dir/against"
  against=(--against "${against[@]}")
fi
/usr/bin/python3 scripts/sweep_table.py "$dir" "${against[@]}" >"$dir/table.md.tmp"
mv "$dir/table.md.tmp" "$dir/table.md"
cat "$dir/table.md"
echo "reproduce.sh: $name regenerated in $(( $(date +%s) - start )) s: $dir"

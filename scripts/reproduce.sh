#!/usr/bin/env bash
# Regenerates one committed experiment: results/NAME/sweep.json is run with `gbasim sweep`
# (its points go to results/NAME/points/, not committed), then results/NAME/summary.csv,
# the figures listed in results/NAME/plots (one `plot_sweep.py` KIND and its options a
# line) and results/NAME/table.md (gbasim sweep --table; with the KEY=VALUE pairs of
# results/NAME/against, if there is one, as its --against reference) are written.
#
# Usage: scripts/reproduce.sh NAME [--fresh] [--jobs J]
#        scripts/reproduce.sh all [--fresh] [--jobs J]
#   --fresh   remove the experiment's earlier points first (by default finished points are
#             kept, so that an interrupted reproduction goes on where it stopped)
#   --jobs J  points run at once (default: the number of cores)
# Experiments: the folders of results/ that hold a sweep.json, or a sweeps/ folder of several
# (results/README.md).
#
# "all" regenerates every experiment of results/ with its seeds, in the order they depend on
# one another (tune-demo's learning rate is what the others use), each by the command
# results/README.md gives for it, and prints how long each took (also written to
# out/reproduce-all.txt). sim-vs-real/ is not among them: it measures this machine's real runs
# (its README), which no other machine reproduces.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
  echo "usage: scripts/reproduce.sh NAME|all [--fresh] [--jobs J]; NAME is one of:" >&2
  for d in results/*/sweep.json results/*/sweeps; do echo "  $(basename "$(dirname "$d")")" >&2; done
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

if [ "$name" = all ]; then
  bash scripts/setup.sh
  bash scripts/build.sh
  export GBASIM_DATA_CACHE=${GBASIM_DATA_CACHE:-$PWD/out/data-cache}
  mkdir -p out
  log=out/reproduce-all.txt
  options=(--jobs "$jobs")
  [ $fresh -eq 0 ] || options+=(--fresh)
  echo "reproduce.sh all: started $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(nproc) cores, $jobs runs at once" | tee "$log"
  all_start=$(date +%s)
  step() {  # step NAME COMMAND...: runs it, logs its wall time
    local what=$1 began
    shift
    began=$(date +%s)
    echo "reproduce.sh all: $what ..." >&2
    "$@"
    echo "$what: $(( $(date +%s) - began )) s" | tee -a "$log"
  }
  # gbasim tune and compare keep their finished runs in OUT/points too
  [ $fresh -eq 0 ] || rm -rf results/tune-demo/points results/compare-strained/points \
    results/map-demo/points results/whatif-pai/*/points
  step tune-demo ./build/bin/gbasim tune --spec examples/demo.json --set stragglers.seed=1 --out results/tune-demo --jobs "$jobs"
  step demo bash scripts/demo.sh
  step compare-strained ./build/bin/gbasim compare --spec examples/compare.json --set stragglers.seed=1 \
    --with results/tune-demo/tuned.json --out results/compare-strained --jobs "$jobs"
  step cluster-model bash scripts/reproduce.sh cluster-model "${options[@]}"
  if [ -f ../shared/traces/alibaba-pai-minibatch/job_1_norm.csv ]; then
    step trace-replay bash scripts/trace_replay.sh "${options[@]}"
  else
    echo "trace-replay: skipped: ../shared/traces/alibaba-pai-minibatch is missing" | tee -a "$log"
  fi
  for sweep in severity switch-from-sync gba-iota-decay auto-switch-trace; do
    step "$sweep" bash scripts/reproduce.sh "$sweep" "${options[@]}"
  done
  step map-demo ./build/bin/gbasim map --spec examples/demo.json --set stragglers.seed=1 \
    --axes stragglers.persistent_fraction=0.125,0.25,0.5 --axes stragglers.persistent_slowdown=1,2,4 \
    --out results/map-demo --jobs "$jobs"
  if [ -f ../shared/traces/alibaba-pai-minibatch/job_1_norm.csv ]; then
    step whatif-pai bash scripts/whatif_pai.sh --jobs "$jobs"
  else
    echo "whatif-pai: skipped: ../shared/traces/alibaba-pai-minibatch is missing" | tee -a "$log"
  fi
  step published-collectives /usr/bin/python3 scripts/published_collectives.py
  for table in more ops alltoall; do
    step "published-collectives --$table" /usr/bin/python3 scripts/published_collectives.py "--$table"
  done
  step published-workload /usr/bin/python3 scripts/published_workload.py
  echo "all: $(( $(date +%s) - all_start )) s" | tee -a "$log"
  exit 0
fi
# Experiments of several sweeps: each sweep file of results/NAME/sweeps/ runs with `gbasim
# sweep` into results/NAME/runs/<sweep>/ (points/, summary.csv), one after the other; a sweep
# with failed points does not stop the others. Then a script writes the experiment's table from
# whatever finished, and the status is 1 if some point failed.
if [ "$name" = industrial-scale ] || [ "$name" = cluster-model ]; then
  bash scripts/setup.sh
  bash scripts/build.sh
  export GBASIM_DATA_CACHE=${GBASIM_DATA_CACHE:-$PWD/out/data-cache}
  dir=results/$name
  [ "$name" != industrial-scale ] || [ -f ../shared/traces/alibaba-pai-minibatch/job_1_norm.csv ] \
    || echo "reproduce.sh: ../shared/traces/alibaba-pai-minibatch is missing: the pai sweeps' points will fail" >&2
  start=$(date +%s)
  failed=0
  for file in "$dir"/sweeps/*.json; do
    sweep=$(basename "$file" .json)
    [ $fresh -eq 0 ] || rm -rf "$dir/runs/$sweep"
    began=$(date +%s)
    status=0
    ./build/bin/gbasim sweep --spec "$file" --out "$dir/runs/$sweep" --jobs "$jobs" || status=$?
    echo "reproduce.sh: $sweep: $(( $(date +%s) - began )) s$([ $status -eq 0 ] || echo " (exit $status)")" >&2
    [ $status -ne 130 ] || exit 130  # interrupted: stop here
    [ $status -eq 0 ] || failed=1
  done
  case $name in
    industrial-scale) /usr/bin/python3 scripts/industrial_table.py "$dir" ;;
    cluster-model) /usr/bin/python3 scripts/step_split.py "$dir" ;;
  esac
  echo "reproduce.sh: $name regenerated in $(( $(date +%s) - start )) s: $dir" >&2
  exit $failed
fi
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
./build/bin/gbasim sweep --table --out "$dir" "${against[@]}" >"$dir/table.md.tmp"
mv "$dir/table.md.tmp" "$dir/table.md"
cat "$dir/table.md"
echo "reproduce.sh: $name regenerated in $(( $(date +%s) - start )) s: $dir"

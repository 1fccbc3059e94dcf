#!/usr/bin/env bash
# gbasim sweep --launcher slurm against a real Slurm: a one-node Slurm on this machine
# (tests/slurm/cluster.sh) runs a sweep of 4 points as a job array; one task is cancelled
# midway (scancel) and leaves no result; submitting again runs only that point; the results
# and the summaries are byte-identical to the local launcher's (wall.csv holds the wall times).
# Usage: slurm_test.sh PATH/TO/gbasim   (exit 77, CTest's "skipped", where Slurm cannot start)
set -uo pipefail
gbasim=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cleanup() {
  bash "$here/slurm/cluster.sh" stop "$work/slurm" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

started=$(bash "$here/slurm/cluster.sh" start "$work/slurm" 2>"$work/why")
case $? in
  0) eval "$started" ;;
  77) echo "SKIPPED: Slurm cannot be started here: $(cat "$work/why")"; exit 77 ;;
  *) echo "FAIL: tests/slurm/cluster.sh: $(cat "$work/why")"; exit 1 ;;
esac
echo "a one-node Slurm runs ($SLURM_CONF)"

cd "$work" || exit 1
cat >base.json <<'JSON'
{"data": {"train_samples": 200000, "test_samples": 2000}, "model": {"name": "fm", "embedding_dim": 4},
 "training": {"workers": 4, "local_batch": 64}, "evaluation": {"interval_s": 0.005}}
JSON
cat >sweep.json <<'JSON'
{"description": "4 points for the Slurm test", "base": "base.json",
 "axes": {"training.mode": ["sync", "gba"]}, "seeds": [1, 2],
 "slurm": {"time": "10:00"}}
JSON

"$gbasim" sweep --spec sweep.json --out local --jobs 2 >local.log 2>&1 || fail "the local sweep failed: $(cat local.log)"

job=$("$gbasim" sweep --spec sweep.json --out cluster --launcher slurm 2>submit.log)
grep -q "submitted 4 points as Slurm job $job (4 array tasks" submit.log || fail "the submission: $(cat submit.log)"
[ -x cluster/slurm/task-1.sh ] || [ -f cluster/slurm/task-1.sh ] || fail "no task script"

# Array task 1 runs point mode-sync_seed-2: cancel it once it has started.
victim=cluster/points/mode-sync_seed-2.log
for _ in $(seq 600); do [ -e "$victim" ] && break; sleep 0.1; done
[ -e "$victim" ] || fail "array task 1 never started its point"
sleep 1
scancel "${job}_1"
for _ in $(seq 200); do
  squeue --noheader --array --jobs="$job" --format=%i | grep -qx "${job}_1" || break
  sleep 0.1
done
if squeue --noheader --array --jobs="$job" --format=%i | grep -qx "${job}_1"; then
  fail "task ${job}_1 still runs 20 s after scancel"
fi

# While the array's other tasks are in the queue, a second submission is refused.
if [ -n "$(squeue --noheader --jobs="$job" 2>/dev/null)" ]; then
  "$gbasim" sweep --spec sweep.json --out cluster --launcher slurm >again.log 2>&1
  rc=$?
  [ $rc -eq 2 ] && grep -q "still has" again.log ||
    fail "submitting again while the array runs must be refused (exit $rc): $(cat again.log)"
fi

# Follow the array to its end: the cancelled point has no result, and says why.
"$gbasim" sweep --spec sweep.json --out cluster --launcher slurm --wait >follow.log 2>&1
rc=$?
[ $rc -eq 1 ] || fail "following an array with a cancelled task should end with 1, not $rc: $(cat follow.log)"
[ ! -e cluster/points/mode-sync_seed-2.json ] || fail "the cancelled point has a result"
grep -q "stopped by a signal" cluster/points/mode-sync_seed-2.error 2>/dev/null ||
  fail "the cancelled point's error: $(cat cluster/points/mode-sync_seed-2.error 2>&1)"
ls cluster/points/*.tmp* >/dev/null 2>&1 && fail "half-written files left: $(ls cluster/points/*.tmp*)"
grep -q "without a result: mode-sync_seed-2" follow.log || fail "the summary must name the missing point: $(cat follow.log)"
grep -q "mode-sync_seed-2,2,sync,failed" cluster/summary.csv || fail "summary.csv: $(cat cluster/summary.csv)"

# Again: only the missing point is submitted, and the sweep completes.
"$gbasim" sweep --spec sweep.json --out cluster --launcher slurm --wait >resume.log 2>&1 ||
  fail "the resumed array failed: $(cat resume.log)"
grep -q "submitted 1 points" resume.log || fail "the resumption must submit only the missing point: $(cat resume.log)"

for f in local/points/*.json; do
  cmp -s "$f" "cluster/points/$(basename "$f")" || fail "$(basename "$f") differs from the local launcher's"
done
[ "$(ls cluster/points/*.json | wc -l)" -eq 4 ] || fail "expected 4 results: $(ls cluster/points)"
diff local/summary.csv cluster/summary.csv >summary.diff ||
  fail "the summaries differ: $(cat summary.diff)"
"$gbasim" sweep --spec sweep.json --out cluster --summarize >summarize.log 2>&1 ||
  fail "--summarize after the array: $(cat summarize.log)"
[ -s cluster/figures/convergence-time.png ] || fail "no convergence figure from --wait / --summarize"

if [ $failures -gt 0 ]; then
  echo "$failures check(s) failed; Slurm's logs: $(tail -n 5 "$work"/slurm/log/*.log)"
  exit 1
fi
echo "slurm test: passed (job $job: 4 points, one cancelled and re-run; results identical to the local launcher's)"

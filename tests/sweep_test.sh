#!/usr/bin/env bash
# gbasim sweep end to end: a 2 x 2 sweep runs in parallel, survives a kill and resumes
# without running finished points again, its summary agrees with the points' results, a
# failing point is recorded without stopping the others, and every sweep plot is drawn.
# Usage: sweep_test.sh PATH/TO/gbasim
set -uo pipefail
gbasim=$1
scripts=$(cd "$(dirname "$0")/../scripts" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cat >"$work/base.json" <<'JSON'
{"data": {"train_samples": 60000, "test_samples": 2000}, "model": {"name": "fm", "embedding_dim": 4},
 "training": {"workers": 4, "local_batch": 50}, "evaluation": {"interval_s": 0.01, "target_auc": 0.6},
 "stragglers": {"persistent_fraction": 0.25}}
JSON
cat >"$work/sweep.json" <<'JSON'
{"base": "base.json",
 "axes": {"training.mode": ["sync", "gba"], "stragglers.persistent_slowdown": [1, 3]},
 "seeds": [1]}
JSON

# One point at a time; kill the whole sweep (its process group) once the first point is in.
setsid "$gbasim" sweep --spec "$work/sweep.json" --jobs 1 >"$work/first.log" 2>&1 &
pid=$!
for _ in $(seq 1 2400); do  # up to 2 min on a loaded machine
  [ -n "$(ls "$work"/points/*.json 2>/dev/null)" ] && break
  sleep 0.05
done
kill -KILL -- -"$pid" 2>/dev/null
wait "$pid" 2>/dev/null
done_before=$(ls "$work"/points/*.json 2>/dev/null | wc -l)
[ "$done_before" -ge 1 ] && [ "$done_before" -lt 4 ] || fail "the kill should leave 1 to 3 finished points, found $done_before"
declare -A stamp first_seen
for f in "$work"/points/*.json; do stamp[$f]=$(stat -c %Y.%i "$f"); done

out=$("$gbasim" sweep --spec "$work/sweep.json" --jobs 2 2>&1) || fail "the resumed sweep failed: $out"
grep -q "4 points, $done_before already done" <<<"$out" || fail "the resumed sweep must say what is done: $out"
for f in "${!stamp[@]}"; do
  [ "$(stat -c %Y.%i "$f")" = "${stamp[$f]}" ] || fail "finished point $f was run again"
done
[ "$(ls "$work"/points/*.json | wc -l)" -eq 4 ] || fail "the resumed sweep must finish every point"

# The summary agrees with the points' JSON, and holds no wall time; wall.csv holds them.
# (A point finished just before the kill may have no wall time: the kill can fall between its
# result and the sweep's note of its wall time. Its wall_s is then empty, never made up.)
/usr/bin/python3 - "$work" "${!stamp[@]}" <<'PY' || fail "summary.csv disagrees with the points"
import csv, json, math, os, sys
work = sys.argv[1]
before = {os.path.basename(p)[:-len(".json")] for p in sys.argv[2:]}
rows = list(csv.DictReader(open(f"{work}/summary.csv")))
assert len(rows) == 4, rows
assert [r["training.mode"] for r in rows] == ["sync", "sync", "gba", "gba"]
for r in rows:
    assert r["status"] == "done", r
    s = json.load(open(f"{work}/points/{r['point']}.json"))["summary"]
    assert math.isclose(float(r["final_auc"]), s["final_auc"], rel_tol=1e-5), r
    assert math.isclose(float(r["simulated_time_s"]), s["simulated_time"], rel_tol=1e-5), r
    assert int(r["global_steps"]) == s["global_steps"], r
    g = s["gradients"]
    assert math.isclose(float(r["dropped_share"]), g["dropped"] / g["received"], abs_tol=1e-6), r
    assert "wall_s" not in r, r
walls = list(csv.DictReader(open(f"{work}/wall.csv")))
assert [w["point"] for w in walls] == [r["point"] for r in rows], walls
for w in walls:
    assert w["status"] == "done", w
    assert (w["wall_s"] == "" and w["point"] in before) or float(w["wall_s"]) > 0, w
PY

# A point that fails at run time is recorded; the other runs.
cat >"$work/failing.json" <<'JSON'
{"base": "base.json", "axes": {"data.criteo_path": ["", "no-such-data.tsv"]}}
JSON
out=$("$gbasim" sweep --spec "$work/failing.json" --out "$work/failing" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "a sweep with a failed point must exit 1 (got $rc): $out"
/usr/bin/python3 - "$work/failing/summary.csv" <<'PY' || fail "the failed point is not recorded: $(cat "$work/failing/summary.csv")"
import csv, sys
rows = {r["data.criteo_path"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert rows[""]["status"] == "done", rows
assert rows["no-such-data.tsv"]["status"] == "failed" and "no-such-data.tsv" in rows["no-such-data.tsv"]["error"], rows
PY

# Bad sweeps stop before anything runs.
echo '{"base": "base.json", "axes": {"training.mode": ["sync", "bogus"]}}' >"$work/bad.json"
msg=$("$gbasim" sweep --spec "$work/bad.json" --out "$work/bad" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "training.mode=bogus" <<<"$msg" || fail "a bad axis value must be named: $msg"
[ ! -e "$work/bad" ] || fail "a bad sweep must write nothing"

# Every sweep plot draws this sweep.
/usr/bin/python3 "$scripts/plot_sweep.py" all "$work" "$work/figures" >/dev/null || fail "plot_sweep.py all"
for f in convergence-time convergence-samples severity staleness; do
  for ext in png pdf; do
    [ -s "$work/figures/$f.$ext" ] || fail "plot_sweep.py wrote no $f.$ext"
  done
done

# Killed at other moments, again and again (2 points at a time): no point is lost, none is
# run twice, no half-written file is taken for a point, and the results are those of an
# uninterrupted sweep.
killed="$work/killed"
for delay in 0.1 0.4 0.7 1.0 1.3; do
  setsid "$gbasim" sweep --spec "$work/sweep.json" --out "$killed" --jobs 2 >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -KILL -- -"$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  for f in "$killed"/points/*.json; do
    [ -e "$f" ] || continue
    [ -n "${first_seen[$f]:-}" ] || first_seen[$f]=$(stat -c %Y.%i "$f")
    /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$f" || fail "half-written point $f"
  done
done
"$gbasim" sweep --spec "$work/sweep.json" --out "$killed" --jobs 2 >/dev/null 2>&1 || fail "the sweep resumed after five kills failed"
for f in "${!first_seen[@]}"; do
  [ "$(stat -c %Y.%i "$f")" = "${first_seen[$f]}" ] || fail "point $f was written again after it was done"
done
for f in "$work"/points/*.json; do
  cmp -s "$f" "$killed/points/$(basename "$f")" || fail "$(basename "$f") differs from the uninterrupted sweep's"
done

# An output folder that is a file is an error naming it (it was an internal error).
touch "$work/a-file"
msg=$("$gbasim" sweep --spec "$work/sweep.json" --out "$work/a-file" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "a sweep into a file must exit 2 (got $rc): $msg"
grep -qF "$work/a-file" <<<"$msg" || fail "the error must name the output folder: $msg"

if [ $failures -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all sweep checks passed"

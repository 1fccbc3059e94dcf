#!/usr/bin/env python3
"""gbasim whatif: what each straggler source costs each mode.

  whatif_test.py GBASIM EXAMPLES_DIR            check
  whatif_test.py GBASIM EXAMPLES_DIR --update   rewrite tests/whatif.expected.json

On a small budget (examples_test.py's), checks that:
- examples/whatif.json (six sources) matches its committed expected analysis: each source's
  presence, seeds reaching the target, run time lost (simulated, exact) and final AUC lost;
- the losses are the paired differences of the runs in summary.csv, recomputed here;
- with no straggler at all, every loss is exactly 0 and only the spec as given ran;
- with persistent stragglers only, every other source's loss is exactly 0, "all together" is
  the persistent one, and a quarter of the workers 4x slower costs sync run time beyond the
  noise;
- on a replayed PAI trace (../shared, skipped where it is missing), the costliest trace workers
  and periods are named;
- bad options are refused with the option's name, and nothing is written."""
import csv
import json
import os
import subprocess
import sys
import tempfile

SMALL = ["data.train_samples=100000", "data.test_samples=3000", "training.local_batch=64",
         "evaluation.test_samples=0", "evaluation.interval_s=0.05", "evaluation.target_auc=0.65"]
NO_STRAGGLERS = ["stragglers.persistent_fraction=0", "stragglers.noise_cv=0",
                 "stragglers.transient_rate_per_s=0"]
EXPECT_AUC = 2e-3
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def whatif(gbasim, spec, out, sets, *options):
    command = [gbasim, "whatif", "--spec", spec, "--out", out, "--jobs", "2", *options]
    for s in SMALL + sets:
        command += ["--set", s]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL {' '.join(command)}: {done.stderr.strip()[-2000:]}")
    with open(os.path.join(out, "whatif.json")) as f:
        return json.load(f)


def rows(out):
    with open(os.path.join(out, "summary.csv"), newline="") as f:
        return list(csv.DictReader(f))


def exactly_zero(entry):
    return entry["mean"] == 0 and entry["low"] == 0 and entry["high"] == 0


def digest(doc):
    """What the expected file holds of an analysis."""
    return {m["mode"]: {s["source"]: {"present": s["present"], "reached": s["reached_target"],
                                      "run_time_lost": s["run_time_lost"]["mean"],
                                      "final_auc_lost": s["final_auc_lost"]["mean"]}
                        for s in m["sources"]} for m in doc["modes"]}


def recomputed(out, mode, variant, key):
    """{seed: the summary's `key`} of a variant's runs, read from their results."""
    values = {}
    for r in rows(out):
        if r["training.mode"] == mode and r["variant"] == variant:
            with open(os.path.join(out, "points", r["point"] + ".json")) as f:
                values[int(r["seed"])] = json.load(f)["summary"][key]
    return values


def main():
    args = [a for a in sys.argv[1:] if a != "--update"]
    update = "--update" in sys.argv
    gbasim, examples = args
    expected_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "whatif.expected.json")
    with tempfile.TemporaryDirectory() as work:
        # The shipped example: six sources, against its expected analysis.
        out = os.path.join(work, "example")
        doc = whatif(gbasim, os.path.join(examples, "whatif.json"), out, [], "--seeds", "3")
        got = digest(doc)
        if update:
            with open(expected_path, "w") as f:
                json.dump({"command": "tests/whatif_test.py build/bin/gbasim examples --update",
                           "small_budget": SMALL, "seeds": 3, "analysis": got}, f, indent=2)
                f.write("\n")
            print(f"wrote {expected_path}")
            return
        with open(expected_path) as f:
            want = json.load(f)["analysis"]
        for mode, sources in want.items():
            for source, w in sources.items():
                g = got[mode][source]
                same = (g["present"] == w["present"] and g["reached"] == w["reached"]
                        and abs(g["run_time_lost"] - w["run_time_lost"]) <= 1e-9 * max(1, abs(w["run_time_lost"]))
                        and abs(g["final_auc_lost"] - w["final_auc_lost"]) <= EXPECT_AUC)
                check(same, f"examples/whatif.json, {mode}, {source}: {g} (expected {w})")
        # The losses are the runs' paired differences.
        for mode in ("sync", "gba"):
            given = recomputed(out, mode, "given", "simulated_time")
            without = recomputed(out, mode, "without-persistent", "simulated_time")
            mean = sum(given[s] - without[s] for s in given) / len(given)
            entry = next(s for m in doc["modes"] if m["mode"] == mode for s in m["sources"]
                         if s["source"] == "persistent")
            check(abs(entry["run_time_lost"]["mean"] - mean) <= 1e-12 * max(1, abs(mean)),
                  f"{mode}: persistent's run time lost {entry['run_time_lost']['mean']} is the "
                  f"runs' paired mean {mean}")
        absent = [s for m in doc["modes"] for s in m["sources"] if not s["present"]]
        check([s["source"] for s in absent] == ["trace", "trace"],
              "examples/whatif.json: only the trace is absent")

        # No straggler at all: nothing to remove, every loss exactly 0, only the given runs.
        out = os.path.join(work, "none")
        doc = whatif(gbasim, os.path.join(examples, "demo.json"), out, NO_STRAGGLERS, "--seeds", "2")
        entries = [s for m in doc["modes"] for s in m["sources"]]
        check(all(not s["present"] for s in entries), "no stragglers: no source is present")
        check(all(exactly_zero(s[k]) for s in entries
                  for k in ("time_to_auc_lost", "run_time_lost", "final_auc_lost")),
              "no stragglers: every loss is exactly 0")
        check(sorted(r["variant"] for r in rows(out)) == ["given"] * 4,
              "no stragglers: only the spec as given ran (2 modes x 2 seeds)")

        # Persistent stragglers only.
        out = os.path.join(work, "persistent")
        doc = whatif(gbasim, os.path.join(examples, "compare.json"), out,
                     ["stragglers.noise_cv=0", "stragglers.transient_rate_per_s=0"], "--seeds", "3")
        for m in doc["modes"]:
            by = {s["source"]: s for s in m["sources"]}
            others = [s for name, s in by.items() if name not in ("persistent", "all")]
            check(all(not s["present"] and exactly_zero(s["run_time_lost"])
                      and exactly_zero(s["final_auc_lost"]) for s in others),
                  f"persistent only, {m['mode']}: every other source's loss is exactly 0")
            check(by["all"]["run_time_lost"] == by["persistent"]["run_time_lost"],
                  f"persistent only, {m['mode']}: all together is the persistent source")
        sync = {s["source"]: s for s in doc["modes"][0]["sources"]}
        lost = sync["persistent"]["run_time_lost"]
        check(doc["modes"][0]["mode"] == "sync" and lost["low"] > 0,
              f"persistent only: a quarter of the workers 4x slower costs sync run time beyond "
              f"the noise ({lost})")
        check(abs(sync["persistent"]["share"] - 1.0) < 1e-12,
              "persistent only: the persistent source's share is 1")

        # A replayed PAI trace: its workers and periods that cost most are named.
        trace = os.path.join(examples, "..", "..", "shared", "traces", "alibaba-pai-minibatch",
                             "job_1_norm.csv")
        if not os.path.exists(trace):
            print(f"skip the PAI trace check: {trace} is missing")
        else:
            out = os.path.join(work, "pai")
            doc = whatif(gbasim, os.path.join(examples, "demo.json"), out,
                         NO_STRAGGLERS + ["stragglers.trace.format=pai",
                                          f"stragglers.trace.path={trace}"], "--seeds", "2")
            for m in doc["modes"]:
                by = {s["source"]: s for s in m["sources"]}
                check(by["trace"]["present"] and not by["persistent"]["present"],
                      f"PAI trace, {m['mode']}: the trace is the one source present")
                workers = [w["trace_worker"] for w in m.get("trace_workers", [])]
                periods = m.get("trace_periods", [])
                excess = [w["excess_compute_s"] for w in m.get("trace_workers", [])]
                check(len(workers) == 3 and len(set(workers)) == 3 and excess == sorted(excess, reverse=True)
                      and len(periods) == 3,
                      f"PAI trace, {m['mode']}: the 3 costliest trace workers {workers} and "
                      f"periods are named, costliest first")

        # Bad options: refused, named, nothing written.
        for bad, name in ((["--sources", "persistent,cosmic"], "--sources"),
                          (["--seeds", "1"], "--seeds"), (["--modes", "sync,sync"], "--modes")):
            out = os.path.join(work, "bad")
            done = subprocess.run([gbasim, "whatif", "--spec", os.path.join(examples, "demo.json"),
                                   "--out", out, *bad], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
            check(done.returncode == 2 and name in done.stderr and not os.path.exists(out),
                  f"{' '.join(bad)}: refused naming {name} ({done.stderr.strip()})")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")


if __name__ == "__main__":
    main()

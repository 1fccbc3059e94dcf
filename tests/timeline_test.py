#!/usr/bin/env python3
"""gbasim run --timeline (sim/timeline.h) on examples/compare.json (16 workers, a quarter of them
4x slower), timing-only:
- the result is byte-identical with and without a timeline, in sync and in GBA;
- the file is a Trace Event file: named tracks, one per worker;
- sync: an update a global step; the slow workers' compute spans are 4x the others' (the
  spec's persistent_slowdown), and the fast ones wait for them in the all-reduce;
- GBA: the gradients waiting for an update never exceed the 16 of a global batch and fall to 0
  at each update; an update a global step, each applied on the server's track;
- failures: a "failed" instant and a "down" span for each failure the result lists;
- --timeline-window keeps only what overlaps it, --timeline-events stops at that many and says
  so, and bad values are refused with the option's name.

Usage: timeline_test.py GBASIM COMPARE_SPEC"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

FAILURES = []


def check(ok, what):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        FAILURES.append(what)


def run(gbasim, spec, work, name, mode, *extra):
    out = os.path.join(work, f"{name}.json")
    command = [gbasim, "run", "--spec", spec, "-q", "--out", out, "--set", f"training.mode={mode}",
               "--set", "simulation.timing_only=true", *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    return done, out


def load(path):
    with open(path) as f:
        return json.load(f)


def check_overlap(gba_doc):
    """scripts/timeline_overlap.py: a hand-made trace's shares, worked by hand, and a GBA run's,
    which add up to the window and never count more workers than there are."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
    from timeline_overlap import overlap
    # Over 0-2 s: worker 0 pulls 0-1 s, worker 1 pushes 0.5-1.5 s and computes 1.5-2 s.
    hand = [{"ph": "X", "pid": 1, "tid": 0, "name": "pull", "ts": 0.0, "dur": 1e6},
            {"ph": "X", "pid": 1, "tid": 1, "name": "push", "ts": 0.5e6, "dur": 1e6},
            {"ph": "X", "pid": 1, "tid": 1, "name": "compute", "ts": 1.5e6, "dur": 0.5e6},
            {"ph": "X", "pid": 3, "tid": 0, "name": "take in", "ts": 0.0, "dur": 2e6}]
    got = overlap(hand, 0.0, 2e6)
    want = {"both": 0.25, "pulls only": 0.25, "pushes only": 0.25, "neither": 0.25,
            "mean workers pulling": 0.5, "mean workers pushing": 0.5,
            "mean workers computing": 0.25}
    check(all(abs(got[k] - v) < 1e-12 for k, v in want.items()),
          f"timeline_overlap.py: a hand-made trace's shares {got}")
    events = gba_doc["traceEvents"]
    end = max(e["ts"] + e.get("dur", 0) for e in events if "ts" in e)
    got = overlap(events, 0.0, end)
    total = got["both"] + got["pulls only"] + got["pushes only"] + got["neither"]
    busy = got["mean workers pulling"] + got["mean workers pushing"] + got["mean workers computing"]
    check(abs(total - 1.0) < 1e-9 and 0 < busy <= 16 and got["both"] > 0,
          f"timeline_overlap.py: a GBA run's shares add up to {total:.9f}, {busy:.2f} workers busy")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gbasim, spec = sys.argv[1:]
    slow = set()
    with tempfile.TemporaryDirectory() as work:
        traces = {}
        for mode in ["sync", "gba"]:
            plain, plain_out = run(gbasim, spec, work, f"{mode}-plain", mode)
            trace = os.path.join(work, f"{mode}-timeline.json")
            traced, traced_out = run(gbasim, spec, work, f"{mode}-traced", mode, "--timeline", trace)
            check(plain.returncode == 0 and traced.returncode == 0, f"{mode}: both runs end well")
            with open(plain_out, "rb") as a, open(traced_out, "rb") as b:
                check(a.read() == b.read(), f"{mode}: the result is the same with a timeline")
            traces[mode] = (load(trace), load(traced_out)["summary"])

        doc, summary = traces["sync"]
        events = doc["traceEvents"]
        names = {e["args"]["name"] for e in events if e["ph"] == "M"}
        check({"workers", "training", "updates", "snapshots"} <= names and
              all(f"worker {w}" in names for w in range(16)), "sync: tracks are named")
        check(not doc["otherData"]["truncated"], "sync: the whole run fits the default cap")
        updates = [e for e in events if e["name"] == "update"]
        check(len(updates) == summary["global_steps"],
              f"sync: {len(updates)} updates for {summary['global_steps']} global steps")
        compute = {}
        for e in events:
            if e["name"] == "compute":
                compute.setdefault(e["tid"], []).append(e["dur"])
        means = {w: statistics.mean(d) for w, d in compute.items()}
        fastest = min(means.values())
        slow = {w for w, m in means.items() if m > 2 * fastest}
        ratio = statistics.mean(means[w] for w in slow) / statistics.mean(
            m for w, m in means.items() if w not in slow) if slow else 0.0
        check(len(slow) == 4 and 3.6 < ratio < 4.4,
              f"sync: {len(slow)} slow workers computing {ratio:.2f}x as long (4 at 4x)")
        waits = {}
        for e in events:
            if e["name"] == "all-reduce":
                waits.setdefault(e["tid"], []).append(e["dur"])
        fast_wait = statistics.mean(statistics.mean(waits[w]) for w in waits if w not in slow)
        slow_wait = statistics.mean(statistics.mean(waits[w]) for w in waits if w in slow)
        check(fast_wait > 3 * slow_wait,
              f"sync: the fast workers' all-reduce takes {fast_wait / slow_wait:.1f}x the slow "
              "ones' (they wait for them)")

        doc, summary = traces["gba"]
        events = doc["traceEvents"]
        waiting = [e["args"]["value"] for e in events if e["name"] == "gradients waiting"]
        check(waiting and max(waiting) == 16, f"gba: at most {max(waiting)} gradients wait (16)")
        updates = [e for e in events if e["name"] == "update"]
        check(len(updates) == summary["global_steps"],
              f"gba: {len(updates)} updates for {summary['global_steps']} global steps")
        check(sum(1 for v in waiting if v == 0) == len(updates),
              "gba: the gradients waiting fall to 0 at each update")
        shards = {}
        for e in events:
            if e["name"] == "apply update" and e["pid"] == 3:
                shards.setdefault(e["tid"], []).append(e["ts"])
        names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M"}
        check(sorted(shards) == [1, 2] and all(len(t) == len(updates) for t in shards.values())
              and shards[1] == shards[2] and names.get((3, 1)) == "shard 0",
              f"gba: each of the 2 shards' tracks has an update applied an update, at once "
              f"({ {names.get((3, k)): len(t) for k, t in shards.items()} })")

        # Failures: a "failed" instant and a "down" span for each failure the result lists.
        trace = os.path.join(work, "failures-timeline.json")
        done, out = run(gbasim, spec, work, "failures", "gba", "--timeline", trace,
                        "--set", "stragglers.failures.rate_per_s=2",
                        "--set", "stragglers.failures.restart_s=0.05")
        failures = sum(len(w["failure_times"]) for w in load(out)["workers"])
        names = [e["name"] for e in load(trace)["traceEvents"]]
        check(done.returncode == 0 and failures > 0 and
              names.count("failed") == names.count("down") == failures,
              f"failures: {names.count('failed')} failed and {names.count('down')} down for the "
              f"result's {failures}")

        # The one-queue server: the messages sent and not yet taken up, as a counter.
        trace = os.path.join(work, "one-queue-timeline.json")
        plain, plain_out = run(gbasim, spec, work, "one-queue-plain", "gba",
                               "--set", "cluster.server_model=one_queue", "--set", "cluster.ps_shards=1")
        done, out = run(gbasim, spec, work, "one-queue", "gba", "--timeline", trace,
                        "--set", "cluster.server_model=one_queue", "--set", "cluster.ps_shards=1")
        with open(plain_out, "rb") as a, open(out, "rb") as b:
            check(done.returncode == 0 and a.read() == b.read(),
                  "one-queue: the result is the same with a timeline")
        queue = [e["args"]["value"] for e in load(trace)["traceEvents"]
                 if e["name"] == "server queue"]
        check(queue and min(queue) >= 0 and max(queue) <= 16 and max(queue) > 1,
              f"one-queue: the server queue counter lies in [0, 16] and builds up "
              f"(max {max(queue) if queue else None})")

        # The window and the cap.
        trace = os.path.join(work, "window-timeline.json")
        done, _ = run(gbasim, spec, work, "window", "gba", "--timeline", trace,
                      "--timeline-window", "0.5:0.6")
        inside = all(e["ts"] <= 0.6e6 and e["ts"] + e.get("dur", 0) >= 0.5e6
                     for e in load(trace)["traceEvents"] if "ts" in e)
        check(done.returncode == 0 and inside, "--timeline-window 0.5:0.6 keeps what overlaps it")
        trace = os.path.join(work, "cap-timeline.json")
        done, _ = run(gbasim, spec, work, "cap", "gba", "--timeline", trace,
                      "--timeline-events", "50")
        capped = load(trace)
        kept = sum(1 for e in capped["traceEvents"] if e["ph"] != "M")
        check(done.returncode == 0 and kept == 50 and capped["otherData"]["truncated"],
              f"--timeline-events 50 keeps {kept} and marks the file truncated")
        for bad, want in [(["--timeline-window", "0.6:0.5", "--timeline", trace],
                           "--timeline-window must be FROM:TO"),
                          (["--timeline-window", "0:1"], "need --timeline FILE"),
                          (["--timeline", trace, "--timeline-events", "0"],
                           "--timeline-events must be at least 1"),
                          (["--timeline", os.path.join(work, "bad.json")],
                           "is the result's file (--out)")]:
            done, out = run(gbasim, spec, work, "bad", "gba", *bad)
            check(done.returncode != 0 and want in done.stderr and not os.path.exists(out),
                  f"{' '.join(bad[:2])}: refused ({want})")
        check_overlap(traces["gba"][0])
    print(f"timeline: {len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""How the workers' pulls and pushes share a window of a `gbasim run --timeline` file: the share
of the window in which some worker pulls while another pushes (both directions of the server
links busy), pulls alone, pushes alone, or neither; and the mean number of workers pulling,
pushing and computing. Workers that pull and push at once load a server link's two directions
together; workers in lockstep load one direction, then the other (docs/workload.md, the
bounds of a server-mode round).

Usage: timeline_overlap.py TIMELINE.json FROM_S TO_S
Prints one line of shares; --json prints them as a JSON object instead."""
import json
import sys

WORKERS = 1  # the workers' process id in the file (sim/timeline.cc)
PHASES = ("pull", "push", "compute")
DOING = {"pull": "pulling", "push": "pushing", "compute": "computing"}


def overlap(events, start_us, end_us):
    """The shares of [start_us, end_us] with pulls and pushes both, pulls only, pushes only and
    neither under way, and the mean workers in each phase."""
    edges = []
    for e in events:
        if e.get("ph") != "X" or e.get("pid") != WORKERS or e.get("name") not in PHASES:
            continue
        a, b = max(start_us, e["ts"]), min(end_us, e["ts"] + e["dur"])
        if b > a:
            edges += [(a, e["name"], 1), (b, e["name"], -1)]
    edges.sort()
    now = {p: 0 for p in PHASES}
    busy = {p: 0.0 for p in PHASES}
    share = {"both": 0.0, "pulls only": 0.0, "pushes only": 0.0, "neither": 0.0}
    t0 = start_us
    for t, phase, step in edges + [(end_us, None, 0)]:
        dt = t - t0
        if dt > 0:
            for p in PHASES:
                busy[p] += now[p] * dt
            key = ("both" if now["pull"] and now["push"] else "pulls only" if now["pull"]
                   else "pushes only" if now["push"] else "neither")
            share[key] += dt
        if phase:
            now[phase] += step
        t0 = t
    span = end_us - start_us
    out = {k: v / span for k, v in share.items()}
    out.update({f"mean workers {DOING[p]}": busy[p] / span for p in PHASES})
    return out


def main(argv):
    as_json = "--json" in argv
    args = [a for a in argv[1:] if a != "--json"]
    if len(args) != 3:
        sys.exit(__doc__.strip())
    path = args[0]
    try:
        start, end = float(args[1]), float(args[2])
    except ValueError:
        sys.exit(f"timeline_overlap.py: FROM_S and TO_S must be numbers, got {args[1]!r} {args[2]!r}")
    if not (0 <= start < end) or end == float("inf"):
        sys.exit(f"timeline_overlap.py: the window must be 0 <= FROM_S < TO_S, got {start} {end}")
    try:
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"timeline_overlap.py: {path}: not a gbasim timeline ({e})")
    shares = overlap(events, start * 1e6, end * 1e6)
    if as_json:
        print(json.dumps(shares, indent=2))
    else:
        print(f"{path} {start:g}-{end:g} s: " +
              ", ".join(f"{k} {v:.3f}" if k[0] != "m" else f"{k} {v:.1f}"
                        for k, v in shares.items()))


if __name__ == "__main__":
    main(sys.argv)

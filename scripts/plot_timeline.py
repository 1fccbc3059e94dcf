#!/usr/bin/python3
"""A drawing of a `gbasim run --timeline` file, for a page or a report: each worker's spans as
coloured bars on its own row, the parameter server's on a row above them, the applied updates as ticks above them, and the counters
(staleness, gradients waiting) under them. Perfetto (ui.perfetto.dev) shows the same tracks and
lets one zoom; this draws them still.

Usage: plot_timeline.py OUT_PREFIX TIMELINE.json [FROM_S TO_S]
Writes OUT_PREFIX.png and OUT_PREFIX.pdf, of the simulated seconds FROM_S to TO_S (default: all
the file holds)."""
import json
import sys

from plotting import plt, save_figure

COLOURS = {"compute": "tab:blue", "compute (lost)": "tab:red", "pull": "tab:orange",
           "push": "tab:green", "fetch rows": "tab:purple", "all-reduce": "tab:olive",
           "wait for admission": "lightgrey", "down": "black", "take in": "tab:brown",
           "apply update": "tab:cyan", "grant": "tab:pink"}
WORKERS, SERVER = 1, 3  # the file's process ids (sim/timeline.cc)


def main(argv):
    if len(argv) not in (3, 5):
        sys.exit(__doc__.strip())
    prefix, path = argv[1], argv[2]
    try:
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"plot_timeline.py: {path}: not a gbasim timeline ({e})")
    spans = [e for e in events if e["ph"] == "X" and e["pid"] in (WORKERS, SERVER)]
    for e in spans:  # the server's row above worker 0's, its shards' above it
        e["row"] = e["tid"] if e["pid"] == WORKERS else -1 - e["tid"]
    start = float(argv[3]) * 1e6 if len(argv) == 5 else min((e["ts"] for e in events if "ts" in e),
                                                            default=0.0)
    end = float(argv[4]) * 1e6 if len(argv) == 5 else max(
        (e["ts"] + e.get("dur", 0.0) for e in events if "ts" in e), default=1.0)
    workers = sorted({e["row"] for e in spans})
    counters = sorted({e["name"] for e in events if e["ph"] == "C"})
    fig, axes = plt.subplots(1 + len(counters), 1, figsize=(11, 0.28 * len(workers) + 1.6 +
                                                          1.3 * len(counters)),
                             sharex=True, squeeze=False, constrained_layout=True,
                             gridspec_kw={"height_ratios": [max(len(workers), 4) * 0.28 + 0.6] +
                                          [1.3] * len(counters)})
    ax = axes[0][0]
    seen = set()
    for e in spans:
        if e["ts"] + e["dur"] < start or e["ts"] > end:
            continue
        label = e["name"] if e["name"] not in seen else None
        seen.add(e["name"])
        ax.broken_barh([((e["ts"]) / 1e3, e["dur"] / 1e3)], (e["row"] - 0.4, 0.8),
                       color=COLOURS.get(e["name"], "tab:gray"), label=label)
    for e in events:
        if e["ph"] == "i" and e["name"] == "update" and start <= e["ts"] <= end:
            ax.axvline(e["ts"] / 1e3, color="black", lw=0.4, alpha=0.5)
    ax.set(ylabel="worker", xlim=(start / 1e3, end / 1e3),
           title="gbasim run --timeline (vertical lines: updates applied)")
    ax.set_yticks(workers, ["server" if r == -1 else f"shard {-2 - r}" if r < -1 else str(r)
                            for r in workers])
    ax.invert_yaxis()
    ax.legend(ncol=4, fontsize=8, loc="upper right")
    for row, name in zip(axes[1:], counters):
        points = sorted((e["ts"], e["args"]["value"]) for e in events
                        if e["ph"] == "C" and e["name"] == name and start <= e["ts"] <= end)
        if points:
            row[0].step([t / 1e3 for t, _ in points], [v for _, v in points], where="post", lw=0.8)
        row[0].set(ylabel=name)
        row[0].grid(alpha=0.3)
    axes[-1][0].set(xlabel="simulated time (ms)")
    save_figure(fig, prefix)


if __name__ == "__main__":
    main(sys.argv)

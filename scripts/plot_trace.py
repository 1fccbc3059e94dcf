#!/usr/bin/python3
"""Per-worker slowdowns of a trace over its iterations, from `gbasim trace-stats --json`.

Usage: plot_trace.py OUT_PREFIX STATS.json
Writes OUT_PREFIX.png and OUT_PREFIX.pdf: one line per worker (its time over the median
worker's at each sampled iteration), the episode threshold as a dashed line.
"""
import json
import os
import sys

from plotting import plt, save_figure


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip())
    prefix, path = argv[1], argv[2]
    try:
        with open(path) as f:
            stats = json.load(f)
        series = stats["series"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"plot_trace.py: {path}: not a `gbasim trace-stats --json` file ({e})")
    fig, ax = plt.subplots(figsize=(10, 4), constrained_layout=True)
    for s in series:
        ax.plot(s["iterations"], s["slowdowns"], lw=0.8, label=f"worker {s['worker']}")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set(xlabel="iteration", ylabel="slowdown (time / median worker's)",
           title=f"Per-worker slowdowns: {os.path.basename(stats['trace'])}")
    ax.grid(alpha=0.3)
    ax.legend(ncol=5, fontsize=8)
    save_figure(fig, prefix)


if __name__ == "__main__":
    main(sys.argv)

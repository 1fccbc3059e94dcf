#!/usr/bin/python3
"""Per-worker or per-machine slowdowns of a trace, from `gbasim trace-stats --json`.

Usage: plot_trace.py OUT_PREFIX STATS.json
Writes OUT_PREFIX.png and OUT_PREFIX.pdf. A PAI mini-batch-time trace: one line per worker
(its time over the median worker's at each sampled iteration). A machine-usage trace: one
step line per machine (1 / the speed co-located load leaves) over the trace's time, and
under it the machines' bandwidth factors when the trace has any.
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
        usage = "machines" in stats
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"plot_trace.py: {path}: not a `gbasim trace-stats --json` file ({e})")
    name = os.path.basename(stats["trace"])
    if not usage:
        fig, ax = plt.subplots(figsize=(10, 4), constrained_layout=True)
        for s in series:
            ax.plot(s["iterations"], s["slowdowns"], lw=0.8, label=f"worker {s['worker']}")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set(xlabel="iteration", ylabel="slowdown (time / median worker's)",
               title=f"Per-worker slowdowns: {name}")
        ax.grid(alpha=0.3)
        ax.legend(ncol=5, fontsize=8)
        save_figure(fig, prefix)
        return
    has_bandwidth = any(s["bandwidth_times"] for s in series)
    rows = 2 if has_bandwidth else 1
    fig, axes = plt.subplots(rows, 1, figsize=(10, 3.2 * rows), sharex=True, squeeze=False,
                             constrained_layout=True)
    legend = len(series) <= 20
    for s in series:
        if s["times"]:
            axes[0][0].step(s["times"], s["slowdowns"], where="post", lw=0.8, label=s["machine"])
        if has_bandwidth and s["bandwidth_times"]:
            axes[1][0].step(s["bandwidth_times"], s["bandwidth_factors"], where="post", lw=0.8,
                            label=s["machine"])
    axes[0][0].axhline(1.0, color="black", lw=0.8)
    axes[0][0].set(ylabel="slowdown (1 / speed factor)",
                   title=f"Per-machine slowdowns: {name} ({stats['format']})")
    if has_bandwidth:
        axes[1][0].set(ylabel="bandwidth factor", ylim=(0, 1.05))
    axes[-1][0].set(xlabel="trace time (s)")
    for row in axes:
        row[0].grid(alpha=0.3)
        if legend:
            row[0].legend(ncol=5, fontsize=8)
    save_figure(fig, prefix)


if __name__ == "__main__":
    main(sys.argv)

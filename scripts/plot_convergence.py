#!/usr/bin/python3
"""Convergence of simulated runs: test AUC against simulated time, a line per mode.

Usage: plot_convergence.py OUT_PREFIX RUN.json [RUN.json ...]
Each RUN.json is a `gbasim run` result. Writes OUT_PREFIX.png and OUT_PREFIX.pdf; a dot marks
each run's time-to-target-AUC and a dashed line the target (and the Bayes AUC when known).
"""
import json
import sys

from plotting import plt, save_figure

ORDER = ["sync", "async", "gba", "ssp", "backup"]


def load(path):
    try:
        with open(path) as f:
            run = json.load(f)
        run["summary"]["mode"], run["curve"]
        return run
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"plot_convergence.py: {path}: not a gbasim run result ({e})")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.strip())
    prefix = argv[1]
    runs = sorted((load(p) for p in argv[2:]),
                  key=lambda r: ORDER.index(r["summary"]["mode"]) if r["summary"]["mode"] in ORDER else 99)
    fig, (ax_time, ax_samples) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for run in runs:
        s, curve = run["summary"], run["curve"]
        line, = ax_time.plot([p["time"] for p in curve], [p["test_auc"] for p in curve], label=s["mode"])
        ax_samples.plot([p["samples"] / 1e6 for p in curve], [p["test_auc"] for p in curve], label=s["mode"],
                        color=line.get_color())
        if s["time_to_auc"] is not None:
            ax_time.plot([s["time_to_auc"]], [s["target_auc"]], "o", color=line.get_color())
    target = runs[0]["summary"]["target_auc"]
    for ax in (ax_time, ax_samples):
        ax.axhline(target, color="gray", ls="--", lw=1, label=f"target AUC {target}")
        if "bayes_auc" in runs[0]["summary"]:
            ax.axhline(runs[0]["summary"]["bayes_auc"], color="black", ls=":", lw=1,
                       label=f"Bayes AUC {runs[0]['summary']['bayes_auc']:.4f}")
        ax.set_ylabel("test AUC")
        ax.grid(alpha=0.3)
    ax_time.set(xlabel="simulated time (s)", title="Test AUC against simulated time (dots: time-to-target)")
    ax_samples.set(xlabel="training samples applied (millions)", title="Test AUC against samples")
    ax_samples.legend(loc="lower right")
    save_figure(fig, prefix)


if __name__ == "__main__":
    main(sys.argv)

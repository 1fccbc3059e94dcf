#!/usr/bin/python3
"""What the stragglers cost: the figure of `gbasim whatif` (its whatif.json).

Usage: plot_whatif.py WHATIF.json OUT_PREFIX
Writes OUT_PREFIX.png and OUT_PREFIX.pdf: three panels, the time to the target AUC, the run
time and the final AUC lost to each straggler source (and to all of them together), a bar per
mode, with the paired 95% interval over the seeds as an error bar. Sources the spec does not
hold are left out.
"""
import json
import sys

from plotting import plt, save_figure


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
        doc["modes"][0]["sources"]
        return doc
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        sys.exit(f"plot_whatif.py: {path}: not a gbasim whatif result ({e})")


def bar_values(entry):
    """(mean, lower error, upper error) of an interval; zeros where it is undefined."""
    mean, low, high = entry["mean"], entry["low"], entry["high"]
    if mean is None:
        return 0.0, 0.0, 0.0
    if low is None or high is None:
        return mean, 0.0, 0.0
    return mean, mean - low, high - mean


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip())
    doc = load(argv[1])
    modes = doc["modes"]
    sources = [s["source"] for s in modes[0]["sources"] if s["present"]]
    if not sources:
        sources = ["all"]  # no source in the spec: one bar of 0 a mode says so
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    width = 0.8 / len(modes)
    panels = [("time_to_auc_lost", "time to AUC lost (simulated s)"),
              ("run_time_lost", "run time lost (simulated s)"),
              ("final_auc_lost", "final AUC lost")]
    for ax, (key, label) in zip(axes, panels):
        for k, mode in enumerate(modes):
            by_source = {s["source"]: s for s in mode["sources"]}
            values = [bar_values(by_source[s][key]) for s in sources]
            xs = [i + (k - (len(modes) - 1) / 2) * width for i in range(len(sources))]
            ax.bar(xs, [v[0] for v in values], width,
                   yerr=[[v[1] for v in values], [v[2] for v in values]], capsize=3,
                   label=mode["mode"])
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(sources)))
        ax.set_xticklabels(["all together" if s == "all" else s for s in sources], rotation=20)
        ax.set_ylabel(label)
    axes[0].legend(title="mode")
    fig.suptitle(f"What the stragglers cost: {doc['spec']}, {doc['seeds']} paired seeds, "
                 f"target AUC {doc['target_auc']:g} (95% intervals)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, argv[2])


if __name__ == "__main__":
    main(sys.argv)

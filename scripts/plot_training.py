#!/usr/bin/python3
"""Plots test AUC and log-loss against training samples for `gbasim train` result files.

Usage: plot_training.py OUT_PREFIX RESULT.json [RESULT.json ...]
Writes OUT_PREFIX.png and OUT_PREFIX.pdf; a dashed line marks the data set's Bayes AUC.
"""
import json
import sys

from plotting import plt, save_figure


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.strip())
    prefix, paths = argv[1], argv[2:]
    fig, (ax_auc, ax_loss) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    bayes = None
    for path in paths:
        try:
            with open(path) as f:
                result = json.load(f)
            curve = result["curve"]
            name = result["model"]["name"]
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"plot_training.py: {path}: not a gbasim train result ({e})")
        samples = [p["samples"] / 1e6 for p in curve]
        ax_auc.plot(samples, [p["test_auc"] for p in curve], marker="o", ms=3, label=name)
        ax_loss.plot(samples, [p["test_logloss"] for p in curve], marker="o", ms=3, label=name)
        bayes = result.get("bayes_auc", bayes)
    if bayes is not None:
        ax_auc.axhline(bayes, color="black", ls="--", lw=1, label=f"Bayes AUC {bayes:.4f}")
    ax_auc.set(xlabel="training samples (millions)", ylabel="test AUC", title="Test AUC")
    ax_loss.set(xlabel="training samples (millions)", ylabel="test log-loss", title="Test log-loss")
    for ax in (ax_auc, ax_loss):
        ax.grid(alpha=0.3)
        ax.legend()
    save_figure(fig, prefix)


if __name__ == "__main__":
    main(sys.argv)

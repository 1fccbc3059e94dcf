#!/usr/bin/python3
"""Where each mode wins: the figure of `gbasim map` (its map.json).

Usage: plot_map.py MAP.json OUT_PREFIX
Writes OUT_PREFIX.png and OUT_PREFIX.pdf: the grid of straggler settings, each cell coloured by
the mode `gbasim compare`'s rule picks there and labelled with GBA's paired time-to-AUC
difference against sync (s; * where GBA is faster beyond the noise). A black line marks, in each
row, where GBA first overtakes sync beyond the noise along the last axis.
"""
import json
import sys

from plotting import plt, save_figure

COLOURS = {"sync": "#4c72b0", "gba": "#dd8452", "async": "#55a868", "ssp": "#c44e52",
           "backup": "#8172b3", None: "#dddddd"}


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
        doc["axes"][-1]["values"], doc["cells"]
        return doc
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        sys.exit(f"plot_map.py: {path}: not a gbasim map result ({e})")


def label(value):
    return value if isinstance(value, str) else json.dumps(value)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip())
    doc = load(argv[1])
    axes = doc["axes"]
    columns = axes[-1]["values"]
    rows = axes[0]["values"] if len(axes) > 1 else [None]
    fig, ax = plt.subplots(figsize=(1.8 * len(columns) + 2, 0.9 * len(rows) + 1.8))
    picks_seen = set()
    for r in range(len(rows)):
        crossed = False
        for c in range(len(columns)):
            cell = doc["cells"][r * len(columns) + c]
            pick = cell["pick"] if cell["complete"] else None
            picks_seen.add(pick)
            ax.add_patch(plt.Rectangle((c, r), 1, 1, color=COLOURS.get(pick, "#999999")))
            gap = cell["gba_time_vs_sync"]
            text = (pick or ("none" if cell["complete"] else "incomplete"))
            if gap["mean"] is not None:
                text += f"\nGBA {gap['mean']:+.2f} s" + (" *" if cell["gba_faster_beyond_noise"] else "")
            ax.text(c + 0.5, r + 0.5, text, ha="center", va="center", fontsize=8)
            if cell["gba_faster_beyond_noise"] and not crossed:
                ax.plot([c, c], [r, r + 1], color="black", linewidth=3)
                crossed = True
    ax.set_xlim(0, len(columns))
    ax.set_ylim(0, len(rows))
    ax.set_xticks([c + 0.5 for c in range(len(columns))])
    ax.set_xticklabels([label(v) for v in columns])
    ax.set_xlabel(axes[-1]["key"])
    ax.set_yticks([r + 0.5 for r in range(len(rows))])
    ax.set_yticklabels([label(v) for v in rows] if len(axes) > 1 else [""])
    if len(axes) > 1:
        ax.set_ylabel(axes[0]["key"])
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS.get(p, "#999999")) for p in picks_seen]
    ax.legend(handles, [p or "none / incomplete" for p in picks_seen], title="picked",
              loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(f"Where each mode wins: {doc['spec']}, {doc['seeds']} paired seeds, target AUC "
                 f"{doc['target_auc']:g}\nblack line: GBA first faster than sync beyond the noise",
                 fontsize=9)
    fig.tight_layout()
    save_figure(fig, argv[2])


if __name__ == "__main__":
    main(sys.argv)

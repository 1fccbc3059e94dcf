#!/usr/bin/python3
"""Paper-style figures of a `gbasim sweep` (its folder: summary.csv and points/*.json).

Usage: plot_sweep.py KIND SWEEP_DIR OUT_DIR [options]

KIND (each writes OUT_DIR/<name>.png and .pdf):
  convergence  test AUC against simulated time (convergence-time) and against samples
               (convergence-samples): a line per series, the mean over seeds, a band
               from the lowest to the highest seed
  severity     time-to-target-AUC and speed-up over sync against --x (default: the
               first numeric axis), a line per series, mean over seeds, bars min to max
  heatmap      final AUC and time-to-target-AUC over (--x, --y), mean over seeds
  staleness    the distribution of gradient staleness, a line per series
  switching    per point with mode switching: the mode in force, the straggler ratio
               that drives automatic switching, and test AUC, over time
               (switching-<point>)
  all          every kind that this sweep's axes allow

Options:
  --by KEY       what makes a series (default: training.mode when it is an axis, else
                 the first axis)
  --x KEY, --y KEY   axes of severity and heatmap
  --where KEY=VALUE  keep only points with this axis value (repeatable)
  --label KEY=TEXT   the axis label to print for KEY (repeatable)
"""
import csv
import json
import math
import os
import sys

import numpy as np

from plotting import plt, save_figure

MODES = ["sync", "async", "gba", "ssp", "backup"]
COLORS = dict(zip(MODES, ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b"]))
RESERVED = ["point", "seed"]


class Sweep:
    def __init__(self, folder):
        path = os.path.join(folder, "summary.csv")
        try:
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                header = reader.fieldnames
                self.rows = [r for r in reader if r["status"] == "done"]
        except (OSError, KeyError, TypeError) as e:
            sys.exit(f"plot_sweep.py: {path}: not a gbasim sweep summary ({e})")
        self.axes = header[2:header.index("status")]
        self.folder = folder
        self._results = {}

    def result(self, row):
        name = row["point"]
        if name not in self._results:
            with open(os.path.join(self.folder, "points", name + ".json")) as f:
                self._results[name] = json.load(f)
        return self._results[name]


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def sort_key(value):
    if value in MODES:
        return (0, MODES.index(value), "")
    n = number(value)
    return (1, n, "") if n is not None else (2, 0, value)


def color(value, index):
    return COLORS.get(value, plt.get_cmap("tab10")(index % 10))


def label_of(key, labels):
    return labels.get(key, key)


def groups(rows, key):
    out = {}
    for r in rows:
        out.setdefault(r[key], []).append(r)
    return dict(sorted(out.items(), key=lambda kv: sort_key(kv[0])))


def convergence(sweep, rows, by, out, labels):
    for xname, xlabel, scale in (("time", "simulated time (s)", 1.0),
                                 ("samples", "training samples applied (millions)", 1e-6)):
        fig, ax = plt.subplots(figsize=(6.4, 4.2), constrained_layout=True)
        target = None
        for i, (value, members) in enumerate(groups(rows, by).items()):
            curves = [sweep.result(r)["curve"] for r in members]
            target = sweep.result(members[0])["summary"]["target_auc"]
            end = max(c[-1][xname] for c in curves) * scale
            grid = np.linspace(0.0, end, 200)
            ys = np.array([np.interp(grid, [p[xname] * scale for p in c], [p["test_auc"] for p in c],
                                     right=np.nan) for c in curves])
            with np.errstate(all="ignore"):
                mean = np.nanmean(ys, axis=0)
            c = color(value, i)
            ax.plot(grid, mean, color=c, label=f"{value} ({len(curves)} seed{'s' if len(curves) > 1 else ''})")
            if len(curves) > 1:
                ax.fill_between(grid, np.nanmin(ys, axis=0), np.nanmax(ys, axis=0), color=c, alpha=0.2, lw=0)
        if target is not None:
            ax.axhline(target, color="gray", ls="--", lw=1, label=f"target AUC {target}")
        ax.set(xlabel=xlabel, ylabel="test AUC",
               title=f"Test AUC against {'simulated time' if xname == 'time' else 'samples'}, by {label_of(by, labels)}")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
        save_figure(fig, os.path.join(out, f"convergence-{xname}"))
        plt.close(fig)


def mean_and_range(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return sum(values) / len(values), min(values), max(values)


def severity(sweep, rows, by, x, out, labels):
    series = groups(rows, by)
    xs = sorted({r[x] for r in rows}, key=sort_key)
    fig, (ax_t, ax_s) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    tta = {}
    for value, members in series.items():
        for xv in xs:
            tta[(value, xv)] = mean_and_range([number(r["time_to_auc_s"]) for r in members if r[x] == xv])
    for i, value in enumerate(series):
        pts = [(number(xv), tta[(value, xv)]) for xv in xs if tta[(value, xv)] is not None]
        if not pts:
            continue
        c = color(value, i)
        ax_t.errorbar([p[0] for p in pts], [p[1][0] for p in pts],
                      yerr=[[p[1][0] - p[1][1] for p in pts], [p[1][2] - p[1][0] for p in pts]],
                      marker="o", capsize=3, color=c, label=value)
        if "sync" in series:
            sp = [(number(xv), tta[("sync", xv)][0] / tta[(value, xv)][0]) for xv in xs
                  if tta[(value, xv)] is not None and tta[("sync", xv)] is not None]
            ax_s.plot([p[0] for p in sp], [p[1] for p in sp], marker="o", color=c, label=value)
    target = rows[0]["target_auc"]
    ax_t.set(xlabel=label_of(x, labels), ylabel=f"time to test AUC {target} (simulated s)",
             title="Time to target AUC (mean; bars: seeds' range)")
    ax_s.set(xlabel=label_of(x, labels), ylabel="speed-up over sync (x)",
             title="Speed-up over sync in time to target AUC")
    ax_s.axhline(1.0, color="gray", lw=1)
    for ax in (ax_t, ax_s):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save_figure(fig, os.path.join(out, "severity"))
    plt.close(fig)


def heatmap(sweep, rows, x, y, out, labels):
    xs = sorted({r[x] for r in rows}, key=sort_key)
    ys = sorted({r[y] for r in rows}, key=sort_key)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for ax, column, title, fmt in ((axes[0], "final_auc", "final test AUC", "{:.4f}"),
                                   (axes[1], "time_to_auc_s", f"time to AUC {rows[0]['target_auc']} (simulated s)", "{:.2f}")):
        grid = np.full((len(ys), len(xs)), np.nan)
        for i, yv in enumerate(ys):
            for j, xv in enumerate(xs):
                m = mean_and_range([number(r[column]) for r in rows if r[x] == xv and r[y] == yv])
                if m is not None:
                    grid[i, j] = m[0]
        image = ax.imshow(grid, cmap="viridis" if column == "final_auc" else "viridis_r", aspect="auto")
        fig.colorbar(image, ax=ax)
        for i in range(len(ys)):
            for j in range(len(xs)):
                ax.text(j, i, "not reached" if math.isnan(grid[i, j]) else fmt.format(grid[i, j]),
                        ha="center", va="center", fontsize=8, color="white")
        ax.set_xticks(range(len(xs)), xs)
        ax.set_yticks(range(len(ys)), ys)
        ax.set(xlabel=label_of(x, labels), ylabel=label_of(y, labels), title=title)
    save_figure(fig, os.path.join(out, "heatmap"))
    plt.close(fig)


def staleness(sweep, rows, by, out, labels):
    fig, ax = plt.subplots(figsize=(6.4, 4.2), constrained_layout=True)
    for i, (value, members) in enumerate(groups(rows, by).items()):
        counts = {}
        for r in members:
            for s, n in sweep.result(r)["staleness_histogram"]:
                counts[s] = counts.get(s, 0) + n
        total = sum(counts.values())
        if total == 0:
            continue
        xs = sorted(counts)
        ax.plot(xs, [counts[s] / total for s in xs], marker=".", color=color(value, i), label=value)
    ax.set_yscale("log")
    ax.set(xlabel="staleness (parameter versions behind)", ylabel="share of gradients",
           title=f"Staleness distribution, by {label_of(by, labels)}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, os.path.join(out, "staleness"))
    plt.close(fig)


def switching(sweep, rows, out):
    drawn = 0
    for r in rows:
        result = sweep.result(r)
        sw = result.get("switching")
        if not sw:
            continue
        status = sw["status"]
        times = [p[0] for p in status]
        end = result["summary"]["simulated_time"]
        fig, (ax_mode, ax_ratio, ax_auc) = plt.subplots(
            3, 1, figsize=(9, 6), sharex=True, constrained_layout=True, gridspec_kw={"height_ratios": [1, 2, 3]})
        spans = [(0.0, sw["initial_mode"])] + [(e["time"], e["to"]) for e in sw["events"]]
        for k, (start, mode) in enumerate(spans):
            stop = spans[k + 1][0] if k + 1 < len(spans) else end
            ax_mode.axvspan(start, stop, color=COLORS.get(mode, "gray"), alpha=0.6)
            ax_mode.text((start + stop) / 2, 0.5, mode, ha="center", va="center", fontsize=9)
        for m in sw["moves"]:
            ax_mode.axvline(m["start"], color="black", lw=0.8)
        ax_mode.set(yticks=[], ylabel="mode", title=f"Switching timeline: {r['point']}")
        ax_ratio.plot(times, [p[2] for p in status], color="black", lw=1)
        policy = result["spec"]["training"]["switching"]
        if policy["automatic"]:
            ax_ratio.axhline(policy["to_gba_ratio"], color=COLORS["gba"], ls="--", lw=1, label="to GBA above")
            ax_ratio.axhline(policy["to_sync_ratio"], color=COLORS["sync"], ls="--", lw=1, label="to sync below")
            ax_ratio.legend(fontsize=8)
        ax_ratio.set(ylabel="straggler ratio\n(max / median)")
        curve = result["curve"]
        ax_auc.plot([p["time"] for p in curve], [p["test_auc"] for p in curve], color="black")
        for e in sw["events"]:
            for ax in (ax_ratio, ax_auc):
                ax.axvline(e["time"], color="gray", ls=":", lw=1)
        ax_auc.set(xlabel="simulated time (s)", ylabel="test AUC")
        for ax in (ax_ratio, ax_auc):
            ax.grid(alpha=0.3)
        save_figure(fig, os.path.join(out, f"switching-{r['point']}"))
        plt.close(fig)
        drawn += 1
    return drawn


def main(argv):
    if len(argv) < 4 or argv[1] not in ("convergence", "severity", "heatmap", "staleness", "switching", "all"):
        sys.exit(__doc__.strip())
    kind, folder, out = argv[1], argv[2], argv[3]
    options = {"--by": None, "--x": None, "--y": None}
    where, labels = [], {}
    rest = argv[4:]
    while rest:
        if len(rest) < 2:
            sys.exit(f"plot_sweep.py: {rest[0]} needs a value")
        flag, value = rest[0], rest[1]
        rest = rest[2:]
        if flag == "--where":
            where.append(value.split("=", 1))
        elif flag == "--label":
            k, _, text = value.partition("=")
            labels[k] = text
        elif flag in options:
            options[flag] = value
        else:
            sys.exit(f"plot_sweep.py: unknown option {flag}")
    sweep = Sweep(folder)
    rows = [r for r in sweep.rows if all(r.get(k) == v for k, v in where)]
    if not rows:
        sys.exit(f"plot_sweep.py: {folder}: no finished points{' match --where' if where else ''}")
    by = options["--by"] or ("training.mode" if "training.mode" in sweep.axes else sweep.axes[0])
    others = [a for a in sweep.axes if a != by]
    numeric = [a for a in others if all(number(r[a]) is not None for r in rows)]
    x = options["--x"] or (numeric[0] if numeric else None)
    y = options["--y"] or next((a for a in others if a != x), None)
    for key in (by, x, y):
        if key is not None and key not in sweep.axes:
            sys.exit(f"plot_sweep.py: {key} is not an axis of this sweep ({', '.join(sweep.axes)})")
    written = []
    if kind in ("convergence", "all"):
        convergence(sweep, rows, by, out, labels)
        written += ["convergence-time", "convergence-samples"]
    if kind == "severity" or (kind == "all" and x is not None):
        if x is None:
            sys.exit("plot_sweep.py: severity needs --x (a numeric axis)")
        severity(sweep, rows, by, x, out, labels)
        written.append("severity")
    if kind == "heatmap" or (kind == "all" and x is not None and y is not None):
        if x is None or y is None:
            sys.exit("plot_sweep.py: heatmap needs --x and --y")
        heatmap(sweep, rows, x, y, out, labels)
        written.append("heatmap")
    if kind in ("staleness", "all"):
        staleness(sweep, rows, by, out, labels)
        written.append("staleness")
    if kind in ("switching", "all"):
        if switching(sweep, rows, out):
            written.append("switching-*")
        elif kind == "switching":
            sys.exit(f"plot_sweep.py: {folder}: no point switches modes")
    print(f"plot_sweep.py: wrote {', '.join(written)} (.png, .pdf) in {out}")


if __name__ == "__main__":
    main(sys.argv)

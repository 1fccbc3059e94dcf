#!/usr/bin/python3
"""Markdown tables of a sweep's summary (scripts/stats.py does the statistics).

1. One row per combination of axis values: each headline metric's mean over seeds with its 95%
   interval (Student's t), and how many seeds reached the target AUC (a target some seeds never
   reach is reported as such; the time is the mean of those that did).
2. When training.mode is an axis with sync or gba among its values: per combination of the other
   axes, each mode's paired difference (by seed) of time-to-AUC and of final AUC against sync and
   against GBA, with its 95% interval; "*" marks a difference whose interval excludes 0.
3. With --against KEY=VALUE ...: every combination's paired difference against the one with
   those axis values (a reference other than a mode: GBA without decay, for instance).

Usage: sweep_table.py SWEEP_DIR [--against KEY=VALUE ...]   (prints the tables)
"""
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats import excludes_zero, mean_interval, paired_difference  # noqa: E402

METRICS = [("time_to_auc_s", "time to target AUC (simulated s)", "{:.2f}"),
           ("final_auc", "final AUC", "{:.4f}"),
           ("mean_staleness", "mean staleness", "{:.2f}"),
           ("dropped_share", "dropped", "{:.3f}"),
           ("decayed_share", "decayed", "{:.3f}"),
           ("simulated_time_s", "simulated time (s)", "{:.2f}")]
MODE = "training.mode"


def number(text):
    return float(text) if text not in ("", None) else math.nan


def interval_text(values, fmt, sign=False):
    i = mean_interval([v for v in values if not math.isnan(v)])
    f = (lambda x: ("+" if x >= 0 else "") + fmt.format(x)) if sign else fmt.format
    if i.n == 0:
        return "-"
    if i.n < 2:
        return f(i.mean)
    return f"{f(i.mean)} [{f(i.low)}, {f(i.high)}]"


def cell(key, values, fmt, runs):
    numbers = [number(v) for v in values]
    text = interval_text(numbers, fmt)
    if key == "time_to_auc_s":
        reached = sum(not math.isnan(x) for x in numbers)
        text = ("not reached" if reached == 0 else text) + f" ({reached}/{runs})"
    return text


def paired_text(mine, theirs, fmt):
    """mine, theirs: {seed: value}; the seeds where both are numbers."""
    seeds = [s for s in mine if s in theirs and not math.isnan(mine[s]) and not math.isnan(theirs[s])]
    d = paired_difference([mine[s] for s in seeds], [theirs[s] for s in seeds])
    if d.n == 0:
        return "-"
    text = ("+" if d.mean >= 0 else "") + fmt.format(d.mean)
    if d.n >= 2:
        text += " [" + ", ".join(("+" if x >= 0 else "") + fmt.format(x) for x in (d.low, d.high)) + "]"
    return text + (" *" if excludes_zero(d) else "") + f" (n={d.n})"


def against_table(rows, axes, reference):
    """Each combination's paired differences against the combination `reference` names."""
    unknown = [k for k in reference if k not in axes]
    if unknown:
        sys.exit(f"sweep_table.py: --against {unknown[0]}: not an axis of the sweep ({', '.join(axes)})")
    by_combo = {}
    for r in rows:
        if r["status"] == "done":
            by_combo.setdefault(tuple(r[a] for a in axes), {})[r.get("seed", "")] = (
                number(r["time_to_auc_s"]), number(r["final_auc"]))
    ref = [c for c in by_combo if all(c[axes.index(k)] == v for k, v in reference.items())]
    if len(ref) != 1:
        sys.exit(f"sweep_table.py: --against must name one combination of the axes; "
                 f"{len(ref)} match")
    theirs = by_combo[ref[0]]
    name = ", ".join(f"{k} {v}" for k, v in reference.items())
    head = axes + [f"time vs {name} (s)", f"final AUC vs {name}"]
    lines = ["", f"Paired differences by seed against {name} (minus it), 95% interval, * where it "
             "excludes 0, n the seeds paired:", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for combo, mine in by_combo.items():
        if combo == ref[0]:
            continue
        lines.append("| " + " | ".join(list(combo) + [
            paired_text({s: v[0] for s, v in mine.items()}, {s: v[0] for s, v in theirs.items()},
                        "{:.2f}"),
            paired_text({s: v[1] for s, v in mine.items()}, {s: v[1] for s, v in theirs.items()},
                        "{:.4f}")]) + " |")
    print("\n".join(lines))


def main(argv):
    reference = {}
    if len(argv) >= 3 and argv[2] == "--against":
        for pair in argv[3:]:
            key, eq, value = pair.partition("=")
            if not eq:
                sys.exit(f"sweep_table.py: --against takes KEY=VALUE pairs, not '{pair}'")
            reference[key] = value
        argv = argv[:2]
        if not reference:
            sys.exit("sweep_table.py: --against needs at least one KEY=VALUE")
    if len(argv) != 2:
        sys.exit(__doc__.strip())
    path = os.path.join(argv[1], "summary.csv")
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            rows = list(reader)
    except OSError as e:
        sys.exit(f"sweep_table.py: {e}")
    axes = header[2:header.index("status")]
    combos = {}
    for r in rows:
        combos.setdefault(tuple(r[a] for a in axes), []).append(r)
    target = next((r["target_auc"] for r in rows if r["target_auc"]), "?")
    lines = ["| " + " | ".join(axes + ["seeds"] + [m[1].replace("target AUC", f"AUC {target}")
                                                  for m in METRICS]) + " |",
             "|" + " --- |" * (len(axes) + 1 + len(METRICS))]
    for values, members in combos.items():
        done = [r for r in members if r["status"] == "done"]
        status = f"{len(done)}" + ("" if len(done) == len(members) else f" of {len(members)}")
        cells = [cell(m[0], [r[m[0]] for r in done], m[2], len(done)) for m in METRICS]
        lines.append("| " + " | ".join(list(values) + [status] + cells) + " |")
    print("\n".join(lines))
    print("\nMean over seeds with its 95% interval (Student's t) in brackets; time to the target: "
          "the mean of the seeds that reached it, (reached/seeds). Dropped and decayed: shares of "
          "the gradients received.")

    if reference:
        against_table(rows, axes, reference)
    modes = sorted({r[MODE] for r in rows}) if MODE in axes else []
    references = [m for m in ("sync", "gba") if m in modes]
    if not references:
        return
    others = [a for a in axes if a != MODE]
    groups = {}
    for r in rows:
        if r["status"] != "done":
            continue
        key = tuple(r[a] for a in others)
        g = groups.setdefault(key, {})
        seed = r.get("seed", "")
        g.setdefault(r[MODE], {})[seed] = (number(r["time_to_auc_s"]), number(r["final_auc"]))
    head = others + ["mode"]
    for ref in references:
        head += [f"time vs {ref} (s)", f"final AUC vs {ref}"]
    lines = ["", "Paired differences by seed (mode minus reference), 95% interval, * where it "
             "excludes 0, n the seeds paired:", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for key, by_mode in groups.items():
        for mode in [m for m in ("sync", "async", "gba", "ssp", "backup") if m in by_mode] + \
                sorted(m for m in by_mode if m not in ("sync", "async", "gba", "ssp", "backup")):
            cells = list(key) + [mode]
            for ref in references:
                if mode == ref or ref not in by_mode:
                    cells += ["-", "-"]
                    continue
                mine, theirs = by_mode[mode], by_mode[ref]
                cells.append(paired_text({s: v[0] for s, v in mine.items()},
                                         {s: v[0] for s, v in theirs.items()}, "{:.2f}"))
                cells.append(paired_text({s: v[1] for s, v in mine.items()},
                                         {s: v[1] for s, v in theirs.items()}, "{:.4f}"))
            lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv)

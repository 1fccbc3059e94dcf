#!/usr/bin/python3
"""A markdown table of a sweep's summary: one row per combination of axis values, the
headline metrics averaged over seeds (and their range when there are several).

Usage: sweep_table.py SWEEP_DIR   (prints the table)
"""
import csv
import os
import sys

METRICS = [("time_to_auc_s", "time to target AUC (simulated s)", "{:.2f}"),
           ("final_auc", "final AUC", "{:.4f}"),
           ("final_logloss", "final log-loss", "{:.4f}"),
           ("mean_staleness", "mean staleness", "{:.2f}"),
           ("dropped_share", "dropped", "{:.3f}"),
           ("decayed_share", "decayed", "{:.3f}"),
           ("simulated_time_s", "simulated time (s)", "{:.2f}")]


def cell(values, fmt, runs):
    numbers = [float(v) for v in values if v != ""]
    if not numbers:
        return "not reached" if runs else "-"
    mean = sum(numbers) / len(numbers)
    text = fmt.format(mean)
    if len(numbers) > 1:
        text += f" ({fmt.format(min(numbers))}-{fmt.format(max(numbers))})"
    if len(numbers) < runs:
        text += f", {runs - len(numbers)} not reached"
    return text


def main(argv):
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
    lines = ["| " + " | ".join(axes + ["seeds"] + [m[1].replace("target AUC", f"AUC {target}") for m in METRICS]) + " |",
             "|" + " --- |" * (len(axes) + 1 + len(METRICS))]
    for values, members in combos.items():
        done = [r for r in members if r["status"] == "done"]
        status = f"{len(done)}" + ("" if len(done) == len(members) else f" of {len(members)}")
        cells = [cell([r[m[0]] for r in done], m[2], len(done)) for m in METRICS]
        lines.append("| " + " | ".join(list(values) + [status] + cells) + " |")
    print("\n".join(lines))
    print("\nMean over seeds; the range over seeds in brackets. Dropped and decayed: shares of the "
          "gradients received.")


if __name__ == "__main__":
    main(sys.argv)

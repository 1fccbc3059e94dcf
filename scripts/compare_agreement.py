#!/usr/bin/python3
"""How closely two `gbasim compare` runs of the same spec agree.

Usage: compare_agreement.py DIR_A DIR_B

DIR_A and DIR_B are `gbasim compare` folders (summary.csv, compare.json). Prints, for each
(mode, seed) in both, the time to the target in each and whether the two fall on the same
snapshot (both unreached counts as the same); then each paired difference's mean in both and
whether its sign is kept; then both recommendations. Used to hold the fluid network model
against SimGrid's, and SimGrid's against itself with the NICs' bandwidth moved a little
(results/network-solvers/).
"""
import csv
import json
import os
import sys

DIFFERENCES = ["time_vs_sync", "time_vs_gba", "auc_vs_sync", "auc_vs_gba"]


def read(folder):
    try:
        with open(os.path.join(folder, "summary.csv"), newline="") as f:
            runs = {(r["training.mode"], r["seed"]): r for r in csv.DictReader(f)}
        with open(os.path.join(folder, "compare.json")) as f:
            compare = json.load(f)
        modes = {m["mode"]: m for m in compare["modes"]}
        return runs, modes, compare["recommendation"]
    except (OSError, KeyError, TypeError, csv.Error, json.JSONDecodeError) as e:
        sys.exit(f"compare_agreement.py: {folder}: not a finished gbasim compare folder: {e}")


def sign(x):
    return 0 if x is None or x == 0 else (1 if x > 0 else -1)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare_agreement.py DIR_A DIR_B")
    (runs_a, modes_a, rec_a), (runs_b, modes_b, rec_b) = read(sys.argv[1]), read(sys.argv[2])
    keys = sorted(set(runs_a) & set(runs_b))
    if not keys:
        sys.exit("compare_agreement.py: the two runs share no (mode, seed)")
    same = 0
    print("| mode | seed | time to AUC, A (s) | time to AUC, B (s) | same snapshot |")
    print("| --- | --- | --- | --- | --- |")
    for key in keys:
        ta, tb = runs_a[key]["time_to_auc_s"], runs_b[key]["time_to_auc_s"]
        match = (ta == "" and tb == "") or (ta != "" and tb != "" and abs(float(ta) - float(tb)) < 1e-6)
        same += match
        print(f"| {key[0]} | {key[1]} | {ta or '-'} | {tb or '-'} | {'yes' if match else 'no'} |")
    print(f"\n{same} of {len(keys)} (mode, seed) pairs on the same snapshot "
          f"({100 * same / len(keys):.0f}%)\n")
    kept = total = 0
    print("| mode | difference | A | B | sign kept |")
    print("| --- | --- | --- | --- | --- |")
    for mode in sorted(set(modes_a) & set(modes_b)):
        for name in DIFFERENCES:
            a, b = modes_a[mode][name]["mean"], modes_b[mode][name]["mean"]
            if a is None or b is None or (a == 0 and b == 0):
                continue  # not measured in one, or a mode against itself
            total += 1
            kept += sign(a) == sign(b)
            print(f"| {mode} | {name} | {a:+.4f} | {b:+.4f} | {'yes' if sign(a) == sign(b) else 'NO'} |")
    print(f"\n{kept} of {total} paired differences keep their sign")
    print(f"recommendation: A {rec_a}, B {rec_b}: {'the same' if rec_a == rec_b else 'DIFFERENT'}")


if __name__ == "__main__":
    main()

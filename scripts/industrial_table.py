#!/usr/bin/python3
"""The tables of results/industrial-scale/ from its sweeps' summaries (runs/*/summary.csv):
each mode's simulated time a global step (G samples) and GBA's speed-up over sync (sync's time
a step over GBA's, paired by seed), with 95% intervals over the seeds; the straggler severity
and the number of server shards where GBA overtakes sync; and each mode's time to the target
AUC. A section whose sweeps set their own network model (`cluster.network_model` in a sweep's
"set", DIR/sweeps/NAME.json) says so under its heading. Writes DIR/table.md and
DIR/summary.json.

Usage: scripts/industrial_table.py [DIR]   (default results/industrial-scale)"""
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outputs import mean_interval, text, write_text  # noqa: E402


def read(dir_, sweep):
    path = os.path.join(dir_, "runs", sweep, "summary.csv")
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [k for k in ("seed", "status", "simulated_time_s",
                               "global_steps") if k not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: no column {missing[0]!r}")
        for r in reader:
            if r["status"] not in ("done", "completed"):
                continue
            try:
                r["step_s"] = float(r["simulated_time_s"]) / max(1, int(r["global_steps"]))
                int(r["seed"])
            except ValueError:
                raise ValueError(f"{path}, line {reader.line_num}: a done point with a seed, "
                                 "simulated_time_s or global_steps that is not a number")
            if not math.isfinite(r["step_s"]) or r["step_s"] < 0:
                raise ValueError(f"{path}, line {reader.line_num}: simulated_time_s is "
                                 f"{r['simulated_time_s']}")
            rows.append(r)
    return rows


def set_models(dir_, sweeps):
    """{sweep: network model} for the sweeps among `sweeps` whose spec sets
    cluster.network_model itself (the rest run base.json's)."""
    out = {}
    for name in sweeps:
        path = os.path.join(dir_, "sweeps", name + ".json")
        if os.path.exists(path):
            with open(path) as f:
                try:
                    spec = json.load(f)
                except ValueError as e:
                    raise ValueError(f"{path}: not valid JSON: {e}")
            set_ = spec.get("set", {}) if isinstance(spec, dict) else None
            if not isinstance(set_, dict):
                raise ValueError(f"{path}: key 'set' is not an object")
            model = set_.get("cluster.network_model")
            if model is not None:
                out[name] = model
    return out


def model_note(lines, doc, dir_, sweeps):
    """A line under a section's heading naming the network model its sweeps set, if any."""
    models = set_models(dir_, sweeps)
    if models:
        doc.setdefault("network_models_set", {}).update(models)
        lines += ["Network model set by the sweep: " + ", ".join(
            f"{model} (`sweeps/{name}.json`)" for name, model in sorted(models.items())) +
            "; the other sections run base.json's.", ""]


def by_seed(rows, **match):
    out = {}
    for r in rows:
        if all(str(r.get(k)) == str(v) for k, v in match.items()):
            out[int(r["seed"])] = r["step_s"]
    return out


def speedup(sync, gba):
    seeds = sorted(set(sync) & set(gba))
    return mean_interval([sync[s] / gba[s] for s in seeds]), len(seeds)


def fmt_ms(values):
    i = mean_interval([v * 1e3 for v in values.values()])
    return text(i, 1) if i.n else "-"


def time_to_auc(lines, doc, scale, preset, label, runs):
    """Rows of sync and GBA's time to the target and final AUC over `runs` (one condition),
    with GBA's paired speed-up and final-AUC gap."""
    got = {mode: {int(r["seed"]): r for r in runs if r["training.mode"] == mode}
           for mode in ("sync", "gba")}
    seeds = sorted(set(got["sync"]) & set(got["gba"]))
    reached = [s for s in seeds if got["sync"][s]["time_to_auc_s"] and
               got["gba"][s]["time_to_auc_s"]]
    ratio = mean_interval([float(got["sync"][s]["time_to_auc_s"]) /
                           float(got["gba"][s]["time_to_auc_s"]) for s in reached])
    gap = mean_interval([float(got["gba"][s]["final_auc"]) - float(got["sync"][s]["final_auc"])
                         for s in seeds])
    # A step over the whole epoch: the start, when every worker pulls at once, is a few of its
    # hundreds of steps.
    step = mean_interval([got["sync"][s]["step_s"] / got["gba"][s]["step_s"] for s in seeds])
    for mode in ("sync", "gba"):
        rows = got[mode]
        times = [float(r["time_to_auc_s"]) for r in rows.values() if r["time_to_auc_s"]]
        finals = [float(r["final_auc"]) for r in rows.values()]
        lines.append(
            f"| {label} | {mode} | {len(times)}/{len(rows)} | "
            f"{text(mean_interval(times), 1) if times else '-'} | "
            f"{text(mean_interval(finals), 4) if finals else '-'} | "
            f"{(text(ratio, 3) if ratio.n else '-') if mode == 'gba' else ''} | "
            f"{(text(gap, 4) if gap.n else '-') if mode == 'gba' else ''} | "
            f"{text(mean_interval([r['step_s'] * 1e3 for r in rows.values()]), 1)} | "
            f"{(text(step, 3) if step.n else '-') if mode == 'gba' else ''} |")
    doc["time_to_auc"].append({"scale": scale, "preset": preset, "stragglers": label,
                               "seeds": len(seeds),
                               "both_reached": len(reached),
                               "speedup": ratio.mean if ratio.n else None,
                               "final_auc_gap": gap.mean if gap.n else None,
                               "final_auc_gap_low": gap.low if gap.n > 1 else None,
                               "final_auc_gap_high": gap.high if gap.n > 1 else None,
                               "step_speedup": step.mean if step.n else None,
                               "step_speedup_low": step.low if step.n > 1 else None,
                               "step_speedup_high": step.high if step.n > 1 else None})


def crossing(points):
    """Where a speed-up crosses 1 over (x, speed-up) points in increasing x: log-linear between
    the two points around it; None where it does not cross."""
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if y0 < 1.0 <= y1:
            f = (math.log(1.0) - math.log(y0)) / (math.log(y1) - math.log(y0))
            return math.exp(math.log(x0) + f * (math.log(x1) - math.log(x0)))
    return None


def shards_section(lines, doc, dir_, presets, severity, shards, cell):
    """GBA against sync at 256 workers as the server shards grow: 16 shards from severity-256,
    more from shards-256 (GBA only: sync uses no shard), each paired with severity-256's sync
    runs by seed; and the shard count where GBA overtakes sync."""
    if not shards:
        return
    lines += ["", "## GBA as the server shards grow (256 workers)", ""]
    model_note(lines, doc, dir_, ["severity-256", "shards-256"])
    lines += ["| workers, shards | preset | stragglers | sync ms a step | GBA ms a step | "
              "GBA speed-up over sync | seeds |", "| --- | --- | --- | --- | --- | --- | --- |"]
    doc["shard_crossover"] = []
    crossings = []
    for preset in presets:
        for slow, label in (("1", "healthy"), ("4", "a quarter 4x slower")):
            sync = by_seed(severity, **{"workload.preset": preset, "training.mode": "sync",
                                        "stragglers.persistent_slowdown": slow})
            points = []
            for k in (16, 32, 64, 128):
                rows = severity if k == 16 else shards
                match = {"workload.preset": preset, "stragglers.persistent_slowdown": slow}
                match.update({"training.mode": "gba"} if k == 16 else {"cluster.ps_shards": k})
                gba = by_seed(rows, **match)
                if gba:
                    s = cell(f"256 w, {k} shards", preset, label, sync, gba, key="shard_cells")
                    if s is not None:
                        points.append((float(k), s.mean))
            cross = crossing(points)
            doc["shard_crossover"].append({"preset": preset, "stragglers": label,
                                           "shards": cross})
            if points and points[0][1] >= 1.0:
                where = f"ahead already at {points[0][0]:.0f} shards"
            elif cross is not None:
                where = f"overtakes sync at about {cross:.0f} shards"
            else:
                where = f"behind sync at up to {points[-1][0]:.0f} shards" if points else "-"
            crossings.append(f"- {preset}, {label}: GBA {where}.")
    lines += [""] + crossings


def main():
    if len(sys.argv) > 2 or sys.argv[1:] in (["-h"], ["--help"]):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    dir_ = sys.argv[1] if len(sys.argv) > 1 else "results/industrial-scale"
    if not os.path.isdir(dir_):
        raise ValueError(f"{dir_}: no such folder")
    presets = ["dlrm-dcnv2", "wide-deep-outbrain"]
    lines, doc = [], {"cells": [], "crossover": {}}
    head = ("| workers, shards | preset | stragglers | sync ms a step | GBA ms a step | "
            "GBA speed-up over sync | seeds |")
    rule = "| --- | --- | --- | --- | --- | --- | --- |"

    def cell(scale, preset, condition, sync, gba, gba_label="GBA", key="cells"):
        s, n = speedup(sync, gba)
        lines.append(f"| {scale} | {preset} | {condition} | {fmt_ms(sync)} | {fmt_ms(gba)} | "
                     f"{text(s, 3) if n else '-'} | {n} |")
        doc.setdefault(key, []).append({
            "scale": scale, "preset": preset, "stragglers": condition, "gba": gba_label,
            "seeds": n,
            "sync_step_s": mean_interval(list(sync.values())).mean if sync else None,
            "gba_step_s": mean_interval(list(gba.values())).mean if gba else None,
            "speedup": s.mean if n else None,
            "speedup_low": s.low if n > 1 else None,
            "speedup_high": s.high if n > 1 else None})
        return s if n else None

    lines += ["## Sync on GPU nodes against GBA on the same GPUs", ""]
    model_note(lines, doc, dir_, ["severity-256", "severity-1024", "pai-256", "pai-1024"])
    lines += [head, rule]
    sev = {"256 w, 16 shards": read(dir_, "severity-256"),
           "1,024 w, 64 shards": read(dir_, "severity-1024")}
    pai = {"256 w, 16 shards": read(dir_, "pai-256"), "1,024 w, 64 shards": read(dir_, "pai-1024")}
    for scale in sev:
        for preset in presets:
            for slow in ("1", "4"):
                sync = by_seed(sev[scale], **{"workload.preset": preset, "training.mode": "sync",
                                              "stragglers.persistent_slowdown": slow})
                gba = by_seed(sev[scale], **{"workload.preset": preset, "training.mode": "gba",
                                             "stragglers.persistent_slowdown": slow})
                label = "healthy" if slow == "1" else "a quarter 4x slower"
                if sync or gba:
                    cell(scale, preset, label, sync, gba)
            sync = by_seed(pai[scale], **{"workload.preset": preset, "training.mode": "sync"})
            gba = by_seed(pai[scale], **{"workload.preset": preset, "training.mode": "gba"})
            if sync or gba:
                cell(scale, preset, "PAI job_1 replayed", sync, gba)

    lines += ["", "## The paper's setting: sync on 256 GPUs against GBA on 1,024 CPU workers", ""]
    model_note(lines, doc, dir_, ["severity-256", "cpu-pool"])
    lines += [head, rule]
    pool = read(dir_, "cpu-pool")
    for preset in presets:
        for slow in ("1", "4"):
            sync = by_seed(sev["256 w, 16 shards"], **{
                "workload.preset": preset, "training.mode": "sync",
                "stragglers.persistent_slowdown": slow})
            gba = by_seed(pool, **{"workload.preset": preset,
                                   "stragglers.persistent_slowdown": slow})
            label = "healthy" if slow == "1" else "a quarter 4x slower"
            if sync or gba:
                cell("256 GPUs / 1,024 CPUs, 64 shards", preset, label, sync, gba, "GBA on CPUs")

    lines += ["", "## Where GBA overtakes sync (256 workers, 16 shards)", ""]
    model_note(lines, doc, dir_, ["severity-256"])
    lines += ["| preset | GBA speed-up over sync at each slowdown of a quarter of the workers | "
              "GBA overtakes sync at |", "| --- | --- | --- |"]
    for preset in presets:
        points = []
        for slow in ("1", "2", "4", "8", "16"):
            sync = by_seed(sev["256 w, 16 shards"], **{
                "workload.preset": preset, "training.mode": "sync",
                "stragglers.persistent_slowdown": slow})
            gba = by_seed(sev["256 w, 16 shards"], **{
                "workload.preset": preset, "training.mode": "gba",
                "stragglers.persistent_slowdown": slow})
            s, n = speedup(sync, gba)
            if n:
                points.append((float(slow), s.mean))
        cross = crossing(points)
        if points and points[0][1] >= 1.0:
            where = "GBA is ahead already at 1x"
        elif cross is not None:
            where = f"about {cross:.1f}x"
        else:
            where = f"not within {points[-1][0]:.0f}x" if points else "-"
        doc["crossover"][preset] = cross
        lines.append(f"| {preset} | " + ", ".join(f"{x:g}x: {y:.3f}" for x, y in points) +
                     f" | {where} |")
    shards_section(lines, doc, dir_, presets, sev["256 w, 16 shards"], read(dir_, "shards-256"),
                   cell)
    doc["time_to_auc"] = []
    # (the sweeps: sync's runs come from the first, GBA's from the others, or from the first
    # where it is the only one; preset, scale, the PAI replay's sweep)
    studies = [(["auc-256"], "dlrm-dcnv2", "256 workers, 16 shards", "auc-256-pai"),
               (["auc-256-wide-deep"], "wide-deep-outbrain", "256 workers, 16 shards",
                "auc-256-pai"),
               (["auc-256-wide-deep", "auc-256-shards-64-wide-deep"], "wide-deep-outbrain",
                "256 workers, GBA on 64 shards", None),
               (["auc-1024"], "dlrm-dcnv2", "1,024 workers, 64 shards", "auc-1024-pai"),
               (["auc-1024-wide-deep"], "wide-deep-outbrain", "1,024 workers, 64 shards",
                "auc-1024-pai"),
               (["auc-256-wide-deep", "auc-cpu-pool-wide-deep", "auc-cpu-pool-healthy-wide-deep"],
                "wide-deep-outbrain",
                "sync on 256 GPUs, GBA on 1,024 CPU workers, 64 shards", None)]
    for sweeps, preset, scale, pai_sweep in studies:
        pai_runs = read(dir_, pai_sweep) if pai_sweep else []
        sync = [r for r in read(dir_, sweeps[0]) if r["training.mode"] == "sync"]
        gba = [r for name in (sweeps[1:] or sweeps) for r in read(dir_, name)
               if r["training.mode"] == "gba"]
        if not gba:
            continue
        auc = sync + gba
        conditions = [("healthy", [r for r in auc if r["stragglers.persistent_slowdown"] == "1"]),
                      ("a quarter 4x slower",
                       [r for r in auc if r["stragglers.persistent_slowdown"] == "4"]),
                      ("PAI job_1 replayed",
                       [r for r in pai_runs if r["workload.preset"] == preset])]
        if not any(rows for _, rows in conditions):
            continue
        lines += ["", f"## Time to AUC 0.75 with the proxy learning ({scale}, {preset})", ""]
        model_note(lines, doc, dir_, sweeps + ([pai_sweep] if pai_sweep else []))
        lines += ["| stragglers | mode | reached | time-to-AUC (s) | final AUC | "
                  "GBA speed-up over sync to the target | final AUC, GBA - sync | "
                  "ms a step over the epoch | GBA speed-up a step over the epoch |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for label, runs in conditions:
            if any(r["training.mode"] == "gba" for r in runs):
                time_to_auc(lines, doc, scale, preset, label, runs)
    table = "\n".join(lines) + "\n"
    print(table, end="")
    write_text(os.path.join(dir_, "table.md"), table)
    write_text(os.path.join(dir_, "summary.json"), json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as e:
        sys.exit(f"industrial_table.py: error: {e}")

#!/usr/bin/env python3
"""gbasim map: where each mode wins over a grid of straggler settings.

  map_test.py GBASIM EXAMPLES_DIR

On a small budget (examples_test.py's), a quarter of the workers slowed 1x and 4x, 3 seeds:
- each cell's GBA-minus-sync time is the paired mean of its runs' results, recomputed here, and
  the crossover is the first cell where that difference is below 0 beyond the noise;
- a cell's run is the `gbasim run` of the same spec and overrides, byte for byte (so the map
  agrees with any sweep or comparison of the same settings);
- the same command again runs nothing; --dry-run passes through to gbasim sweep and draws
  nothing;
- bad axes and a bad running option are refused, naming them, and leave nothing behind."""
import json
import os
import subprocess
import sys
import tempfile

SMALL = ["data.train_samples=100000", "data.test_samples=3000", "training.local_batch=64",
         "evaluation.test_samples=0", "evaluation.interval_s=0.05", "evaluation.target_auc=0.65"]
AXES = ["--axes", "stragglers.persistent_fraction=0.25", "--axes",
        "stragglers.persistent_slowdown=1,4"]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def gbasim_map(gbasim, spec, out, *options):
    command = [gbasim, "map", "--spec", spec, "--out", out, "--jobs", "2", *options]
    for s in SMALL:
        command += ["--set", s]
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def t95(n):
    return {2: 12.706204736, 3: 4.302652730, 4: 3.182446305, 5: 2.776445105}[n]


def main():
    gbasim, examples = sys.argv[1:]
    spec = os.path.join(examples, "compare.json")
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "map")
        done = gbasim_map(gbasim, spec, out, *AXES, "--seeds", "3")
        if done.returncode != 0:
            sys.exit(f"FAIL gbasim map: {done.stderr.strip()[-2000:]}")
        with open(os.path.join(out, "map.json")) as f:
            doc = json.load(f)
        check(len(doc["cells"]) == 2, "two cells")

        def result(mode, slowdown, seed):
            name = f"mode-{mode}_persistent_fraction-0.25_persistent_slowdown-{slowdown}_seed-{seed}"
            with open(os.path.join(out, "points", name + ".json")) as f:
                return json.load(f)

        first_faster = None
        for cell, slowdown in zip(doc["cells"], (1, 4)):
            diffs = [result("gba", slowdown, s)["summary"]["time_to_auc"]
                     - result("sync", slowdown, s)["summary"]["time_to_auc"] for s in (1, 2, 3)]
            mean = sum(diffs) / 3
            sd = (sum((d - mean) ** 2 for d in diffs) / 2) ** 0.5
            high = mean + t95(3) * sd / 3 ** 0.5
            got = cell["gba_time_vs_sync"]
            check(abs(got["mean"] - mean) < 1e-12 and abs(got["high"] - high) < 1e-9,
                  f"slowdown {slowdown}: GBA minus sync {got['mean']:.4f} [.., {got['high']:.4f}] "
                  f"is the runs' paired {mean:.4f} [.., {high:.4f}]")
            check(cell["gba_faster_beyond_noise"] == (high < 0),
                  f"slowdown {slowdown}: faster beyond the noise is the interval's high end < 0")
            if first_faster is None and high < 0:
                first_faster = slowdown
        check(doc["crossover"][0]["stragglers.persistent_slowdown"] == first_faster,
              f"the crossover is the first slowdown where GBA is faster beyond the noise "
              f"({first_faster})")
        # Each cell's pick is gbasim compare's rule applied to its runs: GBA when it reached the
        # target on every seed, ends within 0.001 of sync's final AUC on average, and is faster
        # beyond the noise; sync otherwise.
        for cell, slowdown in zip(doc["cells"], (1, 4)):
            runs = {m: [result(m, slowdown, s)["summary"] for s in (1, 2, 3)] for m in ("sync", "gba")}
            auc_gap = sum(g["final_auc"] - y["final_auc"] for g, y in zip(runs["gba"], runs["sync"])) / 3
            reached = all(r["time_to_auc"] is not None for m in runs for r in runs[m])
            want = "gba" if (reached and auc_gap >= -1e-3 and cell["gba_faster_beyond_noise"]) else "sync"
            check(cell["pick"] == want,
                  f"slowdown {slowdown}: the pick {cell['pick']} is the rule's on the runs ({want}; "
                  f"GBA's final AUC {auc_gap:+.4f} against sync's)")

        # A cell's run is gbasim run's, byte for byte.
        alone = os.path.join(work, "alone.json")
        command = [gbasim, "run", "--spec", spec, "-q", "--out", alone]
        for s in SMALL + ["training.mode=gba", "stragglers.persistent_fraction=0.25",
                          "stragglers.persistent_slowdown=4", "seed=2"]:
            command += ["--set", s]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        name = "mode-gba_persistent_fraction-0.25_persistent_slowdown-4_seed-2.json"
        with open(alone, "rb") as a, open(os.path.join(out, "points", name), "rb") as b:
            check(a.read() == b.read(), "a cell's run is gbasim run's, byte for byte")

        # Resumed: nothing to run. --dry-run: no map drawn.
        done = gbasim_map(gbasim, spec, out, *AXES, "--seeds", "3")
        check(done.returncode == 0 and "12 already done, 0 to run" in done.stderr,
              "the same command again runs nothing")
        dry = os.path.join(work, "dry")
        done = gbasim_map(gbasim, spec, dry, *AXES, "--seeds", "3", "--dry-run")
        check(done.returncode == 0 and done.stdout.count("--set") > 0
              and not os.path.exists(os.path.join(dry, "map.json")),
              "--dry-run lists the points and draws no map")

        # Bad input: refused, named, nothing left behind.
        for bad, name in ((["--axes", "stragglers.persistent_slowdown"], "--axes"),
                          (["--axes", "training.mode=sync,gba"], "training.mode"),
                          (["--axes", "seed=1,2"], "seed"),
                          (["--axes", "stragglers.noise_cv=0", "--axes",
                            "stragglers.persistent_fraction=0.25", "--axes",
                            "stragglers.persistent_slowdown=2"], "one or two axes"),
                          (["--bogus-option"], "bogus-option"),
                          (["--axes", "stragglers.persistent_slowdown=2,fast"], "fast")):
            bad_out = os.path.join(work, "bad")
            done = gbasim_map(gbasim, spec, bad_out, *bad)
            check(done.returncode == 2 and name in done.stderr
                  and not os.path.exists(os.path.join(bad_out, "sweep.json")),
                  f"{' '.join(bad)}: refused naming {name}, nothing left "
                  f"({done.stderr.strip().splitlines()[-2] if done.stderr.strip() else ''})")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")


if __name__ == "__main__":
    main()

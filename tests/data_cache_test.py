"""The synthetic data cache (GBASIM_DATA_CACHE) only ever saves time: a run that writes it, one
that reads it and one that finds it damaged, of another key or unwritable all give the result
file of a run without it, byte for byte; a data set of another configuration gets a file of
its own; no half-written file is left behind.

Usage: data_cache_test.py GBASIM EXAMPLES_DIR"""
import glob
import os
import subprocess
import sys
import tempfile

gbasim, examples = sys.argv[1], sys.argv[2]
spec = os.path.join(examples, "demo.json")
sets = ["training.workers=8", "budget.max_samples=20480", "data.train_samples=30000",
        "data.test_samples=3000", "evaluation.interval_s=0.05"]
failures = 0


def run(work, name, cache=None, extra=()):
    """The result file's bytes and gbasim's stderr of one run, with the cache folder `cache`."""
    out = os.path.join(work, name + ".json")
    command = [gbasim, "run", "--spec", spec, "-q", "--out", out]
    for s in sets + list(extra):
        command += ["--set", s]
    env = dict(os.environ)
    env.pop("GBASIM_DATA_CACHE", None)
    if cache is not None:
        env["GBASIM_DATA_CACHE"] = cache
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)}: {done.stderr.strip()}")
    with open(out, "rb") as f:
        return f.read(), done.stderr


def check(ok, what):
    global failures
    print(f"{'ok' if ok else 'FAIL'} {what}")
    failures += not ok


with tempfile.TemporaryDirectory() as work:
    cache = os.path.join(work, "cache")
    plain, _ = run(work, "plain")
    cold, _ = run(work, "cold", cache)
    files = glob.glob(os.path.join(cache, "*"))
    check(cold == plain, "a run that writes the cache gives the result without it")
    check(len(files) == 1 and files[0].endswith(".bin"),
          f"one cache file and nothing half-written: {[os.path.basename(f) for f in files]}")
    stored = files[0]
    size, mtime = os.path.getsize(stored), os.stat(stored).st_mtime_ns
    warm, _ = run(work, "warm", cache)
    check(warm == plain, "a run that reads the cache gives the result without it")
    check(os.stat(stored).st_mtime_ns == mtime, "a run that reads the cache leaves it as it was")

    other, _ = run(work, "other", cache, ["data.seed=2"])
    other_plain, _ = run(work, "other-plain", None, ["data.seed=2"])
    check(other == other_plain and other != plain, "another data seed: its own data, right")
    check(len(glob.glob(os.path.join(cache, "*.bin"))) == 2, "another data seed: its own file")

    with open(stored, "r+b") as f:  # cut in the middle of the data
        f.truncate(size // 2)
    cut, _ = run(work, "cut", cache)
    check(cut == plain and os.path.getsize(stored) == size,
          "a truncated cache file is generated again and rewritten whole")
    # Another data set's file under this one's name (its own key inside): not to be read.
    other_file = [f for f in glob.glob(os.path.join(cache, "*.bin")) if f != stored][0]
    with open(other_file, "rb") as f, open(stored, "wb") as g:
        g.write(f.read())
    misnamed, _ = run(work, "misnamed", cache)
    check(misnamed == plain, "a file holding another key's data set is not read")

    blocked = os.path.join(work, "a-file")
    with open(blocked, "w") as f:
        f.write("not a folder\n")
    unwritable, err = run(work, "unwritable", blocked)
    check(unwritable == plain and "data cache" in err,
          f"an unwritable cache is reported and skipped: {err.strip()[:160]}")
    leftovers = [f for f in glob.glob(os.path.join(work, "**", "*tmp*"), recursive=True)]
    check(not leftovers, f"no temporary files left: {leftovers}")
sys.exit(1 if failures else 0)

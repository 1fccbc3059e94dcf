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
    # Damage of the same size behind a valid header: a flipped bit, labels flipped, ids
    # overwritten. Each is found, reported and generated again.
    with open(stored, "rb") as f:
        good = f.read()

    def damaged(name, change):
        with open(stored, "wb") as f:
            f.write(change(bytearray(good)))
        result, err = run(work, name, cache)
        with open(stored, "rb") as f:
            rewritten = f.read() == good
        check(result == plain and "damaged" in err and rewritten,
              f"{name}: reported, generated again and rewritten: {err.strip()[:160]}")

    def flip_bit(b):
        b[len(b) * 3 // 4] ^= 0x10
        return bytes(b)

    def flip_labels(b):
        # The training labels are floats 0 or 1 in the file's second half: swap each byte
        # pattern of 1.0f and 0.0f over a stretch, keeping the size.
        one, zero = bytes.fromhex("0000803f"), bytes(4)
        middle = len(b) // 2
        part = bytes(b[middle:middle + 40000]).replace(one, b"\xff\xff\xff\xff")
        part = part.replace(zero, one).replace(b"\xff\xff\xff\xff", zero)
        b[middle:middle + 40000] = part
        return bytes(b)

    def overwrite_ids(b):
        # Past the header and the sizes, the training ids: a stretch of large ids.
        start = len(b) // 10
        b[start:start + 4000] = (0x7fff0000).to_bytes(4, "little") * 1000
        return bytes(b)

    damaged("bit-flipped", flip_bit)
    damaged("labels-flipped", flip_labels)
    damaged("ids-overwritten", overwrite_ids)
    with open(stored, "wb") as f:
        f.write(good)
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

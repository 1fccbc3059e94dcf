"""What the scripts write: a file whole or not at all (a temporary file renamed into place), so
that an interrupted script leaves the earlier result, never half of a new one; and a table's
cell of a mean over seeds with its 95% interval, which scipy computes (Student's t).

    from outputs import write_text, mean_interval, text
    write_text("results/x/table.md", table)
    text(mean_interval([0.75, 0.76, 0.74]), 4)     # "0.7500 [0.7252, 0.7748]"
"""
import os
import warnings
from collections import namedtuple

Interval = namedtuple("Interval", "n mean low high")


def write_text(path, text):
    """Writes `text` to `path` through `path`.tmp, creating the folder."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def run_json(command, sets, who):
    """Runs a gbasim `command` with "--set" for each of `sets` and "--out" a temporary file;
    returns that file's JSON. A failed command ends the script with its error, `who` first."""
    import json
    import subprocess
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "out.json")
        full = list(command) + ["--out", out]
        for s in sets:
            full += ["--set", s]
        done = subprocess.run(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"{who}: {' '.join(full)}: {done.stderr.strip()}")
        with open(out) as f:
            return json.load(f)


def mean_interval(values):
    """The mean of `values` and its 95% interval, scipy's one-sample t interval. One value: no
    interval (NaN); none: no mean either."""
    from scipy import stats
    values = [float(v) for v in values]
    nan = float("nan")
    if len(values) < 2:
        return Interval(len(values), sum(values) / len(values) if values else nan, nan, nan)
    with warnings.catch_warnings():
        # Seeds that agree to ten digits (a replayed trace's sync steps) make scipy warn of
        # cancellation; the interval is then far narrower than any digit a table prints.
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    return Interval(len(values), sum(values) / len(values), float(ci.low), float(ci.high))


def text(interval, digits):
    """'mean [low, high]', the mean alone without an interval, "-" without values."""
    if interval.n == 0:
        return "-"
    if interval.n < 2:
        return f"{interval.mean:.{digits}f}"
    return f"{interval.mean:.{digits}f} [{interval.low:.{digits}f}, {interval.high:.{digits}f}]"

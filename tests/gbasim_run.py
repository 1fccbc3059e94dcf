"""One `gbasim run` for the Python tests: the summary of its result, or the test's end with
gbasim's error."""
import json
import os
import subprocess
import sys
import tempfile


def run_summary(gbasim, spec, sets):
    """Runs `spec` with the "key=value" overrides `sets`; returns the result's summary."""
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "result.json")
        command = [gbasim, "run", "--spec", spec, "-q", "--out", out]
        for s in sets:
            command += ["--set", s]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"FAIL: {' '.join(command)}: {done.stderr.strip()}")
        with open(out) as f:
            return json.load(f)["summary"]


def collective_times(gbasim, spec, sets, op, sizes):
    """Runs `gbasim collective` of `op` at `sizes` (bytes) on `spec` with the overrides `sets`;
    returns the simulated time of each size, in seconds."""
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "collective.json")
        command = [gbasim, "collective", "--spec", spec, "--op", op, "--out", out,
                   "--sizes", ",".join(str(int(s)) for s in sizes)]
        for s in sets:
            command += ["--set", s]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"FAIL: {' '.join(command)}: {done.stderr.strip()}")
        with open(out) as f:
            return [t["time_s"] for t in json.load(f)["timings"]]

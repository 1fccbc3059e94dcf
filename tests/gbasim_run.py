"""One `gbasim run` or `gbasim collective` for the Python tests: what its JSON output says, or
the test's end with gbasim's error."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from outputs import run_json  # noqa: E402


def _output(command, sets):
    """Runs `command` with the "key=value" overrides `sets` and "--out FILE"; returns FILE's
    JSON, or ends the test with gbasim's error (scripts/outputs.py's run_json)."""
    return run_json(command, sets, "FAIL")


def run_result(gbasim, spec, sets):
    """Runs `spec` with the "key=value" overrides `sets`; returns the whole result."""
    return _output([gbasim, "run", "--spec", spec, "-q"], sets)


def run_summary(gbasim, spec, sets):
    """Runs `spec` with the "key=value" overrides `sets`; returns the result's summary."""
    return _output([gbasim, "run", "--spec", spec, "-q"], sets)["summary"]


def collective_timings(gbasim, spec, sets, op, sizes):
    """Runs `gbasim collective` of `op` at `sizes` (bytes) on `spec` with the overrides `sets`;
    returns its rows (time_s, algorithm, ...), one a size."""
    return _output([gbasim, "collective", "--spec", spec, "--op", op,
                    "--sizes", ",".join(str(int(s)) for s in sizes)], sets)["timings"]


def collective_times(gbasim, spec, sets, op, sizes):
    """The simulated time of each size, in seconds (collective_timings)."""
    return [t["time_s"] for t in collective_timings(gbasim, spec, sets, op, sizes)]


def small_fm_spec(path, platforms, samples, workers, stragglers, evaluation):
    """Writes a small spec that trains fast and has an interior best learning rate: FM with plain
    SGD on `samples` synthetic training samples (8 fields, 4 dense), `workers` workers of local
    batch 64 on platforms/shared-gpu.json, with these straggler and evaluation keys."""
    with open(path, "w") as f:
        json.dump({
            "data": {"train_samples": samples, "test_samples": 2000, "fields": 8, "dense": 4,
                     "max_cardinality": 1000},
            "model": {"name": "fm", "embedding_dim": 4},
            "optimizer": {"name": "sgd"},
            "training": {"workers": workers, "local_batch": 64},
            "cluster": {"platform": os.path.join(os.path.abspath(platforms), "shared-gpu.json")},
            "stragglers": stragglers,
            "evaluation": evaluation}, f)
    return path

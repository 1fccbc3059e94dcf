"""What the scripts write: a file whole or not at all (a temporary file renamed into place), so
that an interrupted script leaves the earlier result, never half of a new one.

    from outputs import write_text
    write_text("results/x/table.md", table)
"""
import os


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

#!/usr/bin/env python3
"""The hostile-input corpus: every case in tests/hostile/*.jsonl (one JSON object a line) is an
input a careless or hostile user could give gbasim (a spec, platform, trace, data file, sweep or
command line). Each runs in a folder of its own that holds an earlier result
(out/result.json); the case passes when the program

- exits with the expected code (2 for bad input, unless the case says otherwise) within the
  case's time limit (no hang), and not by a signal or an internal error;
- prints every expected word (the file, the key or line, what is wrong) on stderr or stdout;
- leaves the folder as it found it: the earlier result byte-identical, no file written or
  half-written, no temporary left over, apart from the files the case says it writes (a run
  that ends with a status, checked in its result).

A case's keys:
  name      unique, short
  spec      an object merged over BASE and written to spec.json, or a string written as is
  files     {path: text} more files to write; "bytes": {path: hex} for bytes that are not text;
            "dirs": [path] empty folders; "links": {path: target} symbolic links; "fifos": [path]
            named pipes (nobody reads them); "executable": [path] files made executable (a
            fake squeue or sbatch on the case's PATH)
  args      the program's arguments (default: run --spec spec.json -q --out out/result.json);
            {repo} and {shared} stand for the repository and ../shared
  program   "gbasim" (default) or "gbasim-mpi" (through scripts/mpirun.sh with "ranks")
  exit      the expected exit code (default 2), or a list of codes any of which passes
  words     strings the output must contain
  not_words strings the output must not contain (a leaked exception, a claim that is wrong)
  writes    {path: status}: files the program must write; a result's "status" must be the one
            given ("" for a file that is not a result)
  changes   folders whose contents the program may write (a sweep's output)
  count     {glob: n}: how many files must match each pattern afterwards
  timeout   seconds (default 60)
  needs     "shared" (the case reads ../shared), "mpirun" or "non-root": skipped where missing
  read_only folders made read-only before the run
  file_size_limit_kb  the largest file the program may write (ulimit -f): a disk that fills
  address_space_limit_kb  the program's address-space limit (ulimit -v)
  env       {name: value} environment variables set for the program ({work} stands for the
            case's folder), e.g. a SLURM_CONF of a cluster that is not there, so that no case
            ever reaches a real Slurm

Usage: hostile_test.py GBASIM GBASIM_MPI [CASE_NAME...]"""
import concurrent.futures
import glob
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(REPO), "shared")
EARLIER = b'{"earlier": "a result from before, which a refused input must leave intact"}\n'
BASE = {"data": {"train_samples": 4000, "test_samples": 500},
        "model": {"name": "fm", "embedding_dim": 4},
        "training": {"workers": 3, "local_batch": 50},
        "evaluation": {"interval_s": 0.01}}
DEFAULT_ARGS = ["run", "--spec", "spec.json", "-q", "--out", "out/result.json"]
CRASH_WORDS = ["internal error", "terminate called", "Segmentation fault", "Aborted",
               "AddressSanitizer", "runtime error:", "xbt_die", "Oops", "Backtrace (displayed"]


def merged(base, over):
    out = dict(base)
    for key, value in over.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(
            out.get(key), dict) else value
    return out


def snapshot(root):
    """Every file and folder under root: path -> digest (None for a folder; a link's target,
    a pipe's kind, for those, which are never opened)."""
    seen = {}
    for folder, dirs, files in os.walk(root):
        for d in dirs:
            seen[os.path.relpath(os.path.join(folder, d), root)] = None
        for f in files:
            path = os.path.join(folder, f)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                digest = "link to " + os.readlink(path)
            elif not stat.S_ISREG(mode):
                digest = "not a file"
            else:
                with open(path, "rb") as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()
            seen[os.path.relpath(path, root)] = digest
    return seen


def expand(text, work):
    return text.replace("{repo}", REPO).replace("{shared}", SHARED).replace("{work}", work)


def run_case(case, gbasim, gbasim_mpi):
    """Returns (name, None) when the case passes, (name, why) when not, (name, 'skip: ...')."""
    name = case["name"]
    needs = case.get("needs")
    if needs == "shared" and not os.path.isdir(os.path.join(SHARED, "traces")):
        return name, "skip: needs ../shared/traces beside the clone"
    if needs == "mpirun" and shutil.which("mpirun") is None:
        return name, "skip: needs mpirun (OpenMPI)"
    if needs == "non-root" and os.geteuid() == 0:
        return name, "skip: root writes into read-only folders"
    work = tempfile.mkdtemp(prefix="hostile-")
    try:
        os.makedirs(os.path.join(work, "out"))
        with open(os.path.join(work, "out", "result.json"), "wb") as f:
            f.write(EARLIER)
        spec = case.get("spec")
        if spec is not None:
            text = spec if isinstance(spec, str) else json.dumps(merged(BASE, spec))
            with open(os.path.join(work, "spec.json"), "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(expand(text, work))
        for path, text in case.get("files", {}).items():
            full = os.path.join(work, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(expand(text, work))
        for path, hexed in case.get("bytes", {}).items():
            full = os.path.join(work, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(bytes.fromhex(hexed))
        for path in case.get("dirs", []):
            os.makedirs(os.path.join(work, path), exist_ok=True)
        for path, target in case.get("links", {}).items():
            os.makedirs(os.path.dirname(os.path.join(work, path)), exist_ok=True)
            os.symlink(expand(target, work), os.path.join(work, path))
        for path in case.get("fifos", []):
            os.makedirs(os.path.dirname(os.path.join(work, path)), exist_ok=True)
            os.mkfifo(os.path.join(work, path))
        for path in case.get("executable", []):
            os.chmod(os.path.join(work, path), 0o755)
        for path in case.get("read_only", []):
            os.chmod(os.path.join(work, path), 0o555)
        before = snapshot(work)
        args = [expand(a, work) for a in case.get("args", DEFAULT_ARGS)]
        if case.get("program") == "gbasim-mpi":
            command = ["bash", os.path.join(REPO, "scripts", "mpirun.sh"), "-np",
                       str(case.get("ranks", 3)), gbasim_mpi] + args
        else:
            command = [gbasim] + args
        if "file_size_limit_kb" in case:  # a full disk: writes beyond it fail with EFBIG
            command = ["bash", "-c", f'ulimit -f {case["file_size_limit_kb"]}; trap "" XFSZ; exec "$@"',
                       "bash"] + command
        if "address_space_limit_kb" in case:
            command = ["bash", "-c", f'ulimit -v {case["address_space_limit_kb"]}; exec "$@"',
                       "bash"] + command
        timeout = case.get("timeout", 60)
        try:
            env = dict(os.environ)
            env.update({k: v.replace("{work}", work) for k, v in case.get("env", {}).items()})
            done = subprocess.run(command, cwd=work, capture_output=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL, env=env)
        except subprocess.TimeoutExpired:
            return name, f"no exit within {timeout} s (a hang)"
        output = (done.stdout + done.stderr).decode("utf-8", "replace")
        short = output.strip().replace("\n", " | ")[-400:]
        if done.returncode < 0:
            return name, f"killed by signal {-done.returncode}: {short}"
        for word in CRASH_WORDS:
            if word in output:
                return name, f"crashed ('{word}'): {short}"
        want = case.get("exit", 2)
        if done.returncode not in (want if isinstance(want, list) else [want]):
            return name, f"exit {done.returncode}, expected {want}: {short}"
        for word in case.get("words", []):
            if expand(word, work) not in output:
                return name, f"no '{word}' in the output: {short}"
        for word in case.get("not_words", []):
            if expand(word, work) in output:
                return name, f"'{word}' in the output: {short}"
        after = snapshot(work)
        writes = case.get("writes", {})
        for path, status in writes.items():
            full = os.path.join(work, path)
            if not os.path.isfile(full):
                return name, f"{path} was not written: {short}"
            if status:
                with open(full) as f:
                    doc = json.load(f)
                got = doc.get("status", doc.get("summary", {}).get("status"))
                if got != status:
                    return name, f"{path} has status {got!r}, expected {status!r}"
        for pattern, n in case.get("count", {}).items():
            found = glob.glob(os.path.join(work, pattern))
            if len(found) != n:
                return name, f"{len(found)} files match {pattern}, expected {n}: {short}"
        free = case.get("changes", [])
        for path in set(before) | set(after):
            if path in writes or any(path == os.path.dirname(w) for w in writes):
                continue
            if any(path == f or path.startswith(f + "/") for f in free):
                continue
            if before.get(path, "absent") != after.get(path, "absent"):
                what = "written" if path not in before else (
                    "removed" if path not in after else "changed")
                return name, f"{path} was {what}: {short}"
        return name, None
    finally:
        for path in case.get("read_only", []):
            os.chmod(os.path.join(work, path), 0o755)
        shutil.rmtree(work, ignore_errors=True)


def load_cases():
    cases, names = [], set()
    folder = os.path.join(HERE, "hostile")
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".jsonl"):
            continue
        with open(os.path.join(folder, file), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip() or line.startswith("#"):
                    continue
                try:
                    case = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"tests/hostile/{file}:{number}: not a JSON case: {e}")
                if case.get("name") in names or "name" not in case:
                    sys.exit(f"tests/hostile/{file}:{number}: a case needs a unique name")
                names.add(case["name"])
                case["where"] = f"{file}:{number}"
                cases.append(case)
    return cases


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    gbasim, gbasim_mpi = sys.argv[1:3]
    cases = load_cases()
    if sys.argv[3:]:
        cases = [c for c in cases if c["name"] in sys.argv[3:]]
    failures = skips = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = [pool.submit(run_case, c, gbasim, gbasim_mpi) for c in cases]
        for case, future in zip(cases, futures):
            name, why = future.result()
            if why is None:
                continue
            if why.startswith("skip:"):
                skips += 1
                print(f"skipped {name} ({case['where']}): {why[6:]}")
            else:
                failures += 1
                print(f"FAIL {name} ({case['where']}): {why}")
    print(f"hostile inputs: {len(cases) - failures - skips} of {len(cases)} handled, "
          f"{failures} failed, {skips} skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

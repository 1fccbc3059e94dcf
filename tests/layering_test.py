#!/usr/bin/env python3
"""The layering test: every #include of the project's folders must follow the dependency table
of docs/architecture.md (base <- models <- strategies, traces <- experiment <- sim, mpi, study <- cli),
and the libraries outside the project stay in the folders that own them.

Usage: layering_test.py REPOSITORY_ROOT
It first plants a forbidden include in a scratch tree and checks that it is caught, so that a
checker that cannot fail does not pass."""
import os
import re
import sys
import tempfile

# What each folder may include, besides itself and the standard library.
ALLOWED = {
    "base": set(),
    "models": {"base"},
    "strategies": {"base", "models"},
    "traces": {"base"},
    "experiment": {"base", "models", "strategies", "traces"},
    "sim": {"base", "models", "strategies", "traces", "experiment"},
    "mpi": {"base", "models", "strategies", "traces", "experiment"},
    "study": {"base", "models", "strategies", "traces", "experiment"},
    "cli": {"base", "models", "strategies", "traces", "experiment", "sim", "mpi", "study"},
    "fuzz": {"base", "models", "strategies", "traces", "experiment", "study", "cli"},
}
# Outside libraries: the include prefix and the folders that may use it. An include of any
# other outside header (one with a folder or an extension, beyond the system's below) fails.
LIBRARIES = {
    "boost/program_options": {"cli"},
    "boost/algorithm/": {"cli"},
    "boost/math/": {"base"},
    "simgrid/": {"sim", "cli"},
    "xbt/": {"sim", "cli"},
    "mpi.h": {"mpi", "cli"},
    "nlohmann/": {"experiment", "sim", "mpi", "study", "cli", "fuzz"},
    "Eigen/": {"models", "strategies", "experiment", "sim", "mpi", "study", "cli"},
}
# The system's own headers (POSIX), which every folder may use.
SYSTEM = {"unistd.h", "fcntl.h", "signal.h", "spawn.h", "sys/mman.h", "sys/resource.h",
          "sys/stat.h", "sys/wait.h", "sys/types.h", "sys/time.h", "sys/socket.h", "errno.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def violations(root):
    found = []
    for folder, allowed in ALLOWED.items():
        top = os.path.join(root, folder)
        for dirpath, _, names in os.walk(top):
            for name in sorted(names):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        kind, target = m.groups()
                        where = f"{os.path.relpath(path, root)}:{number}"
                        if kind == '"':
                            other = target.split("/")[0]
                            if other != folder and other not in allowed:
                                found.append(f"{where}: {folder}/ may not include {target}")
                            continue
                        owners = [o for p, o in LIBRARIES.items() if target.startswith(p)]
                        if owners and folder not in owners[0]:
                            found.append(f"{where}: {folder}/ may not use <{target}>")
                        elif not owners and target not in SYSTEM and ("/" in target or "." in target):
                            found.append(f"{where}: <{target}> is a library the layering table "
                                         "does not name")
    return found


def planted_is_caught():
    with tempfile.TemporaryDirectory() as scratch:
        os.makedirs(os.path.join(scratch, "mpi"))
        with open(os.path.join(scratch, "mpi", "planted.cc"), "w") as f:
            f.write('#include "sim/simulation.h"\n#include <boost/program_options.hpp>\n'
                    '#include <boost/math/distributions/normal.hpp>\n#include <zlib.h>\n')
        return len(violations(scratch)) == 4


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if not planted_is_caught():
        print("FAIL: planted includes in mpi/ (sim/, Boost.Program_options, Boost.Math, zlib) "
              "were not all caught")
        return 1
    found = violations(sys.argv[1])
    for v in found:
        print("FAIL:", v)
    checked = sum(name.endswith((".h", ".cc")) for folder in ALLOWED
                  for _, _, names in os.walk(os.path.join(sys.argv[1], folder)) for name in names)
    print(f"layering: {checked} files in {len(ALLOWED)} folders, {len(found)} forbidden includes")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""gbasim's collectives against SMPI's, SimGrid's own MPI simulator, written by others: the
MPI program tests/smpi/collectives.c (built with smpicc) runs MPI_Allreduce with SMPI's ring
algorithm ("lr": a ring reduce-scatter, then a ring all-gather) and MPI_Alltoall with its
linear one ("basic_linear": every pair at once) on a SimGrid XML platform (platforms/star-9.xml,
platforms/fat-tree-16.xml, platforms/torus-16.xml, platforms/dragonfly-16.xml); `gbasim collective`
runs its ring all-reduce and its all-to-all on the same file (cluster.platform_xml with roles).
Under LV08 (SimGrid's default, cross-traffic on) and CM02, on a star of 8 ranks, a 2:1
oversubscribed fat-tree of 16, and 8 ranks on a 4 x 4 torus and on a dragonfly of 16, at 1 MiB
and 16 MiB, the times must agree within 5%. The same platforms built by gbasim from its own
cluster keys (the default star; topology "fat_tree", "torus", "dragonfly") are held to SMPI's
times on the XML files too.

Usage: smpi_test.py GBASIM SMPICC SMPIRUN"""
import json
import os
import subprocess
import sys
import tempfile

from gbasim_run import collective_times

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 0.05
SIZES = [1 << 20, 16 << 20]
SMPI_ALGORITHM = {"allreduce": "smpi/allreduce:lr", "alltoall": "smpi/alltoall:basic_linear"}
NETWORK = {"LV08": ["--cfg=network/model:LV08"],
           "CM02": ["--cfg=network/model:CM02", "--cfg=network/crosstraffic:0"]}


def smpi_times(smpirun, program, platform, ranks, network, op, work):
    hostfile = os.path.join(work, f"hosts-{ranks}")
    with open(hostfile, "w") as f:
        f.write("".join(f"host-{i}\n" for i in range(ranks)))
    command = [smpirun, "-np", str(ranks), "-platform", platform, "-hostfile", hostfile,
               f"--cfg={SMPI_ALGORITHM[op]}", "--cfg=smpi/simulate-computation:no",
               "--log=root.thres:critical"] + NETWORK[network] + [program, op] + [
                   str(s) for s in SIZES]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)}: {done.stderr.strip()}")
    lines = [l.split() for l in done.stdout.splitlines() if l.startswith(op + " ")]
    if len(lines) != len(SIZES):
        sys.exit(f"FAIL: {' '.join(command)} printed {done.stdout!r}")
    return [float(l[2]) for l in lines]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    gbasim, smpicc, smpirun = sys.argv[1:]
    for tool in (smpicc, smpirun):
        if not os.path.isfile(tool):
            sys.exit(f"FAIL: {tool}: SMPI's compiler and launcher come with libsimgrid-dev "
                     "(scripts/setup.sh installs it)")
    failures = checks = 0
    with tempfile.TemporaryDirectory() as work:
        program = os.path.join(work, "collectives")
        done = subprocess.run([smpicc, "-O1", os.path.join(HERE, "smpi", "collectives.c"), "-o",
                               program], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"FAIL: smpicc could not build tests/smpi/collectives.c: {done.stderr}")
        for name, ranks in [("star-9.xml", 8), ("fat-tree-16.xml", 16), ("torus-16.xml", 8),
                            ("dragonfly-16.xml", 8)]:
            platform = os.path.join(HERE, "..", "platforms", name)
            spec = os.path.join(work, f"spec-{ranks}.json")
            with open(spec, "w") as f:
                json.dump({"training": {"mode": "sync", "workers": ranks},
                           "stragglers": {"transient_rate_per_s": 0},
                           "cluster": {"platform_xml": platform, "ps_shards": 1,
                                       "roles": {"workers": [f"host-{i}" for i in range(ranks)],
                                                 "servers": [f"host-{ranks % 16}"]}}}, f)
            # The same platform from gbasim's cluster keys: 25 Gb/s and 10 us are the defaults.
            built = os.path.join(work, f"built-{ranks}.json")
            cluster = {"ps_shards": 1, "worker_speed": 3e12}
            if name.startswith("fat-tree"):
                cluster.update({"topology": "fat_tree",
                                "fat_tree": {"nodes_per_switch": 4, "oversubscription": 2}})
            elif name.startswith("torus"):
                cluster.update({"topology": "torus", "torus": {"dimensions": [4, 4]}})
            elif name.startswith("dragonfly"):  # the default dragonfly is the file's
                cluster.update({"topology": "dragonfly"})
            with open(built, "w") as f:
                json.dump({"training": {"mode": "sync", "workers": ranks},
                           "stragglers": {"transient_rate_per_s": 0}, "cluster": cluster}, f)
            for network in NETWORK:
                for op in ["allreduce", "alltoall"]:
                    want = smpi_times(smpirun, program, platform, ranks, network, op, work)
                    for source, path in [("XML", spec), ("keys", built)]:
                        got = collective_times(gbasim, path, [f"cluster.network_model={network}"],
                                               op, SIZES)
                        for size, g, w in zip(SIZES, got, want):
                            error = (g - w) / w
                            ok = abs(error) <= TOLERANCE
                            failures += not ok
                            checks += 1
                            print(f"{'ok  ' if ok else 'FAIL'} {name} ({source}) {network} {op} "
                                  f"{size} B: gbasim {g * 1e3:.4f} ms, SMPI {w * 1e3:.4f} ms "
                                  f"({100 * error:+.3f}%)")
    print(f"smpi: {failures} of {checks} outside {100 * TOLERANCE:.0f}%")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

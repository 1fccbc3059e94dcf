#!/usr/bin/python3
"""gbasim's all-reduce against published hardware measurements (results/published-collectives/
measured.csv, each row with its source): for each measured setup, `gbasim collective` on the
platform that models it (PLATFORMS below, each number with its source), with the hierarchical
all-reduce under LV08 (SimGrid's default) and CM02, and the ring under LV08. Writes
results/published-collectives/table.md: measured and simulated bus bandwidth, and whether they
agree within 15%.

With --more, the same for the further published points of measured-more.csv (each source with
its citation and hardware there), by source: writes table-more.md, with how many agree.

With --ops, NCCL's model (allreduce "nccl", CM02) against measured-ops.csv: other collectives
and the algorithm and protocol NCCL reported picking; writes table-ops.md.

With --alltoall, the all-to-all (every pair at once) against measured-alltoall.csv's published
alltoall_perf points, under LV08, CM02, and CM02 with "nccl" (NCCL's NVLink rate inside a node);
writes table-alltoall.md. Rows whose source does not say what the network is are listed, not
counted.

Usage: scripts/published_collectives.py [--more | --ops | --alltoall] [GBASIM]
       (default build/bin/gbasim)"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outputs import run_json, write_text  # noqa: E402

FOLDER = "results/published-collectives"
TOLERANCE = 0.15
# 2 x 8 H100 (Google Cloud A3 Mega): NVLink 4 through NVSwitch, 900 GB/s both ways a GPU
# (NVIDIA's H100 datasheet), so 4.5e11 bytes/s each way; eight 200 Gb/s GPU NICs a VM (Google
# Cloud's A3 Mega machine type), 2.5e10 bytes/s each; PCIe 5.0 x16 from each GPU to the NICs
# (32 GT/s x 16 lanes x 128/130 = 63 GB/s); latencies are gbasim's defaults.
H100_A3_MEGA = ["cluster.gpus_per_node=8", "cluster.gpu_generation=hopper", "cluster.nics_per_node=8", "cluster.nic_bandwidth=2.5e10",
                "cluster.intra_node_bandwidth=4.5e11", "cluster.gpu_nic_bandwidth=6.3e10"]
# Oracle Cloud BM.GPU4.8: 8 A100-SXM4 on NVLink 3 through NVSwitch, 600 GB/s both ways a GPU
# (NVIDIA's A100 datasheet), so 3e11 bytes/s each way; 16 x 100 Gb/s RoCE ports a node (the
# measurement's own page), 1.25e10 bytes/s each; PCIe 4.0 x16 from each GPU to the NICs
# (16 GT/s x 16 lanes x 128/130 = 31.5 GB/s); latencies are gbasim's defaults. Its CPUs are
# AMD EPYC 7542 (Oracle's BM.GPU4.8 shape description); A3 Mega's are Intel Sapphire Rapids
# (Google Cloud's A3 machine series), the default cluster.cpu_vendor.
A100_BM_GPU4_8 = ["cluster.gpus_per_node=8", "cluster.gpu_generation=ampere", "cluster.cpu_vendor=amd", "cluster.nics_per_node=16",
                  "cluster.nic_bandwidth=1.25e10", "cluster.intra_node_bandwidth=3e11",
                  "cluster.gpu_nic_bandwidth=3.15e10"]
QUIET = ["stragglers.transient_rate_per_s=0"]
# The latencies the first four variants, --ops and --alltoall run with: gbasim's former
# estimates (a 2 us hop to the NVSwitch, 1 us of PCIe to the NICs, a 10 us hop from a NIC to the
# switch), pinned here so that those columns keep their meaning whatever the demo's platform
# says.
ESTIMATED = ["cluster.intra_node_latency=2e-6", "cluster.gpu_nic_latency=1e-6",
             "cluster.nic_latency=1e-5"]
# The last variant's latencies, from measured-latency.csv (each row's source is there). A
# message crosses two hops of each kind, so a hop is half the measured one-way time.
# - NVLink: NV-A100-6, osu_latency between two A100s of one OCI BM.GPU4.8 through NVSwitch,
#   2.48 us one way, so 1.24 us a hop; no H100 measurement was found, and H100's NVSwitch
#   takes A100's.
# - GPU to NIC: RoCE-100-GDR (3.89 us GPU to GPU across two OCI nodes) less RoCE-100-1 (1.67 us
#   host to host on the same network): 2.22 us for the two PCIe paths, 1.11 us each.
# - The NICs, by fabric: InfiniBand, IB-HDR-1's 1.2 us (a 0.6 us hop; IB-NDR-1 says under 2);
#   OCI's RoCE, RoCE-100-1's 1.67 us; AWS EFA v2 (p5), EFA-p5-1's 20.75 us; EFA v1 (p4d,
#   p4de), EFA-c5n-1's 17.23 us (the same tool and MPI); Google's GPUDirect-TCPXO, none found,
#   so TCP-i40e-1's 24.97 us over kernel TCP stands in.
def measured_latencies(nic_one_way_s):
    return ["cluster.intra_node_latency=1.24e-6", "cluster.gpu_nic_latency=1.11e-6",
            f"cluster.nic_latency={nic_one_way_s / 2:g}"]


IB, ROCE, EFA_V2, EFA_V1, TCP = (measured_latencies(1.2e-6), measured_latencies(1.67e-6),
                                 measured_latencies(20.75e-6), measured_latencies(17.23e-6),
                                 measured_latencies(24.97e-6))
PLATFORMS = {
    "2x8 H100 (A3 Mega)": ["training.workers=16"] + H100_A3_MEGA + QUIET,
    "1x8 A100 (OCI BM.GPU4.8)": ["training.workers=8"] + A100_BM_GPU4_8 + QUIET,
    "2x8 A100 (OCI BM.GPU4.8)": ["training.workers=16"] + A100_BM_GPU4_8 + QUIET,
}
LATENCIES = {"2x8 H100 (A3 Mega)": TCP, "1x8 A100 (OCI BM.GPU4.8)": ROCE,
             "2x8 A100 (OCI BM.GPU4.8)": ROCE}
# The platforms of measured-more.csv, by source key (its comments give each one's hardware).
# H100 SXM: NVLink 4, 4.5e11 bytes/s each way a GPU, and PCIe 5.0 x16 to the NICs, 6.3e10, as
# above; A100 SXM4: NVLink 3, 3e11, and PCIe 4.0 x16, 3.15e10, as above. The NICs: each
# source's own description (AWS p5: 32 x 100 Gb/s EFAv2; p4d and p4de: 4 x 100 Gb/s EFA; the
# Dell XE9680 and the other 400 Gb/s InfiniBand clusters: 8 x 400 Gb/s, the count assumed where
# the source gives only the rate; OCI BM.GPU.H100.8: 16 RDMA ports of 200 Gb/s).
H100 = ["cluster.gpus_per_node=8", "cluster.gpu_generation=hopper", "cluster.intra_node_bandwidth=4.5e11",
        "cluster.gpu_nic_bandwidth=6.3e10"]
A100 = ["cluster.gpus_per_node=8", "cluster.gpu_generation=ampere", "cluster.intra_node_bandwidth=3e11",
        "cluster.gpu_nic_bandwidth=3.15e10"]


def nics(count, bytes_per_s):
    return [f"cluster.nics_per_node={count}", f"cluster.nic_bandwidth={bytes_per_s}"]


EFA_P5, EFA_P4, IB_400, OCI_ROCE = nics(32, 1.25e10), nics(4, 1.25e10), nics(8, 5e10), nics(16, 2.5e10)
# The hosts' CPUs, for NCCL's constants (cluster.cpu_vendor; Intel is the default): AMD EPYC on
# AWS p5 (7R13, AWS's P5 instance page), Azure ND A100 v4 (7V12, Azure's NDasrA100_v4 page) and
# DGX A100 (7742, NVIDIA's DGX A100 datasheet); Intel Xeon on AWS p4d and p4de (8275CL), the
# Dell XE9680, OCI BM.GPU.H100.8 and Azure ND H100 v5 (Sapphire Rapids), each its vendor's page.
AMD = ["cluster.cpu_vendor=amd"]
# Runs that forced NCCL's algorithm (NCCL_ALGO), as their sources say.
FORCE_RING, FORCE_NVLS = ["cluster.nccl_algorithm=ring"], ["cluster.nccl_algorithm=nvls"]
MORE = {
    "AWS_P5_2N": (16, H100 + EFA_P5 + AMD), "AWS_P5_EKS_2N": (16, H100 + EFA_P5 + AMD),
    "AWS_P4DE_2N": (16, A100 + EFA_P4), "AWS_DLAMI_P4D_2N": (16, A100 + EFA_P4),
    "AWS_EKS_P4D_2N": (16, A100 + EFA_P4), "OCI_H100_2N": (16, H100 + OCI_ROCE),
    "NCT309_2N": (16, H100 + IB_400), "NCT309_4N": (32, H100 + IB_400),
    "NCT309_GJ_2N": (16, H100 + IB_400), "NCT309_GJ_4N": (32, H100 + IB_400),
    "NCT309_GJ_8N": (64, H100 + IB_400), "NCT309_GJ_8N_TUNED": (64, H100 + IB_400),
    "NCT309_GJ_2N_RING": (16, H100 + IB_400 + FORCE_RING), "NCT290_1N": (8, H100),
    "AZ_NDH100V5_1N": (8, H100 + FORCE_NVLS), "STAS_A100_1N": (8, A100), "GALV_A100_1N": (8, A100 + AMD),
    "AZ_NDA100V4_1N": (8, A100 + AMD),
}
# Each source's network, for the measured latencies (the 400 Gb/s clusters of nccl-tests issue
# 309 are InfiniBand; on one node the NICs carry nothing, and InfiniBand's stands).
MORE_LATENCIES = {"AWS_P5_2N": EFA_V2, "AWS_P5_EKS_2N": EFA_V2, "AWS_P4DE_2N": EFA_V1,
                  "AWS_DLAMI_P4D_2N": EFA_V1, "AWS_EKS_P4D_2N": EFA_V1, "OCI_H100_2N": ROCE,
                  "NCT309_2N": IB, "NCT309_4N": IB, "NCT309_GJ_2N": IB, "NCT309_GJ_4N": IB,
                  "NCT309_GJ_8N": IB, "NCT309_GJ_8N_TUNED": IB, "NCT309_GJ_2N_RING": IB,
                  "NCT290_1N": IB, "AZ_NDH100V5_1N": IB, "STAS_A100_1N": IB,
                  "GALV_A100_1N": IB, "AZ_NDA100V4_1N": IB}
assert set(MORE_LATENCIES) == set(MORE), "every source of MORE needs its network"
# gbasim's tree is a binary tree over every rank in heap order, not NCCL's (a chain in each
# node, trees across nodes), and is left out here.
# "nccl" is NCCL's ring or tree as its tuner picks them (sim/nccl_model.h), under CM02: LV08's
# corrections are TCP's, and NCCL's latencies already hold the hardware's.
# The last runs "nccl" with the measured latencies above: the model platforms/gpu-nodes.json and
# platforms/dgx-h100.json use.
VARIANTS = [("hierarchical", "LV08", ""), ("hierarchical", "CM02", ""), ("ring", "LV08", ""),
            ("nccl", "CM02", ""), ("nccl", "CM02", "measured")]


def variant_label(variant, separator=", "):
    return separator.join(x for x in variant if x)


# measured-ops.csv's systems: an H200 node has H100's NVLink 4 (NVIDIA's H200 datasheet).
OPS = {"STAS_H200_1N": (8, H100)}


def simulate(gbasim, sets, sizes, op="allreduce"):
    command = [gbasim, "collective", "--spec", "examples/demo.json", "--op", op,
               "--sizes", ",".join(str(s) for s in sizes)]
    timings = run_json(command, sets, "published_collectives.py")["timings"]
    return [t["busbw_gb_s"] for t in timings], [t["algorithm"] for t in timings]


def ops(gbasim):
    """NCCL's model against measured-ops.csv: bus bandwidth where given, and the pick."""
    with open(os.path.join(FOLDER, "measured-ops.csv")) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    lines = ["| setup | op | NCCL_ALGO | size (B) | measured busbw (GB/s) | gbasim nccl, CM02 (GB/s) "
             "| NCCL's pick | gbasim's pick | within 15% |", "|" + " --- |" * 9]
    close = picks = measured = 0
    for r in rows:
        workers, sets = OPS[r["source"]]
        sets = [f"training.workers={workers}", "cluster.allreduce=nccl",
                "cluster.network_model=CM02", f"cluster.nccl_algorithm={r['nccl_algorithm']}"] + sets
        (busbw,), (pick,) = simulate(gbasim, sets + QUIET + ESTIMATED, [int(r["bytes"])],
                                     r["op"])
        picks += pick == r["picked"]
        verdict = "-"
        if r["busbw_gb_s"]:
            m = float(r["busbw_gb_s"])
            measured += 1
            close += abs(busbw - m) <= TOLERANCE * m
            verdict = "yes" if abs(busbw - m) <= TOLERANCE * m else "no"
        lines.append(f"| {r['setup']} | {r['op']} | {r['nccl_algorithm']} | {r['bytes']} | "
                     f"{r['busbw_gb_s'] or '-'} | {busbw:.2f} | {r['picked']} | {pick} | {verdict} |")
    table = "\n".join(lines) + (f"\n\nWithin 15%: {close} of {measured}. The same pick as NCCL: "
                                f"{picks} of {len(rows)}.\n")
    write_text(os.path.join(FOLDER, "table-ops.md"), table)
    print(table)


# measured-alltoall.csv's systems (its comments cite each log): H100s on NVSwitch; Azure NDm
# A100 v4, A100s on NVSwitch and 8 x 200 Gb/s HDR InfiniBand a VM (Azure's NDm A100 v4-series
# page, 2.5e10 bytes/s each). Each row's ranks over its nodes are the GPUs a node. Sources that
# do not say what their network is are left out.
ALLTOALL = {"XXRJUN_C00_1N": H100, "XXRJUN_C01_1N": H100, "NCCL_ISSUE_2169": H100,
            "MSCCLPP_NDMV4": A100 + nics(8, 2.5e10)}
ALLTOALL_VARIANTS = [("hierarchical", "LV08"), ("hierarchical", "CM02"), ("nccl", "CM02")]


def alltoall_label(variant):
    algorithm, model = variant
    return f"{'nccl' if algorithm == 'nccl' else 'pairwise'}, {model}"


def alltoall(gbasim):
    """The all-to-all against measured-alltoall.csv: times (from the bus bandwidth where the
    source printed no time, converted as nccl-tests does), agreeing when the bandwidths they
    imply are within 15%."""
    with open(os.path.join(FOLDER, "measured-alltoall.csv")) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    lines = ["| source | setup | ranks | size (B) | measured time (us) | " +
             " | ".join(f"{alltoall_label(v)} (us)" for v in ALLTOALL_VARIANTS) +
             " | within 15% |",
             "|" + " --- |" * (6 + len(ALLTOALL_VARIANTS))]
    agree = {v: 0 for v in ALLTOALL_VARIANTS}
    counted = 0
    left_out = set()
    for r in rows:
        n, size = int(r["ranks"]), int(r["bytes"])
        if r["source"] not in ALLTOALL:
            left_out.add(r["source"])
            continue
        platform = [s for s in ALLTOALL[r["source"]] if not s.startswith("cluster.gpus_per_node")]
        sets = [f"training.workers={n}", f"cluster.gpus_per_node={n // int(r['nodes'])}"]
        sets += platform + QUIET + ESTIMATED
        if r["time_us"]:
            measured = float(r["time_us"]) * 1e-6
        else:
            measured = size / (float(r["busbw_gb_s"]) * 1e9 * n / (n - 1))
        times = []
        for a, m in ALLTOALL_VARIANTS:
            command = [gbasim, "collective", "--spec", "examples/demo.json", "--op", "alltoall",
                       "--sizes", str(size)]
            extra = [f"cluster.allreduce={a}", f"cluster.network_model={m}"]
            times.append(run_json(command, sets + extra,
                                  "published_collectives.py")["timings"][0]["time_s"])
        counted += 1
        close = []
        for v, t in zip(ALLTOALL_VARIANTS, times):
            if abs(measured / t - 1) <= TOLERANCE:  # bandwidths within 15%, as above
                agree[v] += 1
                close.append(alltoall_label(v).replace(",", ""))
        lines.append(f"| {r['source']} | {r['setup']} | {n} | {size} | {measured * 1e6:.2f} | " +
                     " | ".join(f"{t * 1e6:.2f}" for t in times) +
                     f" | {', '.join(close) if close else 'no'} |")
    table = "\n".join(lines) + f"\n\nWithin 15%, of {counted}: " + ", ".join(
        f"{alltoall_label(v).replace(',', '')} {agree[v]}" for v in ALLTOALL_VARIANTS) + ".\n"
    if left_out:
        table += ("Left out, their network not stated: " + ", ".join(sorted(left_out)) + ".\n")
    write_text(os.path.join(FOLDER, "table-alltoall.md"), table)
    print(table)


def within_reach(rows, inputs):
    """How many measured points a model could be within TOLERANCE of at best, if it gives one
    number for each platform (the inputs the script passes) and size. Points of several sources
    with the same inputs and size can be reached together only where their 15% bands overlap."""
    groups = {}
    for r in rows:
        groups.setdefault((tuple(inputs(r)), int(r["bytes"])), []).append(float(r["busbw_gb_s"]))
    reach = 0
    for measured in groups.values():
        bands = [(m * (1 - TOLERANCE), m * (1 + TOLERANCE)) for m in measured]
        reach += max(sum(lo <= x <= hi for lo, hi in bands) for x, _ in bands)
    return reach


def main():
    modes = ("--more", "--ops", "--alltoall")
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__)
        return
    unknown = [a for a in sys.argv[1:] if a.startswith("-") and a not in modes]
    if unknown or len(sys.argv) > 3 or sum(a in modes for a in sys.argv[1:]) > 1:
        sys.exit(f"published_collectives.py: bad arguments {sys.argv[1:]}\n\n{__doc__}")
    if "--alltoall" in sys.argv[1:]:
        args = [a for a in sys.argv[1:] if a != "--alltoall"]
        return alltoall(args[0] if args else "build/bin/gbasim")
    if "--ops" in sys.argv[1:]:
        args = [a for a in sys.argv[1:] if a != "--ops"]
        return ops(args[0] if args else "build/bin/gbasim")
    args = [a for a in sys.argv[1:] if a != "--more"]
    more = len(args) < len(sys.argv) - 1
    gbasim = args[0] if args else "build/bin/gbasim"
    name = "measured-more.csv" if more else "measured.csv"
    with open(os.path.join(FOLDER, name)) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    header = "| setup | size (B) | measured busbw (GB/s) | " + " | ".join(
        f"gbasim {variant_label(v)} (GB/s)" for v in VARIANTS) + " | nccl's choice | within 15% |"
    lines = [header, "|" + " --- |" * (5 + len(VARIANTS))]
    platforms, latencies = PLATFORMS, LATENCIES
    if more:
        unknown = sorted({r["source"] for r in rows} - set(MORE))
        if unknown:
            sys.exit(f"published_collectives.py: {name}: no platform for source {unknown}")
        platforms, latencies = {}, {}
        for r in rows:
            workers, sets = MORE[r["source"]]
            platforms.setdefault((r["setup"], r["source"]),
                                 [f"training.workers={workers}"] + sets + QUIET)
            latencies[(r["setup"], r["source"])] = MORE_LATENCIES[r["source"]]
    agree = {v: 0 for v in VARIANTS}
    for setup, platform in platforms.items():
        key = setup
        if more:
            mine = [r for r in rows if (r["setup"], r["source"]) == setup]
            setup = f"{setup[0]} [{setup[1]}]"
        else:
            mine = [r for r in rows if r["setup"] == setup]
        sizes = [int(r["bytes"]) for r in mine]
        simulated = {v: simulate(gbasim, platform + [f"cluster.allreduce={v[0]}",
                                                     f"cluster.network_model={v[1]}"] +
                                 (latencies[key] if v[2] else ESTIMATED), sizes)
                     for v in VARIANTS}
        for i, r in enumerate(mine):
            measured = float(r["busbw_gb_s"])
            values = [simulated[v][0][i] for v in VARIANTS]
            close = [variant_label(v, " ") for v, x in zip(VARIANTS, values)
                     if abs(x - measured) <= TOLERANCE * measured]
            for v, x in zip(VARIANTS, values):
                agree[v] += abs(x - measured) <= TOLERANCE * measured
            lines.append(f"| {setup} | {r['bytes']} | {measured:.2f} | " +
                         " | ".join(f"{x:.2f}" for x in values) +
                         f" | {simulated[('nccl', 'CM02', '')][1][i]}" +
                         f" | {', '.join(close) if close else 'no'} |")
    table = "\n".join(lines) + "\n\nWithin 15%, of " + str(len(rows)) + ": " + ", ".join(
        f"{variant_label(v, ' ')} {agree[v]}" for v in VARIANTS) + ".\n"
    inputs = {setup: platforms[setup] + latencies[setup] for setup in platforms}
    reach = within_reach(rows, lambda r: inputs[(r["setup"], r["source"]) if more else r["setup"]])
    table += (f"\nAt most {reach} of {len(rows)} are within reach of any model: where sources "
              "with the same platform disagree by more than 15% at a size, one number cannot "
              "be within 15% of all of them.\n")
    write_text(os.path.join(FOLDER, "table-more.md" if more else "table.md"), table)
    print(table)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Each collective's simulated time against its alpha-beta formula under SimGrid's CM02 (plain
latency + size / bandwidth, no cross-traffic), on small platforms built from the spec's cluster
keys (`gbasim collective`): the ring all-reduce on a star, the hierarchical all-reduce on GPU
nodes, the tree all-reduce in one chunk, the all-to-all on a star, the all-to-all on a fat-tree
with and without oversubscription, and NCCL's all-reduce (allreduce "nccl") and its ring
all-gather and reduce-scatter where its tuner's pick is worked out by hand, which the run must
name too. Each must agree within 0.1%. And the tree's chunks pipeline, alike under both network
models (within 0.5% of each other).

Usage: collective_times_test.py GBASIM DEMO_SPEC"""
import sys

from gbasim_run import collective_timings, collective_times

TOLERANCE = 1e-3
B, L = 3.125e9, 1e-5        # the NIC: bytes/s, seconds
BI, LI = 1.5e11, 2e-6       # the intra-node link
BP, LP = 1.575e10, 1e-6     # a GPU's link to its node's NICs
SIZES = [1 << 20, 16 << 20]
# Hosts on the star with one ring unless a case says otherwise (the demo spec's own cluster is
# GPU nodes).
BASE = ["cluster.gpus_per_node=1", "cluster.nics_per_node=1", "cluster.allreduce=ring",
        "cluster.embedding_exchange=all_gather",
        "cluster.network_model=CM02", "stragglers.transient_rate_per_s=0",
        f"cluster.nic_bandwidth={B}", f"cluster.nic_latency={L}",
        f"cluster.intra_node_bandwidth={BI}", f"cluster.intra_node_latency={LI}",
        f"cluster.gpu_nic_bandwidth={BP}", f"cluster.gpu_nic_latency={LP}"]


def ring(n, s):
    """2(N - 1) passes of S / N, each over two NICs (the sender's up, the receiver's down)."""
    return 2 * (n - 1) * (2 * L + s / n / B)


def hierarchical(g, m, nics, s):
    """Reduce-scatter in the node (g - 1 passes of S / g over two intra-node links), g rings
    across the m nodes at once (2(m - 1) passes of S / (g m) over the sender's and the
    receiver's GPU-to-NIC links and both NIC links, the node's g flows sharing its NICs),
    all-gather in the node."""
    in_node = (g - 1) * (2 * LI + s / g / BI)
    across = 2 * (m - 1) * (2 * LP + 2 * L + s / (g * m) / min(BP, nics * B / g))
    return 2 * in_node + across


def tree(n, s):
    """NCCL's double binary tree, each carrying S / 2 in one chunk: on 2 workers each sends the
    other its half up, then down (4 latencies, S / B); on 3, the inner rank of each tree takes
    both children's halves on its link (S / B a phase)."""
    return {2: 4 * L + s / B, 3: 4 * L + 2 * s / B}[n]


def all_to_all_star(n, s):
    """N - 1 flows of S / N leave every NIC at once, sharing it."""
    return 2 * L + (n - 1) * (s / n) / B


def all_to_all_fat_tree(n, k, over, s):
    """Nodes 0..n-1 on leaf switches of k (n = 2k here), links without latency (CM02 shares a
    link among flows in inverse proportion to their routes' latency, which would favour the
    flows inside a switch): the k x k flows to the other switch share the leaf switch's
    k / over uplinks (SimGrid routes them evenly by destination), and every node's n - 1 flows
    its NIC; the tighter of the two bounds the time."""
    up = k // over
    return max(n - 1, k * k / up) * (s / n) / B


# allreduce "nccl" on H100s: NCCL's NVLink rate is 370.8 of the datasheet's 450 GB/s.
NVLINK = 370.8 / 450
NCCL = ["cluster.allreduce=nccl", "cluster.gpu_generation=hopper"]
ONE_NODE = ["training.workers=8", "cluster.gpus_per_node=8"] + NCCL  # of 8 H100s
TWO_NODES = ["training.workers=8", "cluster.gpus_per_node=4"] + NCCL  # of 4, one NIC each


def nccl_cases():
    """(name, op, sets, size, algorithm, formula): NCCL's latency (v2.21.5-1, sim/nccl_model.cc),
    or the streams' route latency where it is longer, plus the busiest link's bytes at its
    rate over the protocol's efficiency."""
    ring = 2 * 7 / 8 / (BI * NVLINK)  # each GPU streams 2(n - 1)/n S to the next over NVLink
    nvls = 0.85 * 15 / 16  # NVLS's share of NCCL's NVLink rate
    return [(name, "allreduce", *rest) for name, *rest in [
        # 64 KiB on one node: ring/LL, 6.6 + 14 x 0.6 us, half the link's rate.
        ("nccl all-reduce, 1 node of 8, 64 KiB", ONE_NODE, 1 << 16, "ring/LL",
         15.0e-6 + (1 << 16) * ring / 0.5),
        # 1 GiB: NVLS, 25 us, (g + 1)/g of the buffer each way on every NVLink at its share,
        # its 64 pipeline steps of 16 x 8 chunks of 128 KiB taking 2 more to fill 3 stages.
        ("nccl all-reduce, 1 node of 8, 1 GiB", ONE_NODE, 1 << 30, "nvls/Simple",
         25e-6 + (1 << 30) * 9 / 8 / (BI * NVLINK * nvls) * 66 / 64),
        # The same with the ring forced: ring/Simple, 8.4 + 14 x 3.4 us, the link's rate.
        ("nccl all-reduce, 1 node of 8, 1 GiB, ring", ONE_NODE + ["cluster.nccl_algorithm=ring"],
         1 << 30, "ring/Simple", 56.0e-6 + (1 << 30) * ring),
        # 2 nodes of 4 behind one NIC each, 256 MiB: NVLSTree, 25 + 2 x 14 us, the node sending
        # S across (the ring sends 2(n - 1)/n S) at the NIC's rate; 32 pipeline steps of 16 x 4
        # chunks of 128 KiB, and 3 more to fill 4 stages.
        ("nccl all-reduce, 2 nodes of 4, 256 MiB", TWO_NODES, 1 << 28, "nvlstree/Simple",
         53e-6 + (1 << 28) / B * 35 / 32),
        # The tree forced: LL128, 14 + 2 x (3 x 1.25 + 8.5) us, 0.92 x 120/128 of the NIC
        # (Simple's correction at 2^22 lines of 64 bytes, 0.9, makes it slower).
        ("nccl all-reduce, 2 nodes of 4, 256 MiB, tree", TWO_NODES + ["cluster.nccl_algorithm=tree"],
         1 << 28, "tree/LL128", 38.5e-6 + (1 << 28) / B / (0.92 * 120 / 128)),
    ]] + nccl_gather_cases() + nccl_all_to_all_cases()


def nccl_all_to_all_cases():
    """(name, op, sets, size, algorithm, formula): with "nccl", the all-to-all's pairs inside a
    node move at NCCL's NVLink rate: each GPU sends (n - 1)/n of its buffer over its NVLink,
    after the route's latency (two NVLink hops through the switch)."""
    gib = 1 << 30
    return [("nccl all-to-all, 1 node of 8, 1 GiB", "alltoall", ONE_NODE, gib, "pairwise",
             2 * LI + gib * 7 / 8 / (BI * NVLINK))]


def nccl_gather_cases():
    """(name, op, sets, size, algorithm, formula): NCCL's ring all-gather and reduce-scatter,
    n - 1 steps, each edge carrying (n - 1)/n of the buffer."""
    gib, mib = 1 << 30, 1 << 28
    cases = []
    for op in ["allgather", "reducescatter"]:
        # One node: ring/Simple, 8.4 + 7 x 3.4 us, NVLink at NCCL's rate.
        cases.append((f"nccl {op}, 1 node of 8, 1 GiB", op, ONE_NODE, gib, "ring/Simple",
                      32.2e-6 + gib * 7 / 8 / (BI * NVLINK)))
        # 2 nodes of 4: 8.4 + 6 x max(3.4, 3) + 14 us (one step across), the NIC carrying
        # (n - 1)/n of the buffer.
        cases.append((f"nccl {op}, 2 nodes of 4, 256 MiB", op, TWO_NODES, mib, "ring/Simple",
                      42.8e-6 + mib * 7 / 8 / B))
    return cases


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gbasim, spec = sys.argv[1:]
    cases = []
    for n in [2, 4, 8]:
        cases.append((f"ring all-reduce, star, {n} workers", "allreduce",
                      [f"training.workers={n}"], [ring(n, s) for s in SIZES]))
    for g, m, nics in [(4, 2, 1), (4, 4, 1), (8, 2, 2)]:
        cases.append((f"hierarchical all-reduce, {m} nodes of {g} GPUs, {nics} NIC(s)",
                      "allreduce",
                      [f"training.workers={g * m}", f"cluster.gpus_per_node={g}",
                       f"cluster.nics_per_node={nics}", "cluster.allreduce=hierarchical"],
                      [hierarchical(g, m, nics, s) for s in SIZES]))
    for n in [2, 3]:
        cases.append((f"tree all-reduce, one chunk, {n} workers", "allreduce",
                      [f"training.workers={n}", "cluster.allreduce=tree",
                       "cluster.tree_chunk_bytes=1e12"], [tree(n, s) for s in SIZES]))
    for n in [4, 8]:
        cases.append((f"all-to-all, star, {n} workers", "alltoall", [f"training.workers={n}"],
                      [all_to_all_star(n, s) for s in SIZES]))
    for over in [1, 2, 4]:
        cases.append((f"all-to-all, fat-tree of 2 x 4 nodes, oversubscription {over}", "alltoall",
                      ["training.workers=8", "cluster.topology=fat_tree", "cluster.nic_latency=0",
                       "cluster.fat_tree.nodes_per_switch=4",
                       f"cluster.fat_tree.oversubscription={over}"],
                      [all_to_all_fat_tree(8, 4, over, s) for s in SIZES]))
    failures = 0
    for name, op, sets, want in cases:
        got = collective_times(gbasim, spec, BASE + sets, op, SIZES)
        for size, g, w in zip(SIZES, got, want):
            error = (g - w) / w
            ok = abs(error) <= TOLERANCE
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}, {size} B: simulated {g * 1e3:.4f} ms, "
                  f"formula {w * 1e3:.4f} ms ({100 * error:+.4f}%)")
    for name, op, sets, size, algorithm, want in nccl_cases():
        row, = collective_timings(gbasim, spec, BASE + sets, op, [size])
        error = (row["time_s"] - want) / want
        ok = abs(error) <= TOLERANCE and row["algorithm"] == algorithm
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {row['algorithm']} (want {algorithm}), "
              f"simulated {row['time_s'] * 1e3:.4f} ms, formula {want * 1e3:.4f} ms "
              f"({100 * error:+.4f}%)")
    # The tree's chunks pipeline: on 16 workers (5 levels), 64 KiB chunks must beat one chunk
    # by more than half (they take 13.0 against 35.0 ms at 16 MiB).
    tree16 = ["training.workers=16", "cluster.allreduce=tree"]
    whole, = collective_times(gbasim, spec, BASE + tree16 + ["cluster.tree_chunk_bytes=1e12"],
                              "allreduce", [16 << 20])
    piped, = collective_times(gbasim, spec, BASE + tree16 + ["cluster.tree_chunk_bytes=65536"],
                              "allreduce", [16 << 20])
    ok = piped < 0.5 * whole
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} tree all-reduce, 16 workers, 16 MiB: 64 KiB chunks "
          f"{piped * 1e3:.3f} ms, one chunk {whole * 1e3:.3f} ms")
    # Both network models pipeline the chunks alike: each rank has at most 8 chunks on their way
    # to a tree's next rank. (Without that window, the fluid model put a leaf's chunks on its
    # link all at once, and took the one-chunk time, 35.0 ms, whatever the chunks.)
    checks = 1
    for chunk in (65536, 524288):
        times = {solver: collective_times(gbasim, spec, BASE + tree16 + [
            f"cluster.tree_chunk_bytes={chunk}", f"cluster.network_solver={solver}"],
            "allreduce", [16 << 20, 256 << 20]) for solver in ("simgrid", "fluid")}
        for size, sg, fl in zip((16 << 20, 256 << 20), times["simgrid"], times["fluid"]):
            ok = abs(fl - sg) <= 5e-3 * sg
            failures += not ok
            checks += 1
            print(f"{'ok  ' if ok else 'FAIL'} tree all-reduce, 16 workers, {size} B in "
                  f"{chunk} B chunks: fluid {fl * 1e3:.4f} ms, SimGrid {sg * 1e3:.4f} ms "
                  f"({100 * (fl - sg) / sg:+.3f}%, within 0.5%)")
    print(f"collective times: {failures} of {len(cases) * len(SIZES) + len(nccl_cases()) + checks} outside their bounds, "
          f"{100 * TOLERANCE:.1f}%")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

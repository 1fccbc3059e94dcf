// NCCL's tuner model of an all-reduce, as its source gives it: the latency of each algorithm
// and protocol, the share of the bandwidth each protocol delivers, and the choice of the pair
// with the least `latency + bytes / bandwidth` (results/published-collectives/nccl-constants.md
// holds every constant with its file and lines; the reference is NCCL v2.21.5-1,
// src/graph/tuning.cc). Pure functions, no simulation: sim/collectives.cc times the chosen pair
// on the simulated network, its bandwidth from the platform's links.
#pragma once

#include <string>

#include "experiment/spec.h"

namespace gbasim {

// The algorithms (NcclAlgorithm, experiment/spec.h: ring, tree, nvls; never kAuto here), by
// index 0, 1, 2.
constexpr int kNcclAlgorithms = 3;
int nccl_index(NcclAlgorithm algorithm);
NcclAlgorithm nccl_algorithm(int index);
enum class NcclProtocol { kLL, kLL128, kSimple };
// The collective: an all-reduce, or an all-gather or reduce-scatter (n - 1 ring steps; NCCL
// models the two alike and runs them on the ring here).
enum class NcclOp { kAllReduce, kGather };
std::string nccl_protocol_name(NcclProtocol protocol);  // "LL", "LL128", "Simple"

// The job an all-reduce runs in.
struct NcclJob {
  int ranks = 1;
  int nodes = 1;
  GpuGeneration gpu = GpuGeneration::kVolta;
  CpuVendor cpu = CpuVendor::kIntel;
  bool nvls = false;                          // NVLink SHARP: Hopper GPUs on an NVSwitch
  NcclAlgorithm only = NcclAlgorithm::kAuto;  // as NCCL_ALGO forces one
};
// The algorithms NCCL enables for the job: the ring and the tree, NVLS where the job has it;
// only `job.only` where given (NVLS only where the job has it: elsewhere the ring, as NCCL
// falls back to it).
// An all-gather or reduce-scatter runs on the ring (NCCL allows NVLS too, which moves as many
// bytes into each GPU at a lower share of NVLink).
bool nccl_enabled(NcclAlgorithm algorithm, const NcclJob& job, NcclOp op = NcclOp::kAllReduce);

// NCCL's latency of one all-reduce (or `op`) of `bytes` (seconds): its base latency, plus each
// step's hardware latency (NVLink inside a node, the network across), as ncclTopoTuneModel adds
// them.
double nccl_latency(NcclAlgorithm algorithm, NcclProtocol protocol, const NcclJob& job,
                    double bytes, NcclOp op = NcclOp::kAllReduce);
// The share of the links' bandwidth the protocol's payload gets (LL: 8 bytes of data a 16-byte
// line; LL128: 120 of 128; the tree's 0.92 and its correction by size). NVLS runs Simple
// alone, at 1 (its share of NVLink is nvls_efficiency): 0 for the others.
double nccl_efficiency(NcclAlgorithm algorithm, NcclProtocol protocol, const NcclJob& job,
                       double bytes);
// NCCL's cap on the algorithm bandwidth, bytes/s (LL's llMaxBws; infinite where NCCL has none
// that binds with 16 channels or more).
double nccl_bandwidth_cap(NcclAlgorithm algorithm, NcclProtocol protocol, const NcclJob& job,
                          NcclOp op = NcclOp::kAllReduce);
// A node's place in one of NCCL's two binary trees over `nodes` nodes (NCCL's src/graph/trees.cc):
// tree 0 has node 0 at its root with one child, the largest power of two below `nodes`, and
// every other node's parent and children found from its lowest set bit; tree 1 is tree 0
// mirrored (node k in the place of nodes - 1 - k) when `nodes` is even, shifted by one
// otherwise, so that a node inner in one tree is a leaf in the other. -1: none.
struct NcclTreeLinks {
  int parent = -1;
  int children[2] = {-1, -1};
};
NcclTreeLinks nccl_tree_links(int nodes, int node, int tree);

// NCCL's chunk of an NVLS all-reduce (NVLSTree on several nodes): the bytes each of the node's
// heads moves on a channel in one step of the pipeline. 128 KiB, cut for smaller buffers and
// on 4 nodes or more as NCCL's computeCollChunkInfo cuts it.
double nccl_nvls_chunk(const NcclJob& job, double bytes);
// How much longer the algorithm's pipeline takes than its steady state: a pipeline of D stages
// over K steps takes (K + D - 1) steps' time where its steady state takes K. NVLS has 3 stages
// on one node (its kernel's scatter, reduce-and-multicast and gather), NVLSTree 4 (scatter,
// reduce and send up, receive and multicast, gather) plus 2 network hops for each level of the
// trees beyond the first; K is the buffer over the channels' heads' chunks. 1 for the ring and
// the tree, whose pipelines NCCL's latency already counts a step at a time.
double nccl_pipeline_stretch(NcclAlgorithm algorithm, const NcclJob& job, double bytes);

// The fraction of NVLink's line rate NCCL moves: NCCL's own NVLink bandwidth over the
// datasheet's (V100: 6 links x 20 GB/s of 150; A100: 12 x 20 of 300; H100: 18 x 20.6 of 450).
double nvlink_efficiency(GpuGeneration gpu);
// The share of NCCL's NVLink rate NVLS moves on Hopper: 0.85 on 15 of its 16 channels.
double nvls_efficiency();

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  double latency_s = 0.0;   // nccl_latency
  double transfer_s = 0.0;  // bytes at the links' rate, the protocol's share, NCCL's cap
  double time_s() const { return latency_s + transfer_s; }
};
// The pair NCCL's tuner takes for `bytes`: the least latency + transfer time, where
// `seconds_per_byte[i]` is how long algorithm i's streams take a byte of the buffer on the
// platform at full efficiency (its busiest link's load over its bandwidth).
NcclChoice nccl_choose(const NcclJob& job, double bytes,
                       const double seconds_per_byte[kNcclAlgorithms],
                       NcclOp op = NcclOp::kAllReduce);
// "ring/LL", "tree/LL128", "nvls/Simple" (one node) or "nvlstree/Simple" (several).
std::string nccl_choice_name(const NcclChoice& choice, const NcclJob& job);
// The choice's time for one algorithm and protocol.
NcclChoice nccl_time(NcclAlgorithm algorithm, NcclProtocol protocol, const NcclJob& job,
                     double bytes, double seconds_per_byte, NcclOp op = NcclOp::kAllReduce);

}  // namespace gbasim

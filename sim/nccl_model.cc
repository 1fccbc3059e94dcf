#include "sim/nccl_model.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace gbasim {

namespace {

// Indices: algorithm {ring, tree, NVLS}, protocol {LL, LL128, Simple}. Every constant is NCCL
// v2.21.5-1's, src/graph/tuning.cc (the lines in results/published-collectives/nccl-constants.md),
// unless it says otherwise. NVLS's entries are those of NVLS on one node and of NVLSTree on
// several; it runs Simple alone.
constexpr double kMicro = 1e-6;
// baseLat (lines 54-59), microseconds.
constexpr double kBaseLatency[3][3] = {{6.6, 14.0, 8.4}, {6.8, 14.0, 0.0}, {0.0, 0.0, 0.0}};
// hwLat[NVLINK] and hwLat[NET] (lines 61-78), microseconds a step; NVLS and NVLSTree have the
// same NVLink latency, 25, and 18 and 14 across nodes (NVLSTree's used here).
constexpr double kNvlinkLatency[3][3] = {{0.6, 1.9, 3.4}, {0.6, 1.25, 28.0}, {0.0, 0.0, 25.0}};
constexpr double kNetLatency[3][3] = {{2.7, 4.0, 14.0}, {5.0, 8.5, 28.0}, {0.0, 0.0, 14.0}};
// NVLS's share of NVLink on Hopper: nvlsEfficiency 0.85 (NCCL v2.30.7-1, tuning.cc lines
// 138-144), on (nChannels - 1) / nChannels of its 16 channels (lines 307-323; 16 is
// NCCL_NVLS_NCHANNELS on sm90, src/transport/nvls.cc line 232 at v2.21.5-1).
constexpr double kNvlsChannels = 16.0;
constexpr double kNvlsEfficiency = 0.85 * (kNvlsChannels - 1.0) / kNvlsChannels;
// NCCL_NVLS_CHUNKSIZE, 128 KiB (src/transport/nvls.cc line 233).
constexpr double kNvlsChunk = 128.0 * 1024.0;
// treeCorrectionFactor[protocol][log2(bytes / 64)] (lines 412-416).
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
// The channels the ring's latency rule counts with (NCCL's collChannels on these GPUs: 16 or
// more; the rule below holds for either above a few KiB).
constexpr double kChannels = 16.0;

int index(NcclAlgorithm a) { return nccl_index(a); }
int index(NcclProtocol p) { return static_cast<int>(p); }

int log2_floor(double x) { return x < 2.0 ? 0 : static_cast<int>(std::floor(std::log2(x))); }

// getNetOverhead (lines 108-118): 1 us on Intel CPUs, 2 us on AMD, 3 times that for Simple.
double net_overhead(const NcclJob& job, NcclProtocol p) {
  const double base = job.cpu == CpuVendor::kAmd ? 2.0 : 1.0;
  return p == NcclProtocol::kSimple ? 3.0 * base : base;
}

}  // namespace

int nccl_index(NcclAlgorithm algorithm) { return static_cast<int>(algorithm) - 1; }

NcclAlgorithm nccl_algorithm(int index) { return static_cast<NcclAlgorithm>(index + 1); }

bool nccl_enabled(NcclAlgorithm a, const NcclJob& job, NcclOp op) {
  if (op == NcclOp::kGather) return a == NcclAlgorithm::kRing;
  if (a == NcclAlgorithm::kNvls && !job.nvls) return false;
  if (job.only == NcclAlgorithm::kAuto) return true;
  if (job.only == NcclAlgorithm::kNvls && !job.nvls) return a == NcclAlgorithm::kRing;
  return a == job.only;
}

std::string nccl_choice_name(const NcclChoice& choice, const NcclJob& job) {
  std::string name = nccl_algorithm_name(choice.algorithm);
  if (choice.algorithm == NcclAlgorithm::kNvls && job.nodes > 1) name = "nvlstree";
  return name + "/" + nccl_protocol_name(choice.protocol);
}

std::string nccl_protocol_name(NcclProtocol protocol) {
  static const char* const kNames[] = {"LL", "LL128", "Simple"};
  return kNames[index(protocol)];
}

double nccl_latency(NcclAlgorithm a, NcclProtocol p, const NcclJob& job, double bytes, NcclOp op) {
  const int n = job.ranks, nodes = job.nodes;
  const double intra = kNvlinkLatency[index(a)][index(p)];
  const double inter = kNetLatency[index(a)][index(p)];  // the NIC's own latency: 0 for IB
  double us = kBaseLatency[index(a)][index(p)];
  if (a == NcclAlgorithm::kRing) {
    // Lines 161-163 and 225-263: 2(n - 1) steps, 2 x nodes of them across nodes (none on one
    // node); n - 1 and nodes - 1 for a gather. An intra-node step costs at least the
    // network's post overhead when there are nodes.
    const bool reduce = op == NcclOp::kAllReduce;
    const int steps = reduce ? 2 * (n - 1) : n - 1;
    const int inter_steps = reduce ? (nodes > 1 ? 2 * nodes : 0) : nodes - 1;
    const double step = nodes > 1 ? std::max(intra, net_overhead(job, p)) : intra;
    us += (steps - inter_steps) * step + inter_steps * inter;
    // ncclTopoGetAlgoTime (lines 418-445): the ring's Simple plateau on several nodes.
    if (reduce && p == NcclProtocol::kSimple && nodes > 1 && bytes / (kChannels * n) >= 64.0)
      us *= 1.4;
  } else if (a == NcclAlgorithm::kTree) {
    const int per_node = n / nodes;
    us += 2.0 * ((per_node - 1) * intra + log2_floor(nodes) * inter);
  } else {
    // NVLS: the switch's latency once; NVLSTree: and the trees' across nodes.
    us += intra + (nodes > 1 ? 2.0 * log2_floor(nodes) * inter : 0.0);
  }
  return us * kMicro;
}

double nccl_efficiency(NcclAlgorithm a, NcclProtocol p, const NcclJob& job, double bytes) {
  const bool one_per_node = job.ranks == job.nodes;
  if (a == NcclAlgorithm::kRing) {  // lines 179-185
    if (p == NcclProtocol::kLL) return 0.5;
    if (p == NcclProtocol::kLL128) return one_per_node ? 0.7 : 0.92;
    return 1.0;
  }
  if (a == NcclAlgorithm::kNvls) return p == NcclProtocol::kSimple ? 1.0 : 0.0;
  double e = 0.92;  // every tree protocol (line 181)
  if (p == NcclProtocol::kLL) e /= 3.8;
  if (p == NcclProtocol::kLL128) e *= job.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
  const int size = log2_floor(bytes / 64.0);
  if (size < 23) e *= kTreeCorrection[index(p)][size];
  return e;
}

double nccl_bandwidth_cap(NcclAlgorithm a, NcclProtocol p, const NcclJob& job, NcclOp op) {
  if (p != NcclProtocol::kLL || a == NcclAlgorithm::kNvls)
    return std::numeric_limits<double>::infinity();
  // llMaxBws (lines 85-90), bus bandwidth in GB/s: on one node by the GPU, on several by the
  // host's CPU (2 nodes, more).
  double bus = 0.0;
  if (job.nodes == 1) {
    static const double kOneNode[] = {39.0, 87.7, 141.0};  // Volta, Ampere, Hopper
    bus = kOneNode[static_cast<int>(job.gpu)];
  } else if (job.cpu == CpuVendor::kAmd) {
    bus = job.nodes == 2 ? 22.5 : 19.0;
  } else {
    bus = job.nodes == 2 ? 39.0 : 20.4;
  }
  // Bus to algorithm bandwidth (lines 212-219): n / steps for the ring, 1/2 for the tree.
  const double n = job.ranks;
  const double steps = op == NcclOp::kAllReduce ? 2.0 * (n - 1.0) : n - 1.0;
  const double ratio = a == NcclAlgorithm::kRing ? n / steps : 0.5;
  return bus * 1e9 * ratio;
}

namespace {

// Tree 0: node r's lowest set bit b (for the root, the first power of two >= nodes); its
// parent is r with b cleared and the next bit set, or with b cleared where that is out of
// range; its children are r - b/2 and r + the largest power of two <= b/2 that stays in range.
NcclTreeLinks first_tree(int nodes, int r) {
  NcclTreeLinks t;
  int bit = 1;
  while (bit < nodes && !(bit & r)) bit <<= 1;
  if (r == 0) {
    if (nodes > 1) t.children[1] = bit >> 1;
    return t;
  }
  t.parent = (r ^ bit) | (bit << 1);
  if (t.parent >= nodes) t.parent = r ^ bit;
  int low = bit >> 1;
  if (low == 0) return t;
  t.children[0] = r - low;
  while (low > 0 && r + low >= nodes) low >>= 1;
  if (low > 0) t.children[1] = r + low;
  return t;
}

}  // namespace

NcclTreeLinks nccl_tree_links(int nodes, int node, int tree) {
  if (tree == 0) return first_tree(nodes, node);
  const bool mirror = nodes % 2 == 0;
  auto to_place = [&](int k) { return mirror ? nodes - 1 - k : (k - 1 + nodes) % nodes; };
  auto to_node = [&](int p) { return p < 0 ? -1 : mirror ? nodes - 1 - p : (p + 1) % nodes; };
  NcclTreeLinks t = first_tree(nodes, to_place(node));
  t.parent = to_node(t.parent);
  for (int& c : t.children) c = to_node(c);
  return t;
}

double nvls_efficiency() { return kNvlsEfficiency; }

double nccl_nvls_chunk(const NcclJob& job, double bytes) {
  // computeCollChunkInfo (src/enqueue.cc lines 1742-1761): concurrentOps is the channels times
  // the heads, one a GPU of the node (the NVLS search's channels, src/graph/connect.cc line 250).
  const double ops = kNvlsChannels * job.ranks / job.nodes;
  double chunk = kNvlsChunk;
  // Each rule: below `times` concurrentOps chunks, a chunk above `above` bytes becomes `to`.
  struct Cut {
    double times, above, to;
  };
  auto cut = [&](std::initializer_list<Cut> cuts) {
    for (const Cut& c : cuts)
      if (bytes < c.times * ops * chunk && chunk > c.above) chunk = c.to;
  };
  if (job.nodes == 1) {
    // NVLS (lines 1742-1750; its 32 KiB cap across nodes is NVLS over SHARP, not modelled).
    cut({{64, 65536, 65536}, {8, 32768, 32768}, {2, 16384, 16384}});
  } else {
    // NVLSTree (lines 1751-1761): at most 64 KiB on 4 nodes or more
    // (NCCL_NVLSTREE_MAX_CHUNKSIZE).
    if (job.nodes >= 4) chunk = std::min(chunk, 65536.0);
    cut({{32, 262144, 262144}, {16, 131072, 131072}, {4, 65536, 65536}, {1, 32768, 32768}});
  }
  return chunk;
}

double nccl_pipeline_stretch(NcclAlgorithm a, const NcclJob& job, double bytes) {
  if (a != NcclAlgorithm::kNvls || bytes <= 0.0) return 1.0;
  // The stages: NVLS's kernel (src/device/all_reduce.h, v2.21.5-1 lines 362-495) splits its
  // threads into scatter, reduce-and-multicast and gather; NVLSTree's (lines 498-598) into
  // scatter, reduce-and-send-up, receive-and-multicast and gather.
  const double stages = job.nodes == 1 ? 3.0 : 4.0 + 2.0 * (log2_floor(job.nodes) - 1);
  // The steps: computeCollSteps (src/enqueue.cc lines 196-197), a channel's share of the
  // buffer over the heads' chunks.
  const double heads = static_cast<double>(job.ranks) / job.nodes;
  const double steps = std::ceil(bytes / (kNvlsChannels * heads * nccl_nvls_chunk(job, bytes)));
  return (steps + stages - 1.0) / steps;
}

double nvlink_efficiency(GpuGeneration gpu) {
  // src/graph/topo.h: SM70_NVLINK_BW and SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6 GB/s a link;
  // V100 has 6 links at 25 GB/s each way (150 GB/s), A100 12 (300 GB/s), H100 18 (450 GB/s),
  // NVIDIA's datasheets.
  static const double kEfficiency[] = {6 * 20.0 / 150.0, 12 * 20.0 / 300.0, 18 * 20.6 / 450.0};
  return kEfficiency[static_cast<int>(gpu)];
}

NcclChoice nccl_time(NcclAlgorithm a, NcclProtocol p, const NcclJob& job, double bytes,
                     double seconds_per_byte, NcclOp op) {
  NcclChoice c;
  c.algorithm = a;
  c.protocol = p;
  c.latency_s = nccl_latency(a, p, job, bytes, op);
  c.transfer_s = std::max(bytes * seconds_per_byte / nccl_efficiency(a, p, job, bytes),
                          bytes / nccl_bandwidth_cap(a, p, job, op));
  return c;
}

NcclChoice nccl_choose(const NcclJob& job, double bytes,
                       const double seconds_per_byte[kNcclAlgorithms], NcclOp op) {
  NcclChoice best;
  bool first = true;
  for (int i = 0; i < kNcclAlgorithms; ++i) {
    const NcclAlgorithm a = nccl_algorithm(i);
    if (!nccl_enabled(a, job, op)) continue;
    for (NcclProtocol p : {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple}) {
      if (nccl_efficiency(a, p, job, bytes) <= 0.0) continue;
      const NcclChoice c = nccl_time(a, p, job, bytes, seconds_per_byte[index(a)], op);
      if (first || c.time_s() < best.time_s()) best = c;
      first = false;
    }
  }
  return best;
}

}  // namespace gbasim

#include "sim/nccl_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gbasim {

namespace {

// Indices: algorithm {ring, tree}, protocol {LL, LL128, Simple}. Every constant is NCCL
// v2.21.5-1's, src/graph/tuning.cc (the lines in results/published-collectives/nccl-constants.md).
constexpr double kMicro = 1e-6;
// baseLat (lines 54-59), microseconds.
constexpr double kBaseLatency[2][3] = {{6.6, 14.0, 8.4}, {6.8, 14.0, 0.0}};
// hwLat[NVLINK] and hwLat[NET] (lines 61-78), microseconds a step.
constexpr double kNvlinkLatency[2][3] = {{0.6, 1.9, 3.4}, {0.6, 1.25, 28.0}};
constexpr double kNetLatency[2][3] = {{2.7, 4.0, 14.0}, {5.0, 8.5, 28.0}};
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

int index(NcclAlgorithm a) { return a == NcclAlgorithm::kRing ? 0 : 1; }
int index(NcclProtocol p) { return static_cast<int>(p); }

int log2_floor(double x) { return x < 2.0 ? 0 : static_cast<int>(std::floor(std::log2(x))); }

// getNetOverhead (lines 108-118): 1 us on Intel CPUs, 2 us on AMD, 3 times that for Simple.
double net_overhead(const NcclJob& job, NcclProtocol p) {
  const double base = job.cpu == CpuVendor::kAmd ? 2.0 : 1.0;
  return p == NcclProtocol::kSimple ? 3.0 * base : base;
}

}  // namespace

std::string nccl_algorithm_name(NcclAlgorithm algorithm) {
  return algorithm == NcclAlgorithm::kRing ? "ring" : "tree";
}

std::string nccl_protocol_name(NcclProtocol protocol) {
  static const char* const kNames[] = {"LL", "LL128", "Simple"};
  return kNames[index(protocol)];
}

double nccl_latency(NcclAlgorithm a, NcclProtocol p, const NcclJob& job, double bytes) {
  const int n = job.ranks, nodes = job.nodes;
  const double intra = kNvlinkLatency[index(a)][index(p)];
  const double inter = kNetLatency[index(a)][index(p)];  // the NIC's own latency: 0 for IB
  double us = kBaseLatency[index(a)][index(p)];
  if (a == NcclAlgorithm::kRing) {
    // Lines 225-263: 2(n - 1) steps, 2 x nodes of them across nodes (none on one node); an
    // intra-node step costs at least the network's post overhead when there are nodes.
    const int steps = 2 * (n - 1);
    const int inter_steps = nodes > 1 ? 2 * nodes : 0;
    const double step = nodes > 1 ? std::max(intra, net_overhead(job, p)) : intra;
    us += (steps - inter_steps) * step + inter_steps * inter;
    // ncclTopoGetAlgoTime (lines 418-445): the ring's Simple plateau on several nodes.
    if (p == NcclProtocol::kSimple && nodes > 1 && bytes / (kChannels * n) >= 64.0) us *= 1.4;
  } else {
    const int per_node = n / nodes;
    us += 2.0 * ((per_node - 1) * intra + log2_floor(nodes) * inter);
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
  double e = 0.92;  // every tree protocol (line 181)
  if (p == NcclProtocol::kLL) e /= 3.8;
  if (p == NcclProtocol::kLL128) e *= job.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
  const int size = log2_floor(bytes / 64.0);
  if (size < 23) e *= kTreeCorrection[index(p)][size];
  return e;
}

double nccl_bandwidth_cap(NcclAlgorithm a, NcclProtocol p, const NcclJob& job) {
  if (p != NcclProtocol::kLL) return std::numeric_limits<double>::infinity();
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
  // Bus to algorithm bandwidth (lines 212-219): n / 2(n - 1) for the ring, 1/2 for the tree.
  const double n = job.ranks;
  const double ratio = a == NcclAlgorithm::kRing ? n / (2.0 * (n - 1.0)) : 0.5;
  return bus * 1e9 * ratio;
}

double nvlink_efficiency(GpuGeneration gpu) {
  // src/graph/topo.h: SM70_NVLINK_BW and SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6 GB/s a link;
  // V100 has 6 links at 25 GB/s each way (150 GB/s), A100 12 (300 GB/s), H100 18 (450 GB/s),
  // NVIDIA's datasheets.
  static const double kEfficiency[] = {6 * 20.0 / 150.0, 12 * 20.0 / 300.0, 18 * 20.6 / 450.0};
  return kEfficiency[static_cast<int>(gpu)];
}

NcclChoice nccl_time(NcclAlgorithm a, NcclProtocol p, const NcclJob& job, double bytes,
                     double seconds_per_byte) {
  NcclChoice c;
  c.algorithm = a;
  c.protocol = p;
  c.latency_s = nccl_latency(a, p, job, bytes);
  c.transfer_s = std::max(bytes * seconds_per_byte / nccl_efficiency(a, p, job, bytes),
                          bytes / nccl_bandwidth_cap(a, p, job));
  return c;
}

NcclChoice nccl_choose(const NcclJob& job, double bytes, const double seconds_per_byte[2]) {
  NcclChoice best;
  bool first = true;
  for (NcclAlgorithm a : {NcclAlgorithm::kRing, NcclAlgorithm::kTree}) {
    for (NcclProtocol p : {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple}) {
      const NcclChoice c = nccl_time(a, p, job, bytes, seconds_per_byte[index(a)]);
      if (first || c.time_s() < best.time_s()) best = c;
      first = false;
    }
  }
  return best;
}

}  // namespace gbasim

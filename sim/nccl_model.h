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

enum class NcclAlgorithm { kRing, kTree };
enum class NcclProtocol { kLL, kLL128, kSimple };
std::string nccl_algorithm_name(NcclAlgorithm algorithm);  // "ring", "tree"
std::string nccl_protocol_name(NcclProtocol protocol);     // "LL", "LL128", "Simple"

// The job an all-reduce runs in.
struct NcclJob {
  int ranks = 1;
  int nodes = 1;
  GpuGeneration gpu = GpuGeneration::kVolta;
  CpuVendor cpu = CpuVendor::kIntel;
};

// NCCL's latency of one all-reduce of `bytes` (seconds): its base latency, plus each step's
// hardware latency (NVLink inside a node, the network across), as ncclTopoTuneModel adds them.
double nccl_latency(NcclAlgorithm algorithm, NcclProtocol protocol, const NcclJob& job,
                    double bytes);
// The share of the links' bandwidth the protocol's payload gets (LL: 8 bytes of data a 16-byte
// line; LL128: 120 of 128; the tree's 0.92 and its correction by size).
double nccl_efficiency(NcclAlgorithm algorithm, NcclProtocol protocol, const NcclJob& job,
                       double bytes);
// NCCL's cap on the algorithm bandwidth, bytes/s (LL's llMaxBws; infinite where NCCL has none
// that binds with 16 channels or more).
double nccl_bandwidth_cap(NcclAlgorithm algorithm, NcclProtocol protocol, const NcclJob& job);
// The fraction of NVLink's line rate NCCL moves: NCCL's own NVLink bandwidth over the
// datasheet's (V100: 6 links x 20 GB/s of 150; A100: 12 x 20 of 300; H100: 18 x 20.6 of 450).
double nvlink_efficiency(GpuGeneration gpu);

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  double latency_s = 0.0;   // nccl_latency
  double transfer_s = 0.0;  // bytes at the links' rate, the protocol's share, NCCL's cap
  double time_s() const { return latency_s + transfer_s; }
};
// The pair NCCL's tuner takes for `bytes`: the least latency + transfer time, where
// `seconds_per_byte[a]` is how long algorithm a's streams take a byte of the buffer on the
// platform at full efficiency (a's busiest link's load over its bandwidth).
NcclChoice nccl_choose(const NcclJob& job, double bytes, const double seconds_per_byte[2]);
// The choice's time for one algorithm and protocol.
NcclChoice nccl_time(NcclAlgorithm algorithm, NcclProtocol protocol, const NcclJob& job,
                     double bytes, double seconds_per_byte);

}  // namespace gbasim

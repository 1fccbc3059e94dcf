// One collective at a time on the spec's cluster, as NVIDIA's nccl-tests time NCCL's: what
// `gbasim collective` prints, and what tests compare with SMPI and with analytic formulas.
#pragma once

#include <string>
#include <vector>

#include "experiment/spec.h"

namespace gbasim {

enum class CollectiveOp { kAllReduce, kAllGather, kAllToAll, kReduceScatter };
// "allreduce", "allgather", "alltoall", "reducescatter"; throws InputError for anything else.
CollectiveOp parse_collective(const std::string& name);
std::string collective_name(CollectiveOp op);
// nccl-tests' bus bandwidth factor: bus bandwidth = factor x size / time, the bytes a rank's
// link carries in an optimal algorithm (2(n - 1) / n for an all-reduce, (n - 1) / n for the
// others).
double bus_factor(CollectiveOp op, int ranks);

struct CollectiveTiming {
  double bytes = 0.0;   // as nccl-tests count them: a rank's buffer (all-reduce), the gathered
                        // buffer (all-gather), a rank's send buffer (all-to-all,
                        // reduce-scatter)
  double time_s = 0.0;  // from the moment every worker starts to the moment the last ends
  // What ran: the all-reduce's algorithm (Collectives::all_reduce_name), "ring" for the
  // all-gather and reduce-scatter (Collectives::gather_name), "pairwise" or "aggregate" for the
  // all-to-all.
  std::string algorithm;
};

// Times `op` of each size on the spec's cluster (training.workers ranks, the all-reduce's
// algorithm and ring model from its cluster keys), one size after the other, in the engine the
// caller has created (one per process).
std::vector<CollectiveTiming> time_collectives(const ExperimentSpec& spec, CollectiveOp op,
                                               const std::vector<double>& sizes);

}  // namespace gbasim

// What a workload weighs and its step time on a spec's cluster with nothing else running, as
// `gbasim workload` prints it (docs/workload.md defines every number).
#pragma once

#include <string>

#include "experiment/spec.h"
#include "experiment/workload.h"

namespace gbasim {

// Lower bounds on a server-mode round, in which each of the N workers pulls from and pushes to
// every shard once, from the links' bandwidths alone (no latency, no compute).
struct Round {
  // Each shard's link, the busier of its two directions: N pulls out, N pushes and requests in.
  double shard_links_s = 0.0;
  // The same link's two directions one after the other: the round's length where no pull
  // overlaps a push, as when the workers pull, compute and push in lockstep.
  double shard_links_serial_s = 0.0;
  // Each worker node's link (gpus_per_node workers; nics_per_node x nic_bandwidth on GPU
  // nodes), the busier direction: its workers' pulls from and pushes to every shard.
  double node_links_s = 0.0;
  double node_links_serial_s = 0.0;  // its two directions one after the other
  double node_link_bandwidth = 0.0;  // bytes/s each way
};
Round round_bounds(const ExperimentSpec& spec, const StepBytes& bytes);

// Prints the report of the spec's workload (which it must have): flops a sample, parameters,
// the distinct rows a local batch touches, the bytes a worker's step sends by mode, and each
// phase's time simulated on the spec's cluster. With `out_path`, also writes them as JSON.
void report_workload(const ExperimentSpec& spec, const std::string& out_path);

}  // namespace gbasim

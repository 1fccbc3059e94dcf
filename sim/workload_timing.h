// A workload's step on the spec's cluster with nothing else running (what `gbasim workload`
// prints): sync's collectives among its workers, and one server-mode worker alone with the
// shards, each phase timed by the simulator on the spec's platform and network model.
#pragma once

#include "experiment/spec.h"
#include "experiment/workload.h"

namespace gbasim {

struct WorkloadTiming {
  double compute_s = 0.0;  // a local batch's flops at cluster.worker_speed
  // Sync, every worker at once: the embedding exchange (before and after the compute) and the
  // dense all-reduce.
  double sync_exchange_s = 0.0, sync_allreduce_s = 0.0;
  // A server-mode worker alone: the request, the pull and the push, to every shard at once.
  double ps_request_s = 0.0, ps_pull_s = 0.0, ps_push_s = 0.0;

  double sync_step_s() const { return compute_s + sync_exchange_s + sync_allreduce_s; }
  double ps_step_s() const { return ps_request_s + ps_pull_s + compute_s + ps_push_s; }
};

// Needs spec.workload; runs in the engine the caller has created (one per process).
WorkloadTiming time_workload(const ExperimentSpec& spec);

}  // namespace gbasim

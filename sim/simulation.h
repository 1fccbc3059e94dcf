// One simulated training run: SimGrid models the cluster (hosts, links, stragglers) while
// the real update rule drives the real model, so staleness and AUC come out of the
// simulated timing.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

#include "experiment/run_record.h"
#include "experiment/spec.h"

namespace gbasim {

// What a run cost in wall-clock seconds; apart from the result, which must not depend on
// the machine.
struct SimulationCost {
  double wall_s = 0.0;        // the whole engine run
  double math_s = 0.0;        // gradients and optimizer steps
  double evaluation_s = 0.0;  // test AUC and log-loss
  double rule_s = 0.0;        // the update rule's own work (sync's, GBA's and backup workers'
                              // real sums of gradients), part of the simulator's share
  int64_t messages = 0;       // simulated point-to-point messages
};

// Where a running simulation stands, for progress lines: read, never written, by the watcher.
struct Progress {
  double time = 0.0;        // simulated seconds
  int64_t global_step = 0;  // updates applied
  int64_t samples = 0;      // samples applied
  int64_t worker_steps = 0;
  int64_t messages = 0;
};

// `report` sees a Progress whenever every_s seconds of wall time have passed in the engine
// since the last one (checked as the simulated clock advances, so the run is the same with
// or without it).
struct ProgressWatch {
  std::function<void(const Progress&)> report;
  double every_s = 10.0;
};

// Runs `spec` in the SimGrid engine the caller has created (one per process) and returns
// the result document (docs/spec.md, "The result"). `on_point` sees each evaluation;
// `timeline`, when given, records the run's activity (sim/timeline.h).
class Timeline;
nlohmann::ordered_json run_simulation(const ExperimentSpec& spec,
                                      const std::function<void(const EvaluationPoint&)>& on_point = {},
                                      SimulationCost* cost = nullptr,
                                      const ProgressWatch& progress = {},
                                      Timeline* timeline = nullptr);

}  // namespace gbasim

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
  int64_t messages = 0;       // simulated point-to-point messages
};

// Runs `spec` in the SimGrid engine the caller has created (one per process) and returns
// the result document (docs/spec.md, "The result"). `on_point` sees each evaluation.
nlohmann::ordered_json run_simulation(const ExperimentSpec& spec,
                                      const std::function<void(const EvaluationPoint&)>& on_point = {},
                                      SimulationCost* cost = nullptr);

}  // namespace gbasim

// The model side of a simulated run, which every actor shares: the proxy model, its one
// authoritative copy of the parameters and the optimizer, the sizes of its parts and what a
// step weighs, and a model move that a switch left owed (sim/data_feed.h holds the data side;
// sim/training.h holds both, the rule and the lock).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "experiment/data.h"
#include "experiment/spec.h"
#include "models/dataset.h"
#include "models/gradient.h"
#include "models/model.h"
#include "models/optimizer.h"
#include "sim/simulation.h"
#include "sim/step_sizes.h"
#include "strategies/switching.h"

namespace gbasim {

class ModelState {
 public:
  // The spec's model on `data`'s fields, its parameters drawn from the spec's seed. The model's
  // math is timed into `cost`.
  ModelState(const ExperimentSpec& spec, const LoadedData& data, SimulationCost& cost);

  const Model& model() const { return model_; }
  const Parameters& parameters() const { return params_; }
  // Values of the dense part, columns of each embedding table (the proxy's).
  int64_t dense_values() const { return dense_values_; }
  const std::vector<int64_t>& table_dims() const { return dims_; }
  // Every value of the model: the dense part and every table's.
  double values() const;
  // What the messages and computes of a step weigh: the proxy's or the workload's.
  const StepSizes& sizes() const { return *sizes_; }

  // The real gradient of `batch` on the parameters now.
  void gradient_of(const Batch& batch, Gradient& grad);
  // The optimizer applies `update` to the parameters (nothing in timing-only runs).
  void apply(const Gradient& update);

  // A switch's model move: owed once the rule completes the switch, taken by the actor that
  // makes it, done when the model has arrived. Admissions wait while one is owed or under way.
  void owe(ModelMove move);
  std::optional<ModelMove> take_owed();
  void moved() { moving_ = false; }
  bool moving() const { return moving_; }

 private:
  SimulationCost& cost_;
  bool timing_only_;
  Model model_;
  Parameters params_;
  Optimizer optimizer_;
  int64_t dense_values_;
  std::vector<int64_t> dims_;
  std::optional<StepSizes> sizes_;
  bool moving_ = false;
  std::optional<ModelMove> owed_move_;
};

}  // namespace gbasim

#include "sim/model_state.h"

#include "base/clock.h"

namespace gbasim {

ModelState::ModelState(const ExperimentSpec& spec, const LoadedData& data, SimulationCost& cost)
    : cost_(cost),
      timing_only_(spec.simulation.timing_only),
      model_(spec.model, data.train.cardinalities, data.train.num_dense),
      params_(model_.init_parameters(spec.seed)),
      optimizer_(spec.optimizer, params_),
      dense_values_(model_.num_dense_parameters()) {
  for (const auto& table : params_.tables) dims_.push_back(table.cols());
  sizes_.emplace(spec, dims_, dense_values_, model_.flops_per_sample());
}

double ModelState::values() const {
  double values = static_cast<double>(dense_values_);
  for (const auto& table : params_.tables) values += static_cast<double>(table.size());
  return values;
}

void ModelState::gradient_of(const Batch& batch, Gradient& grad) {
  const auto start = WallClock::now();
  model_.forward_backward(params_, batch, grad);
  cost_.math_s += seconds_since(start);
}

void ModelState::apply(const Gradient& update) {
  if (timing_only_) return;
  const auto start = WallClock::now();
  optimizer_.apply(params_, update);
  cost_.math_s += seconds_since(start);
}

void ModelState::owe(ModelMove move) {
  moving_ = true;
  owed_move_ = std::move(move);
}

std::optional<ModelMove> ModelState::take_owed() {
  std::optional<ModelMove> move;
  move.swap(owed_move_);
  return move;
}

}  // namespace gbasim

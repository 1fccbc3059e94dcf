// SGD, Adagrad and Adam with sparse row updates for embedding tables. The optimizer's
// state sits beside the parameters it updates, so whoever holds the authoritative
// parameters (trainer, parameter server, all-reduce workers) holds the state too, and a
// change of training mode keeps both.
#pragma once

#include <cstdint>
#include <string>

#include "models/gradient.h"
#include "models/model.h"

namespace gbasim {

enum class OptimizerKind { kSGD, kAdagrad, kAdam };

// "sgd", "adagrad", "adam"; throws InputError for anything else.
OptimizerKind parse_optimizer_kind(const std::string& name);
std::string optimizer_name(OptimizerKind kind);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdam;
  double learning_rate = 1e-3;
  double l2 = 0.0;               // adds l2 * w to the gradient of every value it updates
  double beta1 = 0.9;            // Adam
  double beta2 = 0.999;          // Adam
  double epsilon = 1e-8;         // Adam and Adagrad
  double adagrad_initial = 0.0;  // Adagrad's starting accumulator
};

class Optimizer {
 public:
  Optimizer(const OptimizerConfig& config, const Parameters& like);

  // One step: w -= update(g). Only the table rows present in `grad` change (for Adam the
  // lazy variant: moments of absent rows are neither decayed nor used). Adam's bias
  // correction uses the optimizer's step count for dense values and table rows alike.
  void apply(Parameters& params, const Gradient& grad);

  int64_t steps() const { return steps_; }
  // The state, for moving it with the parameters between processes (a switch in gbasim-mpi):
  // `f(data, count)` is called on each moment array in a fixed order; set_steps restores the
  // step count of Adam's bias correction.
  template <class F>
  void for_each_state(F f) {
    if (dense_m_.size()) f(dense_m_.data(), static_cast<size_t>(dense_m_.size()));
    if (dense_v_.size()) f(dense_v_.data(), static_cast<size_t>(dense_v_.size()));
    for (auto& t : table_m_) f(t.data(), static_cast<size_t>(t.size()));
    for (auto& t : table_v_) f(t.data(), static_cast<size_t>(t.size()));
  }
  void set_steps(int64_t steps) { steps_ = steps; }
  const OptimizerConfig& config() const { return config_; }

 private:
  struct StepRates {
    float lr, eps;  // this step's learning rate and epsilon (Adam: bias-corrected)
  };
  void update(float* w, const float* g, float* m, float* v, int64_t n,
              const StepRates& rates) const;

  OptimizerConfig config_;
  int64_t steps_ = 0;
  // First (Adam) and second (Adam: squared-gradient average, Adagrad: accumulator) moments.
  Eigen::VectorXf dense_m_, dense_v_;
  std::vector<RowMatrixXf> table_m_, table_v_;
};

}  // namespace gbasim

#include "models/optimizer.h"

#include <cmath>

#include "base/error.h"

namespace gbasim {

OptimizerKind parse_optimizer_kind(const std::string& name) {
  for (OptimizerKind kind : {OptimizerKind::kSGD, OptimizerKind::kAdagrad, OptimizerKind::kAdam}) {
    if (optimizer_name(kind) == name) return kind;
  }
  throw InputError("unknown optimizer '" + name + "' (expected sgd, adagrad or adam)");
}

std::string optimizer_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSGD:
      return "sgd";
    case OptimizerKind::kAdagrad:
      return "adagrad";
    case OptimizerKind::kAdam:
      return "adam";
  }
  return "?";
}

Optimizer::Optimizer(const OptimizerConfig& config, const Parameters& like) : config_(config) {
  if (!(config.learning_rate > 0.0))
    throw InputError("optimizer: 'learning_rate' must be positive");
  if (config.l2 < 0.0) throw InputError("optimizer: 'l2' must not be negative");
  if (!(config.beta1 >= 0.0 && config.beta1 < 1.0))
    throw InputError("optimizer: 'beta1' must lie in [0, 1)");
  if (!(config.beta2 >= 0.0 && config.beta2 < 1.0))
    throw InputError("optimizer: 'beta2' must lie in [0, 1)");
  if (!(config.epsilon > 0.0)) throw InputError("optimizer: 'epsilon' must be positive");
  const bool adam = config.kind == OptimizerKind::kAdam;
  const bool second = config.kind != OptimizerKind::kSGD;
  const auto initial = static_cast<float>(adam ? 0.0 : config.adagrad_initial);
  if (adam) dense_m_ = Eigen::VectorXf::Zero(like.dense.size());
  if (second) dense_v_ = Eigen::VectorXf::Constant(like.dense.size(), initial);
  for (const auto& t : like.tables) {
    if (adam) table_m_.push_back(RowMatrixXf::Zero(t.rows(), t.cols()));
    if (second) table_v_.push_back(RowMatrixXf::Constant(t.rows(), t.cols(), initial));
  }
}

void Optimizer::update(float* w_data, const float* g_data, float* m_data, float* v_data, int64_t n,
                       const StepRates& rates) const {
  using Array = Eigen::Map<Eigen::ArrayXf>;
  Array w(w_data, n);
  const Eigen::Map<const Eigen::ArrayXf> g(g_data, n);
  const auto l2 = static_cast<float>(config_.l2);
  switch (config_.kind) {
    case OptimizerKind::kSGD:
      w -= rates.lr * (g + l2 * w);
      break;
    case OptimizerKind::kAdagrad: {
      Array v(v_data, n);
      v += (g + l2 * w).square();
      w -= rates.lr * (g + l2 * w) / (v.sqrt() + rates.eps);
      break;
    }
    case OptimizerKind::kAdam: {
      Array m(m_data, n), v(v_data, n);
      const auto b1 = static_cast<float>(config_.beta1), b2 = static_cast<float>(config_.beta2);
      m = b1 * m + (1.0f - b1) * (g + l2 * w);
      v = b2 * v + (1.0f - b2) * (g + l2 * w).square();
      w -= rates.lr * m / (v.sqrt() + rates.eps);
      break;
    }
  }
}

void Optimizer::apply(Parameters& params, const Gradient& grad) {
  ++steps_;
  StepRates rates{static_cast<float>(config_.learning_rate), static_cast<float>(config_.epsilon)};
  if (config_.kind == OptimizerKind::kAdam) {
    // Adam's bias correction folded into the rate: lr sqrt(1 - b2^t) / (1 - b1^t), and
    // epsilon scaled by sqrt(1 - b2^t), which equals the textbook m_hat / (sqrt(v_hat) + eps).
    const double t = static_cast<double>(steps_);
    const double root = std::sqrt(1.0 - std::pow(config_.beta2, t));
    rates.lr =
        static_cast<float>(config_.learning_rate * root / (1.0 - std::pow(config_.beta1, t)));
    rates.eps = static_cast<float>(config_.epsilon * root);
  }
  const bool adam = config_.kind == OptimizerKind::kAdam;
  const bool second = config_.kind != OptimizerKind::kSGD;
  update(params.dense.data(), grad.dense.data(), adam ? dense_m_.data() : nullptr,
         second ? dense_v_.data() : nullptr, params.dense.size(), rates);
  for (size_t t = 0; t < grad.tables.size(); ++t) {
    const SparseRows& rows = grad.tables[t];
    const Eigen::Index dim = rows.values.cols();
    for (size_t r = 0; r < rows.rows.size(); ++r) {
      const int32_t row = rows.rows[r];
      update(params.tables[t].row(row).data(), rows.values.row(r).data(),
             adam ? table_m_[t].row(row).data() : nullptr,
             second ? table_v_[t].row(row).data() : nullptr, dim, rates);
    }
  }
}

}  // namespace gbasim

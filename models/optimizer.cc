#include "models/optimizer.h"

#include <algorithm>
#include <cmath>

#include "base/enum_names.h"
#include "base/error.h"

namespace gbasim {

namespace {
constexpr EnumName<OptimizerKind> kOptimizerKindNames[] = {{OptimizerKind::kSGD, "sgd"}, {OptimizerKind::kAdagrad, "adagrad"}, {OptimizerKind::kAdam, "adam"}};
}  // namespace

OptimizerKind parse_optimizer_kind(const std::string& name) {
  return parse_enum(name, kOptimizerKindNames);
}

std::string optimizer_name(OptimizerKind kind) { return enum_name(kind, kOptimizerKindNames); }

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

void Optimizer::update(float* w, const float* g, float* m, float* v, int64_t n,
                       const StepRates& rates) const {
  // Plain loops with std::sqrt, the correctly rounded square root (vectorised to the exact
  // square-root instruction: this file is compiled with -fno-math-errno), so that the update
  // gives the same bits on every CPU of an instruction-set level. Eigen's vectorised sqrt
  // (EIGEN_FAST_MATH) starts from the approximate reciprocal square root, which differs
  // between CPU makers.
  const auto l2 = static_cast<float>(config_.l2);
  const float lr = rates.lr, eps = rates.eps;
  switch (config_.kind) {
    case OptimizerKind::kSGD:
      for (int64_t i = 0; i < n; ++i) w[i] -= lr * (g[i] + l2 * w[i]);
      break;
    case OptimizerKind::kAdagrad:
      for (int64_t i = 0; i < n; ++i) {
        const float d = g[i] + l2 * w[i];
        v[i] += d * d;
        w[i] -= lr * d / (std::sqrt(v[i]) + eps);
      }
      break;
    case OptimizerKind::kAdam: {
      const auto b1 = static_cast<float>(config_.beta1), b2 = static_cast<float>(config_.beta2);
      for (int64_t i = 0; i < n; ++i) {
        const float d = g[i] + l2 * w[i];
        m[i] = b1 * m[i] + (1.0f - b1) * d;
        v[i] = b2 * v[i] + (1.0f - b2) * (d * d);
        w[i] -= lr * m[i] / (std::sqrt(v[i]) + eps);
      }
      break;
    }
  }
}

void Optimizer::apply(Parameters& params, const Gradient& grad) {
  constexpr size_t kAhead = 4;
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
  // The dense values in pieces that stay in the first-level cache through the update's
  // passes (pieces of whole packets from an aligned start: each value meets the same
  // vectorised or scalar operations as in one call over the whole vector).
  constexpr Eigen::Index kPiece = 2048;
  const Eigen::Index n = params.dense.size();
  for (Eigen::Index at = 0; at < n; at += kPiece) {
    update(params.dense.data() + at, grad.dense.data() + at, adam ? dense_m_.data() + at : nullptr,
           second ? dense_v_.data() + at : nullptr, std::min(kPiece, n - at), rates);
  }
  for (size_t t = 0; t < grad.tables.size(); ++t) {
    const SparseRows& rows = grad.tables[t];
    const Eigen::Index dim = rows.values.cols();
    for (size_t r = 0; r < rows.rows.size(); ++r) {
      const int32_t row = rows.rows[r];
      // The rows are scattered over tables far larger than the caches: ask for a row a few
      // updates ahead, so that its values and moments arrive while this one is updated.
      if (r + kAhead < rows.rows.size()) {
        const int32_t next = rows.rows[r + kAhead];
        __builtin_prefetch(params.tables[t].row(next).data(), 1);
        if (adam) __builtin_prefetch(table_m_[t].row(next).data(), 1);
        if (second) __builtin_prefetch(table_v_[t].row(next).data(), 1);
      }
      update(params.tables[t].row(row).data(), rows.values.row(r).data(),
             adam ? table_m_[t].row(row).data() : nullptr,
             second ? table_v_[t].row(row).data() : nullptr, dim, rates);
    }
  }
}

}  // namespace gbasim

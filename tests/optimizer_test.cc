#include "models/optimizer.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace gbasim {
namespace {

// One dense value and one table of 4 rows x 2.
Parameters one_value_and_a_table(float value) {
  Parameters p;
  p.dense = Eigen::VectorXf::Constant(1, value);
  p.tables.push_back(RowMatrixXf::Constant(4, 2, value));
  return p;
}

Gradient dense_gradient(float g) {
  Gradient grad;
  grad.dense = Eigen::VectorXf::Constant(1, g);
  grad.tables.resize(1);
  grad.tables[0].values.resize(0, 2);
  grad.samples = 1;
  return grad;
}

Gradient row_gradient(int32_t row, float g) {
  Gradient grad = dense_gradient(0.0f);
  grad.tables[0].rows = {row};
  grad.tables[0].values = RowMatrixXf::Constant(1, 2, g);
  return grad;
}

OptimizerConfig config(OptimizerKind kind, double lr, double l2 = 0.0) {
  OptimizerConfig c;
  c.kind = kind;
  c.learning_rate = lr;
  c.l2 = l2;
  return c;
}

TEST(Optimizer, SgdWithL2) {
  Parameters p = one_value_and_a_table(1.0f);
  Optimizer opt(config(OptimizerKind::kSGD, 0.1, 0.1), p);
  opt.apply(p, dense_gradient(0.5f));
  EXPECT_FLOAT_EQ(p.dense[0], 1.0f - 0.1f * (0.5f + 0.1f));  // 0.94
}

TEST(Optimizer, AdagradHandComputed) {
  Parameters p = one_value_and_a_table(1.0f);
  OptimizerConfig c = config(OptimizerKind::kAdagrad, 0.1);
  c.adagrad_initial = 0.1;
  Optimizer opt(c, p);
  opt.apply(p, dense_gradient(0.5f));
  // accumulator 0.1 + 0.25 = 0.35; 1 - 0.1 * 0.5 / sqrt(0.35)
  EXPECT_NEAR(p.dense[0], 0.9154845745, 1e-6);
  opt.apply(p, dense_gradient(0.5f));
  // accumulator 0.6; 0.9154845745 - 0.05 / sqrt(0.6)
  EXPECT_NEAR(p.dense[0], 0.8509348283, 1e-6);
}

TEST(Optimizer, AdamHandComputed) {
  Parameters p = one_value_and_a_table(1.0f);
  Optimizer opt(config(OptimizerKind::kAdam, 0.1), p);
  opt.apply(p, dense_gradient(0.5f));
  // m_hat = 0.5, v_hat = 0.25: the first step moves by lr.
  EXPECT_NEAR(p.dense[0], 0.9, 1e-6);
  opt.apply(p, dense_gradient(-0.5f));
  // m = 0.9 * 0.05 - 0.05 = -0.005, m_hat = -0.005 / 0.19; v_hat = 0.00049975 / 0.001999 = 0.25
  EXPECT_NEAR(p.dense[0], 0.9 + 0.1 * (0.005 / 0.19) / 0.5, 1e-5);
}

// The square root is the exact one (cross-vendor bits; optimizer.cc): with no momentum and no
// history, Adam's and Adagrad's step is lr g / (sqrt(g * g) + eps), and the correctly rounded
// square root of a correctly rounded square is |g| to the bit, so a step of rate 1 from 0
// with a negligible epsilon lands exactly on -sign(g). An approximate root (Eigen's fast one
// starts from the reciprocal square root estimate) misses by an ulp on some values. 4,099
// values: vector loop and scalar tail.
TEST(Optimizer, SquareRootIsExact) {
  for (OptimizerKind kind : {OptimizerKind::kAdagrad, OptimizerKind::kAdam}) {
    OptimizerConfig c = config(kind, 1.0);
    c.beta1 = 0.0;
    c.beta2 = 0.0;
    c.adagrad_initial = 0.0;
    c.epsilon = 1e-30;
    Parameters p;
    p.dense = Eigen::VectorXf::Zero(4099);
    Optimizer opt(c, p);
    Gradient g;
    g.dense.resize(4099);
    uint32_t state = 12345;
    for (Eigen::Index i = 0; i < g.dense.size(); ++i) {
      state = state * 1664525u + 1013904223u;  // values spread over [0.5, 2), either sign
      const float u = static_cast<float>(state >> 8) / 16777216.0f;
      g.dense[i] = (i % 2 == 0 ? 1.0f : -1.0f) * (0.5f + 1.5f * u);
    }
    g.samples = 1;
    opt.apply(p, g);
    int off = 0;
    for (Eigen::Index i = 0; i < p.dense.size(); ++i)
      off += p.dense[i] != (g.dense[i] > 0.0f ? -1.0f : 1.0f);
    EXPECT_EQ(off, 0) << optimizer_name(kind) << ": values not exactly -sign(g)";
  }
}

TEST(Optimizer, LazyAdamLeavesAbsentRowsAndTheirMomentsAlone) {
  Parameters p = one_value_and_a_table(1.0f);
  Optimizer opt(config(OptimizerKind::kAdam, 0.1), p);
  opt.apply(p, row_gradient(2, 0.5f));
  EXPECT_NEAR(p.tables[0](2, 0), 0.9, 1e-6);
  opt.apply(p, row_gradient(1, 0.5f));  // row 2 absent: unchanged, moments not decayed
  EXPECT_NEAR(p.tables[0](2, 0), 0.9, 1e-6);
  opt.apply(p, row_gradient(2, 0.5f));
  // Row 2's moments saw two gradients of 0.5 (m = 0.095, v = 0.0004998) at step count 3:
  // m_hat = 0.095 / 0.271, v_hat = 0.0004998 / 0.002997.
  const double m_hat = 0.095 / (1 - 0.729), v_hat = (0.999 * 0.00025 + 0.00025) / (1 - 0.997002999);
  EXPECT_NEAR(p.tables[0](2, 0), 0.9 - 0.1 * m_hat / std::sqrt(v_hat), 1e-5);
}

TEST(Optimizer, SparseUpdatesTouchOnlyTheirRows) {
  for (OptimizerKind kind : {OptimizerKind::kSGD, OptimizerKind::kAdagrad, OptimizerKind::kAdam}) {
    Parameters p = one_value_and_a_table(1.0f);
    Optimizer opt(config(kind, 0.1, 0.5), p);
    opt.apply(p, row_gradient(1, 0.3f));
    for (int row = 0; row < 4; ++row) {
      for (int d = 0; d < 2; ++d) {
        if (row == 1) {
          EXPECT_LT(p.tables[0](row, d), 1.0f) << optimizer_name(kind);
        } else {
          EXPECT_EQ(p.tables[0](row, d), 1.0f) << optimizer_name(kind) << " row " << row;
        }
      }
    }
    // The dense gradient was zero: only L2 moves the dense value.
    EXPECT_LT(p.dense[0], 1.0f) << optimizer_name(kind);
  }
}

TEST(Optimizer, BadConfigIsAnInputError) {
  const Parameters p = one_value_and_a_table(1.0f);
  EXPECT_THROW(Optimizer(config(OptimizerKind::kSGD, 0.0), p), InputError);
  EXPECT_THROW(parse_optimizer_kind("lamb"), InputError);
}

}  // namespace
}  // namespace gbasim

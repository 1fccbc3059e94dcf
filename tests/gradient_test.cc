#include "models/gradient.h"

#include <gtest/gtest.h>

namespace gbasim {
namespace {

SparseRows rows(std::vector<int32_t> ids, std::vector<float> first_column) {
  SparseRows r;
  r.rows = std::move(ids);
  r.values.resize(static_cast<Eigen::Index>(r.rows.size()), 2);
  for (size_t i = 0; i < r.rows.size(); ++i) r.values.row(i) << first_column[i], 1.0f;
  return r;
}

TEST(SparseRows, AccumulateTakesTheUnionAndSumsSharedRows) {
  SparseRows a = rows({1, 4, 7}, {1, 2, 3});
  a.accumulate(rows({0, 4, 9}, {10, 20, 30}));
  EXPECT_EQ(a.rows, (std::vector<int32_t>{0, 1, 4, 7, 9}));
  Eigen::VectorXf expected(5);
  expected << 10, 1, 22, 3, 30;
  EXPECT_EQ(a.values.col(0), expected);
  EXPECT_EQ(a.values(2, 1), 2.0f);
  EXPECT_EQ(a.values(0, 1), 1.0f);
}

TEST(Gradient, ScaleAccumulateAndBytes) {
  Gradient a;
  a.dense = Eigen::VectorXf::Constant(3, 1.0f);
  a.tables = {rows({2}, {4})};
  a.samples = 8;
  Gradient total = Gradient::zeros_like(a);
  total.accumulate(a);
  total.accumulate(a);
  EXPECT_EQ(total.samples, 16);
  total.scale(0.5f);
  EXPECT_EQ(total.dense, Eigen::VectorXf::Constant(3, 1.0f));
  ASSERT_EQ(total.tables[0].rows, std::vector<int32_t>{2});
  EXPECT_EQ(total.tables[0].values(0, 0), 4.0f);
  // 3 dense floats, one row of an 8-byte id and 2 floats.
  EXPECT_EQ(a.bytes(), 3 * 4 + 8 + 2 * 4);
}

}  // namespace
}  // namespace gbasim

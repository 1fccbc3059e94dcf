#include "models/gradient.h"

#include <gtest/gtest.h>

namespace gbasim {
namespace {

// A gradient of 3 dense values, one table of dimension 2 whose row i holds (first[i], 1).
Gradient gradient(float dense, std::vector<int32_t> ids, std::vector<float> first,
                  int64_t samples = 8) {
  Gradient g;
  g.dense = Eigen::VectorXf::Constant(3, dense);
  g.samples = samples;
  g.tables.resize(1);
  SparseRows& r = g.tables[0];
  r.rows = std::move(ids);
  r.values.resize(static_cast<Eigen::Index>(r.rows.size()), 2);
  for (size_t i = 0; i < r.rows.size(); ++i) r.values.row(i) << first[i], 1.0f;
  return g;
}

TEST(GradientSum, TakesTheUnionOfRowsAndSumsSharedOnes) {
  GradientSum sum;
  EXPECT_TRUE(sum.empty());
  sum.add(gradient(1, {1, 4, 7}, {1, 2, 3}));
  sum.add(gradient(2, {0, 4, 9}, {10, 20, 30}));
  sum.add(gradient(3, {4}, {100}));
  const Gradient total = sum.take(0.5f);
  EXPECT_TRUE(sum.empty());
  EXPECT_EQ(total.samples, 24);
  EXPECT_EQ(total.dense, Eigen::VectorXf::Constant(3, 3.0f));
  EXPECT_EQ(total.tables[0].rows, (std::vector<int32_t>{0, 1, 4, 7, 9}));
  Eigen::VectorXf first(5), second(5);
  first << 5, 0.5, 61, 1.5, 15;
  second << 0.5, 0.5, 1.5, 0.5, 0.5;
  EXPECT_EQ(total.tables[0].values.col(0), first);
  EXPECT_EQ(total.tables[0].values.col(1), second);
}

TEST(GradientSum, IsReusableAfterTake) {
  GradientSum sum;
  sum.add(gradient(1, {2}, {4}));
  sum.take(1.0f);
  sum.add(gradient(5, {3}, {6}, 2));
  const Gradient g = sum.take(1.0f);
  EXPECT_EQ(g.samples, 2);
  EXPECT_EQ(g.dense[0], 5.0f);
  EXPECT_EQ(g.tables[0].rows, std::vector<int32_t>{3});
}

// A timing-only gradient: rows without values (0 columns), in the order a batch read them.
Gradient rows_only(std::vector<int32_t> ids) {
  Gradient g;
  g.samples = 4;
  g.tables.resize(1);
  g.tables[0].rows = std::move(ids);
  g.tables[0].values.resize(static_cast<Eigen::Index>(g.tables[0].rows.size()), 0);
  return g;
}

// Rows without values are united in the order they first appear, each once, and a second
// sum starts afresh (no row is taken as already seen).
TEST(GradientSum, UnitesRowsWithoutValuesInFirstSeenOrder) {
  GradientSum sum;
  sum.add(rows_only({7, 1, 4}));
  sum.add(rows_only({4, 9, 0, 7}));
  sum.add(rows_only({9, 12}));
  Gradient g = sum.take(1.0f);
  EXPECT_EQ(g.samples, 12);
  EXPECT_EQ(g.tables[0].rows, (std::vector<int32_t>{7, 1, 4, 9, 0, 12}));
  EXPECT_EQ(g.tables[0].values.rows(), 6);
  EXPECT_EQ(g.tables[0].values.cols(), 0);
  sum.add(rows_only({12, 7}));
  sum.add(rows_only({7}));
  g = sum.take(1.0f);
  EXPECT_EQ(g.tables[0].rows, (std::vector<int32_t>{12, 7}));
}

TEST(Gradient, ScaleAndBytes) {
  Gradient g = gradient(2, {2, 5}, {4, 6});
  g.scale(0.5f);
  EXPECT_EQ(g.dense, Eigen::VectorXf::Constant(3, 1.0f));
  EXPECT_EQ(g.tables[0].values(1, 0), 3.0f);
  // 3 dense floats, two rows of an 8-byte id and 2 floats each.
  EXPECT_EQ(g.bytes(), 3 * 4 + 2 * (8 + 2 * 4));
}

}  // namespace
}  // namespace gbasim

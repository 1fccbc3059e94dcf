#include "models/gradient.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

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

// The level-by-level pairwise merge the sum is defined by (parts 0+1, 2+3, ..., then the
// results alike), written out plainly: the reference for GradientSum's one-pass tree sum.
SparseRows merged(const SparseRows& a, const SparseRows& b) {
  SparseRows out;
  std::vector<Eigen::RowVectorXf> rows;
  size_t i = 0, j = 0;
  while (i < a.rows.size() || j < b.rows.size()) {
    if (j == b.rows.size() || (i < a.rows.size() && a.rows[i] < b.rows[j])) {
      out.rows.push_back(a.rows[i]);
      rows.push_back(a.values.row(i++));
    } else if (i == a.rows.size() || b.rows[j] < a.rows[i]) {
      out.rows.push_back(b.rows[j]);
      rows.push_back(b.values.row(j++));
    } else {
      out.rows.push_back(a.rows[i]);
      rows.push_back(a.values.row(i++) + b.values.row(j++));
    }
  }
  out.values.resize(static_cast<Eigen::Index>(rows.size()), a.values.cols());
  for (size_t k = 0; k < rows.size(); ++k) out.values.row(k) = rows[k];
  return out;
}

// Random parts (rows drawn from a small range, so that many are shared; values of all
// magnitudes and signs, -0 too), summed by GradientSum and by the plain merge: the same rows
// and the same bits, for every number of parts from 1 to 40, on rows of 3 values and of 16
// (the width the merge handles with fixed-size rows).
TEST(GradientSum, TreeSumIsThePairwiseMergeToTheBit) {
  std::mt19937 rng(7);
  for (const int dim : {3, 16})
    for (int m = 1; m <= 40; ++m) {
      GradientSum sum;
      std::vector<SparseRows> level;
      for (int p = 0; p < m; ++p) {
        std::vector<int32_t> ids;
        for (int32_t r = 0; r < 60; ++r)
          if (rng() % 3 == 0) ids.push_back(r);
        Gradient g;
        g.dense = Eigen::VectorXf::Zero(1);
        g.samples = 1;
        g.tables.resize(1);
        g.tables[0].rows = ids;
        g.tables[0].values.resize(static_cast<Eigen::Index>(ids.size()), dim);
        for (Eigen::Index i = 0; i < g.tables[0].values.size(); ++i) {
          const float v =
              std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 7.0f,
                         static_cast<int>(rng() % 40) - 20);
          g.tables[0].values.data()[i] = rng() % 17 == 0 ? -0.0f : v;
        }
        level.push_back(g.tables[0]);
        sum.add(std::move(g));
      }
      while (level.size() > 1) {
        std::vector<SparseRows> next;
        for (size_t i = 0; i + 1 < level.size(); i += 2)
          next.push_back(merged(level[i], level[i + 1]));
        if (level.size() % 2 == 1) next.push_back(level.back());
        level = std::move(next);
      }
      const Gradient g = sum.take(0.375f);
      const SparseRows& want = level[0];
      ASSERT_EQ(g.tables[0].rows, want.rows) << m << " parts of width " << dim;
      ASSERT_EQ(g.tables[0].values.rows(), want.values.rows());
      for (Eigen::Index i = 0; i < want.values.size(); ++i) {
        const float a = g.tables[0].values.data()[i], b = want.values.data()[i] * 0.375f;
        ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0)
            << m << " parts of width " << dim << ", value " << i << ": " << a << " " << b;
      }
    }
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

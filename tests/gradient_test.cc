#include "models/gradient.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>

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

// Tables whose parts hold the same rows (a field's embedding and first-order weights) share
// one union; a table that matches another in some parts only gets its own.
TEST(GradientSum, TablesWithTheSameRowsShareAUnionAndOthersDoNot) {
  auto three_tables = [](std::vector<int32_t> a, std::vector<int32_t> c) {
    Gradient g = rows_only(a);
    g.tables.resize(3);
    g.tables[1] = g.tables[0];
    g.tables[2].rows = std::move(c);
    g.tables[2].values.resize(static_cast<Eigen::Index>(g.tables[2].rows.size()), 0);
    return g;
  };
  GradientSum sum;
  sum.add(three_tables({7, 1, 4}, {7, 1, 4}));
  sum.add(three_tables({4, 9}, {4, 5}));
  const Gradient g = sum.take(1.0f);
  EXPECT_EQ(g.tables[0].rows, (std::vector<int32_t>{7, 1, 4, 9}));
  EXPECT_EQ(g.tables[1].rows, (std::vector<int32_t>{7, 1, 4, 9}));
  EXPECT_EQ(g.tables[2].rows, (std::vector<int32_t>{7, 1, 4, 5}));
  EXPECT_EQ(g.tables[2].values.rows(), 4);
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
// magnitudes and signs, -0 too), summed by GradientSum and by the plain pairwise merge, level
// by level: the same rows and the same bits, for every number of parts from 1 to 40. Each
// gradient has five tables: rows of 3 or of 16 values (the width summed with fixed-size
// rows); rows of 1 value on the same rows (a field's first-order weights, which share the
// first table's plan and its walks of the tree); rows of 1 value on as many rows as the first
// table's, in every other part the same ones (a plan must not be shared on partly equal
// rows), and rows of the first width on those (a pair whose first table is the narrow one);
// and the first table's rows again (a third table on a plan, summed alone).
TEST(GradientSum, TreeSumIsThePairwiseMergeToTheBit) {
  std::mt19937 rng(7);
  auto random_ids = [&] {
    std::vector<int32_t> ids;
    for (int32_t r = 0; r < 60; ++r)
      if (rng() % 3 == 0) ids.push_back(r);
    return ids;
  };
  auto random_rows = [&](std::vector<int32_t> ids, int dim) {
    SparseRows rows;
    rows.rows = std::move(ids);
    rows.values.resize(static_cast<Eigen::Index>(rows.rows.size()), dim);
    for (Eigen::Index i = 0; i < rows.values.size(); ++i) {
      const float v = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 7.0f,
                                 static_cast<int>(rng() % 40) - 20);
      rows.values.data()[i] = rng() % 17 == 0 ? -0.0f : v;
    }
    return rows;
  };
  auto shifted = [](std::vector<int32_t> ids) {  // as many rows, others
    for (int32_t& id : ids) ++id;
    return ids;
  };
  for (const int dim : {3, 16})
    for (int m = 1; m <= 40; ++m) {
      GradientSum sum;
      std::vector<std::vector<SparseRows>> levels(5);
      for (int p = 0; p < m; ++p) {
        Gradient g;
        g.dense = Eigen::VectorXf::Zero(1);
        g.samples = 1;
        const std::vector<int32_t> ids = random_ids(), other = p % 2 == 0 ? ids : shifted(ids);
        g.tables = {random_rows(ids, dim), random_rows(ids, 1), random_rows(other, 1),
                    random_rows(other, dim), random_rows(ids, dim)};
        for (size_t t = 0; t < 5; ++t) levels[t].push_back(g.tables[t]);
        sum.add(std::move(g));
      }
      const Gradient g = sum.take(0.375f);
      for (size_t t = 0; t < 5; ++t) {
        std::vector<SparseRows>& level = levels[t];
        while (level.size() > 1) {
          std::vector<SparseRows> next;
          for (size_t i = 0; i + 1 < level.size(); i += 2)
            next.push_back(merged(level[i], level[i + 1]));
          if (level.size() % 2 == 1) next.push_back(level.back());
          level = std::move(next);
        }
        const SparseRows& want = level[0];
        ASSERT_EQ(g.tables[t].rows, want.rows) << m << " parts of width " << dim << ", table " << t;
        ASSERT_EQ(g.tables[t].values.rows(), want.values.rows());
        ASSERT_EQ(g.tables[t].values.cols(), want.values.cols());
        for (Eigen::Index i = 0; i < want.values.size(); ++i) {
          const float a = g.tables[t].values.data()[i], b = want.values.data()[i] * 0.375f;
          ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << m << " parts of width " << dim << ", table "
                                                      << t << ", value " << i << ": " << a << " " << b;
        }
      }
    }
}

// take_sorted reads the ids off the bits where they are dense and sorts them where they are
// sparse: either way the sorted distinct ids added since the last take, and nothing else.
TEST(FirstSeen, TakeSortedIsTheSortedDistinctIdsAddedSinceTheLastTake) {
  std::mt19937 rng(3);
  FirstSeen seen;
  for (const int32_t range : {100, 5'000, 10'000'000}) {
    for (int round = 0; round < 3; ++round) {
      std::vector<int32_t> ids(300);
      for (int32_t& id : ids) id = static_cast<int32_t>(rng() % static_cast<uint32_t>(range));
      seen.add_each(ids.size(), [&](size_t i) { return ids[i]; });
      const std::set<int32_t> want(ids.begin(), ids.end());
      EXPECT_EQ(seen.take_sorted(), std::vector<int32_t>(want.begin(), want.end()))
          << "ids below " << range << ", round " << round;
    }
  }
  EXPECT_TRUE(seen.take_sorted().empty());
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

#include "models/metrics.h"

#include "base/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace gbasim {
namespace {

// Pair counting straight from the definition.
double brute_force_auc(const std::vector<float>& scores, const std::vector<float>& labels) {
  double wins = 0.0, pairs = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (labels[i] != 1.0f) continue;
    for (size_t j = 0; j < scores.size(); ++j) {
      if (labels[j] != 0.0f) continue;
      pairs += 1.0;
      wins += scores[i] > scores[j] ? 1.0 : scores[i] == scores[j] ? 0.5 : 0.0;
    }
  }
  return wins / pairs;
}

TEST(RocAuc, EqualsPairCountingWithManyTies) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 10 + trial * 13;
    const int levels = 1 + trial % 6;  // few distinct scores: many ties
    std::uniform_int_distribution<int> level(0, levels);
    std::bernoulli_distribution positive(0.3);
    std::vector<float> scores(n), labels(n);
    for (int i = 0; i < n; ++i) {
      scores[i] = static_cast<float>(level(rng)) * 0.25f;
      labels[i] = positive(rng) ? 1.0f : 0.0f;
    }
    labels[0] = 1.0f;
    labels[1] = 0.0f;
    EXPECT_NEAR(roc_auc(scores, labels), brute_force_auc(scores, labels), 1e-9)
        << "trial " << trial;
  }
}

TEST(RocAuc, HandCases) {
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<float>{0.1f, 0.9f}, std::vector<float>{0, 1}), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<float>{0.9f, 0.1f}, std::vector<float>{0, 1}), 0.0);
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<float>{0.5f, 0.5f, 0.5f}, std::vector<float>{0, 1, 1}), 0.5);
  // Positives at 0.2 and 0.8, negatives at 0.4 and 0.8: 1 win + 1 tie of 4 pairs.
  EXPECT_DOUBLE_EQ(
      roc_auc(std::vector<float>{0.2f, 0.8f, 0.4f, 0.8f}, std::vector<float>{1, 1, 0, 0}),
      1.5 / 4.0);
}

TEST(RocAuc, OneClassIsNan) {
  EXPECT_TRUE(std::isnan(roc_auc(std::vector<float>{0.1f, 0.2f}, std::vector<float>{1, 1})));
}

// A diverged model's NaN scores end the computation (they once made it loop forever).
TEST(RocAuc, NanScoresAreNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(roc_auc(std::vector<float>{0.1f, nan, 0.3f}, std::vector<float>{0, 1, 1})));
  EXPECT_TRUE(std::isnan(roc_auc(std::vector<float>{nan, nan}, std::vector<float>{0, 1})));
}

TEST(LogLoss, HandCases) {
  EXPECT_NEAR(log_loss(std::vector<float>{0.5f}, std::vector<float>{1}), std::log(2.0), 1e-12);
  EXPECT_NEAR(log_loss(std::vector<float>{0.8f, 0.1f}, std::vector<float>{1, 0}),
              -(std::log(0.8f) + std::log(0.9)) / 2.0, 1e-7);
  EXPECT_NEAR(log_loss(std::vector<float>{0.25f}, std::vector<float>{0}), -std::log(0.75), 1e-12);
  // Confident mistakes are clamped to 1e-7, not infinite.
  EXPECT_NEAR(log_loss(std::vector<float>{0.0f}, std::vector<float>{1}), -std::log(1e-7), 1e-9);
  EXPECT_NEAR(log_loss(std::vector<float>{1.0f}, std::vector<float>{0}), -std::log(1e-7), 1e-6);
}

TEST(Median, OddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);  // the mean of the middle two
  EXPECT_DOUBLE_EQ(median({5.0}), 5.0);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

}  // namespace
}  // namespace gbasim

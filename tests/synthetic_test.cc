#include "models/synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "base/error.h"
#include "models/metrics.h"

namespace gbasim {
namespace {

SyntheticConfig small_config() {
  SyntheticConfig c;
  c.train_samples = 40'000;
  c.test_samples = 20'000;
  return c;
}

TEST(Synthetic, SameSeedGivesTheSameBytes) {
  const SyntheticData a = generate_synthetic(small_config());
  const SyntheticData b = generate_synthetic(small_config());
  EXPECT_EQ(a.train.ids, b.train.ids);
  EXPECT_EQ(a.train.dense, b.train.dense);
  EXPECT_EQ(a.train.labels, b.train.labels);
  EXPECT_EQ(a.test.true_prob, b.test.true_prob);
  EXPECT_EQ(a.bayes_auc, b.bayes_auc);
}

TEST(Synthetic, AnotherSeedGivesOtherBytes) {
  SyntheticConfig other = small_config();
  other.seed = 2;
  const SyntheticData a = generate_synthetic(small_config());
  const SyntheticData b = generate_synthetic(other);
  EXPECT_NE(a.train.ids, b.train.ids);
  EXPECT_NE(a.train.dense, b.train.dense);
  EXPECT_NE(a.train.labels, b.train.labels);
}

TEST(Synthetic, PositiveRateIsTheTarget) {
  for (double target : {0.05, 0.25, 0.5}) {
    SyntheticConfig c = small_config();
    c.target_ctr = target;
    const SyntheticData d = generate_synthetic(c);
    EXPECT_NEAR(d.train.positive_rate(), target, 0.01) << "target " << target;
    EXPECT_NEAR(d.test.positive_rate(), target, 0.01) << "target " << target;
  }
}

TEST(Synthetic, BayesAucIsTheAucOfTheTrueProbabilities) {
  const SyntheticData d = generate_synthetic(small_config());
  EXPECT_GT(d.bayes_auc, 0.5);
  EXPECT_LT(d.bayes_auc, 1.0);
  EXPECT_DOUBLE_EQ(d.bayes_auc, roc_auc(d.test.true_prob, d.test.labels));
  // Label flips keep the ranking of the true probabilities but blur the labels.
  SyntheticConfig noisy = small_config();
  noisy.label_flip = 0.1;
  EXPECT_LT(generate_synthetic(noisy).bayes_auc, d.bayes_auc - 0.02);
}

TEST(Synthetic, FieldsSpanOrdersOfMagnitudeAndFollowZipf) {
  const SyntheticConfig c = small_config();
  const std::vector<int64_t> cards = field_cardinalities(c);
  ASSERT_EQ(cards.size(), 26u);
  EXPECT_EQ(cards.front(), 10);
  EXPECT_EQ(cards.back(), 100'000);
  EXPECT_TRUE(std::is_sorted(cards.begin(), cards.end()));

  const SyntheticData d = generate_synthetic(c);
  const int f = 13;  // a field of a few thousand values
  std::map<int32_t, int64_t> counts;
  for (int64_t i = 0; i < d.train.size(); ++i) {
    const int32_t id = d.train.ids[i * c.num_fields + f];
    ASSERT_GE(id, 0);
    ASSERT_LT(id, cards[f]);
    ++counts[id];
  }
  std::vector<int64_t> freq;
  int32_t top_id = 0;
  for (auto [id, n] : counts) {
    freq.push_back(n);
    if (n > counts[top_id]) top_id = id;
  }
  std::sort(freq.rbegin(), freq.rend());
  // Zipf with exponent 1.1: rank 1 is about 2^1.1 = 2.14 times as frequent as rank 2 and
  // about 10^1.1 = 12.6 times rank 10.
  EXPECT_NEAR(static_cast<double>(freq[0]) / freq[1], 2.14, 0.35);
  EXPECT_NEAR(static_cast<double>(freq[0]) / freq[9], 12.6, 4.0);
  EXPECT_NE(top_id, 0) << "ids must be permuted away from frequency rank";
}

TEST(Synthetic, DriftChangesTheTeacherOfLaterDays) {
  SyntheticConfig one_day = small_config(), drifting = small_config();
  drifting.days = 3;
  drifting.day_drift = 0.5;
  const SyntheticData a = generate_synthetic(one_day), b = generate_synthetic(drifting);
  // Same features, same day-1 teacher: the first day's probabilities agree up to the
  // rescaling; the test day's do not.
  EXPECT_EQ(a.test.ids, b.test.ids);
  double diff_test = 0.0;
  for (int64_t i = 0; i < a.test.size(); ++i)
    diff_test += std::abs(a.test.true_prob[i] - b.test.true_prob[i]);
  EXPECT_GT(diff_test / a.test.size(), 0.02);
  // The day-1 teacher ranks the test day's samples worse than the true (drifted) one.
  EXPECT_LT(roc_auc(a.test.true_prob, b.test.labels), b.bayes_auc - 0.01);
}

TEST(Synthetic, InvalidConfigNamesTheKey) {
  SyntheticConfig c = small_config();
  c.target_ctr = 1.5;
  try {
    generate_synthetic(c);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("target_ctr"), std::string::npos) << e.what();
  }
  c = small_config();
  c.days = 0;
  EXPECT_THROW(generate_synthetic(c), InputError);
}

}  // namespace
}  // namespace gbasim

#include "models/dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace gbasim {
namespace {

// n rows whose single id, dense value and label identify the row.
Dataset numbered(int64_t n) {
  Dataset d;
  d.num_fields = 1;
  d.num_dense = 1;
  d.cardinalities = {n};
  for (int64_t i = 0; i < n; ++i) {
    d.ids.push_back(static_cast<int32_t>(i));
    d.dense.push_back(static_cast<float>(i));
    d.labels.push_back(static_cast<float>(i % 2));
  }
  return d;
}

TEST(ShardIterator, ShardsAreDisjointAndCoverTheData) {
  const Dataset data = numbered(103);
  std::multiset<int32_t> seen;
  for (int w = 0; w < 4; ++w) {
    ShardIterator it(data, w, 4, 9);
    const Batch batch = it.next(it.shard_size());
    for (int64_t r = 0; r < batch.size(); ++r) {
      EXPECT_EQ(batch.ids(r, 0) % 4, w);
      EXPECT_EQ(batch.dense(r, 0), static_cast<float>(batch.ids(r, 0)));
      seen.insert(batch.ids(r, 0));
    }
  }
  EXPECT_EQ(seen.size(), 103u);
  EXPECT_EQ(std::set<int32_t>(seen.begin(), seen.end()).size(), 103u);
}

TEST(ShardIterator, EpochsReshuffleAndBatchesWrap) {
  const Dataset data = numbered(40);
  ShardIterator it(data, 1, 2, 3);
  const Batch first = it.next(20);
  EXPECT_EQ(it.epoch(), 0);
  const Batch wrapped = it.next(25);  // the whole second epoch and 5 rows of the third
  EXPECT_EQ(it.epoch(), 2);
  EXPECT_EQ(it.samples_read(), 45);
  std::vector<int32_t> a(first.ids.data(), first.ids.data() + 20);
  std::vector<int32_t> b(wrapped.ids.data(), wrapped.ids.data() + 20);
  EXPECT_NE(a, b) << "the second epoch must be reshuffled";
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b) << "every epoch visits the same shard";
}

TEST(ShardIterator, SameSeedSameOrderOtherSeedOtherOrder) {
  const Dataset data = numbered(200);
  ShardIterator a(data, 0, 1, 5), b(data, 0, 1, 5), c(data, 0, 1, 6);
  const Batch ba = a.next(50), bb = b.next(50), bc = c.next(50);
  EXPECT_EQ(ba.ids, bb.ids);
  EXPECT_NE(ba.ids, bc.ids);
}

TEST(SplitTrainTest, TakesTheLastRowsAsTest) {
  const Dataset data = numbered(10);
  const auto [train, test] = split_train_test(data, 0.3);
  ASSERT_EQ(train.size(), 7);
  ASSERT_EQ(test.size(), 3);
  EXPECT_EQ(test.ids, (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(train.dense.back(), 6.0f);
}

}  // namespace
}  // namespace gbasim

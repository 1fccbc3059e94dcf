#include "base/stats.h"

#include <gtest/gtest.h>

namespace gbasim {
namespace {

// Student's sleep data (Cushny and Peebles 1905, as "Student" analysed it in 1908; R's
// `sleep` data set): extra hours of sleep of 10 patients under two drugs. R's
// t.test(extra ~ group, data = sleep, paired = TRUE) gives the mean difference -1.58 and the
// 95% interval [-2.4598858, -0.7001142].
const std::vector<double> kDrug1{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
const std::vector<double> kDrug2{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};

TEST(Stats, PairedDifferenceMatchesStudentsSleepData) {
  const Interval d = paired_difference(kDrug1, kDrug2);
  EXPECT_EQ(d.n, 10);
  EXPECT_NEAR(d.mean, -1.58, 1e-12);
  EXPECT_NEAR(d.low, -2.4598858, 1e-6);
  EXPECT_NEAR(d.high, -0.7001142, 1e-6);
  EXPECT_TRUE(d.excludes_zero());
}

// The same data unpaired: R's t.test(sleep$extra[1:10]) gives mean 0.75 and the 95% interval
// [-0.5297804, 2.0297804], which includes 0.
TEST(Stats, MeanIntervalMatchesAOneSampleTTest) {
  const Interval m = mean_interval(kDrug1);
  EXPECT_NEAR(m.mean, 0.75, 1e-12);
  EXPECT_NEAR(m.low, -0.5297804, 1e-6);
  EXPECT_NEAR(m.high, 2.0297804, 1e-6);
  EXPECT_FALSE(m.excludes_zero());
}

TEST(Stats, OneValueHasAMeanButNoInterval) {
  const Interval m = mean_interval({0.7});
  EXPECT_EQ(m.mean, 0.7);
  EXPECT_TRUE(std::isnan(m.low));
  EXPECT_FALSE(m.excludes_zero());
  EXPECT_TRUE(std::isnan(mean_interval({}).mean));
}

}  // namespace
}  // namespace gbasim

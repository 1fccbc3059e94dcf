#include "traces/straggler_models.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gbasim {
namespace {

TEST(StragglerModels, PersistentSlowsTheConfiguredShareOfWorkers) {
  StragglerConfig c;
  c.persistent_fraction = 0.25;
  c.persistent_slowdown = 2.5;
  const std::vector<double> f = persistent_slowdowns(c, 16);
  EXPECT_EQ(std::count(f.begin(), f.end(), 2.5), 4);
  EXPECT_EQ(std::count(f.begin(), f.end(), 1.0), 12);
  c.seed = 2;
  EXPECT_NE(persistent_slowdowns(c, 16), f) << "another seed picks other workers";
}

TEST(StragglerModels, NoiseHasMeanOneAndTheConfiguredSpread) {
  StragglerConfig c;
  c.noise_cv = 0.2;
  double sum = 0.0, sq = 0.0;
  const int n = 40'000;
  for (int i = 0; i < n; ++i) {
    const double x = step_noise(c, i % 8, i / 8);
    sum += x;
    sq += x * x;
  }
  const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 1.0, 0.005);
  EXPECT_NEAR(sd / mean, 0.2, 0.005);
  EXPECT_EQ(step_noise(c, 3, 17), step_noise(c, 3, 17));
}

TEST(StragglerModels, TransientEpisodesFollowTheirLaws) {
  StragglerConfig c;
  c.transient_rate_per_s = 0.5;
  c.transient_mean_duration_s = 0.2;
  c.transient_min_slowdown = 1.5;
  c.transient_max_slowdown = 6.0;
  double busy = 0.0;
  int64_t count = 0, capped = 0;
  for (int w = 0; w < 20; ++w) {
    const auto episodes = transient_episodes(c, w, 1000.0);
    for (size_t i = 0; i < episodes.size(); ++i) {
      const Episode& e = episodes[i];
      ASSERT_GE(e.slowdown, 1.5);
      ASSERT_LE(e.slowdown, 6.0);
      if (i > 0) {
        ASSERT_GE(e.start, episodes[i - 1].end) << "episodes do not overlap";
      }
      busy += e.end - e.start;
      capped += e.slowdown == 6.0;
    }
    count += static_cast<int64_t>(episodes.size());
  }
  // Gaps of mean 2 s and episodes of mean 0.2 s: about 1000 / 2.2 episodes a worker.
  EXPECT_NEAR(static_cast<double>(count) / 20, 1000 / 2.2, 20);
  EXPECT_NEAR(busy / count, 0.2, 0.02);
  // Pareto(1.5, alpha 2): P(X > 6) = (1.5 / 6)^2 = 1/16 of the episodes hit the cap.
  EXPECT_NEAR(static_cast<double>(capped) / count, 1.0 / 16, 0.015);
}

}  // namespace
}  // namespace gbasim

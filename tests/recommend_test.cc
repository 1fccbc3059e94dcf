// The comparison's recommendation (study/compare.h) as a pure function of each mode's paired
// runs: the fastest mode within the AUC tolerance of sync, and sync unless that one is faster
// beyond the noise.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "study/compare.h"

namespace gbasim {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

ModeRuns runs(const std::string& mode, std::vector<double> times, std::vector<double> aucs) {
  ModeRuns r;
  r.mode = mode;
  r.time_to_auc = std::move(times);
  r.final_auc = std::move(aucs);
  return r;
}

Recommendation pick(const std::vector<ModeRuns>& all, double tolerance = 1e-3) {
  std::vector<std::string> modes;
  std::map<std::string, ModeRuns> by_mode;
  for (const ModeRuns& r : all) {
    modes.push_back(r.mode);
    by_mode[r.mode] = r;
  }
  return recommend(modes, by_mode, static_cast<int>(all.front().time_to_auc.size()), tolerance,
                   0.75);
}

TEST(Recommend, GbaFasterBeyondTheNoiseWithinTheToleranceIsPicked) {
  const Recommendation r = pick({runs("sync", {2.0, 2.2, 2.4}, {0.760, 0.761, 0.762}),
                                 runs("gba", {1.0, 1.1, 1.3}, {0.7600, 0.7605, 0.7612})});
  EXPECT_EQ(r.pick, "gba");
  EXPECT_NE(r.why.find("gba: reaches AUC 0.75 in 1.13 s against sync's 2.20 s"), std::string::npos)
      << r.why;
}

TEST(Recommend, AFasterModeWithinTheNoiseLeavesSync) {
  // Paired differences -0.5, +0.4, -0.3: the interval spans 0.
  const Recommendation r = pick({runs("sync", {2.0, 2.0, 2.0}, {0.76, 0.76, 0.76}),
                                 runs("gba", {1.5, 2.4, 1.7}, {0.76, 0.76, 0.76})});
  EXPECT_EQ(r.pick, "sync");
  EXPECT_NE(r.why.find("no mode reached the target faster beyond the noise"), std::string::npos);
}

TEST(Recommend, AModeBelowSyncsAucBeyondTheToleranceIsRuledOutAndNamed) {
  const Recommendation r = pick({runs("sync", {2.0, 2.2, 2.4}, {0.760, 0.761, 0.762}),
                                 runs("async", {0.5, 0.6, 0.7}, {0.750, 0.751, 0.752}),
                                 runs("gba", {1.0, 1.1, 1.3}, {0.760, 0.761, 0.762})});
  EXPECT_EQ(r.pick, "gba");
  EXPECT_NE(r.why.find("async reached it sooner (0.60 s) but its final AUC differs from sync's"),
            std::string::npos)
      << r.why;
}

TEST(Recommend, AModeThatMissedTheTargetOnASeedIsNotPicked) {
  const Recommendation r = pick({runs("sync", {2.0, 2.2, 2.4}, {0.760, 0.761, 0.762}),
                                 runs("gba", {1.0, kNaN, 1.3}, {0.760, 0.761, 0.762})});
  EXPECT_EQ(r.pick, "sync");
}

TEST(Recommend, NoModeReachingTheTargetOnEverySeedPicksNothing) {
  const Recommendation r = pick({runs("sync", {2.0, kNaN}, {0.76, 0.76}),
                                 runs("gba", {kNaN, 1.0}, {0.76, 0.76})});
  EXPECT_EQ(r.pick, "");
  EXPECT_EQ(r.why, "no mode reached AUC 0.75 on every seed");
}

TEST(Recommend, WithoutSyncTheFastestIsPickedAndTheSentenceSaysSyncDidNotRun) {
  const Recommendation r = pick({runs("async", {1.5, 1.6}, {0.70, 0.70}),
                                 runs("gba", {1.0, 1.1}, {0.76, 0.76})});
  EXPECT_EQ(r.pick, "gba");
  EXPECT_NE(r.why.find("sync did not run"), std::string::npos) << r.why;
}

}  // namespace
}  // namespace gbasim

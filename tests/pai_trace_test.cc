#include "traces/pai_trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/temp_file.h"

namespace gbasim {
namespace {

std::string error_of(const std::string& text) {
  const TempFile file(text);
  try {
    read_pai_trace(file.path());
  } catch (const InputError& e) {
    std::string message = e.what();
    return message.substr(message.find(".csv") + 4);
  }
  return "no error";
}

// Three workers; worker 2 is three, then two, then one times the median.
const char* kTrace =
    ",worker,gpu,time,batch_time_norm\n"
    "0,0,25,1,100\n1,1,25,1,100\n2,2,25,1,300\n"
    "3,0,25,11,100\n4,1,25,11,100\n5,2,25,11,200\n"
    "6,0,25,21,100\n7,1,25,21,\n8,2,25,21,100\n";

TEST(PaiTrace, SlowdownsAreTimesOverTheMedianWorker) {
  const TempFile file(kTrace);
  const PaiTrace trace = read_pai_trace(file.path());
  ASSERT_EQ(trace.workers.size(), 3u);
  EXPECT_EQ(trace.samples, 8);
  EXPECT_EQ(trace.invalid_samples, 1) << "an empty time is a gap";
  EXPECT_EQ(trace.workers[2].slowdowns, (std::vector<double>{3.0, 2.0, 1.0}));
  EXPECT_EQ(trace.workers[1].iterations, (std::vector<int64_t>{1, 11}));
  // At iteration 21 only workers 0 and 2 remain, both at 100: the median is 100.
  EXPECT_EQ(trace.workers[0].slowdowns.back(), 1.0);
}

TEST(PaiTrace, GapsAreInterpolatedAndTheEndsHeld) {
  const TempFile file(kTrace);
  const PaiTrace trace = read_pai_trace(file.path());
  const WorkerSlowdowns& w = trace.workers[2];
  EXPECT_DOUBLE_EQ(slowdown_at(w, 1), 3.0);
  EXPECT_DOUBLE_EQ(slowdown_at(w, 6), 2.5);
  EXPECT_DOUBLE_EQ(slowdown_at(w, 16), 1.5);
  EXPECT_DOUBLE_EQ(slowdown_at(w, -5), 3.0);
  EXPECT_DOUBLE_EQ(slowdown_at(w, 500), 1.0);
}

TEST(PaiTrace, MalformedRowsNameTheLine) {
  EXPECT_EQ(error_of(",worker,gpu,time\n"), ":1: no 'batch_time_norm' column in the header");
  EXPECT_EQ(error_of(",worker,gpu,time,batch_time_norm\n0,0,25,1,100\n1,1,25\n"),
            ":3: expected 5 columns, found 3");
  EXPECT_EQ(error_of(",worker,gpu,time,batch_time_norm\n0,x,25,1,100\n"),
            ":2: worker must be a non-negative integer, got 'x'");
  EXPECT_EQ(error_of(",worker,gpu,time,batch_time_norm\n0,0,25,1,fast\n"),
            ":2: batch_time_norm must be a number up to 1e12, got 'fast'");
  // Infinite or overflowing times once made a run whose clock never ended.
  for (const char* value : {"inf", "nan", "1e400", "1e300"}) {
    EXPECT_EQ(error_of(std::string(",worker,gpu,time,batch_time_norm\n0,0,25,1,") + value + "\n"),
              std::string(":2: batch_time_norm must be a number up to 1e12, got '") + value + "'");
  }
  EXPECT_EQ(error_of(",worker,gpu,time,batch_time_norm\n0,0,25,1,-3\n"), ": no valid samples");
}

TEST(PaiTrace, StatsFindEpisodesAndSpread) {
  const TempFile file(kTrace);
  const TraceStats stats = trace_stats(read_pai_trace(file.path()), 1.5);
  EXPECT_EQ(stats.first_iteration, 1);
  EXPECT_EQ(stats.last_iteration, 21);
  ASSERT_EQ(stats.episodes.size(), 1u);
  EXPECT_EQ(stats.episodes[0].worker, 2);
  EXPECT_EQ(stats.episodes[0].first_iteration, 1);
  EXPECT_EQ(stats.episodes[0].last_iteration, 11);
  EXPECT_DOUBLE_EQ(stats.episodes[0].mean, 2.5);
  EXPECT_DOUBLE_EQ(stats.episodes[0].peak, 3.0);
  EXPECT_DOUBLE_EQ(stats.workers[2].max, 3.0);
  // CVs across workers: iteration 1 (1, 1, 3) 0.566, iteration 11 (1, 1, 2) 0.354,
  // iteration 21 (1, 1) 0; quantiles take the lower of the two nearest ranks.
  EXPECT_NEAR(stats.cv_median, 0.3536, 1e-4);
  EXPECT_NEAR(stats.cv_p90, 0.3536, 1e-4);
}

TEST(TraceReplay, MapsWorkersInOrderOrShuffledAndWraps) {
  const TempFile file(kTrace);
  const TraceReplay in_order(read_pai_trace(file.path()), "in_order", {}, 0, 5, 1);
  EXPECT_EQ(in_order.assignment(), (std::vector<int>{0, 1, 2, 0, 1}));
  EXPECT_TRUE(in_order.wraps());
  EXPECT_DOUBLE_EQ(in_order.slowdown(2, 0), 3.0);
  EXPECT_DOUBLE_EQ(in_order.slowdown(2, 5), 2.5);
  const TraceReplay offset(read_pai_trace(file.path()), "in_order", {}, 10, 3, 1);
  EXPECT_DOUBLE_EQ(offset.slowdown(2, 0), 2.0);
  const TraceReplay a(read_pai_trace(file.path()), "random", {}, 0, 3, 7),
      b(read_pai_trace(file.path()), "random", {}, 0, 3, 7);
  EXPECT_EQ(a.assignment(), b.assignment());
  std::vector<int> sorted = a.assignment();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(a.wraps());
  EXPECT_THROW(TraceReplay(read_pai_trace(file.path()), "bogus", {}, 0, 3, 1), InputError);
  const TraceReplay chosen(read_pai_trace(file.path()), "explicit", {"2", "0"}, 0, 3, 1);
  EXPECT_EQ(chosen.assignment(), (std::vector<int>{2, 0, 2}));
  EXPECT_TRUE(chosen.wraps());
  EXPECT_DOUBLE_EQ(chosen.slowdown(0, 0), 3.0);
  EXPECT_THROW(TraceReplay(read_pai_trace(file.path()), "explicit", {"7"}, 0, 3, 1), InputError);
  EXPECT_THROW(TraceReplay(read_pai_trace(file.path()), "explicit", {}, 0, 3, 1), InputError);
}

TEST(TraceReplay, IntensityScalesEachDepartureFromTheMedian) {
  const TempFile file(kTrace);
  auto replay = [&](double intensity) {
    return TraceReplay(read_pai_trace(file.path()), "in_order", {}, 0, 3, 1, intensity);
  };
  EXPECT_DOUBLE_EQ(replay(0).slowdown(2, 0), 1.0);  // no straggler
  EXPECT_DOUBLE_EQ(replay(0).slowdown(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(replay(0.5).slowdown(2, 0), 2.0);  // 1 + 0.5 x (3 - 1)
  EXPECT_DOUBLE_EQ(replay(2).slowdown(2, 0), 5.0);
  EXPECT_DOUBLE_EQ(replay(2).slowdown(2, 5), 4.0);  // 1 + 2 x (2.5 - 1)
  EXPECT_DOUBLE_EQ(replay(2).slowdown(0, 0), 1.0);  // the median worker stays
  // A worker faster than the median goes faster still, but never below the floor.
  const TempFile fast(
      ",worker,gpu,time,batch_time_norm\n0,0,25,1,50\n1,1,25,1,100\n2,2,25,1,100\n");
  const TraceReplay strong(read_pai_trace(fast.path()), "in_order", {}, 0, 3, 1, 3.0);
  EXPECT_DOUBLE_EQ(strong.slowdown(0, 0), TraceReplay::kMinSlowdown);  // 1 + 3 x (0.5 - 1) < 0.1
  const TraceReplay mild(read_pai_trace(fast.path()), "in_order", {}, 0, 3, 1, 0.5);
  EXPECT_DOUBLE_EQ(mild.slowdown(0, 0), 0.75);
}

}  // namespace
}  // namespace gbasim

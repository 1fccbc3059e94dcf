#include "traces/usage_trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "traces/pai_trace.h"
#include "traces/trace_mapping.h"

#include "tests/temp_file.h"

namespace gbasim {
namespace {

// The error's text after the file name, or "no error".
std::string error_of(const std::string& text, const std::string& format) {
  const TempFile file(text);
  try {
    read_usage_trace(file.path(), format, {});
  } catch (const InputError& e) {
    std::string message = e.what();
    return message.substr(message.find(".csv") + 4);
  }
  return "no error";
}

// machine_id, time_stamp, cpu, mem, mem_gps, mkpi, net_in, net_out, disk_io.
const char* kV2018 =
    "m_2,10,40,90,,,20,60,5\n"
    "m_1,0,10,90,3,1,5,5,5\n"
    "m_2,0,101,90,,,-1,30,5\n"  // invalid cpu and net_in
    "m_1,10,,90,3,1,,,5\n"      // empty cpu and network
    "m_2,20,-1,90,,,10,,5\n"
    "m_1,20,50,90,3,1,100,0,5\n";

TEST(UsageTrace, ReadsAlibaba2018AndMapsUtilisationToFactors) {
  const TempFile file(kV2018);
  const UsageTrace t = read_usage_trace(file.path(), "alibaba-v2018", {});
  ASSERT_EQ(t.machines.size(), 2u);
  EXPECT_EQ(t.machines[0].machine, "m_2");  // first appearance
  EXPECT_EQ(t.rows, 6);
  EXPECT_DOUBLE_EQ(t.first_time, 0.0);
  // Invalid: m_2 cpu 101 and net_in -1; m_1 cpu, net_in and net_out empty; m_2 cpu -1 and
  // net_out empty.
  EXPECT_EQ(t.invalid_values, 7);
  const MachineUsage& m2 = t.machines[0];
  EXPECT_EQ(m2.speed.times, (std::vector<double>{10}));
  EXPECT_EQ(m2.speed.values, (std::vector<double>{0.6}));
  // net max(-, 30) at 0, max(20, 60) at 10, max(10, -) at 20.
  EXPECT_EQ(m2.bandwidth.times, (std::vector<double>{0, 10, 20}));
  EXPECT_NEAR(m2.bandwidth.values[0], 0.7, 1e-12);
  EXPECT_NEAR(m2.bandwidth.values[1], 0.4, 1e-12);
  EXPECT_NEAR(m2.bandwidth.values[2], 0.9, 1e-12);
  const MachineUsage& m1 = t.machines[1];
  EXPECT_EQ(m1.speed.times, (std::vector<double>{0, 20}));
  EXPECT_NEAR(m1.speed.values[0], 0.9, 1e-12);
  EXPECT_NEAR(m1.speed.values[1], 0.5, 1e-12);
  // Fully busy network: the floor.
  EXPECT_DOUBLE_EQ(m1.bandwidth.values.back(), 0.05);
}

TEST(UsageTrace, MappingSharesAndFloorsAreApplied) {
  const TempFile file(kV2018);
  const UsageTrace t =
      read_usage_trace(file.path(), "alibaba-v2018", {0.5, 0.8, 0.0, 0.05}, {"m_1"});
  ASSERT_EQ(t.machines.size(), 1u);
  EXPECT_EQ(t.rows, 6);                                     // every row is read, only m_1 is kept
  EXPECT_NEAR(t.machines[0].speed.values[0], 0.95, 1e-12);  // 1 - 0.5 x 0.1
  EXPECT_NEAR(t.machines[0].speed.values[1], 0.8, 1e-12);   // 0.75, floored at 0.8
  for (double b : t.machines[0].bandwidth.values) EXPECT_DOUBLE_EQ(b, 1.0);
  EXPECT_THROW(read_usage_trace(file.path(), "alibaba-v2018", {}, {"m_9"}), InputError);
}

TEST(UsageTrace, ReadsAlibaba2017WithoutNetwork) {
  // timestamp, machine id, cpu, mem, disk, load1, load5, load15.
  const TempFile file("39600,7,25.5,40,10,1,1,1\n39300,7,50,40,10,1,1,1\n39300,8,,40,10,1,1,1\n");
  const UsageTrace t = read_usage_trace(file.path(), "alibaba-v2017", {});
  ASSERT_EQ(t.machines.size(), 2u);
  EXPECT_DOUBLE_EQ(t.first_time, 39300);
  EXPECT_EQ(t.machines[0].speed.times, (std::vector<double>{39300, 39600}));
  EXPECT_NEAR(t.machines[0].speed.values[0], 0.5, 1e-12);
  EXPECT_NEAR(t.machines[0].speed.values[1], 0.745, 1e-12);
  EXPECT_TRUE(t.machines[0].bandwidth.times.empty());
  EXPECT_TRUE(t.machines[1].speed.times.empty());
  EXPECT_EQ(t.invalid_values, 1);
}

TEST(UsageTrace, ReadsGenericColumnsByName) {
  const TempFile file(
      "time,bandwidth_factor,host,speed_factor\n"
      "0,1,a,1\n5,0.5,a,0.25\n5,,a,0.5\n0,,b,2\n");
  const UsageTrace t = read_usage_trace(file.path(), "generic", {});
  ASSERT_EQ(t.machines.size(), 2u);
  EXPECT_EQ(t.machines[0].speed.values, (std::vector<double>{1, 0.5}));  // the later row wins
  EXPECT_EQ(t.machines[0].bandwidth.values, (std::vector<double>{1, 0.5}));
  EXPECT_EQ(t.machines[1].speed.values, (std::vector<double>{2}));
  EXPECT_EQ(t.invalid_values, 2);
  const TempFile no_bandwidth("host,time,speed_factor\na,0,0.5\n");
  EXPECT_TRUE(
      read_usage_trace(no_bandwidth.path(), "generic", {}).machines[0].bandwidth.times.empty());
}

TEST(UsageTrace, MalformedRowsNameFileAndLine) {
  EXPECT_EQ(error_of("m_1,0,10,90,3,1,5,5\n", "alibaba-v2018"), ":1: expected 9 columns, found 8");
  EXPECT_EQ(error_of("m_1,0,10,90,3,1,5,5,5\nm_1,x,10,90,3,1,5,5,5\n", "alibaba-v2018"),
            ":2: the time stamp must be a number of seconds up to 1e12, got 'x'");
  EXPECT_EQ(error_of("m_1,0,ten,90,3,1,5,5,5\n", "alibaba-v2018"),
            ":1: column 3 is not a number: 'ten'");
  EXPECT_EQ(error_of(",0,10,90,3,1,5,5,5\n", "alibaba-v2018"), ":1: the machine id is empty");
  EXPECT_EQ(error_of("host,time\na,0\n", "generic"), ":1: no 'speed_factor' column in the header");
  EXPECT_EQ(error_of("host,time,speed_factor\na,0,1\n\na,1,0\n", "generic"),
            ":4: speed_factor must be a number in [1e-6, 1000], got '0'");
  EXPECT_EQ(error_of("host,time,speed_factor\na,0,inf\n", "generic"),
            ":2: speed_factor must be a number in [1e-6, 1000], got 'inf'");
  EXPECT_EQ(error_of("m_1,1e400,10,90,3,1,5,5,5\n", "alibaba-v2018"),
            ":1: the time stamp must be a number of seconds up to 1e12, got '1e400'");
  EXPECT_EQ(error_of("", "alibaba-v2017"), ": no rows");
  EXPECT_THROW(read_usage_trace("/nonexistent/usage.csv", "generic", {}), InputError);
  EXPECT_THROW(read_usage_trace("/nonexistent/usage.csv", "bogus", {}), InputError);
}

TEST(UsageTrace, IndexListsMachinesInOrderOfAppearance) {
  const TempFile file(kV2018);
  const UsageIndex index = index_usage_trace(file.path(), "alibaba-v2018");
  EXPECT_EQ(index.machines, (std::vector<std::string>{"m_2", "m_1"}));
  EXPECT_DOUBLE_EQ(index.first_time, 0.0);
}

TEST(UsageTrace, StepValuesHoldAndReplayScalesTime) {
  const StepSeries s{{100, 110, 120, 130}, {0.5, 0.5, 0.25, 1.0}};
  EXPECT_DOUBLE_EQ(value_at(s, 50), 0.5);
  EXPECT_DOUBLE_EQ(value_at(s, 119.9), 0.5);
  EXPECT_DOUBLE_EQ(value_at(s, 120), 0.25);
  EXPECT_DOUBLE_EQ(value_at(s, 1e9), 1.0);
  EXPECT_DOUBLE_EQ(value_at(StepSeries{}, 3), 1.0);
  // Trace time 100 + 5 + 10 t is simulated time t; equal values make no change.
  const auto changes = replay_changes(s, 100, 5, 10);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0], std::make_pair(0.0, 0.5));
  EXPECT_DOUBLE_EQ(changes[1].first, 1.5);
  EXPECT_DOUBLE_EQ(changes[1].second, 0.25);
  EXPECT_DOUBLE_EQ(changes[2].first, 2.5);
  // An offset past a change starts from the value then in force.
  EXPECT_EQ(replay_changes(s, 100, 25, 1)[0], std::make_pair(0.0, 0.25));
}

TEST(UsageTrace, StatsSeeSlowdownsSpreadAndEpisodes) {
  // Machine a: speed 1, 0.5, 0.25, 1 at times 0, 10, 20, 30; b: speed 1 throughout.
  const TempFile file(
      "host,time,speed_factor,bandwidth_factor\n"
      "a,0,1,1\na,10,0.5,0.5\na,20,0.25,\na,30,1,\nb,0,1,\nb,30,1,\n");
  const UsageStats stats = usage_stats(read_usage_trace(file.path(), "generic", {}), 2.0);
  EXPECT_DOUBLE_EQ(stats.first_time, 0);
  EXPECT_DOUBLE_EQ(stats.last_time, 30);
  ASSERT_EQ(stats.machines.size(), 2u);
  const auto& a = stats.machines[0];
  EXPECT_EQ(a.speed_samples, 4);
  EXPECT_EQ(a.bandwidth_samples, 2);
  EXPECT_DOUBLE_EQ(a.slowdown_q50, 1.0);  // lower of ranks: (1, 1, 2, 4)
  EXPECT_DOUBLE_EQ(a.slowdown_max, 4.0);
  EXPECT_DOUBLE_EQ(a.bandwidth_min, 0.5);
  // One episode at or above 2: times 10..20, slowdowns 2 and 4.
  ASSERT_EQ(stats.episodes.size(), 1u);
  EXPECT_EQ(stats.episodes[0].machine, "a");
  EXPECT_DOUBLE_EQ(stats.episodes[0].first_time, 10);
  EXPECT_DOUBLE_EQ(stats.episodes[0].last_time, 20);
  EXPECT_DOUBLE_EQ(stats.episodes[0].mean, 3.0);
  EXPECT_DOUBLE_EQ(stats.episodes[0].peak, 4.0);
  // CV across (a, b) at times 0, 10, 20, 30: 0, 1/3, 3/5, 0; lower median 0, p90 1/3.
  EXPECT_DOUBLE_EQ(stats.cv_median, 0.0);
  EXPECT_NEAR(stats.cv_p90, 1.0 / 3.0, 1e-12);
}

TEST(TraceMapping, InOrderRandomAndExplicit) {
  const std::vector<std::string> ids{"a", "b", "c"};
  EXPECT_EQ(assign_trace_series(ids, "in_order", {}, 4, 1), (std::vector<size_t>{0, 1, 2, 0}));
  const auto r = assign_trace_series(ids, "random", {}, 3, 5);
  EXPECT_EQ(r, assign_trace_series(ids, "random", {}, 3, 5));
  std::vector<size_t> sorted = r;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(assign_trace_series(ids, "explicit", {"c", "a"}, 3, 1), (std::vector<size_t>{2, 0, 2}));
  EXPECT_THROW(assign_trace_series(ids, "explicit", {"d"}, 3, 1), InputError);
  EXPECT_THROW(assign_trace_series(ids, "sideways", {}, 3, 1), InputError);
  EXPECT_THROW(assign_trace_series({}, "in_order", {}, 3, 1), InputError);
}

}  // namespace
}  // namespace gbasim

// The server models, how a run ends (divergence, a stall, the watchdog), failures, and a short
// run that learns in every mode.
// SimGrid allows one engine per process: CTest runs each of these tests in a process of
// its own (gtest_discover_tests), which is how they must be run.
#include "sim/simulation.h"

#include <gtest/gtest.h>
#include <xbt/log.h>
#include <simgrid/s4u.hpp>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <random>

#include "models/layers.h"
#include "models/synthetic.h"
#include "sim/batch_rows.h"
#include "sim/cluster.h"
#include "sim/messages.h"
#include "tests/simulation_fixtures.h"

namespace gbasim {
namespace {

// Async, two workers, a server that takes 1 s per push, compute and network next to nothing.
ExperimentSpec saturated_server() {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 2);
  s.data.synthetic.train_samples = 64 * 40;
  s.cluster.nic_latency = 0.0;
  s.cluster.nic_bandwidth = 1e15;
  s.cost.server_flops_per_push = s.cluster.ps_speed;  // one second
  s.cost.update_flops_per_value = 0.0;
  return s;
}

// A worker's token is taken as soon as its push is acknowledged (after its update), so the
// other worker's push always lands in between: staleness 1 after the first (40 updates
// reach the budget; the other worker's push, in flight then, is taken in too: 41 s).
TEST(Simulation, SeparateAdmissionsTakeTheTokenAfterTheUpdate) {
  const auto result = simulate(saturated_server());
  EXPECT_EQ(result["staleness_histogram"], nlohmann::json::parse("[[0, 1], [1, 40]]"))
      << result["staleness_histogram"];
  EXPECT_NEAR(result["summary"]["simulated_time"].get<double>(), 41.0, 1e-3);
}

// With one queue (gbasim-mpi's server) the request waits behind the other worker's push,
// already queued: pushes 2k and 2k + 1 are computed on the same parameters, staleness 0
// then 1. The 40th update comes with both requests queued behind it: they are told to
// stop, and nothing is in flight (40 s).
TEST(Simulation, OneQueueServerTakesTheTokenWhenItServesTheRequest) {
  ExperimentSpec s = saturated_server();
  s.cluster.server_model = ServerModel::kOneQueue;
  const auto result = simulate(s);
  EXPECT_EQ(result["staleness_histogram"], nlohmann::json::parse("[[0, 20], [1, 20]]"))
      << result["staleness_histogram"];
  EXPECT_NEAR(result["summary"]["simulated_time"].get<double>(), 40.0, 1e-3);
}

// Messages flow to the sharded server while it works: a notice sent during another push's
// update waits in the server's mailbox and is taken in the moment that update is done, not a
// notice latency (2 x 10 ms, one NIC each way) later. So the saturated server's updates,
// 1 s of work each, follow one another exactly 1 s apart, and each of the two workers pushes
// every 2 s (a notice that waited for the server's get would make that 2.04 s). It also
// keeps a worker's next admission apart from the next update: the acknowledgement arrives
// 20 ms after that update began, never at the same instant, which SimGrid's solver settings
// would order either way.
TEST(Simulation, ASaturatedShardedServerTakesQueuedNoticesWithoutTheirLatency) {
  ExperimentSpec s = saturated_server();
  s.cluster.nic_latency = 0.01;
  const auto result = simulate(s);
  for (int w = 0; w < 2; ++w) {
    const auto& ends = result["workers"][w]["step_ends"];
    ASSERT_GE(ends.size(), 10u);
    for (size_t k = 1; k < ends.size(); ++k)
      EXPECT_NEAR(ends[k].get<double>() - ends[k - 1].get<double>(), 2.0, 1e-9)
          << "worker " << w << ", step " << k;
  }
  const double first = result["workers"][1]["step_ends"][0].get<double>();
  const double second = result["workers"][0]["step_ends"][0].get<double>();
  EXPECT_NEAR(second - first, 1.0, 1e-9);
  EXPECT_EQ(result["staleness_histogram"], nlohmann::json::parse("[[0, 1], [1, 40]]"))
      << result["staleness_histogram"];
}

// Served in a random order of what has arrived, the saturated server still takes 1 s a push
// and is never idle (the run lasts 1 s per push taken: the 40 of the budget, and one more
// when a push is queued when the 40th update is done), and the order differs from arrival
// order.
TEST(Simulation, RandomServiceOrderKeepsTheServerBusyAndShufflesStaleness) {
  ExperimentSpec s = saturated_server();
  s.cluster.server_model = ServerModel::kOneQueue;
  s.cluster.ps_service_seed = 1;
  const auto result = simulate(s);
  int64_t taken = 0;
  for (const auto& bin : result["staleness_histogram"]) taken += bin[1].get<int64_t>();
  EXPECT_GE(taken, 40);
  EXPECT_LE(taken, 41);
  EXPECT_NEAR(result["summary"]["simulated_time"].get<double>(), static_cast<double>(taken), 1e-3);
  EXPECT_NE(result["staleness_histogram"], nlohmann::json::parse("[[0, 20], [1, 20]]"))
      << result["staleness_histogram"];
}

// Runs that cannot finish end with a status instead of hanging (a NaN model once made the AUC
// loop forever; a worker that never finishes its step made the evaluator snapshot forever).
TEST(Simulation, ADivergedModelEndsTheRunWithItsStatus) {
  ExperimentSpec s = short_run(Mode::kGBA, 1.0);
  s.optimizer.learning_rate = 1e30;
  s.evaluation.interval_s = 0.01;
  const auto result = simulate(s);
  const auto& summary = result["summary"];
  EXPECT_EQ(summary["status"], "diverged");
  EXPECT_LT(summary["samples"].get<int64_t>(), 60'000) << "the run must stop at the divergence";
  EXPECT_NE(summary["status_detail"].get<std::string>().find("not finite"), std::string::npos);
}

TEST(Simulation, AStalledRunEndsAfterItsEvaluationsWithoutProgress) {
  ExperimentSpec s = short_run(Mode::kSync, 1.0);
  s.cluster.worker_groups = {{3, s.cluster.worker_speed}, {1, 1e3}};  // a step of hours
  s.evaluation.interval_s = 0.01;
  s.simulation.stall_evaluations = 20;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "stalled");
  EXPECT_EQ(result["summary"]["global_steps"], 0);
  // Twenty evaluations without an update after the last one that saw the step move (none).
  EXPECT_NEAR(result["summary"]["simulated_time"].get<double>(), 0.2, 1e-9);
}

TEST(Simulation, TheWatchdogEndsARunAtItsSimulatedTimeLimit) {
  ExperimentSpec s = short_run(Mode::kAsync, 1.0);
  s.simulation.max_simulated_s = 0.01;  // the whole run takes 0.038 s
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "time limit");
  EXPECT_DOUBLE_EQ(result["summary"]["simulated_time"].get<double>(), 0.01);
  EXPECT_GT(result["summary"]["global_steps"].get<int64_t>(), 0);
}

// stragglers.failures in sync: a worker that fails stops computing, is down restart_s, and
// computes the step again; the step waits for it. Replayed here from the same failure draws
// (WorkerFailures): a failure that falls outside a compute (in the ring) stops the worker
// when its next compute starts. Each step ends when the last worker's compute is done, plus
// the ring.
TEST(Failures, SyncStallsUntilTheFailedWorkerIsBackAndHasComputedAgain) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  const int steps = 8;
  s.budget.max_samples = 2 * 64 * steps;
  const TwoWorkerRing ring(s, steps);
  s.stragglers.failure_rate_per_s = 0.2 / ring.compute;
  s.stragglers.failure_restart_s = 1.5 * ring.compute;
  const auto result = simulate(s);

  std::vector<WorkerFailures> draws = {WorkerFailures(s.stragglers, 0),
                                       WorkerFailures(s.stragglers, 1)};
  std::vector<std::vector<double>> times(2);
  double end = 0.0, lost = 0.0;
  const auto& ends = result["workers"][0]["step_ends"];
  ASSERT_EQ(ends.size(), static_cast<size_t>(steps));
  for (int k = 0; k < steps; ++k) {
    double last_compute_done = 0.0;
    for (int w = 0; w < 2; ++w) {
      double start = end;
      while (draws[w].next() < start + ring.compute) {
        const double stop = std::max(draws[w].next(), start);
        times[w].push_back(stop);
        lost += stop - start;
        start = stop + s.stragglers.failure_restart_s;
        draws[w].back(start);
      }
      last_compute_done = std::max(last_compute_done, start + ring.compute);
    }
    end = last_compute_done + ring.comm(k);
    EXPECT_NEAR(ends[k].get<double>(), end, 1e-9 * end) << "step " << k;
  }
  ASSERT_GE(times[0].size() + times[1].size(), 2u) << "the test needs failures to check";
  for (int w = 0; w < 2; ++w) {
    const auto& got = result["workers"][w]["failure_times"];
    ASSERT_EQ(got.size(), times[w].size()) << "worker " << w;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i].get<double>(), times[w][i], 1e-9) << "worker " << w << " failure " << i;
  }
  const auto& f = result["failures"];
  EXPECT_EQ(f["worker_failures"], times[0].size() + times[1].size());
  EXPECT_EQ(f["tokens_lost"], 0) << "a sync worker keeps its step";
  EXPECT_NEAR(f["lost_compute_s"].get<double>(), lost, 1e-9);
  EXPECT_NEAR(
      f["down_s"].get<double>(),
      static_cast<double>(times[0].size() + times[1].size()) * s.stragglers.failure_restart_s,
      1e-9);
  EXPECT_EQ(result["summary"]["global_steps"], steps);
}

// One failure every 20 computes or so, a restart of 3 computes, on the short run.
ExperimentSpec failing_run(Mode mode) {
  ExperimentSpec s = short_run(mode, 1.0);
  const double compute = TwoWorkerRing(s, 0).compute;
  s.stragglers.failure_rate_per_s = 0.05 / compute;
  s.stragglers.failure_restart_s = 3.0 * compute;
  return s;
}

// GBA: a failed worker's token disappears and the others fill the global batch, so every
// update still sums G = 4 x 64 samples, and the run learns as it would.
TEST(Failures, GbaLosesTheFailedWorkersTokenAndEveryUpdateStillHasTheGlobalBatch) {
  const ExperimentSpec s = failing_run(Mode::kGBA);
  const auto result = simulate(s);
  const auto& summary = result["summary"];
  EXPECT_EQ(summary["status"], "completed");
  const auto& f = result["failures"];
  EXPECT_GE(f["worker_failures"].get<int64_t>(), 5);
  EXPECT_EQ(f["tokens_lost"], f["worker_failures"]);
  EXPECT_EQ(summary["samples"].get<int64_t>(), summary["global_steps"].get<int64_t>() * 4 * 64);
  EXPECT_GT(summary["final_auc"].get<double>(), 0.6);
  int64_t stops = 0;
  for (const auto& w : result["workers"]) stops += static_cast<int64_t>(w["failure_times"].size());
  EXPECT_EQ(stops, f["worker_failures"].get<int64_t>());
}

// Every server mode runs to its end with failing workers: each failure loses its token, and
// bounded staleness still keeps every worker within the bound of the slowest.
class FailuresInEveryServerMode : public ::testing::TestWithParam<Mode> {};

TEST_P(FailuresInEveryServerMode, EveryFailureLosesItsTokenAndTheRunEnds) {
  const ExperimentSpec s = failing_run(GetParam());
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "completed");
  EXPECT_GE(result["summary"]["samples"].get<int64_t>(), s.data.synthetic.train_samples);
  const auto& f = result["failures"];
  EXPECT_GE(f["worker_failures"].get<int64_t>(), 5);
  EXPECT_EQ(f["tokens_lost"], f["worker_failures"]);
  if (GetParam() == Mode::kBoundedStaleness) {
    EXPECT_LE(step_spread(result), s.training.staleness_bound + 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, FailuresInEveryServerMode,
                         ::testing::Values(Mode::kAsync, Mode::kGBA, Mode::kBoundedStaleness,
                                           Mode::kBackupWorkers),
                         [](const auto& info) { return mode_name(info.param); });

// A lost token during a switch's drain completes the drain as a returned one would.
TEST(Failures, ScheduledSwitchesGoThroughWithFailingWorkers) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 3);
  s.switching.at_steps = {{3, "gba"}, {8, "sync"}};
  s.budget.max_samples = 64 * 3 * 12;
  const double compute = TwoWorkerRing(s, 0).compute;
  s.stragglers.failure_rate_per_s = 0.3 / compute;
  s.stragglers.failure_restart_s = compute;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "completed");
  EXPECT_EQ(result["summary"]["global_steps"], 12);
  EXPECT_EQ(result["switching"]["events"].size(), 2u);
  EXPECT_GT(result["failures"]["tokens_lost"].get<int64_t>(), 0);
}

// The first parameter-server shard to fail ends the run there, with its status and the shard.
TEST(Failures, AServerShardFailureEndsTheRunWithItsStatus) {
  ExperimentSpec s = short_run(Mode::kGBA, 1.0);
  s.cluster.ps_shards = 2;
  s.stragglers.server_failure_rate_per_s = 20.0;
  const ServerFailure first = first_server_failure(s.stragglers, 2);
  const auto result = simulate(s);
  const auto& summary = result["summary"];
  EXPECT_EQ(summary["status"], "server failed");
  EXPECT_NE(
      summary["status_detail"].get<std::string>().find("shard " + std::to_string(first.shard)),
      std::string::npos);
  EXPECT_DOUBLE_EQ(summary["simulated_time"].get<double>(), first.time);
  EXPECT_EQ(result["failures"]["server"]["shard"], first.shard);
  EXPECT_LT(summary["samples"].get<int64_t>(), s.data.synthetic.train_samples);
}

// Sync with the rows on the workers has no server shard to fail.
TEST(Failures, AllReduceWithoutServersIgnoresServerFailures) {
  ExperimentSpec s = short_run(Mode::kSync, 1.0);
  s.stragglers.server_failure_rate_per_s = 20.0;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "completed");
  EXPECT_TRUE(result["failures"]["server"].is_null());
}

class EveryMode : public ::testing::TestWithParam<Mode> {};

TEST_P(EveryMode, AShortRunLearns) {
  ExperimentSpec s = short_run(GetParam(), 2.0);
  s.stragglers.noise_cv = 0.1;
  s.cluster.network_model = "LV08";
  s.cluster.ps_shards = 2;
  const auto result = simulate(s);
  const auto& summary = result["summary"];
  EXPECT_GT(summary["final_auc"].get<double>(), 0.6) << mode_name(GetParam());
  EXPECT_GE(summary["samples"].get<int64_t>(), 60'000);
  EXPECT_EQ(summary["status"], "completed");
  EXPECT_GT(result["curve"].size(), 2u);
  EXPECT_EQ(result["curve"][0]["time"], 0.0);
}

// Every server mode also runs to the end with one queue: refused requests wait in the
// server's queue and are served again after each update.
class EveryServerMode : public ::testing::TestWithParam<Mode> {};

TEST_P(EveryServerMode, AShortRunWithOneQueueLearns) {
  ExperimentSpec s = short_run(GetParam(), 3.0);
  s.cluster.server_model = ServerModel::kOneQueue;
  const auto result = simulate(s);
  EXPECT_GT(result["summary"]["final_auc"].get<double>(), 0.6) << mode_name(GetParam());
  EXPECT_GE(result["summary"]["samples"].get<int64_t>(), 60'000);
  if (GetParam() == Mode::kBoundedStaleness) {  // the 3x straggler holds the others back
    EXPECT_LE(step_spread(result), s.training.staleness_bound + 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, EveryMode,
                         ::testing::Values(Mode::kSync, Mode::kAsync, Mode::kGBA,
                                           Mode::kBoundedStaleness, Mode::kBackupWorkers),
                         [](const auto& info) { return mode_name(info.param); });

INSTANTIATE_TEST_SUITE_P(Modes, EveryServerMode,
                         ::testing::Values(Mode::kAsync, Mode::kGBA, Mode::kBoundedStaleness,
                                           Mode::kBackupWorkers),
                         [](const auto& info) { return mode_name(info.param); });

}  // namespace
}  // namespace gbasim

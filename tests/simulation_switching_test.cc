// Switching during a run: scheduled switches, worker pools and automatic switching.
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

// Scheduled sync -> GBA -> sync on a quiet cluster: the switches happen at the steps asked,
// and each model move takes what moving the whole model over the links costs (CM02).
TEST(Simulation, ScheduledSwitchesMoveTheModelAndKeepTraining) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 3);
  s.switching.at_steps = {{3, "gba"}, {8, "sync"}};
  s.budget.max_samples = 64 * 3 * 12;
  s.evaluation.interval_s = 1e-4;
  const auto result = simulate(s);
  const auto& sw = result["switching"];
  ASSERT_EQ(sw["events"].size(), 2u);
  EXPECT_EQ(sw["events"][0]["global_step"], 3);
  EXPECT_EQ(sw["events"][0]["from"], "sync");
  EXPECT_EQ(sw["events"][0]["to"], "gba");
  EXPECT_EQ(sw["events"][1]["global_step"], 8);
  EXPECT_EQ(sw["events"][1]["to"], "sync");
  EXPECT_EQ(sw["final_mode"], "sync");
  EXPECT_EQ(result["summary"]["global_steps"], 12);

  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  const Parameters params = model.init_parameters(s.seed);
  double values = static_cast<double>(params.dense.size());
  for (const auto& t : params.tables) values += static_cast<double>(t.size());
  const double bytes = 4.0 * values, latency = 2.0 * s.cluster.nic_latency,
               bandwidth = s.cluster.nic_bandwidth;
  ASSERT_EQ(sw["moves"].size(), 2u);
  const auto& up = sw["moves"][0];
  EXPECT_EQ(up["direction"], "to_parameter_servers");
  EXPECT_NEAR(up["end"].get<double>() - up["start"].get<double>(), latency + bytes / bandwidth,
              1e-9);
  // Back to the workers: the one server's link carries the model three times.
  const auto& down = sw["moves"][1];
  EXPECT_EQ(down["direction"], "to_workers");
  EXPECT_NEAR(down["end"].get<double>() - down["start"].get<double>(),
              latency + 3 * bytes / bandwidth, 1e-9);
  // The timeline names the mode in force at each snapshot.
  bool saw_gba = false;
  for (const auto& point : sw["status"]) saw_gba = saw_gba || point[1] == "gba";
  EXPECT_TRUE(saw_gba);
}

// Worker pools: sync on 2 workers of local batch 64 (G = 128), then GBA on a pool of 4 slower
// workers of local batch 32 (G / 32 = 4 gradients a step), then sync on that pool (4 x 32 =
// G): every step applies G samples; only the pool in force computes; the model goes to the
// servers, then back to the second pool's 4 workers.
TEST(Simulation, APoolSwitchKeepsTheGlobalBatchAndRunsOnThatPool) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cluster.pools = {PoolSpec{4, 32, 1e12}};
  s.switching.at_steps = {{3, "gba@1"}, {7, "sync"}};
  s.budget.max_samples = 128 * 10;
  s.evaluation.interval_s = 1e-4;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["global_steps"], 10);
  EXPECT_EQ(result["summary"]["samples"], 128 * 10);
  const auto& sw = result["switching"];
  ASSERT_EQ(sw["events"].size(), 2u);
  EXPECT_EQ(sw["events"][0]["to_pool"], 1);
  EXPECT_EQ(sw["events"][1]["from_pool"], 1);
  EXPECT_EQ(sw["events"][1]["to_pool"], 1);
  const auto& workers = result["workers"];
  ASSERT_EQ(workers.size(), 6u);
  int64_t first_pool = 0, second_pool = 0;
  for (const auto& w : workers)
    (w["pool"] == 0 ? first_pool : second_pool) += w["steps"].get<int64_t>();
  EXPECT_EQ(first_pool, 2 * 3);  // three sync steps of 2 workers
  // GBA: 4 steps of 4 gradients (a few more may be in flight and dropped at the switch), then
  // three sync steps of 4 workers.
  EXPECT_GE(second_pool, 4 * 4 + 3 * 4);
  EXPECT_EQ(workers[2]["nominal_step_s"].get<double>() * 2,
            workers[0]["nominal_step_s"].get<double>() * 3e12 / 1e12);
  ASSERT_EQ(sw["moves"].size(), 2u);
  EXPECT_EQ(sw["moves"][0]["direction"], "to_parameter_servers");
  EXPECT_EQ(sw["moves"][1]["direction"], "to_workers");
  EXPECT_EQ(sw["moves"][1]["bytes"].get<double>(), 4 * sw["moves"][0]["bytes"].get<double>());
}

// Automatic switching: one worker three times slower makes the straggler ratio 3, above
// to_gba_ratio, so the run goes to GBA after the first window of steps and stays there.
TEST(Simulation, AutomaticSwitchingLeavesSyncUnderAStraggler) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 4);
  s.cluster.worker_groups = {{3, s.cluster.worker_speed}, {1, s.cluster.worker_speed / 3}};
  s.switching.automatic = true;
  s.switching.window = 2;
  s.switching.min_steps_between = 0;
  s.budget.max_samples = 64 * 4 * 20;
  const auto result = simulate(s);
  const auto& events = result["switching"]["events"];
  ASSERT_GE(events.size(), 1u);
  EXPECT_EQ(events[0]["to"], "gba");
  EXPECT_NEAR(events[0]["straggler_ratio"].get<double>(), 3.0, 1e-6);
  EXPECT_LE(events[0]["global_step"].get<int>(), 3);
  EXPECT_EQ(result["switching"]["final_mode"], "gba");
}

}  // namespace
}  // namespace gbasim

// The simulated step: its timing against analytic formulas, the data each worker reads, and
// what each kind of straggler does to it.
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

// A gradient's rows by owner are the sums of its rows' one by one: each row lands at one
// owner with its own table's dimension, whatever the number of owners (one, a power of two
// counted without a division, any other, more owners than rows).
TEST(RowsByOwner, AreTheSumOfEachRowsOwnOwner) {
  const std::vector<int64_t> dims = {4, 16, 8};
  Gradient g;
  g.tables.resize(dims.size());
  std::mt19937 rng(7);
  for (size_t t = 0; t < dims.size(); ++t) {
    for (int32_t row = 0; row < 1500; ++row)
      if (rng() % 3 == 0) g.tables[t].rows.push_back(row);
  }
  for (int owners : {1, 3, 4, 7, 64, 1000, 20000}) {
    std::vector<double> rows(owners, 0.0), values(owners, 0.0);
    for (size_t t = 0; t < dims.size(); ++t) {
      for (int32_t row : g.tables[t].rows) {
        Gradient one;
        one.tables.resize(dims.size());
        one.tables[t].rows = {row};
        const RowsByOwner single = rows_by_owner(one, dims, owners);
        int holders = 0;
        for (int p = 0; p < owners; ++p) {
          if (single.rows[p] == 0.0) continue;
          ++holders;
          EXPECT_EQ(single.rows[p], 1.0);
          EXPECT_EQ(single.values[p], static_cast<double>(dims[t]));
          rows[p] += 1.0;
          values[p] += static_cast<double>(dims[t]);
        }
        ASSERT_EQ(holders, 1) << "table " << t << " row " << row << ", " << owners << " owners";
      }
    }
    const RowsByOwner all = rows_by_owner(g, dims, owners);
    EXPECT_EQ(all.rows, rows) << owners << " owners";
    EXPECT_EQ(all.values, values) << owners << " owners";
  }
}

// A batch's distinct ids, field by field, in the order each first appears: FirstSeen over
// each field's column. Fields of sizes that share bit words (1, 63, 65, ...), and batches
// one after another (bits left set by one batch would drop ids from the next).
TEST(BatchRows, EachFieldsDistinctIdsInFirstSeenOrderBatchAfterBatch) {
  const std::vector<int64_t> cardinalities = {1, 63, 65, 3, 1000, 64, 100000, 2};
  const auto fields = cardinalities.size();
  BatchRows batch_rows(cardinalities);
  std::mt19937 rng(11);
  for (int batch = 0; batch < 30; ++batch) {
    const int64_t b = 1 + static_cast<int64_t>(rng() % 300);
    std::vector<int32_t> ids(static_cast<size_t>(b) * fields);
    for (int64_t i = 0; i < b; ++i)
      for (size_t f = 0; f < fields; ++f) {  // a field's first and last ids half the time
        const auto size = static_cast<uint32_t>(cardinalities[f]);
        const uint32_t r = rng();
        ids[static_cast<size_t>(i) * fields + f] =
            static_cast<int32_t>(r % 4 == 0   ? 0
                                 : r % 4 == 1 ? size - 1
                                              : (r / 4) % size);
      }
    std::vector<SparseRows> tables(fields);
    batch_rows.take(
        b, [&](int64_t i) { return ids.data() + i * static_cast<int64_t>(fields); }, tables);
    FirstSeen first_seen;
    for (size_t f = 0; f < fields; ++f) {
      first_seen.add_each(static_cast<size_t>(b), [&](size_t i) { return ids[i * fields + f]; });
      ASSERT_EQ(tables[f].rows, first_seen.take()) << "batch " << batch << ", field " << f;
    }
  }
}

TEST(Simulation, SyncStepIsComputePlusRingAllReduce) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.budget.max_samples = 2 * 64 * 6;
  const auto result = simulate(s);
  const TwoWorkerRing ring(s, 6);
  ring.expect_step_ends(result, 6, 1);
  EXPECT_EQ(result["summary"]["global_steps"], 6);
}

// With a workload, the step is the workload's: its flops a local batch, the all-reduce of its
// dense part and the all-gather of its expected distinct rows (tables replicated), whatever the
// proxy's sizes. An MLP 100-50-1 (5,101 parameters), a table of 1,000 rows of dim 8, one
// uniform id a sample, batches of 128 workload samples for the proxy's 64.
TEST(Simulation, WithAWorkloadTheSyncStepIsTheWorkloads) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.budget.max_samples = 2 * 64 * 5;
  s.simulation.timing_only = true;
  WorkloadSpec w;
  w.dense_layers = {{100, 50, 1}};
  w.tables = {{1000, 8, 1.0, 0.0, 1, false}};
  w.local_batch = 128;
  w.placement = TablePlacement::kReplicated;
  s.workload = w;
  const auto result = simulate(s);
  const double bandwidth = s.cluster.nic_bandwidth, latency = 2.0 * s.cluster.nic_latency;
  const double compute = 6.0 * 5101 * 128 / s.cluster.worker_speed;
  const double dense_pass = latency + 4.0 * 5101 / 2 / bandwidth;
  const double rows = 1000.0 * (1.0 - std::pow(1.0 - 1.0 / 1000.0, 128.0));
  const double gather = latency + rows * (8.0 + 4.0 * 8) / bandwidth;
  const auto& ends = result["workers"][0]["step_ends"];
  ASSERT_EQ(ends.size(), 5u);
  for (size_t k = 0; k < ends.size(); ++k) {
    const double t = static_cast<double>(k + 1) * (compute + 2 * dense_pass + gather);
    // SimGrid sends whole bytes: the expected rows' fraction of a byte is within 1e-6.
    EXPECT_NEAR(ends[k].get<double>(), t, 1e-6 * t) << "step " << k;
  }
  EXPECT_DOUBLE_EQ(result["workers"][0]["nominal_step_s"].get<double>(), compute);
}

// data.sharding: with a worker 10x slower, async over one epoch's budget (one simulation a
// test: the engine starts once a process).
nlohmann::json reads_under_a_straggler(DataSharding sharding) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 4);
  s.data.sharding = sharding;
  s.stragglers.persistent_fraction = 0.25;
  s.stragglers.persistent_slowdown = 10.0;
  s.budget.max_samples = s.data.synthetic.train_samples;
  s.simulation.timing_only = true;
  nlohmann::json reads = simulate(s)["data_reads"];
  EXPECT_EQ(reads["training_samples"], s.data.synthetic.train_samples);
  EXPECT_GE(reads["samples_read"].get<int64_t>(), s.budget.max_samples);
  return reads;
}

// The shared queue hands out whole permutations of the training set, so R reads touch
// min(R, N) distinct samples, none more than ceil(R / N) times.
TEST(Simulation, QueueShardingReadsEverySampleOnceAnEpochUnderAStraggler) {
  const auto reads = reads_under_a_straggler(DataSharding::kQueue);
  const int64_t n = reads["training_samples"], r = reads["samples_read"];
  EXPECT_EQ(reads["sharding"], "queue");
  EXPECT_EQ(reads["distinct_samples_read"].get<int64_t>(), std::min(r, n));
  EXPECT_LE(reads["most_reads_of_a_sample"].get<int64_t>(), (r + n - 1) / n);
}

// Static shards: the slow worker's steps take far longer (10x the compute, the same
// communication), so much of its quarter of the data stays unread (a tenth of the data at
// least) while the fast workers read theirs again.
TEST(Simulation, StaticShardingLeavesTheStragglersShardUnread) {
  const auto reads = reads_under_a_straggler(DataSharding::kStatic);
  const int64_t n = reads["training_samples"], r = reads["samples_read"];
  EXPECT_EQ(reads["sharding"], "static");
  EXPECT_LT(reads["distinct_samples_read"].get<int64_t>(), n - n / 10) << "samples read " << r;
  EXPECT_GE(reads["most_reads_of_a_sample"].get<int64_t>(), 2);
}

TEST(Simulation, AsyncIsBoundedByTheParameterServerLink) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 4);
  s.cluster.nic_bandwidth = 2e7;  // 20 MB/s: the server's link is the bottleneck
  s.budget.max_samples = 64 * 40;
  const auto result = simulate(s);

  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  const double dense = 4.0 * static_cast<double>(model.num_dense_parameters());
  double into_server = 0.0, out_of_server = 0.0;
  for (int w = 0; w < 4; ++w) {
    ShardIterator shard(data.train, w, 4, s.seed);
    for (int64_t k = 0; k < result["workers"][w]["steps"].get<int64_t>(); ++k) {
      const Batch batch = shard.next(64);
      const double rows = sparse_bytes(batch, {1, 4});
      const double ids = sparse_bytes(batch, {0, 0});
      into_server += 64 + ids + dense + rows + 64;  // request, push, notice
      out_of_server += dense + rows - ids + 64;     // parameters, acknowledgement
    }
  }
  const double time = result["summary"]["simulated_time"].get<double>();
  const double busy = std::max(into_server, out_of_server) / s.cluster.nic_bandwidth;
  EXPECT_GE(time, busy);
  EXPECT_LE(time, 1.2 * busy) << "with a slow server link the run is link-bound";
}

TEST(Simulation, PersistentStragglerComputesSlowerByItsFactor) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 4);
  s.stragglers.persistent_fraction = 0.25;
  s.stragglers.persistent_slowdown = 3.0;
  s.budget.max_samples = 64 * 60;
  const auto result = simulate(s);
  int slow = -1;
  for (int w = 0; w < 4; ++w)
    if (result["workers"][w]["persistent_slowdown"].get<double>() > 1.0) slow = w;
  ASSERT_GE(slow, 0);
  const int fast = slow == 0 ? 1 : 0;
  auto per_step = [&](int w) {
    return result["workers"][w]["compute_s"].get<double>() /
           result["workers"][w]["steps"].get<double>();
  };
  EXPECT_NEAR(per_step(slow) / per_step(fast), 3.0, 1e-9);
  EXPECT_LT(result["workers"][slow]["steps"].get<int>(),
            result["workers"][fast]["steps"].get<int>());
}

TEST(Simulation, TransientEpisodesSlowTheirWorkerDown) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 2);
  s.stragglers.transient_rate_per_s = 50.0;
  s.stragglers.transient_mean_duration_s = 0.01;
  s.stragglers.transient_min_slowdown = 4.0;
  s.budget.max_samples = 64 * 200;
  const auto result = simulate(s);
  double nominal = 0.0;
  {
    const SyntheticData data = generate_synthetic(s.data.synthetic);
    const Model model(s.model, data.train.cardinalities, data.train.num_dense);
    nominal = s.cost.flops_scale * model.flops_per_sample() * 64 / s.cluster.worker_speed;
  }
  for (int w = 0; w < 2; ++w) {
    const auto& worker = result["workers"][w];
    ASSERT_FALSE(worker["transient_episodes"].empty());
    const double mean_compute = worker["compute_s"].get<double>() / worker["steps"].get<double>();
    EXPECT_GT(mean_compute, 1.2 * nominal) << "worker " << w;
  }
}

TEST(Simulation, NetworkEpisodesSlowTheLinks) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 2);
  s.cluster.nic_bandwidth = 2e7;
  s.stragglers.network_rate_per_s = 20.0;
  s.stragglers.network_mean_duration_s = 0.05;
  s.stragglers.network_min_slowdown = 20.0;
  s.stragglers.network_max_slowdown = 20.0;
  s.budget.max_samples = 64 * 100;
  const auto result = simulate(s);
  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  // A step moves at least the dense values twice (pull and push): its nominal floor.
  const double floor =
      2.0 * 4.0 * static_cast<double>(model.num_dense_parameters()) / s.cluster.nic_bandwidth;
  for (int w = 0; w < 2; ++w) {
    const auto& worker = result["workers"][w];
    ASSERT_FALSE(worker["network_episodes"].empty());
    EXPECT_GT(worker["comm_s"].get<double>() / worker["steps"].get<double>(), 3.0 * floor)
        << "worker " << w;
  }
}

// Deep network episodes under LV08 on a ring of hosts: SimGrid 3.32's weight-S bookkeeping
// on a bandwidth change once drove a message's sharing penalty to 0 (stalled: "deadlock") or
// below (abort); the run must end, every worker in step.
TEST(Simulation, DeepNetworkEpisodesUnderLv08EndTheRun) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 8);
  s.cluster.network_model = "LV08";
  s.cluster.nic_bandwidth = 2e7;
  s.stragglers.network_rate_per_s = 20.0;
  s.stragglers.network_mean_duration_s = 0.02;
  s.stragglers.network_min_slowdown = 5.0;
  s.simulation.timing_only = true;
  s.budget.max_samples = 64 * 8 * 60;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "completed");
  EXPECT_EQ(result["summary"]["global_steps"], 60);
  EXPECT_FALSE(result["workers"][0]["network_episodes"].empty());
}

TEST(Simulation, ColocatedTenantSharesItsHost) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 2);
  s.stragglers.colocated_fraction = 0.5;
  s.stragglers.colocated_duty = 0.5;
  s.stragglers.colocated_period_s = 1e-5;
  s.budget.max_samples = 64 * 100;
  const auto result = simulate(s);
  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  const double nominal =
      s.cost.flops_scale * model.flops_per_sample() * 64 / s.cluster.worker_speed;
  for (int w = 0; w < 2; ++w) {
    const auto& worker = result["workers"][w];
    const double per_step = worker["compute_s"].get<double>() / worker["steps"].get<double>();
    if (worker["colocated"].get<bool>()) {
      EXPECT_GT(per_step, 1.3 * nominal);
    } else {
      EXPECT_NEAR(per_step, nominal, 1e-9 * nominal);
    }
  }
}

TEST(Simulation, ReplayedTraceSetsEachWorkersStepTimes) {
  const std::string path = testing::TempDir() + "replay_trace.csv";
  std::ofstream(path) << ",worker,gpu,time,batch_time_norm\n"
                         "0,0,25,1,100\n1,1,25,1,100\n2,2,25,1,300\n"
                         "3,0,25,11,100\n4,1,25,11,100\n5,2,25,11,200\n";
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 3);
  s.stragglers.trace_format = "pai";
  s.stragglers.trace_path = path;
  s.budget.max_samples = 64 * 60;
  const auto result = simulate(s);
  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  const double nominal =
      s.cost.flops_scale * model.flops_per_sample() * 64 / s.cluster.worker_speed;
  // Worker 2 replays slowdowns 3 at iteration 1, 2 at 11, linear between, held after.
  auto slowdown = [](int64_t step) {
    return step >= 10 ? 2.0 : 3.0 - 0.1 * static_cast<double>(step);
  };
  const auto& slow = result["workers"][2];
  double expected = 0.0;
  for (int64_t k = 0; k < slow["steps"].get<int64_t>(); ++k) expected += slowdown(k) * nominal;
  EXPECT_NEAR(slow["compute_s"].get<double>(), expected, 1e-9 * expected);
  const auto& even = result["workers"][0];
  EXPECT_NEAR(even["compute_s"].get<double>(), nominal * even["steps"].get<double>(),
              1e-9 * nominal);
  EXPECT_EQ(result["trace"]["assignment"], nlohmann::json::array({0, 1, 2}));
}

// A usage trace (generic format) on a straggler-free platform: worker 1's machine gives half
// the speed and half the bandwidth from the start, and a quarter of the speed from trace time
// T on. Every step of sync's ring must take exactly what those factors say.
TEST(Simulation, ReplayedUsageTraceSetsSpeedAndBandwidthOverTime) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.budget.max_samples = 2 * 64 * 6;
  const TwoWorkerRing ring(s, 6, 0.5);
  const double c = ring.compute;
  auto comm = [&](int k) { return ring.comm(static_cast<size_t>(k)); };
  // Simulated seconds: in the middle of step 2's compute.
  const double change = 2 * c + comm(0) + 2 * c + comm(1) + c;
  const double time_scale = 4.0;  // trace seconds per simulated second

  const std::string path = testing::TempDir() + "usage_replay.csv";
  std::ofstream(path) << std::setprecision(17) << "host,time,speed_factor,bandwidth_factor\n"
                      << "a,100,1,\nb,100,0.5,0.5\nb," << 100 + 8 + change * time_scale
                      << ",0.25,\n";
  s.stragglers.trace_format = "generic";
  s.stragglers.trace_path = path;
  s.stragglers.trace_offset = 8;
  s.stragglers.trace_time_scale = time_scale;
  const auto result = simulate(s);

  // Worker 1's compute from t0: 2c per step before the change, 4c after.
  auto slow_compute = [&](double t0) {
    if (t0 + 2 * c <= change) return 2 * c;
    if (t0 >= change) return 4 * c;
    return (change - t0) + (1.0 - (change - t0) / (2 * c)) * 4 * c;
  };
  const auto& ends = result["workers"][0]["step_ends"];
  ASSERT_EQ(ends.size(), 6u);
  double t = 0.0;
  for (int k = 0; k < 6; ++k) {
    t += slow_compute(t) + comm(k);
    EXPECT_NEAR(ends[k].get<double>(), t, 1e-9 * t) << "step " << k;
  }
  EXPECT_EQ(result["trace"]["assignment"], nlohmann::json::array({"a", "b"}));
  EXPECT_FALSE(result["trace"]["wraps"].get<bool>());
}

// Two ranks on one machine of one core (cluster.shared_cores): their computations share the
// core, so each takes twice as long, and the slow one then sleeps (2 - 1) x that, as a real
// rank would. A sync step is 4 c plus the ring.
TEST(Simulation, RanksOnASharedMachineShareItsCoresAndSleepTheirSlowdown) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.cluster.shared_machine.cores = 1;
  s.stragglers.persistent_fraction = 0.5;
  s.stragglers.persistent_slowdown = 2.0;
  s.budget.max_samples = 2 * 64 * 4;
  const auto result = simulate(s);
  const TwoWorkerRing ring(s, 4);
  ring.expect_step_ends(result, 4, 4);
}

// The same two ranks without stragglers, the core taken a slice at a time: with a slice
// longer than a step's compute c, one rank computes while the other waits, so their steps'
// compute times are c and 2c (3c a step together) where sharing gives 2c each; with slices
// of c / 2 they take turns, ending at 1.5c and 2c. Either way a step still ends after 2c
// and the ring.
class TimeSlice : public ::testing::TestWithParam<double> {};  // in computes; 0: sharing

TEST_P(TimeSlice, CoresServeOneComputationAtATimeOrShare) {
  const double slices = GetParam();
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.cluster.shared_machine.cores = 1;
  s.budget.max_samples = 2 * 64 * 4;
  const TwoWorkerRing ring(s, 4);
  s.cluster.shared_machine.time_slice_s = slices * ring.compute;
  const auto result = simulate(s);
  const double both = result["workers"][0]["compute_s"].get<double>() +
                      result["workers"][1]["compute_s"].get<double>();
  const double per_step = slices == 0.0 ? 4.0 : slices < 1.0 ? 3.5 : 3.0;
  EXPECT_NEAR(both, 4 * per_step * ring.compute, 1e-9);
  ring.expect_step_ends(result, 4, 2);
}

INSTANTIATE_TEST_SUITE_P(Computes, TimeSlice, ::testing::Values(0.0, 0.5, 2.0));

}  // namespace
}  // namespace gbasim
